// Tool search (issue 31): with many servers the model gets a small
// constant set instead of every schema — a search tool, a details tool and
// one call tool, plus the tools the user pins and the reader — and finds
// the tool it needs by asking. The ranking is the backend's
// (search_mcp_tools, api.mcp.toolSearch), so every consumer ranks alike.
//
// Three modes, per tool set and for the default (no set; the extension's
// settings, extensionSettings.mcp_manager.toolSearch): "all" offers every
// schema (as before issue 31), "search" always the constant set,
// "automatic" every schema until they pass the budget — more tools than
// maxTools, or their estimated tokens above contextPercent of the model's
// context — and the constant set after.
//
// The order of the tools array (docs/DECISIONS.md "Tool search: the
// stable tools array"): SillyTavern's own tools first, in their
// registration order; then ttmcp's — in "all" the listing's tools in its
// order (a set's own, else by server name, then ToolId), in "search"
// ttmcp_search_tools, ttmcp_tool_details, ttmcp_call_tool and the pinned
// tools in the set's order — and the reader ttmcp_read_result last. The
// same listing gives the same array, request after request and chat after
// chat, so providers' prompt caches hold.
//
// Sizes are estimates: the tokens of a definition are the characters of
// its JSON ({type, function: {name, description, parameters}}, as
// SillyTavern sends it) divided by four, the usual rule of thumb for
// English and JSON with the common tokenizers; no tokenizer is loaded.

import type { LegacyMcpTool, McpToolMode, McpToolSearchHit, McpToolSet } from '../../../../jsapi/tauritavern-mcp';
import { isRecord } from '../../base/values';
import type { StToolContext } from '../../host/sillytavern-tools';
import { MAX_PINS } from '../../base/protocol';

export const SEARCH_TOOL = 'ttmcp_search_tools';
export const DETAILS_TOOL = 'ttmcp_tool_details';
export const CALL_TOOL = 'ttmcp_call_tool';
/** The constant set, in the order it is offered. */
export const CONSTANT_TOOLS = [SEARCH_TOOL, DETAILS_TOOL, CALL_TOOL] as const;

export const DEFAULT_MAX_TOOLS = 40;
export const DEFAULT_CONTEXT_PERCENT = 10;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** The setting the default's search mode lives in (extensionSettings.mcp_manager). */
export const SEARCH_SETTING = 'toolSearch';

export interface SearchSettings {
  mode: McpToolMode;
  maxTools: number;
  contextPercent: number;
  /** ToolIds offered beside the constant set, in order. */
  pinned: string[];
}

export const DEFAULT_SEARCH: SearchSettings = { mode: 'all', maxTools: DEFAULT_MAX_TOOLS, contextPercent: DEFAULT_CONTEXT_PERCENT, pinned: [] };

function intIn(v: unknown, min: number, max: number, fallback: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : fallback;
}

function modeOf(v: unknown): McpToolMode {
  return v === 'search' || v === 'automatic' ? v : 'all';
}

/** A set's search settings (an older backend has none: "all"). */
export function setSearch(set: McpToolSet): SearchSettings {
  return {
    mode: modeOf(set.toolMode),
    maxTools: intIn(set.searchMaxTools, 1, 2048, DEFAULT_MAX_TOOLS),
    contextPercent: intIn(set.searchContextPercent, 1, 100, DEFAULT_CONTEXT_PERCENT),
    pinned: Array.isArray(set.pinnedTools) ? set.pinnedTools.filter((p): p is string => typeof p === 'string') : [],
  };
}

/** The default's settings as stored (unchecked values fall back to the defaults). */
export function parseSearchSetting(v: unknown): SearchSettings {
  if (!isRecord(v)) return DEFAULT_SEARCH;
  return {
    mode: modeOf(v.mode),
    maxTools: intIn(v.maxTools, 1, 2048, DEFAULT_MAX_TOOLS),
    contextPercent: intIn(v.contextPercent, 1, 100, DEFAULT_CONTEXT_PERCENT),
    pinned: Array.isArray(v.pinned) ? [...new Set(v.pinned.filter((p): p is string => typeof p === 'string'))].slice(0, MAX_PINS) : [],
  };
}

