// SillyTavern's Generate as far as function tools go, for the playground
// (backend/server/playground/, whose host/tools.js is ToolManager): the
// chat, Generate and stopGeneration of the first SillyTavern with
// registerFunctionTool (staging after 1.12.6, script.js and openai.js),
// driving an OpenAI-compatible chat-completions endpoint. The webtests
// (toolcalling_test.go) script the model and drive this through window.stChat.
//
// In SillyTavern's order, each Generate round:
//   GENERATION_STARTED (type, options, dryRun) — no depth in it;
//   a new AbortController (unless a signal was passed);
//   GENERATION_AFTER_COMMANDS;
//   the prompt: tool-invocation system messages are replayed (while tool
//     calling is supported) as an assistant message with tool_calls and a
//     tool message per result; the extension prompts (host/prompts.js) go
//     where openai.js puts them — BEFORE_PROMPT and IN_PROMPT ones each as
//     a message of its role before and after the main prompt (at the
//     start: the main prompt comes first in the default order; stChat
//     .mainPrompt, none when empty), IN_CHAT ones per depth (messages from
//     the end), one message per role joined by newlines, system, user,
//     assistant (populationInjectionPrompts);
//   ToolManager.registerFunctionToolsOpenAI (when canPerformToolCalls(type));
//   CHAT_COMPLETION_SETTINGS_READY with the request body, then the fetch;
//   with tool calls, at depth < RECURSE_LIMIT: ToolManager.invokeFunctionTools
//     (every call, one after another, a Stop meanwhile does not end the
//     batch), saveFunctionToolInvocations, and Generate('normal', depth + 1)
//     — SillyTavern does not look at the Stop button here either;
//   otherwise the reply is the assistant's message.
// stopGeneration() aborts the current round's controller and emits
// GENERATION_STOPPED. The chat's slash commands: /send (a user message
// without a generation, sendUserMessageCallback) and /trigger (Generate).
//
// Swipes and deletion as SillyTavern 1.18.0's script.js does them, as far
// as a message's extra goes: stChat.swipe(direction, { source }) swipes the
// last message — the arrows (source 'arrow') only where isMessageSwipeable
// allows (not a user's, not an isSmallSys one such as a tool message; /swipe
// and the swipe picker bypass that check); before it, syncMesToSwipe keeps
// the message's extra in swipe_info; going to another swipe sets mes and a
// structuredClone of that swipe's extra (syncSwipeToMes), draws the message
// again in place (addOneMessage type 'swipe': .mes_text only) and emits
// MESSAGE_SWIPED; swiping right past the last swipe clears what
// clearMessageData clears (not tool_invocations nor an extension's keys),
// emits MESSAGE_SWIPED and generates the new swipe (Generate('swipe'),
// saveReply's swipe). stChat.deleteMessage(id) splices the chat, removes the
// message's element, renumbers the later ones (updateViewMessageIds) and
// emits MESSAGE_DELETED with the chat's length.

import { provide, provideGetter } from '/host/context.js';
import { eventSource, event_types } from '/host/events.js';
import { extension_prompt_roles, extension_prompt_types, extension_prompts, getExtensionPrompt } from '/host/prompts.js';
import { SlashCommand, SlashCommandArgument, SlashCommandParser } from '/host/slash-commands.js';
import { ToolManager } from '/host/tools.js';

const state = { chat: [], abortController: null, saves: 0, requests: 0 };

export const stChat = {
  endpoint: '', // the chat-completions URL
  model: 'fake-model',
  stream: false,
  /** The main prompt's text; '' leaves it out. */
  mainPrompt: '',
  events: [],
  get chat() {
    return state.chat;
  },
  get saves() {
    return state.saves;
  },
  reset() {
    state.chat = [];
    state.saves = 0;
    state.abortController = null;
    stChat.events = [];
  },
  stop: stopGeneration,
  /** A user message, then Generate('normal'); resolves with how it ended. */
  async send(text, { stream = stChat.stream } = {}) {
    stChat.stream = stream;
    pushMessage({ is_user: true, mes: text });
    state.saves++;
    try {
      return { status: await Generate('normal'), chat: structuredClone(state.chat) };
    } catch (err) {
      return { status: err?.name === 'AbortError' ? 'aborted' : 'failed', error: String(err?.message ?? err), chat: structuredClone(state.chat) };
    }
  },
};

for (const e of [event_types.GENERATION_STARTED, event_types.GENERATION_AFTER_COMMANDS, event_types.GENERATION_STOPPED,
  event_types.TOOL_CALLS_PERFORMED, event_types.TOOL_CALLS_RENDERED]) {
  eventSource.on(e, () => stChat.events.push(e));
}

export function stopGeneration() {
  let stopped = false;
  if (state.abortController) {
    state.abortController.abort('Clicked stop button');
    stopped = true;
  }
  eventSource.emit(event_types.GENERATION_STOPPED);
  return stopped;
}

/**
 * The chat's messages, one entry per chat message (a depth counts chat
 * messages): a tool-invocation record is its assistant message with
 * tool_calls and a tool message per result, as SillyTavern replays it.
 */
