// ttmcp legacy generation adapter: offers the MCP tools the user permitted
// to a SillyTavern-style Generate loop, and executes the model's calls
// through the backend (tauritavern-reference §6). Its exports are
// TauriTavern's (createLegacyMcpGenerationContext,
// createEmptyLegacyMcpGenerationContext, LegacyMcpOutcomeUnknownError), so
// TauriTavern's own Generate hooks and tests work against it unchanged:
//
//   import { createLegacyMcpGenerationContext } from '<backend>/jsapi/legacy-mcp-tools.js';
//   const context = await createLegacyMcpGenerationContext();    // once per root; rejects when listing fails
//   const round = context.createRound();                          // once per Generate round
//   round.mergeIntoToolData(generate_data);   // after the local tools were registered
//   await emit(CHAT_COMPLETION_SETTINGS_READY, generate_data);    // hooks may edit tools
//   round.finalizeAdvertisedTools(generate_data);                 // before the fetch
//   const tool = round.resolveTool(name);     // null: not an MCP alias (a local tool)
//   const { result, error } = await tool.invoke({ argumentsJson, signal });
//
// prepareLegacyMcpGenerationContext() is the hook's helper beside them: it
// never rejects, tells the user with a toast, and falls back to the empty
// context (upstream keeps it local to script.js).
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
// By default the module uses globalThis.window?.__TAURITAVERN__?.invoke?.safeInvoke,
// looked up at call time; it never touches the request body options or the
// local tool registry.

/** The option key under which a root passes its context to its recursive rounds. */
export const LEGACY_MCP_GENERATION_CONTEXT = Symbol('legacyMcpGenerationContext');

const MAX_ALIAS_BYTES = 64;
const ALIAS_PREFIX = 'mcp__';
const ALIAS_SEPARATOR = '__';
const SERVER_SEGMENT_CAP = 20;
const HOST_CONNECTION_LOST = 'mcp.host_connection_lost';

/** Thrown when a call may have run but its result is unknown: end the generation. */
export class LegacyMcpOutcomeUnknownError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'LegacyMcpOutcomeUnknownError';
    this.code = code;
  }
}

/** Stop: an Error named AbortError whose message is the signal's reason when that is a string. */
function abortError(reason) {
  const error = new Error(typeof reason === 'string' ? reason : 'Generation was aborted.');
  error.name = 'AbortError';
  return error;
}

/** The host's safeInvoke, looked up when a command is sent. */
function hostSafeInvoke(command, args, options) {
  const safeInvoke = globalThis.window?.__TAURITAVERN__?.invoke?.safeInvoke ?? globalThis.__TAURITAVERN__?.invoke?.safeInvoke;
  if (typeof safeInvoke !== 'function') throw new Error('Host ABI safeInvoke is missing');
  return options === undefined ? safeInvoke(command, args) : safeInvoke(command, args, options);
}

/**
 * A v4 UUID: crypto.randomUUID() where the page has it, else one made from
 * crypto.getRandomValues. randomUUID exists only in secure contexts, and a
 * SillyTavern opened from a phone at http://<LAN address>/ is not one
 * (getRandomValues is everywhere).
 */
function randomExecutionCallId() {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; // version 4
  b[8] = (b[8] & 0x3f) | 0x80; // variant 10
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Normalises one alias segment: every character outside [A-Za-z0-9-]
 * becomes '_', runs of '_' collapse, leading and trailing '_' go; an empty
 * result takes the fallback. Case is kept. (One pass: a root with
 * thousands of tools normalises every name in every round.)
 */
export function normalizeAliasSegment(text, fallback) {
  const s = String(text ?? '');
  let out = '';
  let gap = false; // a run of other characters is pending
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45) {
      if (gap && out) out += '_';
      gap = false;
      out += s[i];
    } else {
      gap = true;
    }
  }
  return out || fallback;
}

// Normalised segments by their text: a root's round normalises the same
// server and tool names as the last root's (thousands of them); cleared
// when full.
const SEGMENTS_AT_MOST = 1 << 15;
const segments = new Map();

/** normalizeAliasSegment(text, '') of a name, remembered. */
function normalizedSegment(text) {
  if (typeof text !== 'string') return normalizeAliasSegment(text, '');
  let out = segments.get(text);
  if (out === undefined) {
    out = normalizeAliasSegment(text, '');
    if (segments.size >= SEGMENTS_AT_MOST) segments.clear();
    segments.set(text, out);
  }
  return out;
}

/**
 * Allocates the alias of a tool for one round: `mcp__<server>__<tool>`,
 * shortened to fit 64 bytes with its suffix, `__N` (N ≥ 2) appended until
 * it is not in `used`. The alias is added to `used`.
 */
