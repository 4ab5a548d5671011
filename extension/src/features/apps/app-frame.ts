// One MCP App on the page (issue 30, docs/DECISIONS.md "MCP Apps: the
// sandbox"): its document, read by the backend and served by its App view
// route, in an iframe sandboxed to scripts only (an opaque origin: nothing
// of SillyTavern is reachable), and the host side of the App protocol —
// AppBridge of @modelcontextprotocol/ext-apps in its no-client mode, so that
// every request the App makes is answered here, through the gates:
//
//   tools/call         its own server only (the backend checks the App and
//                      the tool's visibility), Ask through the page's popup
//   resources/read     its own server only
//   ui/open-link       http(s) only, after the user confirms
//   ui/message         after the user agrees, then SillyTavern's own send
//   ui/update-model-context   an extension prompt the user can see, replaced
//                      by the next update
//   size-changed       capped, and at most so often
//   logging            to the console, at most so often

import type { McpAppResource, McpCallOutcome, McpToolPermission } from '../../../../jsapi/tauritavern-mcp';
import {
  appHeight,
  appLink,
  appResult,
  appText,
  INITIAL_APP_HEIGHT,
  MAX_APP_MESSAGE_CHARS,
  MAX_MODEL_CONTEXT_CHARS,
  RateLimit,
  type AppToolResult,
} from './policy';

/** What the App host needs of AppBridge (ext-apps' app-bridge module). */
export interface AppBridgeLike {
  oninitialized?: (() => void) | undefined;
  onsizechange?: ((p: { width?: number; height?: number }) => void) | undefined;
  oncalltool?: ((p: { name: string; arguments?: Record<string, unknown> }) => Promise<unknown>) | undefined;
  onreadresource?: ((p: { uri: string }) => Promise<unknown>) | undefined;
  onopenlink?: ((p: { url: string }) => Promise<{ isError?: boolean }>) | undefined;
  onmessage?: ((p: { role: string; content: unknown }) => Promise<{ isError?: boolean }>) | undefined;
  onupdatemodelcontext?: ((p: { content?: unknown; structuredContent?: unknown }) => Promise<Record<string, never>>) | undefined;
  onrequestdisplaymode?: ((p: { mode: string }) => Promise<{ mode: string }>) | undefined;
  onloggingmessage?: ((p: { level?: string; data?: unknown }) => void) | undefined;
  connect(transport: unknown): Promise<void>;
  sendToolInput(p: { arguments: Record<string, unknown> }): Promise<void> | void;
  sendToolResult(p: AppToolResult): Promise<void> | void;
  sendToolCancelled(p: { reason?: string }): Promise<void> | void;
  sendHostContextChange?(p: Record<string, unknown>): Promise<void> | void;
  teardownResource(p: Record<string, never>): Promise<unknown>;
  close?(): Promise<void>;
}

/** The module loaded on the first App (dist/app-bridge.bundle.js). */
export interface AppBridgeModule {
  AppBridge: new (
    client: null,
    hostInfo: { name: string; version: string },
    capabilities: Record<string, unknown>,
    options?: { hostContext?: Record<string, unknown> },
  ) => AppBridgeLike;
  PostMessageTransport: new (target: Window, source: Window) => unknown;
}

/** One App as the chat saved it: whose it is, the call's input and result. */
export interface AppRecord {
  /** The SillyTavern tool invocation's id. */
  invocationId: string;
  registrationId: string;
  serverDisplayName: string;
  /** The tool whose interface the App is. */
  appToolName: string;
  arguments: Record<string, unknown>;
  /** The call's result; absent when the call did not return one. */
  result?: AppToolResult;
}

