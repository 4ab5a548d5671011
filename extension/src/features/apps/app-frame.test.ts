import { afterEach, describe, expect, test, vi } from 'vitest';
import { useFrameWindows } from '../../../test/frame-windows';
import type { McpAppResource, McpCallOutcome } from '../../../../jsapi/tauritavern-mcp';
import { mountApp, type AppBridgeLike, type AppBridgeModule, type AppFrameDeps, type AppRecord } from './app-frame';
import { MAX_APP_HEIGHT } from './policy';

/** A stand-in of AppBridge: the handlers the host set, and what it sent. */
class FakeBridge implements AppBridgeLike {
  static last: FakeBridge | undefined;
  sent: Array<[string, unknown]> = [];
  transport: unknown;
  oninitialized?: AppBridgeLike['oninitialized'];
  onsizechange?: AppBridgeLike['onsizechange'];
  oncalltool?: AppBridgeLike['oncalltool'];
  onreadresource?: AppBridgeLike['onreadresource'];
  onopenlink?: AppBridgeLike['onopenlink'];
  onmessage?: AppBridgeLike['onmessage'];
  onupdatemodelcontext?: AppBridgeLike['onupdatemodelcontext'];
  onrequestdisplaymode?: AppBridgeLike['onrequestdisplaymode'];
  onloggingmessage?: AppBridgeLike['onloggingmessage'];
  constructor(
    readonly client: null,
    readonly info: unknown,
    readonly caps: Record<string, unknown>,
    readonly options?: { hostContext?: Record<string, unknown> },
  ) {
    FakeBridge.last = this;
  }
  async connect(t: unknown) {
    this.transport = t;
  }
  sendToolInput(p: unknown) {
    this.sent.push(['tool-input', p]);
  }
  sendToolResult(p: unknown) {
    this.sent.push(['tool-result', p]);
  }
  sendToolCancelled(p: unknown) {
    this.sent.push(['tool-cancelled', p]);
  }
  async teardownResource() {
    this.sent.push(['teardown', {}]);
    return {};
  }
  appCapabilities: { availableDisplayModes?: string[] } | undefined;
  getAppCapabilities() {
    return this.appCapabilities;
  }
  setHostContext(ctx: Record<string, unknown>) {
    this.sent.push(['host-context', { displayMode: ctx.displayMode, containerDimensions: ctx.containerDimensions }]);
  }
}

const mod: AppBridgeModule = {
  AppBridge: FakeBridge,
  PostMessageTransport: class {
    constructor(
      readonly target: Window,
      readonly source: Window,
    ) {}
  },
};

const resource: McpAppResource = {
  registrationId: 'r1', appToolName: 'board', uri: 'ui://chess/board.html', html: '<p>x</p>', csp: "default-src 'none'", viewId: 'v1',
  declared: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
  permissions: { camera: false, microphone: false, geolocation: false, clipboardWrite: false }, sha256: 'x', dropped: [],
};

const rec: AppRecord = {
  invocationId: 'c1', registrationId: 'r1', serverDisplayName: 'Chess', appToolName: 'board', arguments: { fen: 'start' },
  result: { content: [{ type: 'text', text: 'the board' }], structuredContent: { fen: 'start' } },
};

const sent: McpCallOutcome = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [{ text: 'moved' } as never], diagnostics: [] } };

