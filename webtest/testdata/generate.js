// A small, faithful emulation of SillyTavern's Generate as far as tools go
// (sillytavern-host-notes §5, with TauriTavern's Legacy MCP hooks of
// tauritavern-reference §6), driving jsapi/legacy-mcp-tools.js against an
// OpenAI-compatible chat-completions endpoint. The Go tests
// (legacy_test.go) script the model and drive this through window.gen.
//
// What is emulated, in ST's order:
//   GenerateInternal: a root obtains its Legacy MCP context once (the hook's
//     prepareLegacyMcpGenerationContext over the module's
//     createLegacyMcpGenerationContext, falling back to
//     createEmptyLegacyMcpGenerationContext; or inherited under
//     LEGACY_MCP_GENERATION_CONTEXT on recursion), only
//     while depth < ToolManager.RECURSE_LIMIT;
//   sendOpenAIRequest: generate_data, ToolManager.registerFunctionToolsOpenAI,
//     round.mergeIntoToolData, the CHAT_COMPLETION_SETTINGS_READY listeners
//     (gen.hooks, awaited in order), round.finalizeAdvertisedTools, fetch
//     (JSON, or SSE with tool_calls deltas merged by index);
//   ToolManager.invokeFunctionTools: normalise all calls first, then one
//     after another (throwIfAborted, resolver ?? local registry);
//   handleToolInvocationError: the persistent warning of an unknown outcome;
//   saveFunctionToolTurn: the whole batch at once, then recursion at
//     depth + 1 unless Stop was pressed.
// Toasts are recorded in gen.toasts (window.toastr), saves in gen.saves.

import {
  createEmptyLegacyMcpGenerationContext,
  createLegacyMcpGenerationContext,
  LegacyMcpOutcomeUnknownError,
} from '/jsapi/legacy-mcp-tools.js';

// As in TauriTavern's script.js: the option key is the hook's own, and so
// is the helper that turns a failed listing into the empty context.
const LEGACY_MCP_GENERATION_CONTEXT = Symbol('legacyMcpGenerationContext');

async function prepareLegacyMcpGenerationContext() {
  try {
    const context = await createLegacyMcpGenerationContext();
    if (context.diagnostics.length > 0) {
      window.toastr.warning('Some MCP tools are unavailable for this generation. Check MCP Manager and the console for details.', 'MCP tools unavailable');
    }
    return context;
  } catch (error) {
    console.error('[Legacy MCP] Failed to prepare MCP tools:', error);
    window.toastr.error('MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.', 'MCP tools unavailable');
    return createEmptyLegacyMcpGenerationContext();
  }
}

const OUTCOME_UNKNOWN_TITLE = 'MCP tool result unknown';
const OUTCOME_UNKNOWN_TEXT = 'One or more tools in this batch may have executed, but an MCP result is unknown. ' +
  'TauriTavern did not retry or save a partial tool turn. Check the MCP server and affected systems before trying again.';

// ---------------------------------------------------------------- toastr

const toasts = [];
window.toastr = {
  ...Object.fromEntries(['info', 'success', 'warning', 'error'].map((level) => [level, (text, title, options) => {
    const toast = { level, text: String(text ?? ''), title: String(title ?? ''), options: options ?? {}, cleared: false };
    toasts.push(toast);
    return toast;
  }])),
  clear(toast) {
    if (toast) toast.cleared = true;
  },
};

// ---------------------------------------------------------------- ToolManager

// mergeDelta merges a streamed delta into its target as ST's
// ToolManager.#applyToolCallDelta does: strings append, objects merge.
function mergeDelta(target, delta) {
  for (const [key, value] of Object.entries(delta ?? {})) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      if (target[key] === null || typeof target[key] !== 'object') target[key] = {};
      mergeDelta(target[key], value);
    } else if (typeof value === 'string' && typeof target[key] === 'string' && key !== 'id' && key !== 'type') {
      target[key] += value;
    } else {
      target[key] = value;
    }
  }
}

class ToolManager {
  static RECURSE_LIMIT = 5;
  static #tools = new Map();

  static registerFunctionTool({ name, displayName, description, parameters, action, formatMessage, shouldRegister, stealth }) {
    this.#tools.set(name, { name, displayName, description, parameters, action, formatMessage, shouldRegister, stealth: !!stealth });
  }

  static unregisterAll() {
    this.#tools.clear();
  }

