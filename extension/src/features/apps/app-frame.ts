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
//   ui/request-display-mode   fullscreen where the App declares it, after a
//                      click in it: an overlay over the page with an exit
//                      control (and Escape); else the mode it is in
//   size-changed       capped, and at most so often
//   logging            to the console, at most so often

import type { McpAppResource, McpCallOutcome, McpToolPermission } from '../../../../jsapi/tauritavern-mcp';
import { format, TEXTS, type TextKey, type TextParams, type Tr } from '../../base/texts';
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
  /** extra: the request's; its signal aborts when the App cancels the call (notifications/cancelled). */
  oncalltool?: ((p: { name: string; arguments?: Record<string, unknown> }, extra?: RequestExtra) => Promise<unknown>) | undefined;
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
  /** The whole new host context; the App is sent what changed. */
  setHostContext?(ctx: Record<string, unknown>): void;
  /** What the App declared at ui/initialize. */
  getAppCapabilities?(): { availableDisplayModes?: string[] } | undefined;
  teardownResource(p: Record<string, never>): Promise<unknown>;
  close?(): Promise<void>;
}

/** What AppBridge hands a request handler (the MCP SDK's context; v1 had signal at the top). */
export interface RequestExtra {
  mcpReq?: { signal?: AbortSignal };
  signal?: AbortSignal;
}

/**
 * An App's Ask call while the user has not answered its previous one:
 * refused in the page, without a question; nothing is sent, and nothing
 * is recorded (the user was not asked; DECISIONS "MCP Apps").
 */
export const APPROVAL_PENDING: McpCallOutcome = {
  outcome: 'not_sent',
  code: 'mcp.app_approval_pending',
  message: "The user has not answered this App's previous request to use a tool yet",
};

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
  /** The page's texts (SillyTavern's locale); absent: English. */
  tr?: Tr | undefined;
  /** Whether the user just acted in frame (clicked or typed in the App); absent: yes. */
  userActive?(frame: HTMLIFrameElement): boolean;
}