function deps(patch: Partial<AppFrameDeps> = {}) {
  const log: string[] = [];
  const context = new Map<string, string | null>();
  let now = 1000;
  const d: AppFrameDeps = {
    readInterface: async () => resource,
    callTool: async (req) => {
      log.push(`call ${req.nativeName} ${req.approval ?? 'none'} ${req.appToolName}`);
      return sent;
    },
    readResource: async (_r, uri) => ({ contents: [{ uri, text: 'x' }] }),
    permission: async (_r, name) => (name === 'move' ? 'ask' : 'allow'),
    askApproval: async (req) => {
      log.push(`ask ${req.nativeName} from ${req.app}`);
      return 'once';
    },
    confirm: async (kind, text) => {
      log.push(`confirm ${kind} ${text}`);
      return true;
    },
    openLink: (url) => void log.push(`open ${url}`),
    sendMessage: async (text) => void log.push(`send ${text}`),
    setModelContext: (key, text) => void context.set(key, text),
    viewUrl: (id) => `http://backend.invalid/apps/view/${id}`,
    loadBridge: async () => mod,
    hostContext: () => ({}),
    now: () => now,
    ...patch,
  };
  return { d, log, context, tick: (ms: number) => (now += ms) };
}

useFrameWindows();

afterEach(() => {
  document.body.replaceChildren();
});

