// What an MCP App may ask of the page, bounded (issue 30): its height, the
// links it opens, the text it posts or puts in the model's context, how
// often it may ask. Pure functions: the frame applies them.

import type { McpCallOutcome } from '../../../../jsapi/tauritavern-mcp';

/** The tallest an App is drawn inline, in CSS pixels; it scrolls inside beyond. */
export const MAX_APP_HEIGHT = 900;
/** The height an App starts at, before it says its own. */
export const INITIAL_APP_HEIGHT = 120;
/** The longest text an App may post as the user's message. */
export const MAX_APP_MESSAGE_CHARS = 4000;
/** The longest text an App may put into the model's context. */
export const MAX_MODEL_CONTEXT_CHARS = 8000;

/** A link an App may open: an absolute http(s) URL, else null. */
export function appLink(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > 4096) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
}

/** The height to draw an App at when it asks for h: within 24..max, null when h is no height. */
export function appHeight(h: unknown, max = MAX_APP_HEIGHT): number | null {
  if (typeof h !== 'number' || !Number.isFinite(h) || h < 0) return null;
  return Math.min(max, Math.max(24, Math.ceil(h)));
}

/** The text blocks of an App's content, joined; null when there is none or it is longer than max. */
export function appText(content: unknown, max: number): string | null {
  if (!Array.isArray(content)) return null;
  const parts: string[] = [];
  for (const block of content) {
    if (block && typeof block === 'object' && (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string') {
      parts.push((block as { text: string }).text);
    }
  }
  const text = parts.join('\n').trim();
  return text === '' || text.length > max ? null : text;
}

/** A bound on how often something may happen: at most n in every window of ms. */
export class RateLimit {
  #times: number[] = [];
  constructor(
    readonly n: number,
    readonly ms: number,
  ) {}
  take(now: number): boolean {
    while (this.#times.length > 0 && now - this.#times[0]! >= this.ms) this.#times.shift();
    if (this.#times.length >= this.n) return false;
    this.#times.push(now);
    return true;
  }
}

/** The CallToolResult an App is given, from ttmcp's outcome of the call. */
export interface AppToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The result of an outcome for an App: a tool result as the server gave it; anything else as an error text. */
export function appResult(outcome: McpCallOutcome): AppToolResult {
  if (outcome.outcome === 'known_response' && outcome.response.kind === 'tool_result') {
    const r = outcome.response;
    const out: AppToolResult = { content: r.textBlocks.map((b) => ({ type: 'text' as const, text: b.text })) };
    if (r.structuredJson !== undefined) {
      try {
        const v: unknown = JSON.parse(r.structuredJson);
        if (v && typeof v === 'object' && !Array.isArray(v)) out.structuredContent = v as Record<string, unknown>;
      } catch {
        // not JSON: left out
      }
    }
    if (r.isError) out.isError = true;
    return out;
  }
  const why = outcome.outcome === 'known_response' ? outcome.response.kind : `${outcome.code}: ${outcome.message}`;
  const ran = outcome.outcome === 'outcome_unknown' ? 'Whether the tool ran is unknown' : 'The tool was not run';
  return { content: [{ type: 'text', text: `${ran} (${why})` }], isError: true };
}
