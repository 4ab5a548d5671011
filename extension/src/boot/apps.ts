// Wires MCP Apps (issue 30) to the real page: the model's calls of tools
// with an interface are recorded on SillyTavern's tool message (saved with
// the chat), their Apps drawn below it (features/apps/chat-apps.ts), and
// what an App asks goes to ttmcp's api.mcp.apps, SillyTavern's popups,
// input box, send button and extension prompts.

import type { LegacyMcpTool, McpAppResource, McpCallOutcome } from '../../../jsapi/tauritavern-mcp';
import type { Tr } from '../base/texts';
import { newUUID } from '../base/values';
import type { AppBridgeModule, AppFrameDeps, AppRecord } from '../features/apps/app-frame';
import { mountApp, showAppFailure } from '../features/apps/app-frame';
import { APPS_EXTRA, ChatApps, type ChatMessageLike } from '../features/apps/chat-apps';
import type { TestCallApp } from '../features/manager/test-call-dialog';
import { appResult } from '../features/apps/policy';
import { askApproval } from '../features/model-tools/approval';
import { INPUT_BOX_ID, putInInputBox } from '../host/input-box';
import { EXTENSION_PROMPT_ROLES, EXTENSION_PROMPT_TYPES, stChatContext } from '../host/sillytavern-chat';
import { stLanguage } from '../host/sillytavern';
import { ST_EVENTS, stToolContext } from '../host/sillytavern-tools';
import { bridgeStatus, onBridgeChange, ttmcpApi } from '../host/tauritavern';

/** A model's call as the tool bridge reports it. */
export interface CalledTool {
  alias: string;
  tool: LegacyMcpTool;
  argumentsJson: string;
  result: string;
}

export interface StartedApps {
  /** The tool bridge's called hook. */
  called(call: CalledTool): void;
  /** The user's Stop (the tool bridge's stopped hook): every App's call under way is cancelled. */
  stopped(): void;
  apps: ChatApps;
  /** The Manager's test console's App renderer. */
  renderTestApp(container: HTMLElement, app: TestCallApp): () => void;
  unmount(): void;
}

/**
 * The test console's Apps (issue 30 item 3): the chat's App host
 * (mountApp) with the same gates — its tools through api.mcp.apps, Ask
 * through the same popup — but no chat: it neither posts messages nor
 * touches the model's context. The returned teardown ends it (an App still
 * loading is torn down once loaded); a failure to draw is said in container.
 */
export function testAppRenderer(deps: AppFrameDeps): (container: HTMLElement, app: TestCallApp) => () => void {
  const consoleDeps: AppFrameDeps = { ...deps, sendMessage: undefined, setModelContext: undefined };
  return (container, app) => {
    let gone = false;
    const mounting = mountApp(
      container,
      {
        invocationId: `test-${crypto.randomUUID()}`,
        registrationId: app.registrationId,
        serverDisplayName: app.serverDisplayName,
        appToolName: app.toolName,
        arguments: app.input,
        result: appResult(app.result),
      },
      consoleDeps,
    ).catch((err: unknown) => {
      if (!gone) showAppFailure(container, app.serverDisplayName, err);
      return null;
    });
    return () => {
      gone = true;
      void mounting.then((m) => m?.teardown(true));
    };
  };
}

/** The App bridge bundle, next to the extension's own (loaded on the first App). */
function loadBridge(): Promise<AppBridgeModule> {
  const url = new URL('./app-bridge.bundle.js', import.meta.url).href;
  return import(/* @vite-ignore */ url) as Promise<AppBridgeModule>;
}

function api() {
  const mcp = ttmcpApi();
  if (!mcp?.apps) throw new Error('ttmcp’s API has no MCP Apps (an older backend)');
  return mcp;
}

/**
 * dark or light: SillyTavern's theme sets its own text colour whatever the
 * system's preference, so a light text is a dark theme (an App drawn on the
 * chat's background must pick its colours by it).
 */
