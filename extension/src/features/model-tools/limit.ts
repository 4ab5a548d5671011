// The provider's tool limit (issue 19 item 5): ttmcp never makes
// SillyTavern send more tools than the source accepts. OpenAI's API takes
// at most 128 tools per request, and so do the OpenAI-compatible sources
// (OpenRouter, DeepSeek, Groq, Mistral, xAI, a custom endpoint, …);
// SillyTavern converts the tools itself for Claude and Google, whose APIs
// have other rules, so ttmcp sets no cap of its own there.
//
// The rule (docs/DECISIONS.md): SillyTavern's own tools (every tool another
// extension registered, whatever its shouldRegister says: they may all be
// sent) and, when the set offers it, the reader tool ttmcp_read_result come
// first; the MCP tools fill the rest in the listing's order — a tool set's
// own order, else (no set) by server name, then ToolId — and the rest is
// left out, said before sending (the reach line) and when it happens (the
// generation's warning). The reader is offered only with at least one MCP
// tool.

import type { LegacyMcpTool } from '../../../../jsapi/tauritavern-mcp';
import type { StToolContext } from '../../host/sillytavern-tools';

export const OPENAI_TOOL_LIMIT = 128;

/** Sources whose tools SillyTavern converts to another API (no cap of ttmcp's). */
const OTHER_APIS = new Set(['claude', 'makersuite', 'vertexai']);

/** The most tools a request to the current source may carry; undefined: no cap. */
export function providerToolLimit(ctx: StToolContext | undefined): number | undefined {
  const source = ctx?.chatCompletionSettings?.chat_completion_source;
  if (typeof source === 'string' && OTHER_APIS.has(source)) return undefined;
  return OPENAI_TOOL_LIMIT;
}

export interface FittedTools {
  offered: LegacyMcpTool[];
  leftOut: LegacyMcpTool[];
  /** Whether the reader tool is offered too. */
  reader: boolean;
  limit?: number;
  /** SillyTavern's own tools, counted against the limit. */
  local: number;
}

/** Fits the listed tools (in their order) and the reader under limit, after local tools. */
export function fitToolLimit(tools: readonly LegacyMcpTool[], opts: { limit: number | undefined; local: number; reader: boolean }): FittedTools {
  const base = { local: opts.local, ...(opts.limit !== undefined ? { limit: opts.limit } : {}) };
  if (opts.limit === undefined) return { ...base, offered: [...tools], leftOut: [], reader: opts.reader && tools.length > 0 };
  const room = Math.max(0, opts.limit - opts.local);
  const reader = opts.reader && tools.length > 0 && room >= 2;
  const budget = room - (reader ? 1 : 0);
  return { ...base, offered: tools.slice(0, budget), leftOut: tools.slice(budget), reader };
}