function chatMessages(canUseTools) {
  const messages = [];
  for (const m of state.chat) {
    if (m.is_system) {
      if (!canUseTools || !Array.isArray(m.extra?.tool_invocations)) continue;
      const inv = m.extra.tool_invocations;
      messages.push([{ role: 'assistant', content: null,
        tool_calls: inv.map((i) => ({ id: i.id, type: 'function', function: { arguments: i.parameters, name: i.name } })) },
      ...inv.map((i) => ({ role: 'tool', content: i.result || '[No content]', tool_call_id: i.id }))]);
      continue;
    }
    messages.push([{ role: m.is_user ? 'user' : 'assistant', content: m.mes }]);
  }
  return messages;
}

const ROLES = { system: extension_prompt_roles.SYSTEM, user: extension_prompt_roles.USER, assistant: extension_prompt_roles.ASSISTANT };
const ROLE_NAMES = Object.fromEntries(Object.entries(ROLES).map(([name, id]) => [id, name]));

/** openai.js's populationInjectionPrompts for the extension prompts: per depth, per role. */
async function injectInChat(messages) {
  const depths = [...new Set(Object.values(extension_prompts)
    .filter((p) => p.position === extension_prompt_types.IN_CHAT && p.value)
    .map((p) => p.depth))].sort((a, b) => a - b);
  const reversed = [...messages].reverse();
  let inserted = 0;
  for (const depth of depths) {
    const roleMessages = [];
    for (const [role, id] of Object.entries(ROLES)) {
      const text = (await getExtensionPrompt(extension_prompt_types.IN_CHAT, depth, '\n', id, false)).trim();
      if (text) roleMessages.push([{ role, content: text }]);
    }
    if (roleMessages.length) {
      reversed.splice(depth + inserted, 0, ...roleMessages);
      inserted += roleMessages.length;
    }
  }
  return reversed.reverse().flat();
}

/** The relative extension prompts (before or after the main prompt), each a message of its role, in key order. */
function relativePrompts(position) {
  return Object.keys(extension_prompts).sort()
    .map((k) => extension_prompts[k])
    .filter((p) => p.position === position && p.value)
    .map((p) => ({ role: ROLE_NAMES[p.role] ?? 'system', content: p.value }));
}

async function buildPrompt(canUseTools) {
  const main = stChat.mainPrompt ? [{ role: 'system', content: stChat.mainPrompt }] : [];
  return [
    ...relativePrompts(extension_prompt_types.BEFORE_PROMPT),
    ...main,
    ...relativePrompts(extension_prompt_types.IN_PROMPT),
    ...(await injectInChat(chatMessages(canUseTools))),
  ];
}

async function sendRequest(data, signal) {
  state.requests++;
  const response = await fetch(stChat.endpoint, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(data), signal,
  });
  if (!response.ok) throw new Error(`chat completions answered HTTP ${response.status}`);
  if (!data.stream) {
    const json = await response.json();
    return { text: json?.choices?.[0]?.message?.content ?? '', data: json };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const toolCalls = [];
  let buffer = '';
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(5).trim();
        if (payload === '[DONE]') continue;
        const parsed = JSON.parse(payload);
        text += parsed?.choices?.[0]?.delta?.content ?? '';
        ToolManager.parseToolCalls(toolCalls, parsed);
      }
    }
  }
  return { text, data: toolCalls };
}

async function Generate(type, { depth = 0, signal } = {}, dryRun = false) {
  const options = { signal };
  await eventSource.emit(event_types.GENERATION_STARTED, type, options, dryRun);
  if (!(state.abortController && signal)) state.abortController = new AbortController();
  const abortController = state.abortController;
  await eventSource.emit(event_types.GENERATION_AFTER_COMMANDS, type, options, dryRun);

  const canUseTools = ToolManager.isToolCallingSupported();
  const canPerformToolCalls = !dryRun && ToolManager.canPerformToolCalls(type) && depth < ToolManager.RECURSE_LIMIT;
  const generate_data = { messages: await buildPrompt(canUseTools), model: stChat.model, stream: stChat.stream };
  if (ToolManager.canPerformToolCalls(type)) await ToolManager.registerFunctionToolsOpenAI(generate_data);
  await eventSource.emit(event_types.CHAT_COMPLETION_SETTINGS_READY, generate_data);

  let reply;
  try {
    reply = await sendRequest(generate_data, abortController.signal);
  } catch (err) {
    if (abortController.signal.aborted) return 'stopped';
    throw err;
  }
  if (canPerformToolCalls && ToolManager.hasToolCalls(reply.data)) {
    const shouldDeleteMessage = ['', '...'].includes(reply.text);
    if (!shouldDeleteMessage) pushMessage({ is_user: false, mes: reply.text });
    const result = await ToolManager.invokeFunctionTools(reply.data);
    if (!result.invocations.length && shouldDeleteMessage) {
      ToolManager.showToolCallError(result.errors);
      return 'done';
    }
    await ToolManager.saveFunctionToolInvocations(state.chat, result.invocations, { render: renderMessage, save: () => state.saves++ });
    return Generate('normal', { depth: depth + 1, signal }, dryRun);
  }
  if (type === 'swipe') {
    // saveReply's swipe: the new swipe of the last message
    const last = state.chat.at(-1);
    last.mes = reply.text;
    last.swipes[last.swipe_id] = reply.text;
    last.swipe_info[last.swipe_id] = { extra: structuredClone(last.extra) };
    redrawMessage(state.chat.length - 1);
    state.saves++;
    return 'done';
  }
  pushMessage({ is_user: false, mes: reply.text });
  state.saves++;
  return 'done';
}

