// What of an MCP prompt becomes text for SillyTavern (`/mcp-prompt`, "Put
// in the input box"): its user messages — their text, and the text of a
// resource embedded in them — in order, separated by blank lines. Nothing
// else is turned into text, and nothing is dropped silently: an assistant
// message, an image, audio, a binary resource, a resource link and a
// message the backend could not show are each named in leftOut, which the
// page tells the user.

import type { McpContentBlock, McpPromptMessagesResponse } from '../../../../jsapi/tauritavern-mcp';
import type { Tr } from '../../base/texts';
import { contentText } from '../../ui/content-text';

export type LeftOut =
  /** An assistant message; excerpt: the start of its text, if it is text. */
  | { kind: 'assistant'; excerpt?: string }
  | { kind: 'image' | 'audio'; mimeType: string }
  | { kind: 'binary_resource'; uri: string; mimeType?: string }
  | { kind: 'resource_link'; uri: string; name: string }
  /** A message the backend left out: its diagnostic (whose message names the message). */
  | { kind: 'not_shown'; code: string; detail: string };

export interface PromptText {
  /** The user messages' text; '' when they have none. */
  text: string;
  leftOut: LeftOut[];
}

function blockText(block: McpContentBlock): string | undefined {
  if (block.type === 'text') return block.text;
  if (block.type === 'resource') return contentText(block.resource);
  return undefined;
}

const EXCERPT_CHARS = 60;

function excerpt(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  const chars = [...t];
  return chars.length > EXCERPT_CHARS ? `${chars.slice(0, EXCERPT_CHARS).join('')}…` : t;
}

function leftOutOf(block: McpContentBlock): LeftOut | undefined {
  switch (block.type) {
    case 'image':
    case 'audio':
      return { kind: block.type, mimeType: block.mimeType };
    case 'resource':
      return contentText(block.resource) === undefined
        ? { kind: 'binary_resource', uri: block.resource.uri, ...(block.resource.mimeType ? { mimeType: block.resource.mimeType } : {}) }
        : undefined;
    case 'resource_link':
      return { kind: 'resource_link', uri: block.uri, name: block.title ?? block.name };
    default:
      return undefined;
  }
}

export function promptText(r: McpPromptMessagesResponse): PromptText {
  const texts: string[] = [];
  const leftOut: LeftOut[] = [];
  for (const m of r.messages) {
    const t = blockText(m.content);
    if (m.role !== 'user') {
      leftOut.push(m.content.type === 'text' ? { kind: 'assistant', excerpt: excerpt(m.content.text) } : { kind: 'assistant' });
    } else if (t !== undefined) {
      texts.push(t);
    } else {
      const out = leftOutOf(m.content);
      if (out) leftOut.push(out);
    }
  }
  for (const d of r.diagnostics) leftOut.push({ kind: 'not_shown', code: d.code, detail: d.message });
  return { text: texts.join('\n\n'), leftOut };
}

/** One left-out part in words. */
export function leftOutText(l: LeftOut, tr: Tr): string {
  switch (l.kind) {
    case 'assistant':
      return l.excerpt !== undefined ? tr('left_out_assistant_text', { excerpt: l.excerpt }) : tr('left_out_assistant');
    case 'image':
      return tr('left_out_image', { mime: l.mimeType });
    case 'audio':
      return tr('left_out_audio', { mime: l.mimeType });
    case 'binary_resource':
      return tr('left_out_binary', { uri: l.uri });
    case 'resource_link':
      return tr('left_out_link', { name: l.name, uri: l.uri });
    case 'not_shown':
      return tr('left_out_not_shown', { code: l.code, detail: l.detail });
  }
}