export interface AppFrameDeps {
  readInterface(registrationId: string, appToolName: string): Promise<McpAppResource>;
  /** Starts, calls and (on abort) cancels an App's tools/call; the backend's gates decide. */
  callTool(req: { registrationId: string; appToolName: string; nativeName: string; argumentsJson: string; approval?: 'once' | 'always' | 'denied' }, signal: AbortSignal): Promise<McpCallOutcome>;
  readResource(registrationId: string, uri: string): Promise<unknown>;
  permission(registrationId: string, nativeName: string): Promise<McpToolPermission>;
  askApproval(req: { serverDisplayName: string; toolTitle: string; nativeName: string; argumentsJson: string; app: string }, signal: AbortSignal): Promise<'once' | 'always' | 'denied'>;
  confirm(kind: 'link' | 'message', text: string): Promise<boolean>;
  openLink(url: string): void;
  /** Posts text as the user's message; absent where there is no chat (the test console): not offered, refused. */
  sendMessage?: ((text: string) => Promise<void>) | undefined;
  /** Sets (text) or clears (null) the App's part of the model's context; absent where there is no chat. */
  setModelContext?: ((key: string, text: string | null) => void) | undefined;
  /** The URL the App view route has on this page (the backend's, or the plugin's prefix). */
  viewUrl(viewId: string): string;
  loadBridge(): Promise<AppBridgeModule>;
  hostContext(width: number): Record<string, unknown>;
  now(): number;
}

/** A mounted App. */
export interface MountedApp {
  readonly frame: HTMLIFrameElement;
  /**
   * Tells the App it is going (ui/resource-teardown, a short wait), then
   * removes it; forget (its message deleted, the chat changed) also takes
   * its part of the model's context away. An App only scrolled out of view
   * keeps it.
   */
  teardown(forget: boolean): Promise<void>;
}

/** Says in container that an App could not be drawn (its interface not read, its frame refused). */
export function showAppFailure(container: HTMLElement, serverDisplayName: string, err: unknown): void {
  const note = document.createElement('div');
  note.className = 'ttmcp-app-failed';
  note.textContent = `${serverDisplayName}: the App could not be shown (${err instanceof Error ? err.message : String(err)})`;
  container.append(note);
}

const HOST_INFO = { name: 'ttmcp (SillyTavern)', version: '1' };
const HOST_CAPABILITIES = { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} };
/** How long an App is given to answer ui/resource-teardown. */
const TEARDOWN_WAIT_MS = 500;

/**
 * Mounts rec's App in container: reads its interface (the backend mints the
 * view), loads the bridge, draws the sandboxed frame, sends the input and
 * the result once the App is initialised. Rejects when the interface
 * cannot be read (nothing is left in container then).
 */
