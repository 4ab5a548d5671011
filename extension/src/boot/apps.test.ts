import { describe, expect, test } from 'vitest';
import type { McpAppResource, McpTestCallOutcome } from '../../../jsapi/tauritavern-mcp';
import { useFrameWindows } from '../../test/frame-windows';
import type { AppBridgeModule, AppFrameDeps } from '../features/apps/app-frame';
import { englishTr } from '../base/texts';
import { APPS_EXTRA } from '../features/apps/chat-apps';
import { appFrameDeps, startApps, testAppRenderer, themeOf } from './apps';

describe('themeOf', () => {
  test.each([
    ['rgb(220, 220, 210)', 'dark'],
    ['rgba(20, 20, 20, 1)', 'light'],
    ['rgb(255 255 255)', 'dark'],
  ] as const)('%s is a %s theme', (color, theme) => {
    expect(themeOf(color)).toBe(theme);
  });
});

useFrameWindows();

describe('testAppRenderer (the test console’s Apps)', () => {
  const resource: McpAppResource = {
    registrationId: 'r1', appToolName: 'get-time', uri: 'ui://t/app.html', html: '<p>x</p>', csp: "default-src 'none'", viewId: 'v1',
    declared: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
    permissions: { camera: false, microphone: false, geolocation: false, clipboardWrite: false }, sha256: 'x', dropped: [],
  };
  /** The chat's deps (with message and model context) and what the bridge was given. */
  function chatDeps(readInterface: AppFrameDeps['readInterface'] = async () => resource) {
    const seen: { caps?: Record<string, unknown>; sent: Array<[string, unknown]> } = { sent: [] };
    const mod: AppBridgeModule = {
      AppBridge: class {
        oninitialized?: () => void;
        constructor(_c: null, _i: unknown, caps: Record<string, unknown>) {
          seen.caps = caps;
          queueMicrotask(() => this.oninitialized?.());
        }
        async connect() {}
        sendToolInput(p: unknown) { seen.sent.push(['input', p]); }
        sendToolResult(p: unknown) { seen.sent.push(['result', p]); }
        sendToolCancelled(p: unknown) { seen.sent.push(['cancelled', p]); }
        async teardownResource() { seen.sent.push(['teardown', {}]); return {}; }
      } as never,
      PostMessageTransport: class {} as never,
    };
    const d: AppFrameDeps = {
      readInterface, callTool: async () => Promise.reject(new Error('no')), readResource: async () => ({}), permission: async () => 'allow',
      askApproval: async () => 'denied', confirm: async () => false, openLink: () => {},
      sendMessage: async () => {}, setModelContext: () => {},
      viewUrl: (id) => `http://backend.invalid/apps/view/${id}`, loadBridge: async () => mod, hostContext: () => ({}), now: () => 0,
    };
    return { d, seen };
  }
  const outcome: McpTestCallOutcome = {
    outcome: 'known_response',
    response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: '12:00' }], structuredJson: '{"time":"12:00"}', diagnostics: [] },
  };

  test('draws the App with the call’s input and result, without a chat’s message or model context; its teardown removes it', async () => {
    const { d, seen } = chatDeps();
    const box = document.createElement('div');
    document.body.append(box);
    const teardown = testAppRenderer(d)(box, { registrationId: 'r1', serverDisplayName: 'Demo', toolName: 'get-time', input: { tz: 'UTC' }, result: outcome });
    await new Promise((r) => setTimeout(r, 10));
    expect(box.querySelector('iframe')?.src).toBe('http://backend.invalid/apps/view/v1');
    expect(seen.sent).toEqual([
      ['input', { arguments: { tz: 'UTC' } }],
      ['result', { content: [{ type: 'text', text: '12:00' }], structuredContent: { time: '12:00' } }],
    ]);
    expect(Object.keys(seen.caps ?? {})).not.toContain('message');
    expect(Object.keys(seen.caps ?? {})).not.toContain('updateModelContext');
    teardown();
    await new Promise((r) => setTimeout(r, 10));
    expect(seen.sent.at(-1)?.[0]).toBe('teardown');
    expect(box.querySelector('iframe')).toBeNull();
  });

  test('torn down while still loading, the App is removed once drawn; an interface that cannot be read is said', async () => {
    const { d } = chatDeps();
    const box = document.createElement('div');
    testAppRenderer(d)(box, { registrationId: 'r1', serverDisplayName: 'Demo', toolName: 'get-time', input: {}, result: outcome })();
    await new Promise((r) => setTimeout(r, 10));
    expect(box.querySelector('iframe')).toBeNull();

    const failing = chatDeps(async () => Promise.reject(new Error('mcp.app_resource_invalid')));
    const box2 = document.createElement('div');
    testAppRenderer(failing.d)(box2, { registrationId: 'r1', serverDisplayName: 'Demo', toolName: 'get-time', input: {}, result: outcome });
    await new Promise((r) => setTimeout(r, 10));
    expect(box2.textContent).toBe('Demo: the App could not be shown (mcp.app_resource_invalid)');
  });
});