export function themeOf(textColor: string): 'dark' | 'light' {
  const m = /rgba?\((\d+)[, ]+(\d+)[, ]+(\d+)/.exec(textColor);
  if (!m) return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  const [r, g, b] = [m[1], m[2], m[3]].map((x) => Number(x) / 255) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 ? 'dark' : 'light';
}

/** SillyTavern's theme as the App's host context (its CSS variables), its locale, the space it has (the App host adds the display mode). */
export function hostContext(width: number): Record<string, unknown> {
  const style = getComputedStyle(document.body);
  const v = (name: string) => style.getPropertyValue(name).trim();
  const variables: Record<string, string> = {};
  const pairs: Array<[string, string]> = [
    ['--color-text-primary', '--SmartThemeBodyColor'],
    ['--color-text-secondary', '--SmartThemeEmColor'],
    ['--color-background-primary', '--SmartThemeBlurTintColor'],
    ['--color-background-secondary', '--SmartThemeChatTintColor'],
    ['--color-border-primary', '--SmartThemeBorderColor'],
    ['--color-text-info', '--SmartThemeQuoteColor'],
    ['--font-sans', '--mainFontFamily'],
  ];
  for (const [to, from] of pairs) {
    const value = v(from);
    if (value) variables[to] = value;
  }
  return {
    theme: themeOf(getComputedStyle(document.body).color),
    styles: { variables },
    containerDimensions: { maxHeight: 900, width },
    locale: stLanguage() || navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: matchMedia('(pointer: coarse)').matches ? 'mobile' : 'web',
  };
}

async function confirmPopup(text: string, title: string): Promise<boolean> {
  const ctx = stChatContext() as { callGenericPopup?: (c: string, t: number, i?: string, o?: object) => Promise<unknown>; POPUP_TYPE?: { CONFIRM?: number } } | undefined;
  const popup = ctx?.callGenericPopup;
  if (typeof popup !== 'function') return false; // nobody to ask: refused
  const body = document.createElement('div');
  const h = document.createElement('h3');
  h.textContent = title;
  const p = document.createElement('p');
  p.style.whiteSpace = 'pre-wrap';
  p.style.wordBreak = 'break-word';
  p.textContent = text;
  body.append(h, p);
  return (await popup(body.outerHTML, ctx?.POPUP_TYPE?.CONFIRM ?? 2)) === 1;
}

/** The App host's dependencies on this page. */
export function appFrameDeps(tr: Tr): AppFrameDeps {
  return {
    readInterface: (registrationId, appToolName): Promise<McpAppResource> => api().apps.readInterface({ registrationId, appToolName }),
    async callTool(req, signal) {
      const mcp = api();
      // A denial — the user's Deny, or a Stop during the Ask prompt (the
      // signal is aborted then) — is the backend's to record, as for the
      // model: it sends nothing to the server and audits the denial.
      // Returning before it left a Stop during Ask with no audit line.
      if (req.approval === 'denied') {
        const executionCallId = `app-${newUUID()}`;
        await mcp.apps.startCall({ executionCallId });
        return await mcp.apps.call({ executionCallId, ...req });
      }
      // Stopped before it was started: never sent (the backend is not asked).
      if (signal.aborted) return notSent(signal);
      const executionCallId = `app-${newUUID()}`;
      await mcp.apps.startCall({ executionCallId });
      // A Stop now reaches the backend, which answers what came of the call:
      // not sent, its result if it came first, or unknown once it was sent.
      const cancel = () => void mcp.apps.cancelCall({ executionCallId }).catch(() => undefined);
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
      try {
        return await mcp.apps.call({ executionCallId, ...req });
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },
    readResource: async (registrationId, uri) => {
      const outcome = await api().resources.read({ registrationId, uri });
      if (outcome.outcome !== 'known_response' || outcome.response.kind !== 'resource_contents') throw new Error('the resource was not read');
      return { contents: outcome.response.contents.map((c) => ({ uri: c.uri, ...(c.mimeType ? { mimeType: c.mimeType } : {}), ...(c.type === 'text' ? { text: c.text ?? '' } : { blob: c.blob ?? '' }) })) };
    },
    async permission(registrationId, nativeName) {
      const { servers } = await api().servers.list();
      return servers.find((s) => s.id === registrationId)?.toolPermissions[nativeName] ?? 'off';
    },
    askApproval: (req, signal) =>
      askApproval({ serverDisplayName: `${req.serverDisplayName} (App ${req.app})`, toolTitle: req.toolTitle, nativeName: req.nativeName, argumentsJson: req.argumentsJson, askedBy: 'app' }, signal, tr),
    confirm: (kind, text) => confirmPopup(text, kind === 'link' ? 'An MCP App wants to open this link' : 'An MCP App wants to send this message as you'),
    openLink: (url) => void window.open(url, '_blank', 'noopener,noreferrer'),
    async sendMessage(text) {
      if (!putInInputBox(text)) throw new Error(`no #${INPUT_BOX_ID}`);
      document.getElementById('send_but')?.click();
    },
    setModelContext(key, text) {
      const ctx = stChatContext();
      ctx?.setExtensionPrompt?.(key, text ?? '', EXTENSION_PROMPT_TYPES.IN_CHAT, 0, false, EXTENSION_PROMPT_ROLES.SYSTEM);
    },
    viewUrl: (viewId) => `${bridgeStatus()?.backend ?? location.origin}/apps/view/${encodeURIComponent(viewId)}`,
    loadBridge,
    hostContext,
    now: () => Date.now(),
    tr,
    // The App's frame has the focus (the user clicked or typed in it; an App
    // cannot take it) and the page has the user's activation (it reaches the
    // page from the frame): the user acted in this App, just now.
    userActive: (frame) => document.activeElement === frame && ((navigator as { userActivation?: { isActive: boolean } }).userActivation?.isActive ?? true),
  };
}

/** The outcome of an App's call stopped before it was started. */
function notSent(signal: AbortSignal): McpCallOutcome {
  return { outcome: 'not_sent', code: 'mcp.call_cancelled_before_send', message: `The tool request was cancelled before it started (${String(signal.reason ?? 'stopped')})` };
}

interface StInvocation {
  id?: unknown;
  name?: unknown;
}

/** Starts MCP Apps in the chat. */
export function startApps(tr: Tr, deps: AppFrameDeps = appFrameDeps(tr)): StartedApps {
  const apps = new ChatApps(deps);
  // The calls of the current batch, by alias, oldest first, with whether
  // each tool has an interface: the model's listing carries each tool's ui
  // (list_legacy_mcp_tools), so nothing is asked of the backend per call.
  const pending = new Map<string, Array<Promise<AppRecord | null>>>();
  const called = (call: CalledTool) => {
    const registrationId = call.tool.toolId.slice(4).split(':')[0] ?? '';
    const rec = (async (): Promise<AppRecord | null> => {
      if (!ttmcpApi()?.apps || !call.tool.ui?.resourceUri) return null;
      let args: Record<string, unknown> = {};
      try {
        args = JSON.parse(call.argumentsJson) as Record<string, unknown>;
      } catch {
        // kept empty
      }
      let result;
      try {
        result = appResult(JSON.parse(call.result));
      } catch {
        result = undefined;
      }
      return {
        invocationId: '',
        registrationId,
        serverDisplayName: call.tool.serverDisplayName,
        appToolName: call.tool.nativeName,
        arguments: args,
        ...(result ? { result } : {}),
      };
    })().catch(() => null);
    const list = pending.get(call.alias) ?? [];
    list.push(rec);
    pending.set(call.alias, list);
  };
  const chat = () => (stChatContext() as { chat?: ChatMessageLike[] } | undefined)?.chat ?? [];
  const render = () => apps.render(chat());
  const performed = async (invocations: unknown) => {
    const list = Array.isArray(invocations) ? (invocations as StInvocation[]) : [];
    const message = chat().at(-1);
    const records: AppRecord[] = [];
    for (const inv of list) {
      const queue = typeof inv.name === 'string' ? pending.get(inv.name) : undefined;
      const next = queue?.shift();
      if (!next) continue;
      const rec = await next;
      if (rec) records.push({ ...rec, invocationId: typeof inv.id === 'string' && inv.id ? inv.id : `${records.length}` });
    }
    pending.clear();
    if (message && records.length > 0) {
      message.extra ??= {};
      message.extra[APPS_EXTRA] = records;
    }
  };
  const changed = () => {
    void apps.clear().then(render);
  };
  const events = stToolContext()?.eventSource;
  const rendered = () => render();
  events?.on(ST_EVENTS.TOOL_CALLS_PERFORMED, performed as never);
  events?.on(ST_EVENTS.TOOL_CALLS_RENDERED, rendered);
  events?.on(ST_EVENTS.CHAT_CHANGED, changed);
  const others = ['message_deleted', 'message_swiped', 'more_messages_loaded', 'message_updated'];
  for (const e of others) events?.on(e, rendered);
  const say = () => void ttmcpApi()?.apps?.setRenderer(true);
  say();
  const offBridge = onBridgeChange(say);
  return {
    called,
    stopped: () => void apps.stop(),
    apps,
    renderTestApp: testAppRenderer(deps),
    unmount() {
      offBridge();
      events?.removeListener?.(ST_EVENTS.TOOL_CALLS_PERFORMED, performed as never);
      events?.removeListener?.(ST_EVENTS.TOOL_CALLS_RENDERED, rendered);
      events?.removeListener?.(ST_EVENTS.CHAT_CHANGED, changed);
      for (const e of others) events?.removeListener?.(e, rendered);
      void apps.clear();
    },
  };
}
