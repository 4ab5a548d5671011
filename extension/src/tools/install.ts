// Wires the tool bridge and the Manager's tool parts to the real page:
// SillyTavern's context and events, window.__TAURITAVERN__ (api.mcp,
// invoke.safeInvoke, ttmcp's bridge status), toastr and the Ask popup.

import type { LegacyMcpInvokeCommand } from '../../../jsapi/legacy-mcp-tools.js';
import type { TtmcpMcpApi } from '../../../jsapi/tauritavern-mcp';
import { notifyRegistrationsChanged } from '../host/changes';
import { bridgeStatus, mcpApiPublished, onBridgeChange } from '../host/tauritavern';
import type { Tr } from '../texts';
import { askApproval } from './approval';
import { ToolBridge, type ToolBridgeHost } from './bridge';
import { toolReach } from './reach';
import { ST_EVENTS, stToolContext } from './sillytavern-tools';
import type { ToolsPanelDeps } from './ToolsPanel';

interface HostObject {
  api?: { mcp?: Partial<TtmcpMcpApi> };
  invoke?: { safeInvoke?: unknown };
}

function hostObject(): HostObject | undefined {
  const tt = (window as { __TAURITAVERN__?: unknown }).__TAURITAVERN__;
  return tt !== null && typeof tt === 'object' ? (tt as HostObject) : undefined;
}

function api(): TtmcpMcpApi | undefined {
  const mcp = hostObject()?.api?.mcp;
  return mcp?.servers && mcp.tools ? (mcp as TtmcpMcpApi) : undefined;
}

function invokeCommand(): LegacyMcpInvokeCommand | undefined {
  const fn = hostObject()?.invoke?.safeInvoke;
  return typeof fn === 'function' ? (fn as LegacyMcpInvokeCommand) : undefined;
}

interface Toastr {
  warning?(text: string, title?: string, options?: object): unknown;
  error?(text: string, title?: string, options?: object): unknown;
}

/** Dispatched on window after each root generation's listing. */
export const TOOLS_LISTED_EVENT = 'ttmcp-tools:listed';

function toast(level: 'warning' | 'error', text: string, title: string, persistent = false): void {
  const toastr = (globalThis as { toastr?: Toastr }).toastr;
  toastr?.[level]?.(text, title, persistent ? { timeOut: 0, extendedTimeOut: 0, closeButton: true } : undefined);
}

/**
 * The bridge's view of this page; wake, when given, makes one attempt to
 * connect (the Manager's).
 */
export function pageToolHost(tr: Tr, wake?: () => Promise<void>): ToolBridgeHost {
  return {
    context: stToolContext,
    api,
    invokeCommand,
    // ttmcp's bridge, or nothing yet: the Manager is loading ttmcp's API
    // (TauriTavern publishes its own before extensions load).
    isTtmcp: () => bridgeStatus() !== undefined || !mcpApiPublished(),
    connected: () => bridgeStatus()?.state === 'open',
    ...(wake ? { wake } : {}),
    askApproval: (req, signal) => askApproval(req, signal, tr),
    toast,
    listed: () => void window.dispatchEvent(new Event(TOOLS_LISTED_EVENT)),
    changed: notifyRegistrationsChanged,
    tr,
  };
}

export interface ModelTools {
  bridge: ToolBridge | null;
  panel: ToolsPanelDeps;
}

/**
 * Starts offering MCP tools to the model (when this SillyTavern can take
 * function tools) and returns what the Manager shows about it. wake is
 * called when a generation starts while the backend is not connected.
 */
export function startModelTools(tr: Tr, wake?: () => Promise<void>): ModelTools {
  const host = pageToolHost(tr, wake);
  const bridge = new ToolBridge(host);
  const installed = bridge.install();
  const panel: ToolsPanelDeps = {
    reach: () =>
      toolReach({ context: host.context(), isTtmcp: host.isTtmcp(), connected: host.connected(), invokeCommand: host.invokeCommand() }),
    onChange(fn) {
      const offBridge = onBridgeChange(fn);
      window.addEventListener(TOOLS_LISTED_EVENT, fn);
      const events = host.context()?.eventSource;
      const names = [ST_EVENTS.MAIN_API_CHANGED, ST_EVENTS.CHATCOMPLETION_SOURCE_CHANGED, ST_EVENTS.SETTINGS_UPDATED];
      for (const n of names) events?.on(n, fn);
      return () => {
        offBridge();
        window.removeEventListener(TOOLS_LISTED_EVENT, fn);
        for (const n of names) events?.removeListener?.(n, fn);
      };
    },
    recentCalls: async (registrationId, limit) => {
      const audit = api()?.audit;
      if (!audit) return [];
      return (await audit.list({ registrationId, limit })).entries;
    },
  };
  return { bridge: installed ? bridge : null, panel };
}
