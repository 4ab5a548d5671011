// The text of a resource's content, where it has one: a text content's
// text, or a blob whose mime type says it is text (text/*, JSON, XML,
// JavaScript, YAML…) and whose bytes are valid UTF-8 (servers send plain
// text as a blob too; server-everything's dynamic blob is text/plain). Any
// other blob has no text: it is shown (an image, a download) but never
// becomes part of a prompt.

import type { McpResourceContent } from '../../../jsapi/tauritavern-mcp';

/** Whether a mime type names text (its parameters, such as charset, aside). */
export function isTextualMime(mimeType: string | undefined): boolean {
  if (mimeType === undefined) return false;
  const m = mimeType.split(';')[0]!.trim().toLowerCase();
  return (
    m.startsWith('text/') ||
    /^application\/(json|xml|javascript|ecmascript|x-javascript|yaml|x-yaml|toml|x-sh|sql|graphql|ld\+json)$/.test(m) ||
    /\+(json|xml|yaml)$/.test(m)
  );
}

/** The bytes of base64 data; undefined when it is not base64. */
export function base64Bytes(data: string): Uint8Array | undefined {
  try {
    const bin = atob(data.replace(/\s+/g, ''));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

/** The content's text, or undefined for a binary blob (or a content refused without its data). */
export function contentText(c: McpResourceContent): string | undefined {
  if (c.text !== undefined) return c.text;
  if (c.blob === undefined || !isTextualMime(c.mimeType)) return undefined;
  const bytes = base64Bytes(c.blob);
  if (!bytes) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether a mime type is JSON (shown pretty-printed). */
export function isJsonMime(mimeType: string | undefined): boolean {
  if (mimeType === undefined) return false;
  const m = mimeType.split(';')[0]!.trim().toLowerCase();
  return m === 'application/json' || m.endsWith('+json');
}
