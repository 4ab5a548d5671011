// Values the API defines that the UI offers.

import type { McpProtocolVersion, McpToolPermission } from '../../../jsapi/tauritavern-mcp';

/** The pinned protocol versions, newest first ('auto' negotiates). */
export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const satisfies readonly McpProtocolVersion[];

export function isProtocolVersion(v: unknown): v is McpProtocolVersion {
  return v === 'auto' || (PROTOCOL_VERSIONS as readonly unknown[]).includes(v);
}

/** At most this many tools pinned beside the search tools: a set's (the backend's domain.MaxPinnedTools), and the default's. */
export const MAX_PINS = 32;

export const PERMISSIONS = ['off', 'ask', 'allow'] as const satisfies readonly McpToolPermission[];

/** Whether text is an absolute http:// or https:// URL. */
export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