  // Replaces data.tools with the registered tools (if any).
  static registerFunctionToolsOpenAI(data) {
    const tools = [];
    for (const t of this.#tools.values()) {
      if (t.shouldRegister && !t.shouldRegister()) continue;
      tools.push({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } });
    }
    if (tools.length > 0) {
      data.tools = tools;
      data.tool_choice = 'auto';
    }
  }

  // OpenAI choices[].delta.tool_calls, merged by choice and call index.
  static parseToolCalls(toolCalls, parsed) {
    for (const choice of Array.isArray(parsed?.choices) ? parsed.choices : []) {
      const deltas = choice?.delta?.tool_calls;
      if (typeof choice.index !== 'number' || !Array.isArray(deltas)) continue;
      toolCalls[choice.index] ??= [];
      deltas.forEach((delta, i) => {
        const index = typeof delta?.index === 'number' ? delta.index : i;
        toolCalls[choice.index][index] ??= {};
        mergeDelta(toolCalls[choice.index][index], delta);
      });
    }
  }

  // A local function tool: string arguments are parsed ('' is {}); a
  // failure is an error result the model sees.
  static async #invokeLocal(name, args) {
    try {
      const tool = this.#tools.get(name);
      if (!tool) throw new Error(`No tool with the name "${name}" has been registered`);
      const parameters = typeof args === 'string' ? (args ? JSON.parse(args) : {}) : args;
      const result = await tool.action(parameters);
      return { result: typeof result === 'string' ? result : JSON.stringify(result), error: false };
    } catch (err) {
      return { result: String(err), error: true };
    }
  }

  // Runs a batch: every call is checked first (a bad one invokes nothing),
  // then each runs after the previous one. Throws AbortError on Stop
  // between calls, and whatever a resolved tool's invoke throws.
  static async invokeFunctionTools(toolCalls, { toolResolver, signal, onInvocationStarted, onInvocationComplete } = {}) {
    const result = { invocations: [], errors: [], stealthCalls: [] };
    const calls = [];
    const ids = new Set();
    for (const c of toolCalls) {
      const id = c?.id;
      const name = c?.function?.name;
      const args = c?.function?.arguments;
      if (typeof id !== 'string' || !id || typeof name !== 'string' || !name || typeof args !== 'string') {
        result.errors.push(new Error(`Malformed tool call: ${JSON.stringify(c)}`));
      } else if (ids.has(id)) {
        result.errors.push(new Error(`Duplicate tool call id: ${id}`));
      } else {
        ids.add(id);
        calls.push({ id, name, args });
      }
    }
    if (result.errors.length > 0) return result;

    for (const call of calls) {
      signal?.throwIfAborted();
      const requestTool = toolResolver?.(call.name) ?? null; // MCP tools are never stealth
      const local = requestTool ? null : this.#tools.get(call.name);
      const displayName = requestTool?.displayName ?? local?.displayName ?? call.name;
      const message = requestTool?.formatMessage() ?? local?.formatMessage?.() ?? `Invoking tool: ${displayName}`;
      const toast = window.toastr.info(message, 'Tool Calling', { timeOut: 0 });
      try {
        const pending = requestTool
          ? requestTool.invoke({ argumentsJson: call.args, signal })
          : this.#invokeLocal(call.name, call.args);
        onInvocationStarted?.(call); // test instrumentation: the invoke is under way
        const { result: text, error } = await pending;
        if (local?.stealth) {
          result.stealthCalls.push(call.name);
          continue;
        }
        const invocation = { id: call.id, name: call.name, displayName, parameters: call.args, result: text, error: !!error };
        if (error) result.errors.push(new Error(text));
        result.invocations.push(invocation);
        await onInvocationComplete?.(invocation);
      } finally {
        window.toastr.clear(toast);
      }
    }
    return result;
  }
}

// ---------------------------------------------------------------- chat

const state = { chat: [], saves: [], controller: null };

// The prompt: replayed tool turns become an assistant message with
// tool_calls followed by one tool message per result.
function buildMessages(chat) {
  return chat.map((m) => {
    if (m.is_user) return { role: 'user', content: m.mes };
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.mes || '[No content]' };
    if (m.tool_calls) {
      return {
        role: 'assistant',
        content: m.mes,
        tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.parameters } })),
      };
    }
    return { role: 'assistant', content: m.mes };
  });
}

function saveChat() {
  state.saves.push(structuredClone(state.chat));
}

// The whole batch at once: the owning assistant message with its
// tool_calls, then one tool row per result, then one save.
function saveFunctionToolTurn(text, invocations) {
  state.chat.push({
    is_user: false,
    mes: text,
    tool_calls: invocations.map(({ id, name, displayName, parameters }) => ({ id, name, displayName, parameters })),
  });
  for (const i of invocations) {
    state.chat.push({ role: 'tool', name: i.name, is_system: true, is_user: false, mes: i.result, tool_call_id: i.id, error: i.error });
  }
  gen.events.push('TOOL_CALLS_PERFORMED');
  saveChat();
}

function handleToolInvocationError(error) {
  if (error instanceof LegacyMcpOutcomeUnknownError) {
    window.toastr.warning(`${OUTCOME_UNKNOWN_TEXT}\n\n${error.message}`, OUTCOME_UNKNOWN_TITLE,
      { timeOut: 0, extendedTimeOut: 0, closeButton: true });
  }
}

function showToolCallError(errors) {
  window.toastr.error(errors.map((e) => e.message).join('\n'), 'Tool Calling Error');
}

// ---------------------------------------------------------------- the request