describe('mountApp', () => {
  test('a sandboxed frame on the view route; the input and the result once the App is initialised', async () => {
    const { d } = deps({ hostContext: (width) => ({ theme: 'dark', width }) });
    const box = document.createElement('div');
    document.body.append(box);
    const app = await mountApp(box, rec, d);
    const bridge = FakeBridge.last!;
    expect(app.frame.getAttribute('sandbox')).toBe('allow-scripts');
    expect(app.frame.getAttribute('allow')).toContain("camera 'none'");
    expect(app.frame.src).toBe('http://backend.invalid/apps/view/v1');
    const t = bridge.transport as { target: unknown; source: unknown };
    expect(t.target).toBe(app.frame.contentWindow);
    expect(t.source).toBe(app.frame.contentWindow); // only its own frame is answered
    expect(bridge.client).toBeNull();
    expect(bridge.options?.hostContext).toEqual({ theme: 'dark', width: 0, displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'] }); // the host's theme, given at initialize
    expect(app.frame.style.colorScheme).toBe('dark'); // and the frame's, for an App that reads prefers-color-scheme
    expect(bridge.sent).toEqual([]); // nothing before initialized
    expect(app.frame.dataset.ttmcpState).toBe('loading');
    bridge.oninitialized?.();
    await new Promise((r) => setTimeout(r, 0));
    expect(app.frame.dataset.ttmcpState).toBe('shown');
    expect(bridge.sent).toEqual([
      ['tool-input', { arguments: { fen: 'start' } }],
      ['tool-result', rec.result],
    ]);
  });

  test('a light theme makes the frame light; no theme leaves its colour scheme alone', async () => {
    const box = document.createElement('div');
    document.body.append(box);
    const light = await mountApp(box, rec, deps({ hostContext: () => ({ theme: 'light' }) }).d);
    expect(light.frame.style.colorScheme).toBe('light');
    const none = await mountApp(box, rec, deps().d);
    expect(none.frame.style.colorScheme).toBe('');
  });

  test('a saved call without a result is sent as cancelled', async () => {
    const { d } = deps();
    const { result: _drop, ...noResult } = rec;
    await mountApp(document.body, noResult, d);
    FakeBridge.last!.oninitialized?.();
    await new Promise((r) => setTimeout(r, 0));
    expect(FakeBridge.last!.sent.map(([m]) => m)).toEqual(['tool-input', 'tool-cancelled']);
  });

  test('sizes are capped and ten thousand changes in a second move the frame at most sixty times', async () => {
    const { d } = deps();
    const app = await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    bridge.onsizechange?.({ height: 10_000_000 });
    expect(app.frame.style.height).toBe(`${MAX_APP_HEIGHT}px`);
    const heights = new Set<string>();
    const seen = vi.fn();
    for (let i = 0; i < 10_000; i++) {
      bridge.onsizechange?.({ height: 100 + i });
      if (!heights.has(app.frame.style.height)) {
        heights.add(app.frame.style.height);
        seen();
      }
    }
    expect(seen.mock.calls.length).toBeLessThanOrEqual(60);
    bridge.onsizechange?.({ height: Number.NaN });
    expect(app.frame.style.height).not.toBe('NaNpx');
  });

  test('links: javascript: and data: refused without asking; http(s) after the user confirms', async () => {
    const { d, log } = deps();
    await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    expect(await bridge.onopenlink?.({ url: 'javascript:alert(document.cookie)' })).toEqual({ isError: true });
    expect(await bridge.onopenlink?.({ url: 'data:text/html,<script>1</script>' })).toEqual({ isError: true });
    expect(log).toEqual([]);
    expect(await bridge.onopenlink?.({ url: 'https://example.com/docs' })).toEqual({});
    expect(log).toEqual(['confirm link https://example.com/docs', 'open https://example.com/docs']);
  });

  test('a link the user refuses is not opened', async () => {
    const { d, log } = deps({ confirm: async () => false });
    await mountApp(document.body, rec, d);
    expect(await FakeBridge.last!.onopenlink?.({ url: 'https://example.com/' })).toEqual({ isError: true });
    expect(log).toEqual([]);
  });

  test('tools/call: Ask through the popup, named as the App; Allow without; the App is named on every call', async () => {
    const { d, log } = deps();
    await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    const moved = await bridge.oncalltool?.({ name: 'move', arguments: { to: 'e4' } });
    expect(moved).toEqual({ content: [{ type: 'text', text: 'moved' }] });
    await bridge.oncalltool?.({ name: 'board', arguments: {} });
    expect(log).toEqual(['ask move from Chess: board', 'call move once board', 'call board none board']);
  });

  test('tools/call under Ask: one question of the App at a time — a poll while it is open is refused without asking or sending, the next after the answer asks', async () => {
    let answer: (a: 'once') => void = () => {};
    const { d, log } = deps({
      askApproval: (req) => {
        log.push(`ask ${req.nativeName}`);
        return new Promise((r) => (answer = r));
      },
    });
    await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    const first = bridge.oncalltool?.({ name: 'move', arguments: { n: 1 } });
    await vi.waitFor(() => expect(log).toEqual(['ask move']));
    for (let i = 0; i < 3; i++) {
      expect(await bridge.oncalltool?.({ name: 'move', arguments: { n: 2 } })).toEqual({
        content: [{ type: 'text', text: "The tool was not run (mcp.app_approval_pending: The user has not answered this App's previous request to use a tool yet)" }],
        isError: true,
      });
    }
    expect(await bridge.oncalltool?.({ name: 'board', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'moved' }] }); // Allow tools go on
    answer('once');
    expect(await first).toEqual({ content: [{ type: 'text', text: 'moved' }] });
    const third = bridge.oncalltool?.({ name: 'move', arguments: { n: 3 } });
    await vi.waitFor(() => expect(log.filter((l) => l === 'ask move')).toHaveLength(2));
    answer('once');
    await third;
    expect(log).toEqual(['ask move', 'call board none board', 'call move once board', 'ask move', 'call move once board']);
  });

  test('messages: posted after consent, refused when too long or not the user’s; the model context is replaced and kept until forgotten', async () => {
    const { d, log, context } = deps();
    const app = await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    expect(await bridge.onmessage?.({ role: 'user', content: [{ type: 'text', text: 'I move e4' }] })).toEqual({});
    expect(await bridge.onmessage?.({ role: 'user', content: [{ type: 'text', text: 'x'.repeat(100_000) }] })).toEqual({ isError: true });
    expect(await bridge.onmessage?.({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] })).toEqual({ isError: true });
    expect(log).toEqual(['confirm message I move e4', 'send I move e4']);
    await bridge.onupdatemodelcontext?.({ content: [{ type: 'text', text: 'white to move' }] });
    await bridge.onupdatemodelcontext?.({ content: [{ type: 'text', text: 'black to move' }] });
    expect([...context.values()]).toEqual(['[Chess: board] black to move']);
    await app.teardown(false);
    expect([...context.values()]).toEqual(['[Chess: board] black to move']);
    expect(bridge.sent.at(-1)?.[0]).toBe('teardown');
    expect(app.frame.isConnected).toBe(false);
  });

  test('teardown with forget clears the App’s model context', async () => {
    const { d, context } = deps();
    const app = await mountApp(document.body, rec, d);
    await FakeBridge.last!.onupdatemodelcontext?.({ content: [{ type: 'text', text: 'state' }] });
    await app.teardown(true);
    expect([...context.values()]).toEqual([null]);
  });

  test('a chat offers messages and the model context; a host without a chat (the test console) neither offers nor takes them', async () => {
    await mountApp(document.body, rec, deps().d);
    expect(Object.keys(FakeBridge.last!.caps)).toEqual(expect.arrayContaining(['message', 'updateModelContext', 'serverTools']));

    const { d, log } = deps({ sendMessage: undefined, setModelContext: undefined });
    const app = await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    expect(Object.keys(bridge.caps)).not.toContain('message');
    expect(Object.keys(bridge.caps)).not.toContain('updateModelContext');
    expect(Object.keys(bridge.caps)).toEqual(expect.arrayContaining(['serverTools', 'serverResources', 'openLinks', 'sandbox']));
    expect(await bridge.onmessage?.({ role: 'user', content: [{ type: 'text', text: 'I move e4' }] })).toEqual({ isError: true });
    await expect(bridge.onupdatemodelcontext?.({ content: [{ type: 'text', text: 'state' }] })).rejects.toThrow('no model context');
    await bridge.oncalltool?.({ name: 'move', arguments: {} }); // its tools all the same, through Ask
    expect(log).toEqual(['ask move from Chess: board', 'call move once board']); // nobody asked to consent to a message
    await app.teardown(true);
    expect(app.frame.isConnected).toBe(false);
  });

  test('an interface that cannot be read leaves nothing behind', async () => {
    const { d } = deps({ readInterface: async () => Promise.reject(new Error('mcp.app_resource_invalid')) });
    const box = document.createElement('div');
    await expect(mountApp(box, rec, d)).rejects.toThrow('mcp.app_resource_invalid');
    expect(box.children.length).toBe(0);
  });
});

