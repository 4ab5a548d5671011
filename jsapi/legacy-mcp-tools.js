// ttmcp legacy generation adapter: offers the MCP tools the user permitted
// to a SillyTavern-style Generate loop, and executes the model's calls
// through the backend (tauritavern-reference §6).
//
//   import { prepareLegacyMcpGenerationContext } from '<backend>/jsapi/legacy-mcp-tools.js';
//   const context = await prepareLegacyMcpGenerationContext();   // once per root generation
//   const round = context.createRound();                          // once per Generate round
//   round.mergeIntoToolData(generate_data);   // after the local tools were registered
//   await emit(CHAT_COMPLETION_SETTINGS_READY, generate_data);    // hooks may edit tools
//   round.finalizeAdvertisedTools(generate_data);                 // before the fetch
//   const tool = round.resolveTool(name);     // null: not an MCP alias (a local tool)
//   const { result, error } = await tool.invoke({ argumentsJson, signal });
//
// The descriptors are listed once per root (list_legacy_mcp_tools) and
// frozen for its recursive rounds; each round allocates model-facing
// aliases `mcp__<server>__<tool>` (≤ 64 bytes, [A-Za-z0-9_-]) that never
// collide with the round's other tools. An alias is bound to its tool only
// if it reached the request exactly once after the hooks ran: a hook that
// renamed, removed or duplicated it leaves nothing to guess. A call whose
// outcome is unknown throws LegacyMcpOutcomeUnknownError: the generation
// must end, nothing of the batch may be saved or retried.
//
// The module only uses window.__TAURITAVERN__.invoke.safeInvoke (and, when
// present, toastr and console); it never touches the request body options
// or the local tool registry.

/** The option key under which a root passes its context to its recursive rounds. */
export const LEGACY_MCP_GENERATION_CONTEXT = Symbol('legacyMcpGenerationContext');

const MAX_ALIAS_BYTES = 64;
const ALIAS_PREFIX = 'mcp__';
const ALIAS_SEPARATOR = '__';
const SERVER_SEGMENT_CAP = 20;

/** Thrown when a call may have run but its result is unknown: end the generation. */
export class LegacyMcpOutcomeUnknownError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'LegacyMcpOutcomeUnknownError';
    this.code = code;
  }
}

function abortError() {
  return new DOMException('The operation was aborted.', 'AbortError');
}

function hostSafeInvoke() {
  const safeInvoke = globalThis.__TAURITAVERN__?.invoke?.safeInvoke;
  if (typeof safeInvoke !== 'function') throw new Error('Host ABI safeInvoke is missing');
  return safeInvoke;
}

/**
 * Normalises one alias segment: every character outside [A-Za-z0-9-]
 * becomes '_', runs of '_' collapse, leading and trailing '_' go; an empty
 * result takes the fallback. Case is kept.
 */
export function normalizeAliasSegment(text, fallback) {
  const s = String(text ?? '').replace(/[^A-Za-z0-9-]+/g, '_').replace(/_+/g, '_').replace(/^_+|_+$/g, '');
  return s || fallback;
}

/**
 * Allocates the alias of a tool for one round: `mcp__<server>__<tool>`,
 * shortened to fit 64 bytes with its suffix, `__N` (N ≥ 2) appended until
 * it is not in `used`. The alias is added to `used`.
 */
export function allocateMcpAlias(serverName, toolName, used) {
  const server = normalizeAliasSegment(serverName, 'server');
  const tool = normalizeAliasSegment(toolName, 'tool');
  for (let ordinal = 1; ; ordinal++) {
    const suffix = ordinal === 1 ? '' : `__${ordinal}`;
    const available = MAX_ALIAS_BYTES - ALIAS_PREFIX.length - ALIAS_SEPARATOR.length - suffix.length;
    let serverLen = server.length;
    let toolLen = tool.length;
    if (serverLen + toolLen > available) {
      serverLen = Math.min(server.length, SERVER_SEGMENT_CAP, Math.floor(available / 2));
      toolLen = Math.min(tool.length, available - serverLen);
      serverLen = Math.min(server.length, available - toolLen);
    }
    const alias = ALIAS_PREFIX + server.slice(0, serverLen) + ALIAS_SEPARATOR + tool.slice(0, toolLen) + suffix;
    if (!used.has(alias)) {
      used.add(alias);
      return alias;
    }
  }
}

function validResolution(r) {
  return r !== null && typeof r === 'object' && Array.isArray(r.tools) && Array.isArray(r.diagnostics) &&
    r.tools.every((t) => t && typeof t.toolId === 'string' && typeof t.nativeName === 'string' &&
      typeof t.serverDisplayName === 'string' && t.inputSchema && typeof t.inputSchema === 'object');
}

function notify(host, level, text, title) {
  const toastr = host.toastr ?? globalThis.toastr;
  toastr?.[level]?.(text, title);
}

/**
 * Lists the permitted MCP tools once for a root generation. It never
 * rejects: when the tools cannot be listed the context is empty (local
 * tools and normal generation are unaffected) and the user is told.
 */
export async function prepareLegacyMcpGenerationContext(host = {}) {
  const safeInvoke = host.safeInvoke ?? hostSafeInvoke();
  const log = host.console ?? globalThis.console;
  let descriptors = [];
  try {
    const resolution = await safeInvoke('list_legacy_mcp_tools');
    if (!validResolution(resolution)) throw new Error('list_legacy_mcp_tools returned an invalid resolution');
    descriptors = resolution.tools;
    if (resolution.diagnostics.length > 0) {
      for (const d of resolution.diagnostics) log?.warn?.(`[Legacy MCP] ${d.code}: ${d.message}`);
      notify(host, 'warning', 'Some MCP tools are unavailable for this generation. Check MCP Manager and the console for details.', 'MCP tools unavailable');
    }
  } catch (err) {
    log?.error?.('[Legacy MCP] Failed to list MCP tools:', err);
    notify(host, 'error', 'MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.', 'MCP tools unavailable');
    descriptors = [];
  }
  return new LegacyMcpGenerationContext(Object.freeze(descriptors.slice()), safeInvoke, log);
}