/** The model's context in tokens, as SillyTavern's Chat Completion settings say; undefined: unknown. */
export function contextTokens(ctx: StToolContext | undefined): number | undefined {
  const n = (ctx?.chatCompletionSettings as { openai_max_context?: unknown } | undefined)?.openai_max_context;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The estimated tokens of a definition as SillyTavern sends it (characters ÷ 4, rounded up). */
export function definitionTokens(name: string, description: string, parameters: unknown): number {
  return Math.ceil(JSON.stringify({ type: 'function', function: { name, description, parameters } }).length / 4);
}

/** The JSON around a definition's name, description and parameters, as JSON.stringify writes it. */
const DEFINITION_FRAME = '{"type":"function","function":{"name":,"description":,"parameters":}}'.length;

/** Per listed tool (a root's tools are the same objects round after round): its description's and schema's JSON length. */
const bodyChars = new WeakMap<LegacyMcpTool, number>();

/**
 * The estimated tokens of a listed tool, offered under alias: exactly
 * definitionTokens of its definition, with the description's and schema's
 * JSON measured once per tool (a root of 5,000 tools would stringify 4 MB
 * of schemas in every round otherwise).
 */
export function toolTokens(tool: LegacyMcpTool, alias: string): number {
  let body = bodyChars.get(tool);
  if (body === undefined) {
    body = JSON.stringify(tool.description || tool.title || tool.nativeName).length + (JSON.stringify(tool.inputSchema)?.length ?? 0);
    bodyChars.set(tool, body);
  }
  return Math.ceil((DEFINITION_FRAME + JSON.stringify(alias).length + body) / 4);
}

/**
 * Whether a root searches: "search" always; "automatic" once the tools
 * that would be offered pass the count or their tokens pass the share of
 * the context (unknown context: the count alone).
 */
export function searches(settings: SearchSettings, offered: number, tokens: number, context: number | undefined): boolean {
  if (settings.mode === 'search') return true;
  if (settings.mode !== 'automatic') return false;
  if (offered > settings.maxTools) return true;
  return context !== undefined && tokens > (context * settings.contextPercent) / 100;
}

// ---------------------------------------------------------------- the constant set's definitions

export const SEARCH_PARAMETERS = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What you want to do, in a few words (e.g. "create an issue", "read a file").' },
    server: { type: 'string', description: 'Only tools of this server (its name as the results show it).' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, description: `How many tools (default ${DEFAULT_SEARCH_LIMIT}).` },
  },
  required: ['query'],
} as const;

export const DETAILS_PARAMETERS = {
  type: 'object',
  properties: { name: { type: 'string', description: `A tool's name as ${SEARCH_TOOL} shows it.` } },
  required: ['name'],
} as const;

export const CALL_PARAMETERS = {
  type: 'object',
  properties: {
    name: { type: 'string', description: `The tool's name as ${SEARCH_TOOL} shows it.` },
    arguments: { type: 'object', description: `The tool's arguments, as ${DETAILS_TOOL} describes them.` },
  },
  required: ['name', 'arguments'],
} as const;

export const SEARCH_DESCRIPTION =
  `Finds MCP tools you can use: many tools are available but not listed here. Search with a short description of the task; ` +
  `the answer names matching tools by server, each with a one-line description. Read a tool's parameters with ${DETAILS_TOOL}, then call it with ${CALL_TOOL}.`;
export const DETAILS_DESCRIPTION = `Shows one MCP tool's full description and JSON Schema of its arguments (a name from ${SEARCH_TOOL}).`;
export const CALL_DESCRIPTION = `Calls an MCP tool found with ${SEARCH_TOOL}: its name and its arguments as ${DETAILS_TOOL} describes them.`;

/** The constant set's estimated tokens (for the reach line). */
export function constantTokens(): number {
  return (
    definitionTokens(SEARCH_TOOL, SEARCH_DESCRIPTION, SEARCH_PARAMETERS) +
    definitionTokens(DETAILS_TOOL, DETAILS_DESCRIPTION, DETAILS_PARAMETERS) +
    definitionTokens(CALL_TOOL, CALL_DESCRIPTION, CALL_PARAMETERS)
  );
}

// ---------------------------------------------------------------- what the model reads

