// window.__TAURITAVERN__ as this extension sees it: the readiness promise,
// api.mcp, api.extension.store (C5) and ttmcp's bridge status (C2). The
// types come from jsapi/tauritavern-mcp.d.ts. Any of these may be absent
// (an older loader, TauriTavern itself), and the Manager degrades then.

import type { LegacyMcpInvokeCommand } from '../../../jsapi/legacy-mcp-tools.js';
import type {
  McpBridgeStatus,
  TauriTavernExtensionStoreApi,
  TauriTavernMcpApi,
  TtmcpMcpApi,
} from '../../../jsapi/tauritavern-mcp';

/** The part of api.extension.store the Manager uses. */
export type ExtensionStore = Pick<TauriTavernExtensionStoreApi, 'tryGetJson' | 'setJson'>;

/** __TAURITAVERN__.mcpBridge (C2); older loaders have neither error nor reconnect. */
export type BridgeStatus = Omit<McpBridgeStatus, 'reconnect'> & Partial<Pick<McpBridgeStatus, 'reconnect'>>;

export const BRIDGE_EVENT = 'tauritavern-mcp:state';

interface HostObject {
  ready?: Promise<unknown>;
  api?: { mcp?: unknown; extension?: { store?: unknown } };
  invoke?: { safeInvoke?: unknown };
  mcpBridge?: unknown;
}

function host(): HostObject | undefined {
  const tt = (window as { __TAURITAVERN__?: unknown }).__TAURITAVERN__;
  return tt !== null && typeof tt === 'object' ? (tt as HostObject) : undefined;
}

/**
 * Waits for the host, as upstream documents it: whichever of
 * __TAURITAVERN__.ready and __TAURITAVERN_MAIN_READY__ exists (neither:
 * nothing to wait for). A rejected promise counts as settled.
 */
export async function waitForHostReady(): Promise<void> {
  const ready = host()?.ready ?? (window as { __TAURITAVERN_MAIN_READY__?: Promise<unknown> }).__TAURITAVERN_MAIN_READY__;
  if (ready && typeof ready.then === 'function') {
    try {
      await ready;
    } catch {
      // upstream's promise never rejects; a loader that does is treated alike
    }
  }
}

/** api.mcp when it is published with the methods the Manager calls. */
export function mcpApi(): TauriTavernMcpApi | undefined {
  const mcp = host()?.api?.mcp as Partial<TauriTavernMcpApi> | undefined;
  if (!mcp || typeof mcp !== 'object') return undefined;
  const s = mcp.servers;
  const t = mcp.tools;
  if (!s || !t) return undefined;
  const fns = [s.list, s.create, s.update, s.setState, s.remove, s.discover, s.refresh, t.setPermission, t.setDescriptionOverride, t.testCall];
  return fns.every((f) => typeof f === 'function') ? (mcp as TauriTavernMcpApi) : undefined;
}

/** Whether anything already published api.mcp (TauriTavern, or a page that imported the loader). */
export function mcpApiPublished(): boolean {
  const mcp = host()?.api?.mcp;
  return mcp !== undefined && mcp !== null;
}

/** api.extension.store, when the host provides it. */
export function extensionStore(): ExtensionStore | undefined {
  const store = host()?.api?.extension?.store as Partial<ExtensionStore> | undefined;
  if (!store || typeof store.tryGetJson !== 'function' || typeof store.setJson !== 'function') return undefined;
  return store as ExtensionStore;
}

/** ttmcp's bridge status, absent in TauriTavern and on older backends. */
export function bridgeStatus(): BridgeStatus | undefined {
  const b = host()?.mcpBridge as Partial<BridgeStatus> | undefined;
  if (!b || typeof b !== 'object' || typeof b.state !== 'string') return undefined;
  return b as BridgeStatus;
}

/** Calls fn on every bridge state change; returns the unsubscribe function. */
export function onBridgeChange(fn: () => void): () => void {
  window.addEventListener(BRIDGE_EVENT, fn);
  return () => window.removeEventListener(BRIDGE_EVENT, fn);
}

/** ttmcp's resources and prompts: api.mcp.resources, prompts, completions and servers.capabilities. */
export type PrimitivesApi = Pick<TtmcpMcpApi, 'resources' | 'prompts' | 'completions' | 'servers'>;

/** ttmcp's resources and prompts, when the published api.mcp has them (TauriTavern's and older backends' have not). */
export function primitivesApi(): PrimitivesApi | undefined {
  const mcp = mcpApi() as Partial<TtmcpMcpApi> | undefined;
  if (!mcp) return undefined;
  const { resources: r, prompts: p, completions: c, servers: s } = mcp;
  const fns = [r?.list, r?.templates, r?.read, p?.list, p?.get, c?.complete, s?.capabilities, s?.setCapabilities];
  return fns.every((f) => typeof f === 'function') ? (mcp as PrimitivesApi) : undefined;
}

/** ttmcp's elicitation: api.mcp.elicitation, when the published api.mcp has it (TauriTavern's and older backends' have not). */
export function elicitationApi(): TtmcpMcpApi['elicitation'] | undefined {
  const e = (mcpApi() as Partial<TtmcpMcpApi> | undefined)?.elicitation;
  return e && typeof e.setHandler === 'function' ? e : undefined;
}

/** ttmcp's api.mcp (servers and tools at least; its other parts are checked where used). */
export function ttmcpApi(): TtmcpMcpApi | undefined {
  const mcp = host()?.api?.mcp as Partial<TtmcpMcpApi> | undefined;
  return mcp?.servers && mcp.tools ? (mcp as TtmcpMcpApi) : undefined;
}

/** invoke.safeInvoke, as the legacy generation module calls it. */
export function safeInvoke(): LegacyMcpInvokeCommand | undefined {
  const fn = host()?.invoke?.safeInvoke;
  return typeof fn === 'function' ? (fn as LegacyMcpInvokeCommand) : undefined;
}