/** A mounted App. */
export interface MountedApp {
  readonly frame: HTMLIFrameElement;
  /**
   * Stops the App's tool calls under way (the user's Stop): each is
   * cancelled, and the App is given what came of it — "unknown" when it
   * may have run. The App stays. Returns how many were stopped.
   */
  stopCalls(): number;
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

/** Why an App's call was aborted: the user's Stop, the App's own cancellation, or the App going. */
export const STOPPED_BY_USER = 'stopped by the user';

/** The signal of an App's request, whichever generation of the SDK handed it. */
function requestSignal(extra: RequestExtra | undefined): AbortSignal | undefined {
  return extra?.mcpReq?.signal ?? extra?.signal;
}

const HOST_INFO = { name: 'ttmcp (SillyTavern)', version: '1' };
const HOST_CAPABILITIES = { openLinks: {}, serverTools: {}, serverResources: {}, logging: {} };
/** The display modes this host has: inline in the message, fullscreen over the page. */
const HOST_DISPLAY_MODES = ['inline', 'fullscreen'];
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
  // The App's own box: the frame, the exit control while fullscreen and a
  // line while its calls run. Fullscreen puts the box (never the frame: a
  // frame moved in the DOM loads again) in the page's top layer.
  const box = document.createElement('div');
  box.className = 'ttmcp-app-box';
  box.append(frame);
  container.append(box);
  // The document loads asynchronously: the bridge below listens before
  // any message of the App can arrive (all in this task).
  const win = frame.contentWindow;
  if (!win) {
    box.remove();
    throw new Error('the App frame has no window');
  }
  const { sendMessage, setModelContext } = deps;
  const tr = (key: TextKey, params?: TextParams) => (deps.tr ? deps.tr(key, params) : format(TEXTS[key as keyof typeof TEXTS], params));
  // A host without a chat (the test console) does not offer what only a chat has.
  const capabilities = {
    ...HOST_CAPABILITIES,
    ...(setModelContext ? { updateModelContext: { text: {} } } : {}),
    ...(sendMessage ? { message: { text: {} } } : {}),
    sandbox: { csp: resource.declared },
  };
  // SillyTavern's theme, locale and the App's room, given at ui/initialize:
  // an App drawn on the chat's dark background picks its colours by them.
  const inlineContext = () => ({ ...deps.hostContext(container.clientWidth), displayMode: 'inline', availableDisplayModes: HOST_DISPLAY_MODES });
  const initialContext = inlineContext();
  // The same theme for an App that reads only prefers-color-scheme (many
  // do, not the host context): a frame's color-scheme is what its
  // document's prefers-color-scheme answers, whatever the system's.
  const theme = (initialContext as Record<string, unknown>).theme;
  if (theme === 'dark' || theme === 'light') frame.style.colorScheme = theme;
  const bridge = new mod.AppBridge(null, HOST_INFO, capabilities, { hostContext: initialContext });
  const calls = new Set<AbortController>();
  let inlineHeight = INITIAL_APP_HEIGHT;
  const busy = document.createElement('div');
  busy.className = 'ttmcp-app-busy';
  busy.hidden = true;
  const busyText = document.createElement('span');
  const busyStop = document.createElement('button');
  busyStop.type = 'button';
  busyStop.className = 'menu_button ttmcp-app-stop';
  busyStop.textContent = tr('app_stop');
  busyStop.title = tr('app_stop_hint');
  busyStop.addEventListener('click', () => void stopCalls());
  busy.append(busyText, busyStop);
  box.append(busy);
  const running: string[] = [];
  const showBusy = () => {
    busy.hidden = running.length === 0;
    busyText.textContent = running.length > 0 ? tr('app_calls_running', { server: rec.serverDisplayName, tools: [...new Set(running)].join(', ') }) : '';
  };
  const sizes = new RateLimit(60, 1000);
  const logs = new RateLimit(20, 1000);
  const asks = new RateLimit(3, 10_000); // links, messages: what puts a prompt before the user
  const app = `${rec.serverDisplayName}: ${rec.appToolName}`;
  const contextKey = `ttmcp_app_${rec.registrationId}_${rec.invocationId}`;