/** A one-line description: the first line, at most 200 characters. */
function oneLine(s: string | undefined): string {
  const line = (s ?? '').trim().split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * A search's answer: hits in the ranking's order, one line each, grouped by
 * server in runs — a server's heading starts each run of its hits, so a
 * server may head two runs. Grouping each server's hits under its best one
 * put a server's weak hits above another server's strong ones, and a model
 * reads the first lines as the best.
 */
export function formatHits(query: string, hits: ReadonlyArray<{ alias: string; hit: McpToolSearchHit }>): string {
  if (hits.length === 0) {
    return `No MCP tool matches "${query}". Try other words (what you want to do, e.g. "list files"), or no server filter.`;
  }
  const runs: { server: string; lines: string[] }[] = [];
  for (const { alias, hit } of hits) {
    const title = hit.title && hit.title !== hit.nativeName ? `${hit.title}: ` : '';
    const line = `- ${alias} — ${title}${oneLine(hit.description) || hit.nativeName}`;
    const last = runs[runs.length - 1];
    if (last?.server === hit.serverDisplayName) last.lines.push(line);
    else runs.push({ server: hit.serverDisplayName, lines: [line] });
  }
  const body = runs.map((r) => `${r.server}:\n${r.lines.join('\n')}`).join('\n\n');
  return `${hits.length} MCP tool${hits.length === 1 ? '' : 's'} for "${query}", best first (read one's parameters with ${DETAILS_TOOL}, call it with ${CALL_TOOL}):\n\n${body}`;
}

/** The details tool's answer: one tool's full, projected definition. */
export function formatDetails(alias: string, tool: LegacyMcpTool): string {
  const out: Record<string, unknown> = { name: alias, server: tool.serverDisplayName };
  if (tool.title) out.title = tool.title;
  out.description = tool.description || tool.title || tool.nativeName;
  out.inputSchema = tool.inputSchema;
  return `${JSON.stringify(out, null, 2)}\n\nCall it with ${CALL_TOOL} {"name": "${alias}", "arguments": {…}}.`;
}

/** The call tool's arguments, read leniently: a string of JSON for arguments is parsed. */
export function callArguments(args: unknown): { name: string; arguments: unknown } | undefined {
  if (!isRecord(args) || typeof args.name !== 'string') return undefined;
  let a: unknown = args.arguments ?? {};
  if (typeof a === 'string') {
    try {
      a = a.trim() === '' ? {} : (JSON.parse(a) as unknown);
    } catch {
      return undefined;
    }
  }
  return { name: args.name, arguments: a };
}

/** A name the model gave, resolved in a catalog of alias → tool: the alias, else a native name only one tool has. */
export function resolveName(name: string, catalog: ReadonlyMap<string, LegacyMcpTool>): string | undefined {
  const n = name.trim();
  if (catalog.has(n)) return n;
  const matches = sameNative(n, catalog);
  return matches.length === 1 ? matches[0] : undefined;
}

/** The aliases of the tools whose own (native) name is name. */
function sameNative(name: string, catalog: ReadonlyMap<string, LegacyMcpTool>): string[] {
  return [...catalog].filter(([, t]) => t.nativeName === name).map(([alias]) => alias);
}

/**
 * What the model reads when name resolves to no tool: that it names
 * several (a native name two servers share: use the full name), or none.
 */
export function unresolvedName(name: string, catalog: ReadonlyMap<string, LegacyMcpTool>, nothing: string): string {
  const several = sameNative(name.trim(), catalog);
  if (several.length > 1) return `"${name}" is the name of ${several.length} MCP tools (${several.join(', ')}): use the full name of the one you mean. ${nothing}`;
  return `No MCP tool is named "${name}" here. ${nothing}`;
}

// ---------------------------------------------------------------- SillyTavern's tool-call record

/** One ToolInvocation as SillyTavern saves it (sillytavern-host-notes §2.5). */
export interface StInvocation {
  name?: unknown;
  displayName?: unknown;
  parameters?: unknown;
}

/** Text as outerHTML writes a text node (SillyTavern builds the message with textContent). */
function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Makes SillyTavern's record of a batch name the real tools: each
 * invocation of the call tool gets the real tool's display name (the
 * name stays the call tool's, so the replayed tool call matches the
 * tools array), and the chat message built from the batch before the
 * event is mended the same way (its "Tool calls: …" summary and its
 * JSON). realName says which tool an invocation called; undefined leaves
 * it as it is.
 */