describe('Stop and cancellation of an App’s calls', () => {
  /** A slow call: resolves with what the backend answers once cancelled (it may have run). */
  function slowCall(log: string[]) {
    return (req: { nativeName: string }, signal: AbortSignal) =>
      new Promise<McpCallOutcome>((resolve) => {
        log.push(`call ${req.nativeName}`);
        signal.addEventListener('abort', () => {
          log.push(`cancelled: ${String(signal.reason)}`);
          resolve({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'cancelled after it was sent' });
        });
      });
  }

  test('the user’s Stop cancels the App’s call under way; the App is told the outcome is unknown; the App stays', async () => {
    const log: string[] = [];
    const { d } = deps({ callTool: slowCall(log) });
    const app = await mountApp(document.body, rec, d);
    const busy = document.querySelector<HTMLElement>('.ttmcp-app-busy')!;
    expect(busy.hidden).toBe(true);
    const answer = FakeBridge.last!.oncalltool?.({ name: 'board', arguments: {} });
    await new Promise((r) => setTimeout(r, 0));
    expect(busy.hidden).toBe(false);
    expect(busy.textContent).toContain('Chess: the App runs board');
    expect(app.stopCalls()).toBe(1);
    expect(await answer).toEqual({ content: [{ type: 'text', text: 'Whether the tool ran is unknown (mcp.call_cancelled: cancelled after it was sent)' }], isError: true });
    expect(log).toEqual(['call board', 'cancelled: stopped by the user']);
    expect(busy.hidden).toBe(true);
    expect(app.frame.isConnected).toBe(true);
    expect(app.stopCalls()).toBe(0); // nothing left to stop
  });

  test('the Stop of the App’s own line stops its calls', async () => {
    const log: string[] = [];
    const { d } = deps({ callTool: slowCall(log) });
    await mountApp(document.body, rec, d);
    const answer = FakeBridge.last!.oncalltool?.({ name: 'board', arguments: {} });
    await new Promise((r) => setTimeout(r, 0));
    document.querySelector<HTMLButtonElement>('.ttmcp-app-busy button')!.click();
    expect(((await answer) as { isError?: boolean }).isError).toBe(true);
    expect(log.at(-1)).toBe('cancelled: stopped by the user');
  });

  test('the App’s own cancellation (notifications/cancelled aborts its request’s signal) cancels the call', async () => {
    const log: string[] = [];
    const { d } = deps({ callTool: slowCall(log) });
    await mountApp(document.body, rec, d);
    const own = new AbortController();
    const answer = FakeBridge.last!.oncalltool?.({ name: 'board', arguments: {} }, { mcpReq: { signal: own.signal } });
    await new Promise((r) => setTimeout(r, 0));
    own.abort();
    await answer;
    expect(log).toEqual(['call board', 'cancelled: cancelled by the App']);
  });

  test('Stop while the user is asked closes the question; the call is recorded as denied, never sent', async () => {
    const log: string[] = [];
    const { d } = deps({
      askApproval: (_req, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('denied'))),
      callTool: async (req) => {
        log.push(`call ${req.nativeName} ${req.approval}`);
        return { outcome: 'not_sent', code: 'mcp.call_denied_by_user', message: 'denied' };
      },
    });
    const app = await mountApp(document.body, rec, d);
    const answer = FakeBridge.last!.oncalltool?.({ name: 'move', arguments: {} });
    await new Promise((r) => setTimeout(r, 0));
    app.stopCalls();
    expect(((await answer) as { content: Array<{ text: string }> }).content[0]!.text).toMatch(/^The tool was not run/);
    expect(log).toEqual(['call move denied']);
  });
});