describe('startApps (the model’s calls)', () => {
  test('a call of a tool whose listing has a ui is recorded on the tool message, without asking the backend for a catalog; one without ui is not', async () => {
    const handlers = new Map<string, (arg?: unknown) => unknown>();
    const message: { extra?: Record<string, unknown> } = {};
    const g = globalThis as { SillyTavern?: unknown };
    const w = window as { __TAURITAVERN__?: unknown };
    const asked: string[] = [];
    g.SillyTavern = {
      getContext: () => ({
        chat: [message],
        eventSource: { on: (e: string, fn: (arg?: unknown) => unknown) => handlers.set(e, fn), removeListener: (e: string) => handlers.delete(e) },
      }),
    };
    w.__TAURITAVERN__ = {
      api: {
        mcp: {
          servers: { discover: async (id: string) => { asked.push(id); return { tools: [] }; } },
          tools: {},
          apps: { setRenderer: () => {} },
        },
      },
    };
    const deps = { hostContext: () => ({}) } as unknown as AppFrameDeps;
    const started = startApps(englishTr, deps);
    try {
      const tool = { toolId: 'mcp/r1:board', nativeName: 'board', serverDisplayName: 'Demo', inputSchema: { type: 'object' } };
      const result = JSON.stringify({ outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'e4' }], diagnostics: [] } });
      started.called({ alias: 'mcp__Demo__board', tool: { ...tool, ui: { resourceUri: 'ui://chess/board.html' } }, argumentsJson: '{"to":"e4"}', result });
      started.called({ alias: 'mcp__Demo__plain', tool: { ...tool, toolId: 'mcp/r1:plain', nativeName: 'plain' }, argumentsJson: '{}', result });
      await handlers.get('tool_calls_performed')?.([{ id: 'inv1', name: 'mcp__Demo__board' }, { id: 'inv2', name: 'mcp__Demo__plain' }]);
      expect(message.extra?.[APPS_EXTRA]).toEqual([
        { invocationId: 'inv1', registrationId: 'r1', serverDisplayName: 'Demo', appToolName: 'board', arguments: { to: 'e4' }, result: { content: [{ type: 'text', text: 'e4' }] } },
      ]);
      expect(asked).toEqual([]);
    } finally {
      started.unmount();
      delete g.SillyTavern;
      delete w.__TAURITAVERN__;
    }
  });
});

describe('appFrameDeps.callTool (an App’s call)', () => {
  test('a denial reaches the backend even when the call was stopped during its Ask prompt (so it is audited); a stopped call without one is not sent', async () => {
    const w = window as { __TAURITAVERN__?: unknown };
    const sent: Array<Record<string, unknown>> = [];
    w.__TAURITAVERN__ = {
      api: {
        mcp: {
          servers: {},
          tools: {},
          apps: {
            startCall: async () => {},
            cancelCall: async () => {},
            call: async (input: Record<string, unknown>) => {
              sent.push(input);
              return { outcome: 'not_sent', code: 'mcp.call_denied_by_user', message: 'denied' };
            },
          },
        },
      },
    };
    try {
      const deps = appFrameDeps(englishTr);
      const stopped = new AbortController();
      stopped.abort('stopped by the user');
      const req = { registrationId: 'r1', appToolName: 'board', nativeName: 'move', argumentsJson: '{}' };
      const denied = await deps.callTool({ ...req, approval: 'denied' }, stopped.signal);
      expect(denied).toMatchObject({ outcome: 'not_sent', code: 'mcp.call_denied_by_user' });
      expect(sent).toEqual([expect.objectContaining({ nativeName: 'move', approval: 'denied' })]);
      const never = await deps.callTool(req, stopped.signal);
      expect(never).toMatchObject({ outcome: 'not_sent', code: 'mcp.call_cancelled_before_send' });
      expect(sent).toHaveLength(1);
    } finally {
      delete w.__TAURITAVERN__;
    }
  });
});