export function relabelInvocations(
  invocations: StInvocation[],
  realName: (inv: StInvocation) => string | undefined,
  message?: { mes?: unknown },
): boolean {
  const before = invocations.map((i) => String(i.displayName || i.name));
  let changed = false;
  for (const inv of invocations) {
    if (inv.name !== CALL_TOOL) continue;
    const real = realName(inv);
    if (real === undefined) continue;
    inv.displayName = real;
    changed = true;
  }
  if (!changed || !message || typeof message.mes !== 'string') return changed;
  const after = invocations.map((i) => String(i.displayName || i.name));
  let mes = message.mes;
  mes = mes.split(`Tool calls: ${escapeHtml(before.join(', '))}`).join(`Tool calls: ${escapeHtml(after.join(', '))}`);
  mes = mes.split(`Tool calls: ${before.join(', ')}`).join(`Tool calls: ${after.join(', ')}`);
  // the JSON of the batch, one invocation at a time, in order
  let from = 0;
  for (let i = 0; i < invocations.length; i++) {
    if (before[i] === after[i]) continue;
    for (const esc of [escapeHtml, (s: string) => s]) {
      const old = esc(`"displayName": ${JSON.stringify(before[i])}`);
      const at = mes.indexOf(old, from);
      if (at < 0) continue;
      const next = esc(`"displayName": ${JSON.stringify(after[i])}`);
      mes = mes.slice(0, at) + next + mes.slice(at + old.length);
      from = at + next.length;
      break;
    }
  }
  message.mes = mes;
  return changed;
}

// ---------------------------------------------------------------- one round's plan

export interface RequestPlan {
  /** The round offers the constant set. */
  search: boolean;
  /** The MCP tools offered by their own names (all: the listing's first; search: the pinned ones), alias first. */
  offered: Array<[string, LegacyMcpTool]>;
  /** Left out by the provider's limit ("all" only). */
  leftOut: LegacyMcpTool[];
  reader: boolean;
  /** ttmcp's tools in the request, and their estimated tokens. */
  count: number;
  tokens: number;
}

/** The reader's definition size is fixed; its estimate is passed in (reader.ts owns the definition). */
export interface PlanOptions {
  settings: SearchSettings;
  /** The provider's tool limit; undefined: none. */
  limit: number | undefined;
  /** SillyTavern's own tools, counted against the limit. */
  local: number;
  /** The set offers the reader (and no local tool has its name). */
  reader: boolean;
  readerTokens: number;
  context: number | undefined;
}

/**
 * What a round offers for a listing (catalog: alias → tool in the
 * listing's order): the mode, under the provider's limit (local tools
 * first, then ttmcp's: search's constant set, or the listing's tools; the
 * reader only with room beside them), and its estimated size. The bridge
 * registers it; the Manager's reach line says it.
 */
export function planRequest(catalog: ReadonlyArray<[string, LegacyMcpTool]>, o: PlanOptions): RequestPlan {
  let all = 0;
  for (const [alias, tool] of catalog) all += toolTokens(tool, alias);
  const search = catalog.length > 0 && searches(o.settings, catalog.length, all, o.context);
  const room = o.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, o.limit - o.local);
  if (search) {
    const left = room - CONSTANT_TOOLS.length;
    const reader = o.reader && left >= 1;
    const byId = new Map(catalog.map(([alias, t]) => [t.toolId, [alias, t] as [string, LegacyMcpTool]]));
    const pinned = o.settings.pinned.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])).slice(0, Math.max(0, left - (reader ? 1 : 0)));
    const tokens = constantTokens() + pinned.reduce((n, [alias, t]) => n + toolTokens(t, alias), 0) + (reader ? o.readerTokens : 0);
    return { search, offered: pinned, leftOut: [], reader, count: CONSTANT_TOOLS.length + pinned.length + (reader ? 1 : 0), tokens };
  }
  const reader = o.reader && catalog.length > 0 && (o.limit === undefined || room >= 2);
  const fits = room === Number.POSITIVE_INFINITY ? catalog.length : Math.max(0, room - (reader ? 1 : 0));
  const offered = catalog.slice(0, fits);
  const tokens = offered.reduce((n, [alias, t]) => n + toolTokens(t, alias), 0) + (reader ? o.readerTokens : 0);
  return { search, offered, leftOut: catalog.slice(fits).map(([, t]) => t), reader, count: offered.length + (reader ? 1 : 0), tokens };
}