/** chat.push, then addOneMessage. */
function pushMessage(message) {
  state.chat.push(message);
  renderMessage(message);
}

const CHECKED_SWIPE_SOURCES = ['arrow', 'keyboard'];
const CLEARED_EXTRA = ['memory', 'display_text', 'media', 'inline_image', 'files', 'fileLength', 'generationType', 'negative', 'title', 'append_title'];

/** addOneMessage(message, { type: 'swipe' }): the message's element kept, its text drawn again. */
function redrawMessage(id) {
  const text = document.querySelector(`#chat .mes[mesid="${id}"] .mes_text`);
  if (text) text.textContent = state.chat[id].mes;
}

async function swipe(direction, { source = 'arrow' } = {}) {
  const id = state.chat.length - 1;
  const m = state.chat[id];
  if (!m) return false;
  if (CHECKED_SWIPE_SOURCES.includes(source) && (m.is_user || m.extra?.isSmallSys || m.extra?.swipeable === false)) return false;
  // syncMesToSwipe
  if (m.swipe_id === undefined) {
    m.swipe_id = 0;
    m.swipes = [m.mes];
    m.swipe_info = [{ extra: structuredClone(m.extra ?? {}) }];
  } else {
    m.swipes[m.swipe_id] = m.mes;
    m.swipe_info[m.swipe_id] = { extra: structuredClone(m.extra ?? {}) };
  }
  let next = m.swipe_id + (direction === 'left' ? -1 : 1);
  if (next < 0) next = m.swipes.length - 1;
  if (next >= m.swipes.length) {
    // overswipe: regenerate
    m.swipe_id = m.swipes.length;
    m.swipes.push('');
    m.swipe_info.push({ extra: {} });
    for (const k of CLEARED_EXTRA) delete m.extra?.[k];
    m.mes = '...';
    redrawMessage(id);
    await eventSource.emit(event_types.MESSAGE_SWIPED, id);
    return Generate('swipe');
  }
  m.swipe_id = next;
  m.mes = m.swipes[next];
  m.extra = structuredClone(m.swipe_info[next]?.extra) ?? {};
  redrawMessage(id);
  await eventSource.emit(event_types.MESSAGE_SWIPED, id);
  return true;
}

async function deleteMessage(id) {
  const el = document.querySelector(`#chat .mes[mesid="${id}"]`);
  if (!el) return;
  state.chat.splice(id, 1);
  el.remove();
  document.querySelectorAll('#chat .mes').forEach((m, i) => m.setAttribute('mesid', String(i)));
  state.saves++;
  await eventSource.emit(event_types.MESSAGE_DELETED, state.chat.length);
}

stChat.swipe = swipe;
stChat.deleteMessage = deleteMessage;

// SillyTavern's chat (getContext().chat) and its messages' DOM, as
// addOneMessage draws them: #chat > .mes[mesid] > .mes_block > .mes_text
// (what MCP Apps are drawn below), for every message.
provideGetter('chat', () => state.chat);
function renderMessage(message) {
  let chat = document.getElementById('chat');
  if (!chat) {
    chat = document.createElement('div');
    chat.id = 'chat';
    document.body.append(chat);
  }
  const mes = document.createElement('div');
  mes.className = 'mes';
  mes.setAttribute('mesid', String(state.chat.indexOf(message)));
  const block = document.createElement('div');
  block.className = 'mes_block';
  const text = document.createElement('div');
  text.className = 'mes_text';
  text.textContent = message.mes;
  block.append(text);
  mes.append(block);
  chat.append(mes);
}

provide('generate', Generate);
// SillyTavern's getContext().chat: the chat array (the bridge mends a tool-call record in it)
provideGetter('chat', () => state.chat);
provide('stopGeneration', stopGeneration);

// The chat's slash commands (slash-commands.js): /send adds a user message
// without generating; /trigger generates.
SlashCommandParser.addCommandObject(SlashCommand.fromProps({
  name: 'send',
  rawQuotes: true,
  callback: async (_args, text) => {
    pushMessage({ is_user: true, mes: String(text ?? '').trim() });
    state.saves++;
    return '';
  },
  unnamedArgumentList: [SlashCommandArgument.fromProps({ description: 'text', isRequired: true })],
  helpString: 'Adds a user message to the chat log without triggering a generation.',
}));
SlashCommandParser.addCommandObject(SlashCommand.fromProps({
  name: 'trigger',
  callback: async () => {
    stChat.lastTrigger = await Generate('normal').catch((err) => `failed: ${err?.message ?? err}`);
    return '';
  },
  helpString: 'Triggers a generation.',
}));
window.stChat = stChat;