  bridge.onsizechange = ({ height }) => {
    const h = appHeight(height);
    if (h === null || gone || !sizes.take(deps.now())) return;
    inlineHeight = h;
    if (!fullscreen) frame.style.height = `${h}px`;
  };
  let asking = false; // an Ask question of this App is open
  bridge.oncalltool = async ({ name, arguments: args }, extra) => {
    const argumentsJson = JSON.stringify(args ?? {});
    const controller = new AbortController();
    // The App's own cancellation of this request (notifications/cancelled):
    // AppBridge aborts the request's signal and sends the App no answer.
    const own = requestSignal(extra);
    const cancelled = () => controller.abort('cancelled by the App');
    if (own?.aborted) cancelled();
    own?.addEventListener('abort', cancelled, { once: true });
    calls.add(controller);
    running.push(name);
    showBusy();
    try {
      let approval: 'once' | 'always' | 'denied' | undefined;
      if ((await deps.permission(rec.registrationId, name)) === 'ask') {
        // One question of this App at a time: an App that polls an Ask
        // tool would otherwise stack a popup per poll over the chat.
        if (asking) return appResult(APPROVAL_PENDING);
        asking = true;
        try {
          approval = await deps.askApproval({ serverDisplayName: rec.serverDisplayName, toolTitle: name, nativeName: name, argumentsJson, app }, controller.signal);
        } finally {
          asking = false;
        }
      }
      const outcome = await deps.callTool(
        { registrationId: rec.registrationId, appToolName: rec.appToolName, nativeName: name, argumentsJson, ...(approval ? { approval } : {}) },
        controller.signal,
      );
      return appResult(outcome);
    } finally {
      own?.removeEventListener('abort', cancelled);
      calls.delete(controller);
      running.splice(running.indexOf(name), 1);
      if (!gone) showBusy();
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
  // Fullscreen: only for an App that declared it, only right after the
  // user acted (a click in the App), so an App cannot cover the page on
  // its own; inline always; anything else is answered with the mode it is in.
  let fullscreen = false;
  const exit = document.createElement('button');
  exit.type = 'button';
  exit.className = 'menu_button ttmcp-app-exit';
  exit.textContent = tr('app_exit_fullscreen');
  exit.title = tr('app_exit_fullscreen_hint');
  exit.addEventListener('click', () => setFullscreen(false));
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && fullscreen) {
      e.preventDefault();
      e.stopPropagation();
      setFullscreen(false);
    }
  };
  const fullscreenContext = () => ({
    ...inlineContext(),
    displayMode: 'fullscreen',
    // the frame's own room on the overlay (below the exit control)
    containerDimensions: { width: frame.clientWidth || window.innerWidth, height: frame.clientHeight || window.innerHeight },
  });
  // The window resized in fullscreen: the App's room with it.
  const onResize = () => {
    if (fullscreen && !gone) bridge.setHostContext?.(fullscreenContext());
  };
  // Inline, the App's width is its message's: when the chat's width
  // changes (a window resized, a phone turned, a drawer opened), the App
  // hears the new width, once per change of whole pixels.
  let sentWidth = container.clientWidth;
  const widths =
    typeof ResizeObserver === 'function'
      ? new ResizeObserver(() => {
          const width = container.clientWidth;
          if (gone || fullscreen || width === sentWidth) return;
          sentWidth = width;
          bridge.setHostContext?.(inlineContext());
        })
      : undefined;
  widths?.observe(container);
  function setFullscreen(on: boolean): void {
    if (on === fullscreen || (on && gone)) return;
    fullscreen = on;
    box.classList.toggle('ttmcp-app-fullscreen', on);
    frame.dataset.ttmcpDisplayMode = on ? 'fullscreen' : 'inline';
    if (on) {
      box.prepend(exit);
      frame.style.height = '';
      // The top layer: above SillyTavern's drawers and popups, whatever
      // its ancestors' transforms and filters (a fixed box inside a
      // blurred #chat would be fixed to the chat, not the viewport).
      if (typeof box.showPopover === 'function') {
        box.popover = 'manual';
        box.showPopover();
      }
      document.addEventListener('keydown', onKey, true);
      window.addEventListener('resize', onResize);
      exit.focus();
    } else {
      if (box.popover) {
        if (box.matches(':popover-open')) box.hidePopover();
        box.removeAttribute('popover');
      }
      exit.remove();
      frame.style.height = `${inlineHeight}px`;
      document.removeEventListener('keydown', onKey, true);
      window.removeEventListener('resize', onResize);
    }
    if (gone) return;
    if (!on) sentWidth = container.clientWidth;
    bridge.setHostContext?.(on ? fullscreenContext() : inlineContext());
  }
  bridge.onrequestdisplaymode = async ({ mode }) => {
    const declared = bridge.getAppCapabilities?.()?.availableDisplayModes ?? [];
    if (mode === 'inline') setFullscreen(false);
    else if (mode === 'fullscreen' && declared.includes('fullscreen') && (deps.userActive?.(frame) ?? true)) setFullscreen(true);
    return { mode: fullscreen ? 'fullscreen' : 'inline' };
  };
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

  function stopCalls(): number {
    const n = calls.size;
    for (const c of calls) c.abort(STOPPED_BY_USER);
    return n;
  }

  async function teardown(forget: boolean): Promise<void> {
    if (gone) return;
    setFullscreen(false);
    gone = true;
    widths?.disconnect();
    for (const c of calls) c.abort('the App is going');
    try {
      await Promise.race([bridge.teardownResource({}), new Promise((r) => setTimeout(r, TEARDOWN_WAIT_MS))]);
    } catch {
      // the App is gone or did not answer: removed all the same
    }
    await bridge.close?.().catch(() => undefined);
    if (forget) setModelContext?.(contextKey, null);
    box.remove();
  }
  return { frame, stopCalls, teardown };
}