export async function mountApp(container: HTMLElement, rec: AppRecord, deps: AppFrameDeps): Promise<MountedApp> {
  const [resource, mod] = await Promise.all([deps.readInterface(rec.registrationId, rec.appToolName), deps.loadBridge()]);
  const frame = document.createElement('iframe');
  frame.className = 'ttmcp-app-frame';
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.title = `${rec.serverDisplayName}: ${rec.appToolName}`;
  const allow = [
    resource.permissions.camera && 'camera',
    resource.permissions.microphone && 'microphone',
    resource.permissions.geolocation && 'geolocation',
    resource.permissions.clipboardWrite && 'clipboard-write',
  ].filter(Boolean);
  // Only what the App's resource declared; the backend's Permissions-Policy allows no more.
  frame.setAttribute('allow', allow.length > 0 ? allow.join('; ') : "camera 'none'; microphone 'none'; geolocation 'none'");
  frame.style.height = `${INITIAL_APP_HEIGHT}px`;
  // How far the App got (loading → initialized → shown), for styles and tests.
  frame.dataset.ttmcpState = 'loading';
  if (resource.prefersBorder === false) frame.classList.add('ttmcp-app-borderless');
  let gone = false;
  let loads = 0;
  frame.addEventListener('load', () => {
    // A second load is the App navigating its frame elsewhere: it is no
    // longer the document the backend served, so it is torn down.
    if (++loads > 1) void teardown(false);
  });
  // src before the frame is in the page: it then navigates straight to the
  // App's document, with no initial about:blank whose load event (fired
  // during append in Chromium, later elsewhere) would count as one.
  frame.src = deps.viewUrl(resource.viewId);
  container.append(frame);
  // The document loads asynchronously: the bridge below listens before
  // any message of the App can arrive (all in this task).
  const win = frame.contentWindow;
  if (!win) {
    frame.remove();
    throw new Error('the App frame has no window');
  }
  const { sendMessage, setModelContext } = deps;
  // A host without a chat (the test console) does not offer what only a chat has.
  const capabilities = {
    ...HOST_CAPABILITIES,
    ...(setModelContext ? { updateModelContext: { text: {} } } : {}),
    ...(sendMessage ? { message: { text: {} } } : {}),
    sandbox: { csp: resource.declared },
  };
  // SillyTavern's theme, locale and the App's room, given at ui/initialize:
  // an App drawn on the chat's dark background picks its colours by them.
  const bridge = new mod.AppBridge(null, HOST_INFO, capabilities, { hostContext: deps.hostContext(container.clientWidth) });
  const calls = new Set<AbortController>();
  const sizes = new RateLimit(60, 1000);
  const logs = new RateLimit(20, 1000);
  const asks = new RateLimit(3, 10_000); // links, messages: what puts a prompt before the user
  const app = `${rec.serverDisplayName}: ${rec.appToolName}`;
  const contextKey = `ttmcp_app_${rec.registrationId}_${rec.invocationId}`;

  bridge.onsizechange = ({ height }) => {
    const h = appHeight(height);
    if (h !== null && !gone && sizes.take(deps.now())) frame.style.height = `${h}px`;
  };
  bridge.oncalltool = async ({ name, arguments: args }) => {
    const argumentsJson = JSON.stringify(args ?? {});
    const controller = new AbortController();
    calls.add(controller);
    try {
      let approval: 'once' | 'always' | 'denied' | undefined;
      if ((await deps.permission(rec.registrationId, name)) === 'ask') {
        approval = await deps.askApproval({ serverDisplayName: rec.serverDisplayName, toolTitle: name, nativeName: name, argumentsJson, app }, controller.signal);
      }
      const outcome = await deps.callTool(
        { registrationId: rec.registrationId, appToolName: rec.appToolName, nativeName: name, argumentsJson, ...(approval ? { approval } : {}) },
        controller.signal,
      );
      return appResult(outcome);
    } finally {
      calls.delete(controller);
    }
  };
  bridge.onreadresource = ({ uri }) => deps.readResource(rec.registrationId, uri);
  bridge.onopenlink = async ({ url }) => {
    const link = appLink(url);
    if (link === null || !asks.take(deps.now())) return { isError: true };
    if (!(await deps.confirm('link', link))) return { isError: true };
    deps.openLink(link);
    return {};
  };
  bridge.onmessage = async ({ role, content }) => {
    const text = appText(content, MAX_APP_MESSAGE_CHARS);
    if (!sendMessage || role !== 'user' || text === null || !asks.take(deps.now())) return { isError: true };
    if (!(await deps.confirm('message', text))) return { isError: true };
    await sendMessage(text);
    return {};
  };
  bridge.onupdatemodelcontext = async ({ content }) => {
    if (!setModelContext) throw new Error('this host has no model context (not a chat)');
    const text = appText(content, MAX_MODEL_CONTEXT_CHARS);
    setModelContext(contextKey, text === null ? null : `[${app}] ${text}`);
    return {};
  };
  bridge.onrequestdisplaymode = async () => ({ mode: 'inline' }); // the only mode declared
  bridge.onloggingmessage = ({ level, data }) => {
    if (logs.take(deps.now())) console.debug(`[mcp-manager] App ${app} (${String(level ?? 'info')}):`, typeof data === 'string' ? data.slice(0, 2000) : data);
  };
  bridge.oninitialized = () => {
    if (gone) return;
    frame.dataset.ttmcpState = 'initialized';
    void (async () => {
      await bridge.sendToolInput({ arguments: rec.arguments });
      if (rec.result) await bridge.sendToolResult(rec.result);
      else await bridge.sendToolCancelled({ reason: 'The tool call did not return a result' });
      if (!gone) frame.dataset.ttmcpState = 'shown';
    })();
  };
  // The frame's window is both where messages go and the only source
  // answered: another frame's messages never reach this bridge.
  await bridge.connect(new mod.PostMessageTransport(win, win));

  async function teardown(forget: boolean): Promise<void> {
    if (gone) return;
    gone = true;
    for (const c of calls) c.abort();
    try {
      await Promise.race([bridge.teardownResource({}), new Promise((r) => setTimeout(r, TEARDOWN_WAIT_MS))]);
    } catch {
      // the App is gone or did not answer: removed all the same
    }
    await bridge.close?.().catch(() => undefined);
    if (forget) setModelContext?.(contextKey, null);
    frame.remove();
  }
  return { frame, teardown };
}