export function allocateMcpAlias(serverName, toolName, used) {
  const server = normalizedSegment(serverName) || 'server';
  const tool = normalizedSegment(toolName) || 'tool';
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

/**
 * A deep copy of JSON data (what JSON.parse makes: plain objects, arrays,
 * strings, numbers, booleans, null), as structuredClone would make it, a
 * few times faster: every round clones every advertised schema.
 */
function cloneJson(v) {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(cloneJson);
  const out = {};
  for (const key of Object.keys(v)) {
    const value = cloneJson(v[key]);
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

function validResolution(r) {
  return r !== null && typeof r === 'object' && Array.isArray(r.tools) && Array.isArray(r.diagnostics) &&
    r.tools.every((t) => t && typeof t.toolId === 'string' && typeof t.nativeName === 'string' &&
      typeof t.serverDisplayName === 'string' && t.inputSchema !== null && typeof t.inputSchema === 'object');
}

/**
 * Lists the permitted MCP tools once for a root generation
 * (list_legacy_mcp_tools) and returns the root's context, whose `tools` and
 * `diagnostics` are that listing. Each diagnostic is warned on the console.
 * Rejects when the command fails or answers something else than
 * { tools: [...], diagnostics: [...] }.
 *
 * invokeCommand(command, args) sends a command (default: the host's
 * safeInvoke); createExecutionCallId() names each call (default: a random
 * UUID).
 */
export async function createLegacyMcpGenerationContext({
  invokeCommand = hostSafeInvoke,
  createExecutionCallId = randomExecutionCallId,
} = {}) {
  const resolution = await invokeCommand('list_legacy_mcp_tools');
  if (!validResolution(resolution)) throw new Error('list_legacy_mcp_tools returned an invalid resolution');
  for (const d of resolution.diagnostics) console.warn(`[Legacy MCP] ${d?.code}: ${d?.message}`);
  return new LegacyMcpGenerationContext(resolution.tools, resolution.diagnostics, invokeCommand, createExecutionCallId);
}

/** A context without tools: what a root uses when its tools could not be listed. */
export function createEmptyLegacyMcpGenerationContext() {
  return new LegacyMcpGenerationContext([], [], hostSafeInvoke, randomExecutionCallId);
}

/**
 * The hook's helper: createLegacyMcpGenerationContext, but it never rejects.
 * Diagnostics raise one warning toast; a failed listing is logged, raises an
 * error toast and yields the empty context (local tools and normal
 * generation are unaffected). `toastr` and `console` default to the page's.
 */
export async function prepareLegacyMcpGenerationContext({ invokeCommand, createExecutionCallId, toastr, console: log } = {}) {
  const toast = toastr ?? globalThis.toastr;
  try {
    const context = await createLegacyMcpGenerationContext({
      ...(invokeCommand ? { invokeCommand } : {}),
      ...(createExecutionCallId ? { createExecutionCallId } : {}),
    });
    if (context.diagnostics.length > 0) {
      toast?.warning?.('Some MCP tools are unavailable for this generation. Check MCP Manager and the console for details.', 'MCP tools unavailable');
    }
    return context;
  } catch (err) {
    (log ?? globalThis.console)?.error?.('[Legacy MCP] Failed to list MCP tools:', err);
    toast?.error?.('MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.', 'MCP tools unavailable');
    return createEmptyLegacyMcpGenerationContext();
  }
}

class LegacyMcpGenerationContext {
  constructor(tools, diagnostics, invokeCommand, createExecutionCallId) {
    this.tools = tools;
    this.diagnostics = diagnostics;
    this.invokeCommand = invokeCommand;
    this.createExecutionCallId = createExecutionCallId;
  }

  /** Starts one Generate round over the root's frozen tools. */
  createRound() {
    return new LegacyMcpRound(this);
  }
}

class LegacyMcpRound {
  #context;
  #bindings = new Map(); // alias → descriptor, as merged
  #advertised = null; // aliases that reached the request exactly once
  #merged = false;

  constructor(context) {
    this.#context = context;
  }

  /**
   * Adds the MCP tools to the request's tools, after the local ones, each
   * under an alias unused by the round. Call exactly once per round.
   */
  mergeIntoToolData(toolData) {
    if (this.#merged) throw new Error('Legacy MCP tools were already merged into this round');
    this.#merged = true;
    const tools = Array.isArray(toolData.tools) ? toolData.tools : [];
    const used = new Set(tools.map((t) => t?.function?.name).filter((n) => typeof n === 'string'));
    for (const d of this.#context.tools) {
      const alias = allocateMcpAlias(d.serverDisplayName, d.nativeName, used);
      this.#bindings.set(alias, d);
      tools.push({
        type: 'function',
        function: { name: alias, description: d.description || d.title || d.nativeName, parameters: cloneJson(d.inputSchema) },
      });
    }
    if (this.#bindings.size > 0) {
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
    if (!this.#merged) throw new Error('Legacy MCP tools must be merged before they are finalized');
    if (this.#advertised) throw new Error('Legacy MCP tools were already finalized for this round');
    const counts = new Map();
    for (const t of Array.isArray(generateData?.tools) ? generateData.tools : []) {
      const name = t?.function?.name;
      if (typeof name === 'string') counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    this.#advertised = new Set([...this.#bindings.keys()].filter((alias) => counts.get(alias) === 1));
  }

  /**
   * Resolves a tool name of the model's answer: null for names that are not
   * this round's MCP aliases (local tools resolve through their registry).
   */
  resolveTool(name) {
    if (!this.#advertised) throw new Error('Legacy MCP tools must be finalized before tool calls are resolved');
    const d = this.#bindings.get(name);
    if (!d) return null;
    const displayName = `${d.title || d.nativeName} (${d.serverDisplayName})`;
    const advertised = this.#advertised.has(name);
    const context = this.#context;
    return {
      displayName,
      formatMessage: () => `Invoking MCP tool: ${displayName}`,
      invoke: advertised
        ? ({ argumentsJson, signal } = {}) => invokeLegacyMcpTool(context, { toolId: d.toolId, argumentsJson, signal })
        : async () => ({
          result: serializeOutcome({
            outcome: 'not_sent',
            code: 'mcp.legacy_tool_not_advertised',
            message: `MCP tool alias "${name}" was not uniquely advertised in the post-hook frontend payload`,
          }),
          error: true,
        }),
    };
  }
}

function serializeOutcome(outcome) {
  return JSON.stringify(outcome, null, 2);
}

/** A rejection's message without the code it starts with. */
function withoutCode(code, message) {
  const text = String(message ?? '');
  return text.startsWith(`${code}: `) ? text.slice(code.length + 2) : text;
}

/**
 * Executes one model tool call — start acknowledgement, call, cancel on
 * abort — and maps its outcome to a tool result: { result: <pretty JSON
 * outcome>, error }. An unknown outcome throws LegacyMcpOutcomeUnknownError,
 * and so does a lost connection while the call was in flight (it may have
 * run); a call stopped before it was sent throws AbortError. A known answer
 * arriving after Stop is returned: it happened.
 *
 * `argumentsJson` is passed on as given (an omitted one stays omitted).
 * `approval` (a ttmcp addition: 'once', 'always' or 'denied', what the user
 * answered an Ask prompt) is sent only when given; with 'denied' the
 * backend records the refusal and answers not_sent mcp.call_denied_by_user
 * without calling the tool. `readable` (a ttmcp addition:
 * { inlineCharLimit?, readerTool? }) asks the backend for what the model
 * reads of the outcome, returned as `readable` ({ text, isError, stored? })
 * beside `result`, which stays upstream's outcome JSON. `onProgress` (a
 * ttmcp addition) takes the call's progress while it runs (McpCallProgress,
 * coalesced by the backend); it is handed to invokeCommand as a third
 * argument, { onProgress }, which ttmcp's safeInvoke understands.
 */
export async function invokeLegacyMcpTool({ invokeCommand = hostSafeInvoke, createExecutionCallId = randomExecutionCallId } = {},
  { toolId, argumentsJson, signal, approval, readable, onProgress } = {}) {
  if (signal?.aborted) throw abortError(signal.reason);
  const executionCallId = createExecutionCallId();
  const cancel = () => {
    const failed = (err) => console.debug('Failed to stop Legacy MCP tool call:', err);
    try {
      Promise.resolve(invokeCommand('cancel_legacy_mcp_tool_call', { dto: { executionCallId } })).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
  await invokeCommand('start_legacy_mcp_tool_call', { dto: { executionCallId } });
  if (signal?.aborted) {
    cancel();
    throw abortError(signal.reason);
  }
  signal?.addEventListener('abort', cancel, { once: true });
  const dto = { executionCallId, toolId, argumentsJson };
  if (approval !== undefined) dto.approval = approval;
  if (readable !== undefined) dto.readable = readable;
  let outcome;
  try {
    outcome = typeof onProgress === 'function'
      ? await invokeCommand('call_legacy_mcp_tool', { dto }, { onProgress })
      : await invokeCommand('call_legacy_mcp_tool', { dto });
  } catch (err) {
    cancel();
    // The socket dropped with the call in flight: it may have been sent.
    if (err?.code === HOST_CONNECTION_LOST) throw new LegacyMcpOutcomeUnknownError(HOST_CONNECTION_LOST, withoutCode(HOST_CONNECTION_LOST, err.message));
    throw err;
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
  const { readable: text, ...upstream } = outcome ?? {};
  const withText = (r) => (text !== undefined ? { ...r, readable: text } : r);
  switch (outcome?.outcome) {
    case 'outcome_unknown':
      throw new LegacyMcpOutcomeUnknownError(outcome.code, outcome.message);
    case 'not_sent':
      if (signal?.aborted) throw abortError(signal.reason);
      return withText({ result: serializeOutcome(upstream), error: true });
    case 'known_response': {
      const r = outcome.response;
      return withText({ result: serializeOutcome(upstream), error: !(r?.kind === 'tool_result' && r.isError !== true) });
    }
    default:
      throw new Error(`Unexpected Legacy MCP call outcome: ${outcome?.outcome}`);
  }
}
