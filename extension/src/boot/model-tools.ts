// Wires the tool bridge and the Manager's tool parts to the real page:
// SillyTavern's context and events, window.__TAURITAVERN__ (api.mcp,
// invoke.safeInvoke, ttmcp's bridge status), toastr and the Ask popup; the
// tool sets' screen and dialogs, their bindings in the chat and the
// settings, and the chat-side control in the extensions menu.

import type { LegacyMcpToolList } from '../../../jsapi/tauritavern-mcp';
import { openResultDialog } from '../features/model-tools/result-dialog';
import { BACKEND_EVENT, notifyRegistrationsChanged } from '../host/changes';
import { bridgeStatus, mcpApiPublished, onBridgeChange, safeInvoke, ttmcpApi } from '../host/tauritavern';
import type { Tr } from '../base/texts';
import { openBindingDialog } from '../features/toolsets/binding-dialog';
import { confirmRemoveToolSet } from '../features/toolsets/remove-dialog';
import { openToolSetDialog } from '../features/toolsets/toolset-dialog';
import type { ToolSetsDeps } from '../features/toolsets/ToolSetsPanel';
import { askApproval } from '../features/model-tools/approval';
import { applyBindings, bindToolSet, readScope, type AppliedToolSet, type StBindingContext } from '../host/bindings';
import { ToolBridge, type ToolBridgeHost } from '../features/model-tools/bridge';
import { mountChatMenu } from '../host/chat-menu';
import { menuLabel } from '../features/model-tools/menu-label';
import { toolReach } from '../features/model-tools/reach';
import { parseSearchSetting, SEARCH_SETTING } from '../features/model-tools/search';
import { readSetting, writeSetting } from '../host/settings';
import { ST_EVENTS, stToolContext } from '../host/sillytavern-tools';
import type { ToolsPanelDeps } from '../features/model-tools/ToolsPanel';
import { createElement } from 'react';
import type { McpCallProgress } from '../../../jsapi/tauritavern-mcp';
import { mountChatStatus } from '../host/chat-status';
import { CallProgress } from '../ui/CallProgress';
import type { Pinnable } from '../ui/PinPicker';

interface Toastr {
  warning?(text: string, title?: string, options?: object): unknown;
  error?(text: string, title?: string, options?: object): unknown;
}

/** Dispatched on window after each root generation's listing. */
export const TOOLS_LISTED_EVENT = 'ttmcp-tools:listed';

/** Dispatched on window after a tool set or a binding changed. */
export const TOOL_SETS_CHANGED_EVENT = 'ttmcp-tools:sets';

function notifyToolSets(): void {
  window.dispatchEvent(new Event(TOOL_SETS_CHANGED_EVENT));
}

function scope() {
  return readScope(stToolContext() as StBindingContext | undefined);
}

/** The set the chat open now uses (every permitted tool without the tool set API). */
async function appliedSet(): Promise<AppliedToolSet> {
  const toolSets = ttmcpApi()?.toolSets;
  if (!toolSets) return { missing: [] };
  return applyBindings(scope(), (await toolSets.list()).toolSets);
}

/** How long the last progress stays in the chat after the call, so a last step sent with the answer is seen. */
export const CHAT_STATUS_LINGER_MS = 800;

/** The status of a call that ended and lingers; the next call's replaces it at once. */
let lingering: { remove(): void } | undefined;

/**
 * A model's call in the chat while it runs: its name, progress and time
 * (issue 29). A server often sends its last step just before its answer:
 * that state stays CHAT_STATUS_LINGER_MS after it came, then the status
 * goes (at once for a call that reported nothing, or when the next call
 * shows its own).
 */
function chatCallStatus(tr: Tr, name: string): { progress(p: McpCallProgress): void; end(): void } {
  lingering?.remove();
  lingering = undefined;
  const slot = mountChatStatus(tr);
  const startedAt = Date.now();
  const label = tr('chat_call_running', { name });
  let lastAt = 0;
  const render = (progress: McpCallProgress | undefined) => slot.render(createElement(CallProgress, { progress, startedAt, label }));
  render(undefined);
  return {
    progress(p) {
      lastAt = Date.now();
      render(p);
    },
    end() {
      const wait = lastAt === 0 ? 0 : Math.max(0, lastAt + CHAT_STATUS_LINGER_MS - Date.now());
      if (wait === 0) {
        slot.remove();
        return;
      }
      lingering = slot;
      setTimeout(() => {
        slot.remove();
        if (lingering === slot) lingering = undefined;
      }, wait);
    },
  };
}