async function sendRequest(data, signal) {
  const response = await fetch(gen.endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(data),
    signal,
  });
  if (!response.ok) throw new Error(`chat completions answered HTTP ${response.status}: ${await response.text()}`);
  if (!data.stream) {
    const message = (await response.json())?.choices?.[0]?.message ?? {};
    return { text: message.content ?? '', toolCalls: Array.isArray(message.tool_calls) ? message.tool_calls : [] };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const toolCalls = [];
  let buffer = '';
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(5).trim();
        if (payload === '[DONE]') {
          reader.cancel().catch(() => {});
          return { text, toolCalls: toolCalls[0] ?? [] };
        }
        const parsed = JSON.parse(payload);
        text += parsed?.choices?.[0]?.delta?.content ?? '';
        ToolManager.parseToolCalls(toolCalls, parsed);
      }
    }
  }
  return { text, toolCalls: toolCalls[0] ?? [] };
}

// ---------------------------------------------------------------- Generate

// One round; resolves 'done' or 'stopped' (a confirmed batch saved after
// Stop), rejects with what ended the generation.
async function Generate(type, options = {}) {
  const depth = options.depth ?? 0;
  const abortController = new AbortController();
  state.controller = abortController;
  gen.events.push(`GENERATION_STARTED ${type} ${depth}`);

  const canPerformToolCalls = depth < ToolManager.RECURSE_LIMIT;
  const useLegacyMcpTools = canPerformToolCalls; // main_api 'openai', no agent mode, not a dry run
  let legacyMcpContext = null;
  if (useLegacyMcpTools) {
    legacyMcpContext = options[LEGACY_MCP_GENERATION_CONTEXT] ?? await prepareLegacyMcpGenerationContext();
  }
  const round = legacyMcpContext?.createRound() ?? null;

  // sendOpenAIRequest
  const generate_data = { messages: buildMessages(state.chat), model: gen.model, stream: gen.stream, temperature: 1 };
  ToolManager.registerFunctionToolsOpenAI(generate_data); // it does not know the depth
  round?.mergeIntoToolData(generate_data);
  for (const hook of gen.hooks) await hook(generate_data, { depth }); // CHAT_COMPLETION_SETTINGS_READY
  round?.finalizeAdvertisedTools(generate_data);
  const { text, toolCalls } = await sendRequest(generate_data, abortController.signal);

  if (canPerformToolCalls && toolCalls.length > 0) {
    let result;
    try {
      result = await ToolManager.invokeFunctionTools(toolCalls, {
        toolResolver: (name) => round?.resolveTool(name) ?? null,
        signal: abortController.signal,
        onInvocationStarted: (call) => gen.onInvocationStarted?.(call),
        onInvocationComplete: (invocation) => gen.onInvocationComplete?.(invocation),
      });
    } catch (error) {
      handleToolInvocationError(error);
      throw error;
    }
    if (result.invocations.length === 0 || result.stealthCalls.length > 0) {
      if (result.errors.length > 0) showToolCallError(result.errors);
      return 'done';
    }
    if (result.errors.length > 0) showToolCallError(result.errors);
    saveFunctionToolTurn(text, result.invocations);
    if (abortController.signal.aborted) return 'stopped'; // saved, but no recursion
    return Generate('normal', { ...options, depth: depth + 1, [LEGACY_MCP_GENERATION_CONTEXT]: legacyMcpContext });
  }
  state.chat.push({ is_user: false, mes: text });
  saveChat();
  return 'done';
}

function describe(err) {
  return { isError: err instanceof Error, name: String(err?.name ?? ''), message: String(err?.message ?? err), code: String(err?.code ?? ''), kind: String(err?.kind ?? '') };
}

export const gen = {
  endpoint: '', // the chat-completions URL
  model: 'fake-model',
  stream: false,
  hooks: [], // CHAT_COMPLETION_SETTINGS_READY listeners: (generate_data, { depth }) => void | Promise
  onInvocationStarted: null, // (call) => void, synchronously once a call's invoke began
  onInvocationComplete: null, // (invocation) => void, after each call of a batch
  events: [],
  toasts,
  ToolManager,

  get chat() {
    return state.chat;
  },
  get saves() {
    return state.saves;
  },

  // The Stop button.
  stop() {
    state.controller?.abort();
  },

  // A new chat, with no hooks, callbacks, local tools or toasts.
  reset() {
    state.chat = [];
    state.saves = [];
    state.controller = null;
    gen.hooks = [];
    gen.onInvocationStarted = null;
    gen.onInvocationComplete = null;
    gen.events = [];
    toasts.length = 0;
    ToolManager.unregisterAll();
    ToolManager.RECURSE_LIMIT = 5;
  },

  // A user message, then Generate('normal'); resolves with how it ended
  // and a snapshot of the chat, the saves and the toasts.
  async generate(userText, { stream = gen.stream } = {}) {
    gen.stream = stream;
    state.chat.push({ is_user: true, mes: userText });
    saveChat();
    let status;
    let error = null;
    try {
      status = await Generate('normal', {});
    } catch (err) {
      status = err?.name === 'AbortError' ? 'aborted' : 'failed';
      error = describe(err);
    }
    return { status, error, chat: structuredClone(state.chat), saves: state.saves.length, toasts: structuredClone(toasts) };
  },
};