describe('display modes', () => {
  test('inline, the App hears its message\'s new width when it changes, once per change, and nothing after its teardown', async () => {
    const observers: Array<{ cb: () => void; targets: Element[]; on: boolean }> = [];
    vi.stubGlobal(
      'ResizeObserver',
      class {
        o: { cb: () => void; targets: Element[]; on: boolean };
        constructor(cb: () => void) {
          this.o = { cb, targets: [], on: true };
          observers.push(this.o);
        }
        observe(el: Element) {
          this.o.targets.push(el);
        }
        disconnect() {
          this.o.on = false;
        }
      },
    );
    try {
      let width = 600;
      const box = document.createElement('div');
      Object.defineProperty(box, 'clientWidth', { get: () => width });
      document.body.append(box);
      const { d } = deps({ hostContext: (w) => ({ containerDimensions: { maxHeight: 900, width: w } }) });
      const app = await mountApp(box, rec, d);
      const bridge = FakeBridge.last!;
      const resized = () => observers.filter((o) => o.on && o.targets.includes(box)).forEach((o) => o.cb());
      resized(); // the observer's first report: the width it was drawn with
      expect(bridge.sent.filter(([k]) => k === 'host-context')).toEqual([]);
      width = 390;
      resized();
      resized();
      expect(bridge.sent.filter(([k]) => k === 'host-context')).toEqual([
        ['host-context', { displayMode: 'inline', containerDimensions: { maxHeight: 900, width: 390 } }],
      ]);
      await app.teardown(true);
      width = 800;
      resized();
      expect(bridge.sent.filter(([k]) => k === 'host-context')).toHaveLength(1);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  test('an App that declares fullscreen gets it on request: the box over the page, the host context says so; the exit control and Escape bring it back inline', async () => {
    const { d } = deps();
    const box = document.createElement('div');
    document.body.append(box);
    const app = await mountApp(box, rec, d);
    const bridge = FakeBridge.last!;
    expect(bridge.options?.hostContext).toMatchObject({ displayMode: 'inline', availableDisplayModes: ['inline', 'fullscreen'] });
    bridge.onsizechange?.({ height: 300 });
    bridge.appCapabilities = { availableDisplayModes: ['inline', 'fullscreen'] };
    expect(await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' })).toEqual({ mode: 'fullscreen' });
    const appBox = app.frame.parentElement!;
    expect(appBox.classList.contains('ttmcp-app-fullscreen')).toBe(true);
    expect(app.frame.dataset.ttmcpDisplayMode).toBe('fullscreen');
    expect(bridge.sent.at(-1)).toEqual(['host-context', expect.objectContaining({ displayMode: 'fullscreen' })]);
    const exit = appBox.querySelector<HTMLButtonElement>('.ttmcp-app-exit')!;
    expect(exit.textContent).toContain('Exit full screen');
    exit.click();
    expect(appBox.classList.contains('ttmcp-app-fullscreen')).toBe(false);
    expect(appBox.querySelector('.ttmcp-app-exit')).toBeNull();
    expect(app.frame.style.height).toBe('300px'); // its inline height again
    expect(bridge.sent.at(-1)).toEqual(['host-context', expect.objectContaining({ displayMode: 'inline' })]);
    // again, then Escape
    expect(await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' })).toEqual({ mode: 'fullscreen' });
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    expect(appBox.classList.contains('ttmcp-app-fullscreen')).toBe(false);
    expect(bridge.sent.at(-1)).toEqual(['host-context', expect.objectContaining({ displayMode: 'inline' })]);
    // the App asks to go back itself
    await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' });
    expect(await bridge.onrequestdisplaymode?.({ mode: 'inline' })).toEqual({ mode: 'inline' });
    expect(appBox.classList.contains('ttmcp-app-fullscreen')).toBe(false);
    // torn down while fullscreen: back inline first, nothing left
    await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' });
    await app.teardown(false);
    expect(appBox.isConnected).toBe(false);
  });

  test('an App that did not declare fullscreen, or asks without the user’s click, or asks for pip, stays inline', async () => {
    let active = true;
    const { d } = deps({ userActive: () => active });
    const app = await mountApp(document.body, rec, d);
    const bridge = FakeBridge.last!;
    expect(await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' })).toEqual({ mode: 'inline' }); // not declared
    bridge.appCapabilities = { availableDisplayModes: ['inline', 'fullscreen', 'pip'] };
    expect(await bridge.onrequestdisplaymode?.({ mode: 'pip' })).toEqual({ mode: 'inline' }); // not this host's
    active = false;
    expect(await bridge.onrequestdisplaymode?.({ mode: 'fullscreen' })).toEqual({ mode: 'inline' }); // nobody clicked
    expect(app.frame.parentElement!.classList.contains('ttmcp-app-fullscreen')).toBe(false);
    expect(bridge.sent.filter(([m]) => m === 'host-context')).toEqual([]);
  });
});

describe('appResult', () => {
  test('a refusal tells the App its code; an unknown outcome does not claim the tool did not run', async () => {
    const { appResult } = await import('./policy');
    expect(appResult({ outcome: 'not_sent', code: 'mcp.call_not_visible_to_app', message: 'not for Apps' })).toEqual({
      content: [{ type: 'text', text: 'The tool was not run (mcp.call_not_visible_to_app: not for Apps)' }],
      isError: true,
    });
    expect(appResult({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'no answer' }).content[0]?.text).toBe('Whether the tool ran is unknown (mcp.call_timeout: no answer)');
    expect(appResult({ outcome: 'known_response', response: { kind: 'tool_result', isError: true, textBlocks: [{ text: 'bad' } as never], diagnostics: [], structuredJson: '{"a":1}' } })).toEqual({
      content: [{ type: 'text', text: 'bad' }],
      structuredContent: { a: 1 },
      isError: true,
    });
  });
});