function toast(level: 'warning' | 'error', text: string, title: string, persistent = false): void {
  const toastr = (globalThis as { toastr?: Toastr }).toastr;
  toastr?.[level]?.(text, title, persistent ? { timeOut: 0, extendedTimeOut: 0, closeButton: true } : undefined);
}

/** What the rest of the page tells the bridge. */
export interface PageToolOptions {
  /** One attempt to connect now (the Manager's). */
  wake?: () => Promise<void>;
  /** Whether the last Stop came from a server's question popup (read once). */
  stoppedWhileAsked?: () => boolean;
  /** Told of each call that returned (MCP Apps record the calls of tools with an interface). */
  called?: ToolBridgeHost['called'];
  stopped?: ToolBridgeHost['stopped'];
}

/** The bridge's view of this page. */
export function pageToolHost(tr: Tr, opts: PageToolOptions = {}): ToolBridgeHost {
  const { wake, stoppedWhileAsked, called, stopped } = opts;
  return {
    context: stToolContext,
    api: ttmcpApi,
    invokeCommand: safeInvoke,
    // ttmcp's bridge, or nothing yet: the Manager is loading ttmcp's API
    // (TauriTavern publishes its own before extensions load).
    isTtmcp: () => bridgeStatus() !== undefined || !mcpApiPublished(),
    connected: () => bridgeStatus()?.state === 'open',
    ...(wake ? { wake } : {}),
    ...(stoppedWhileAsked ? { stoppedWhileAsked } : {}),
    ...(called ? { called } : {}),
    ...(stopped ? { stopped } : {}),
    askApproval: (req, signal) => askApproval(req, signal, tr),
    callStatus: (name) => chatCallStatus(tr, name),
    toast,
    listed: () => void window.dispatchEvent(new Event(TOOLS_LISTED_EVENT)),
    changed: notifyRegistrationsChanged,
    scope,
    defaultSearch: () => parseSearchSetting(readSetting(SEARCH_SETTING)),
    tr,
  };
}

export interface ModelTools {
  bridge: ToolBridge | null;
  panel: ToolsPanelDeps;
  toolSets: ToolSetsDeps;
  /** Removes the chat-side control. */
  unmount(): void;
}

/** Calls fn on the moments the tool set in use may change: chat, bindings, sets, the connection. */
function onToolSetChange(fn: () => void): () => void {
  const offBridge = onBridgeChange(fn);
  window.addEventListener(TOOL_SETS_CHANGED_EVENT, fn);
  window.addEventListener(TOOLS_LISTED_EVENT, fn);
  const events = stToolContext()?.eventSource;
  events?.on(ST_EVENTS.CHAT_CHANGED, fn);
  return () => {
    offBridge();
    window.removeEventListener(TOOL_SETS_CHANGED_EVENT, fn);
    window.removeEventListener(TOOLS_LISTED_EVENT, fn);
    events?.removeListener?.(ST_EVENTS.CHAT_CHANGED, fn);
  };
}

