// What the resource dialog opens (resource-dialog.tsx), apart from the
// dialog so the lists that open it (the Manager's, a test call's result)
// can build one without importing the dialog itself.

import type { McpResourceContent, McpResourceTemplate } from '../../../jsapi/tauritavern-mcp';

/**
 * What the dialog opens: a resource by URI (listed, or a link), a template to fill in, or a
 * resource a tool result embedded (shown as it came, never read again from the server).
 */
export type ResourceTarget =
  | { kind: 'resource'; uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }
  | { kind: 'template'; template: McpResourceTemplate }
  | { kind: 'embedded'; name: string; content: McpResourceContent };

/** A resource by URI (a listed one, or a tool result's link) as the dialog opens it. */
export function linkTarget(r: { uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }): ResourceTarget {
  return {
    kind: 'resource',
    uri: r.uri,
    name: r.name,
    ...(r.title !== undefined ? { title: r.title } : {}),
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.mimeType !== undefined ? { mimeType: r.mimeType } : {}),
    ...(r.size !== undefined ? { size: r.size } : {}),
  };
}