class LegacyMcpGenerationContext {
  constructor(descriptors, safeInvoke, log) {
    this.descriptors = descriptors;
    this.safeInvoke = safeInvoke;
    this.log = log;
  }

  /** Starts one Generate round over the root's frozen descriptors. */
  createRound() {
    return new LegacyMcpRound(this);
  }
}

class LegacyMcpRound {
  constructor(context) {
    this.context = context;
    this.bindings = new Map(); // alias → descriptor, as merged
    this.advertised = null; // aliases that reached the request exactly once
    this.merged = false;
  }

  /**
   * Adds the MCP tools to the request's tools, after the local ones, each
   * under an alias unused by the round. Call exactly once per round.
   */
  mergeIntoToolData(toolData) {
    if (this.merged) throw new Error('Legacy MCP tools were already merged into this round');
    this.merged = true;
    const tools = Array.isArray(toolData.tools) ? toolData.tools : [];
    const used = new Set(tools.map((t) => t?.function?.name).filter((n) => typeof n === 'string'));
    let added = 0;
    for (const d of this.context.descriptors) {
      const alias = allocateMcpAlias(d.serverDisplayName, d.nativeName, used);
      this.bindings.set(alias, d);
      tools.push({
        type: 'function',
        function: { name: alias, description: d.description || d.title || d.nativeName, parameters: structuredClone(d.inputSchema) },
      });
      added++;
    }
    if (added > 0) {
      toolData.tools = tools;
      toolData.tool_choice = 'auto';
    }
  }

  /**
   * Records which aliases the hooks left in the final request: an alias is
   * bound only if its name occurs exactly once there. Call exactly once,
   * after mergeIntoToolData and the settings hooks, before sending.
   */
  finalizeAdvertisedTools(generateData) {
    if (!this.merged) throw new Error('Legacy MCP tools must be merged before they are finalized');
    if (this.advertised) throw new Error('Legacy MCP tools were already finalized for this round');
    const counts = new Map();
    for (const t of Array.isArray(generateData?.tools) ? generateData.tools : []) {
      const name = t?.function?.name;
      if (typeof name === 'string') counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    this.advertised = new Set([...this.bindings.keys()].filter((alias) => counts.get(alias) === 1));
  }

  /**
   * Resolves a tool name of the model's answer: null for names that are not
   * this round's MCP aliases (local tools resolve through their registry).
   */
  resolveTool(name) {
    if (!this.advertised) throw new Error('Legacy MCP tools must be finalized before tool calls are resolved');
    const d = this.bindings.get(name);
    if (!d) return null;
    const displayName = `${d.title || d.nativeName} (${d.serverDisplayName})`;
    const advertised = this.advertised.has(name);
    const { safeInvoke, log } = this.context;
    return {
      displayName,
      formatMessage: () => `Invoking MCP tool: ${displayName}`,
      invoke: (options = {}) => advertised
        ? callLegacyMcpTool(safeInvoke, log, d.toolId, options)
        : Promise.resolve({
          result: JSON.stringify({
            outcome: 'not_sent',
            code: 'mcp.legacy_tool_not_advertised',
            message: `MCP tool alias "${name}" was not uniquely advertised in the post-hook frontend payload`,
          }, null, 2),
          error: true,
        }),
    };
  }
}

/**
 * Executes one model tool call (start acknowledgement, call, cancel on
 * abort) and maps its outcome to a tool result: { result: <pretty JSON
 * outcome>, error }. An unknown outcome throws; so does a call stopped
 * before it was sent (AbortError). A known answer arriving after Stop is
 * returned: it happened.
 */
async function callLegacyMcpTool(safeInvoke, log, toolId, { argumentsJson, signal } = {}) {
  if (signal?.aborted) throw abortError();
  const executionCallId = crypto.randomUUID();
  const cancel = () => {
    const failed = (err) => log?.debug?.('Failed to stop Legacy MCP tool call:', err);
    try {
      Promise.resolve(safeInvoke('cancel_legacy_mcp_tool_call', { dto: { executionCallId } })).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
  await safeInvoke('start_legacy_mcp_tool_call', { dto: { executionCallId } });
  if (signal?.aborted) {
    cancel();
    throw abortError();
  }
  signal?.addEventListener('abort', cancel, { once: true });
  let outcome;
  try {
    outcome = await safeInvoke('call_legacy_mcp_tool', { dto: { executionCallId, toolId, argumentsJson: argumentsJson ?? '' } });
  } catch (err) {
    cancel();
    throw err;
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
  switch (outcome?.outcome) {
    case 'outcome_unknown':
      throw new LegacyMcpOutcomeUnknownError(outcome.code, outcome.message);
    case 'not_sent':
      if (signal?.aborted) throw abortError();
      return { result: JSON.stringify(outcome, null, 2), error: true };
    case 'known_response': {
      const r = outcome.response;
      const error = !(r?.kind === 'tool_result' && r.isError !== true);
      return { result: JSON.stringify(outcome, null, 2), error };
    }
    default:
      throw new Error(`Unexpected Legacy MCP call outcome: ${outcome?.outcome}`);
  }
}