/** What the default's search may pin: the tools offered without a set, by server then title. */
async function pinnableTools(tr: Tr): Promise<Pinnable[]> {
  const invoke = safeInvoke();
  if (!invoke) throw new Error(tr('default_search_pins_unavailable'));
  const listing = (await invoke('list_legacy_mcp_tools')) as LegacyMcpToolList;
  return listing.tools
    .map((t) => ({ id: t.toolId, label: `${t.title || t.nativeName} (${t.serverDisplayName})` }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/**
 * Starts offering MCP tools to the model (when this SillyTavern can take
 * function tools) and returns what the Manager shows about it. wake is
 * called when a generation starts while the backend is not connected.
 */
export function startModelTools(tr: Tr, opts: PageToolOptions = {}): ModelTools {
  const host = pageToolHost(tr, opts);
  const bridge = new ToolBridge(host);
  const installed = bridge.install();
  const reach = () =>
    toolReach({
      context: host.context(),
      isTtmcp: host.isTtmcp(),
      connected: host.connected(),
      invokeCommand: host.invokeCommand(),
      appliedSet,
      localTools: () => bridge.localToolCount(),
      defaultSearch: () => parseSearchSetting(readSetting(SEARCH_SETTING)),
    });
  const panel: ToolsPanelDeps = {
    reach,
    defaultSearch: {
      read: () => parseSearchSetting(readSetting(SEARCH_SETTING)),
      write: (settings) => {
        const { mode, maxTools, contextPercent, pinned } = settings;
        writeSetting(SEARCH_SETTING, { mode, maxTools, contextPercent, ...(pinned.length > 0 ? { pinned } : {}) });
      },
      // one function for the panel's lifetime: the pins read the tools once per opening
      tools: () => pinnableTools(tr),
    },
    onChange(fn) {
      const offBridge = onBridgeChange(fn);
      window.addEventListener(TOOLS_LISTED_EVENT, fn);
      const events = host.context()?.eventSource;
      const names = [ST_EVENTS.MAIN_API_CHANGED, ST_EVENTS.CHATCOMPLETION_SOURCE_CHANGED, ST_EVENTS.SETTINGS_UPDATED, ST_EVENTS.CHAT_CHANGED];
      for (const n of names) events?.on(n, fn);
      window.addEventListener(TOOL_SETS_CHANGED_EVENT, fn);
      // the backend's word that a server's tools or registration changed, whoever changed them
      window.addEventListener(BACKEND_EVENT, fn);
      return () => {
        offBridge();
        window.removeEventListener(TOOLS_LISTED_EVENT, fn);
        window.removeEventListener(TOOL_SETS_CHANGED_EVENT, fn);
        window.removeEventListener(BACKEND_EVENT, fn);
        for (const n of names) events?.removeListener?.(n, fn);
      };
    },
    recentCalls: async (registrationId, limit) => {
      const audit = ttmcpApi()?.audit;
      if (!audit) return [];
      return (await audit.list({ registrationId, limit })).entries;
    },
    openResult: async (resultId) => {
      const results = ttmcpApi()?.results;
      if (results) await openResultDialog(results, resultId, tr);
    },
  };
  const bind = async (level: Parameters<typeof bindToolSet>[1], id: string | undefined) => {
    const ok = await bindToolSet(stToolContext() as StBindingContext | undefined, level, id);
    notifyToolSets();
    return ok;
  };
  const choose = async (sets?: Parameters<ToolSetsDeps['choose']>[0]) => {
    const all = sets ?? (await ttmcpApi()?.toolSets?.list())?.toolSets ?? [];
    await openBindingDialog({ sets: all, scope: scope(), bind }, tr);
  };
  const toolSets: ToolSetsDeps = {
    list: async () => {
      const a = ttmcpApi()?.toolSets;
      if (!a) throw new Error(tr('toolsets_unavailable'));
      return a.list();
    },
    edit: async (set) => {
      const a = ttmcpApi();
      const invoke = safeInvoke();
      if (!a?.toolSets || !invoke) throw new Error(tr('toolsets_unavailable'));
      const [servers, listing] = await Promise.all([a.servers.list(), invoke('list_legacy_mcp_tools') as Promise<LegacyMcpToolList>]);
      const saved = await openToolSetDialog({ set, servers: servers.servers, tools: listing.tools, save: (dto) => a.toolSets.save(dto) }, tr);
      if (saved) notifyToolSets();
      return saved;
    },
    remove: async (set) => {
      const a = ttmcpApi()?.toolSets;
      if (!a || !(await confirmRemoveToolSet(set, tr))) return false;
      await a.remove(set.id);
      notifyToolSets();
      return true;
    },
    choose,
    scope,
    onChange: onToolSetChange,
  };
  const unmountMenu = installed
    ? mountChatMenu({ label: async () => menuLabel(await reach(), tr), title: tr('chat_menu_title'), open: () => choose(), onChange: onToolSetChange })
    : () => {};
  return { bridge: installed ? bridge : null, panel, toolSets, unmount: unmountMenu };
}
