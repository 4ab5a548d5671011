import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  apiError,
  type BridgeDouble,
  FakeMcp,
  ManualClock,
  FakeStore,
  installSillyTavern,
  publishHost,
  server,
  setBridgeState,
} from '../../test/fakes';
import { isLoopbackOrigin, probePlugin, resolveBackendUrl } from '../host/backend';
import { englishTr } from '../base/texts';
import { TrContext } from '../base/tr';
import { BackendDown } from '../features/status/StatusPanels';
import { notifyRegistrationsChanged } from '../host/changes';
import { type Started, startManager, wakeAll } from './start';

const ORIGIN = window.location.origin;
let started: Started | null = null;
/** The drawer's retry timers: they run when a test fires them. */
let clock = new ManualClock();

afterEach(() => {
  act(() => started?.unmount());
  started = null;
  clock = new ManualClock();
});

function settingsColumn(anchors: string[] = []) {
  document.body.innerHTML = `<div id="extensions_settings2">${anchors
    .map((id) => `<div id="${id}" class="extension_container"></div>`)
    .join('')}<div class="extension_container"></div></div>`;
}

/** The command line a state panel shows (one code element; it wraps between flags). */
function command(): string | undefined {
  const codes = [...document.querySelectorAll('code.tt-mcp-command')];
  return codes.length === 1 ? (codes[0]?.textContent ?? undefined) : `${codes.length} commands`;
}

function openBridge(): BridgeDouble {
  return { state: 'open', backend: 'http://127.0.0.1:7878' };
}

/** A loader import that publishes this host. */
function loaderPublishing(mcp: FakeMcp, store: FakeStore | undefined, bridge: BridgeDouble | undefined) {
  return vi.fn(async (_url: string) => {
    publishHost({ mcp, ...(store ? { store } : {}), ...(bridge ? { bridge } : {}) });
  });
}

function start(importModule: (url: string) => Promise<unknown>, configUrl?: string) {
  act(() => {
    started = startManager({ importModule, clock, ...(configUrl !== undefined ? { configUrl } : {}) });
  });
}

describe('mounting', () => {
  test('after the skill manager, as an inline drawer titled MCP with the plug icon', async () => {
    installSillyTavern();
    settingsColumn(['agent_system_container', 'skill_manager_container']);
    start(loaderPublishing(new FakeMcp(), new FakeStore(), openBridge()));
    const container = document.getElementById('mcp_manager_container')!;
    expect(container.classList.contains('extension_container')).toBe(true);
    expect(container.previousElementSibling?.id).toBe('skill_manager_container');
    const header = container.querySelector('.inline-drawer > .inline-drawer-toggle.inline-drawer-header')!;
    expect(header.querySelector('b')?.textContent).toBe(' MCP');
    expect(header.querySelector('i.fa-solid.fa-plug-circle-bolt')).toBeTruthy();
    expect(header.querySelector('.inline-drawer-icon.fa-solid.fa-circle-chevron-down.down')).toBeTruthy();
    expect(container.querySelector('.inline-drawer > .inline-drawer-content')).toBeTruthy();
    expect(await screen.findByText('Exa Search')).toBeTruthy();
  });

  test('after the agent system panel when there is no skill manager, else first in the column', () => {
    installSillyTavern();
    settingsColumn(['agent_system_container']);
    start(loaderPublishing(new FakeMcp(), new FakeStore(), openBridge()));
    expect(document.getElementById('mcp_manager_container')?.previousElementSibling?.id).toBe('agent_system_container');
    act(() => started?.unmount());

    settingsColumn();
    start(loaderPublishing(new FakeMcp(), new FakeStore(), openBridge()));
    const column = document.getElementById('extensions_settings2')!;
    expect(column.firstElementChild?.id).toBe('mcp_manager_container');
  });

  test('without the extension settings column it says why and mounts nothing', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    document.body.innerHTML = '<div id="extensions_settings"></div>';
    start(vi.fn());
    expect(started).toBeNull();
    expect(error).toHaveBeenCalledWith('[mcp-manager] SillyTavern extension settings column is unavailable');
    expect(document.getElementById('mcp_manager_container')).toBeNull();
  });
});

describe('connecting', () => {
  test('imports the loader from the default backend, waits for ready, then shows the Manager with the Exa entry', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    const store = new FakeStore();
    let ready!: () => void;
    const importModule = vi.fn(async () => {
      publishHost({ mcp, store, bridge: openBridge(), ready: new Promise((r) => (ready = r)) });
    });
    start(importModule);
    expect(screen.getByText('Connecting to the MCP backend…')).toBeTruthy();
    await waitFor(() => expect(importModule).toHaveBeenCalledWith('http://127.0.0.1:7878/jsapi/tauritavern-mcp.js'));
    await act(async () => {
      await Promise.resolve();
    });
    expect(mcp.count('list')).toBe(0);
    await act(async () => ready());
    expect(await screen.findByText('Servers · 2')).toBeTruthy();
    expect(screen.getByText('Exa Search')).toBeTruthy();
    expect(screen.getByText('https://mcp.exa.ai/mcp')).toBeTruthy();
    expect(mcp.inputs('create')).toEqual([{ displayName: 'Exa Search', endpoint: 'https://mcp.exa.ai/mcp' }]);
  });

  test('an API already published (TauriTavern) is used as is; without the store the panel says so', async () => {
    installSillyTavern();
    settingsColumn();
    publishHost({ mcp: new FakeMcp([server()]) });
    const importModule = vi.fn();
    start(importModule);
    expect((await screen.findByRole('alert')).textContent).toBe('TauriTavern extension store is unavailable');
    expect(screen.getByText('Local tools')).toBeTruthy();
    expect(importModule).not.toHaveBeenCalled();
  });

  test('the backend URL comes from the settings, else ttmcp.json beside the manifest, else the default', async () => {
    const fetchJson = (body: unknown, ok = true) =>
      vi.fn(async () => ({ ok, json: async () => body }) as Response) as unknown as typeof fetch;
    expect(await resolveBackendUrl({ saved: () => 'http://10.0.0.2:9000/', configUrl: 'x', fetch: fetchJson({ backendUrl: 'http://a:1' }) })).toBe(
      'http://10.0.0.2:9000',
    );
    const f = fetchJson({ backendUrl: 'http://127.0.0.1:7999' });
    expect(await resolveBackendUrl({ saved: () => undefined, configUrl: 'https://st/ext/ttmcp.json', fetch: f })).toBe(
      'http://127.0.0.1:7999',
    );
    expect(f).toHaveBeenCalledWith('https://st/ext/ttmcp.json', expect.objectContaining({ cache: 'no-store' }));
    expect(await resolveBackendUrl({ saved: () => undefined, configUrl: 'x', fetch: fetchJson({}, false) })).toBe(
      'http://127.0.0.1:7878',
    );
    expect(await resolveBackendUrl({ saved: () => 'not a url', configUrl: 'x', fetch: fetchJson({ backendUrl: 'ftp://x' }) })).toBe(
      'http://127.0.0.1:7878',
    );
    const failing = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    expect(await resolveBackendUrl({ saved: () => undefined, configUrl: 'x', fetch: failing })).toBe('http://127.0.0.1:7878');
  });

  test('the saved URL is where the loader comes from', async () => {
    installSillyTavern({ extensionSettings: { mcp_manager: { backendUrl: 'http://127.0.0.1:7891' } } });
    settingsColumn();
    const importModule = loaderPublishing(new FakeMcp(), new FakeStore(), openBridge());
    start(importModule);
    await waitFor(() => expect(importModule).toHaveBeenCalledWith('http://127.0.0.1:7891/jsapi/tauritavern-mcp.js'));
  });
});

describe('backend not running', () => {
  test('says so, names ttmcp serve and the URL, and Retry loads the API without a reload', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    const importModule = vi
      .fn<(url: string) => Promise<unknown>>()
      .mockRejectedValueOnce(new TypeError('Failed to fetch dynamically imported module: http://127.0.0.1:7878/jsapi/tauritavern-mcp.js'))
      .mockImplementationOnce(async () => publishHost({ mcp, store: new FakeStore(), bridge: openBridge() }));
    start(importModule);
    const panel = await screen.findByRole('alert');
    expect(within(panel).getByRole('heading').textContent).toBe(' The ttmcp backend is not running');
    expect(within(panel).getByText('Could not reach the ttmcp backend at http://127.0.0.1:7878.')).toBeTruthy();
    expect(command()).toBe('ttmcp serve');
    // the browser's own words for a module it could not fetch say nothing more (walked in SillyTavern 1.18.0)
    expect(within(panel).queryByText(/Details:|dynamically imported/)).toBeNull();
    expect(within(panel).getByRole<HTMLInputElement>('textbox', { name: 'Backend URL' }).value).toBe('http://127.0.0.1:7878');

    await userEvent.setup().click(within(panel).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(importModule.mock.calls.map((c) => c[0])).toEqual([
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js',
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js?attempt=1',
    ]);
  });

  test('the backend URL can be changed there; it is saved in the extension settings', async () => {
    const st = installSillyTavern();
    settingsColumn();
    const importModule = vi.fn<(url: string) => Promise<unknown>>().mockRejectedValue(new TypeError('Failed to fetch'));
    start(importModule);
    const user = userEvent.setup();
    const input = await screen.findByRole<HTMLInputElement>('textbox', { name: 'Backend URL' });
    await user.clear(input);
    await user.type(input, 'file:///tmp');
    await user.click(screen.getByRole('button', { name: 'Save and retry' }));
    expect(screen.getByText('Enter a valid http:// or https:// URL.')).toBeTruthy();
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(st.saves).toBe(0);

    await user.clear(input);
    await user.type(input, 'http://localhost:7890/');
    await user.click(screen.getByRole('button', { name: 'Save and retry' }));
    await waitFor(() => expect(importModule).toHaveBeenCalledTimes(2));
    expect(importModule.mock.calls[1]?.[0]).toBe('http://localhost:7890/jsapi/tauritavern-mcp.js?attempt=1');
    expect(st.extensionSettings.mcp_manager).toEqual({ backendUrl: 'http://localhost:7890' });
    expect(st.saves).toBe(1);
    expect(await screen.findByText('Could not reach the ttmcp backend at http://localhost:7890.')).toBeTruthy();
    expect(command()).toBe('ttmcp serve --listen localhost:7890');
  });

  test('a loaded bridge that cannot reach its backend is "not running" too; Retry asks the bridge to reconnect', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    mcp.failNext('list', apiError('mcp.host_unavailable', 'cannot reach the ttmcp backend at http://127.0.0.1:7878', 'Unavailable'));
    const bridge: BridgeDouble = {
      state: 'closed',
      backend: 'http://127.0.0.1:7878',
      error: { code: 'mcp.host_unavailable', message: 'cannot reach' },
      reconnect: vi.fn(async () => setBridgeState(bridge, 'open')),
    };
    publishHost({ mcp, store: new FakeStore(), bridge });
    start(vi.fn());
    expect(await screen.findByText('The ttmcp backend is not running', { exact: false })).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(bridge.reconnect).toHaveBeenCalledTimes(1);
  });
});

describe('the backend starts after the page', () => {
  const down = () => Promise.reject(new TypeError('Failed to fetch dynamically imported module'));

  /** Runs the next retry timer and lets its attempt settle; returns its delay. */
  async function nextRetry(): Promise<number> {
    let ms = 0;
    await act(async () => {
      ms = clock.fire();
      await new Promise((r) => setTimeout(r, 0));
    });
    return ms;
  }

  test('tries again by itself, about 1, 2, 4 s apart, and shows the Manager once it runs, without a click', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    let up = false;
    const importModule = vi.fn(async (_url: string) => (up ? publishHost({ mcp, store: new FakeStore(), bridge: openBridge() }) : down()));
    start(importModule);
    expect(await screen.findByText('The ttmcp backend is not running', { exact: false })).toBeTruthy();
    expect(clock.pending).toEqual([1000]);
    expect(await nextRetry()).toBe(1000);
    expect(await nextRetry()).toBe(2000);
    expect(clock.pending).toEqual([4000]);
    expect(importModule).toHaveBeenCalledTimes(3);
    // the automatic attempts leave the panel as it is (no busy Retry flashing)
    expect(screen.getByRole('button', { name: 'Retry' })).toHaveProperty('disabled', false);
    up = true;
    await nextRetry();
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(clock.pending).toEqual([]);
    expect(importModule.mock.calls.map((c) => String(c[0]))).toEqual([
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js',
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js?attempt=1',
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js?attempt=2',
      'http://127.0.0.1:7878/jsapi/tauritavern-mcp.js?attempt=3',
    ]);
    // the console gets one line per change, not one per attempt
    expect(info.mock.calls.map((c) => String(c[0]))).toEqual([
      '[mcp-manager] The ttmcp backend at http://127.0.0.1:7878 is not running; the MCP drawer connects once it runs.',
      '[mcp-manager] Connected to the ttmcp backend at http://127.0.0.1:7878.',
    ]);
  });

  test('focus, a visible tab and a generation each make an attempt at once (at most one a second)', async () => {
    vi.spyOn(console, 'info').mockImplementation(() => {});
    const listeners = new Map<string, Array<(...args: unknown[]) => unknown>>();
    const eventSource = {
      on: (e: string, fn: (...args: unknown[]) => unknown) => void (listeners.get(e) ?? listeners.set(e, []).get(e))!.push(fn),
      removeListener: () => {},
    };
    installSillyTavern({ context: { eventSource, registerFunctionTool: () => {}, unregisterFunctionTool: () => {} } });
    settingsColumn();
    const importModule = vi.fn(down);
    start(importModule);
    expect(await screen.findByText('The ttmcp backend is not running', { exact: false })).toBeTruthy();
    const calls = () => importModule.mock.calls.length;
    expect(calls()).toBe(1);

    clock.advance(1500);
    await act(async () => void window.dispatchEvent(new Event('focus')));
    await waitFor(() => expect(calls()).toBe(2));
    await act(async () => void window.dispatchEvent(new Event('focus'))); // the same moment: nothing more
    expect(calls()).toBe(2);

    clock.advance(1500);
    await new Promise((r) => setTimeout(r, 1000)); // the panel's quiet second for focus and visibility
    await act(async () => void document.dispatchEvent(new Event('visibilitychange')));
    await waitFor(() => expect(calls()).toBe(3));

    // SillyTavern awaits GENERATION_STARTED: the generation waits for the attempt
    clock.advance(1500);
    await act(async () => {
      for (const fn of listeners.get('generation_started') ?? []) await fn('normal', {}, false);
    });
    expect(calls()).toBe(4);
    expect(clock.pending).toHaveLength(1); // still one timer
  });

  test('once the bridge is loaded it reconnects by itself: the drawer keeps no timer and follows it', async () => {
    vi.spyOn(console, 'info').mockImplementation(() => {});
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    mcp.failNext('list', apiError('mcp.host_unavailable', 'cannot reach the ttmcp backend at http://127.0.0.1:7878', 'Unavailable'));
    const bridge: BridgeDouble = { state: 'closed', backend: 'http://127.0.0.1:7878', reconnect: vi.fn(async () => {}) };
    start(loaderPublishing(mcp, new FakeStore(), bridge));
    expect(await screen.findByText('The ttmcp backend is not running', { exact: false })).toBeTruthy();
    expect(clock.pending).toEqual([]);
    act(() => setBridgeState(bridge, 'open'));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(bridge.reconnect).not.toHaveBeenCalled();
  });

  test('a refused origin is not retried by itself (only Retry)', async () => {
    installSillyTavern();
    settingsColumn();
    const bridge: BridgeDouble = { state: 'refused', backend: 'http://127.0.0.1:7878', reconnect: vi.fn(async () => {}) };
    const importModule = loaderPublishing(new FakeMcp(), new FakeStore(), bridge);
    start(importModule);
    expect(await screen.findByText('This page’s origin is not allowed', { exact: false })).toBeTruthy();
    clock.advance(5000);
    await act(async () => void window.dispatchEvent(new Event('focus')));
    expect(clock.pending).toEqual([]);
    expect(importModule).toHaveBeenCalledTimes(1);
    expect(bridge.reconnect).not.toHaveBeenCalled();
  });
});

describe('wakeAll', () => {
  test('waits for every waker, but not longer than its limit; a failing one does not matter', async () => {
    let release!: () => void;
    const slow = () => new Promise<void>((r) => (release = r));
    const failing = () => Promise.reject(new Error('x'));
    const t0 = Date.now();
    await wakeAll([slow, failing], 30);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    release();
    let done = false;
    await wakeAll([async () => void (done = true)], 10_000);
    expect(done).toBe(true);
  });
});

describe('origin not allowed', () => {
  test('names the page origin and the exact --allow-origin flag; Retry reconnects', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    const message = `mcp.origin_not_allowed: the ttmcp backend does not allow requests from ${ORIGIN}; restart it with --allow-origin ${ORIGIN}`;
    const bridge: BridgeDouble = {
      state: 'refused',
      backend: 'http://127.0.0.1:7878',
      error: { code: 'mcp.origin_not_allowed', message },
      reconnect: vi.fn(async () => undefined),
    };
    start(loaderPublishing(mcp, new FakeStore(), bridge));
    const panel = await screen.findByRole('alert');
    expect(within(panel).getByRole('heading').textContent).toBe(' This page’s origin is not allowed');
    expect(within(panel).getByText(`The ttmcp backend at http://127.0.0.1:7878 refused this page’s origin, ${ORIGIN}.`)).toBeTruthy();
    expect(command()).toBe(`ttmcp serve --allow-origin ${ORIGIN}`);
    // it wraps between the flags, never inside one
    expect([...panel.querySelectorAll('.tt-mcp-command-part')].map((e) => e.textContent)).toEqual([
      'ttmcp serve',
      ` --allow-origin ${ORIGIN}`,
    ]);
    expect(within(panel).getByText(`Details: ${message}`)).toBeTruthy();
    expect(mcp.count('list')).toBe(0);

    const user = userEvent.setup();
    await user.click(within(panel).getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(bridge.reconnect).toHaveBeenCalledTimes(1));
    expect(command()).toBe(`ttmcp serve --allow-origin ${ORIGIN}`);

    bridge.reconnect = vi.fn(async () => setBridgeState(bridge, 'open'));
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Local tools')).toBeTruthy();
  });

  test('the backend’s own restart command is shown as it sent it (its other flags kept)', async () => {
    installSillyTavern();
    settingsColumn();
    const own = `ttmcp serve --data-root '/home/u/my data' --listen 127.0.0.1:7880 --allow-origin ${ORIGIN}`;
    const bridge: BridgeDouble = {
      state: 'refused',
      backend: 'http://127.0.0.1:7880',
      error: { code: 'mcp.origin_not_allowed', message: 'refused', command: own },
      reconnect: vi.fn(async () => undefined),
    };
    start(loaderPublishing(new FakeMcp(), new FakeStore(), bridge));
    await waitFor(() => expect(command()).toBe(own));
    expect([...document.querySelectorAll('.tt-mcp-command-part')].map((e) => e.textContent)).toEqual([
      'ttmcp serve',
      " --data-root '/home/u/my data'",
      ' --listen 127.0.0.1:7880',
      ` --allow-origin ${ORIGIN}`,
    ]);
    act(() => started?.unmount());

    // without the bridge status: the rejection's command
    settingsColumn();
    const mcp = new FakeMcp();
    mcp.failNext('list', Object.assign(apiError('mcp.origin_not_allowed', 'refused', 'Unavailable'), { command: own }));
    start(loaderPublishing(mcp, new FakeStore(), undefined));
    await waitFor(() => expect(command()).toBe(own));
  });

  test('a backend without the bridge status still refuses through the error code', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp();
    mcp.failNext('list', apiError('mcp.origin_not_allowed', `origin ${ORIGIN} is not allowed`, 'Unavailable'));
    start(loaderPublishing(mcp, new FakeStore(), undefined));
    await waitFor(() => expect(command()).toBe(`ttmcp serve --allow-origin ${ORIGIN}`));
  });

  test('a refusal while working replaces the Manager with the explanation', async () => {
    installSillyTavern();
    settingsColumn();
    const bridge = openBridge();
    start(loaderPublishing(new FakeMcp([server()]), new FakeStore(), bridge));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    const own = `ttmcp serve --data-root /d --allow-origin ${ORIGIN}`;
    act(() => setBridgeState(bridge, 'refused', { code: 'mcp.origin_not_allowed', message: 'refused', command: own }));
    await waitFor(() => expect(command()).toBe(own));
    expect(screen.queryByText('Local tools')).toBeNull();
  });
});

describe('host API missing', () => {
  test('a loader without api.mcp', async () => {
    installSillyTavern();
    settingsColumn();
    start(vi.fn(async () => publishHost({})));
    const panel = await screen.findByRole('alert');
    expect(within(panel).getByRole('heading').textContent).toBe(' TauriTavern MCP Host API is unavailable');
  });

  test('an api.mcp without the methods the Manager calls', async () => {
    installSillyTavern();
    settingsColumn();
    publishHost({ mcp: { servers: { list: async () => ({ servers: [], storageIssues: [] }) } } });
    start(vi.fn());
    expect(await screen.findByText('TauriTavern MCP Host API is unavailable', { exact: false })).toBeTruthy();
  });
});

describe('while working', () => {
  test('a lost connection shows above the Manager, with a reconnect button', async () => {
    installSillyTavern();
    settingsColumn();
    const bridge: BridgeDouble = { ...openBridge(), reconnect: vi.fn(async () => setBridgeState(bridge, 'open')) };
    start(loaderPublishing(new FakeMcp([server()]), new FakeStore(), bridge));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    act(() => setBridgeState(bridge, 'closed', { code: 'mcp.host_unavailable', message: 'gone' }));
    expect(
      await screen.findByText('The connection to the ttmcp backend at http://127.0.0.1:7878 was lost. Reconnecting…', { exact: false }),
    ).toBeTruthy();
    act(() => setBridgeState(bridge, 'connecting'));
    expect(screen.getByText(/was lost/)).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Reconnect now' }));
    await waitFor(() => expect(screen.queryByText(/was lost/)).toBeNull());
    expect(bridge.reconnect).toHaveBeenCalledTimes(1);
    expect(screen.getByText('Local tools')).toBeTruthy();
  });

  test('a change made elsewhere shows after the page\'s notice, the window\'s focus, or a reconnection', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    const bridge: BridgeDouble = openBridge();
    start(loaderPublishing(mcp, new FakeStore(), bridge));
    expect(await screen.findByText('Local tools')).toBeTruthy();

    mcp.registrations[0]!.displayName = 'Renamed by the approval popup';
    act(() => notifyRegistrationsChanged());
    expect(await screen.findByText('Renamed by the approval popup')).toBeTruthy();
    mcp.registrations[0]!.displayName = 'Renamed in another tab';
    act(() => void window.dispatchEvent(new Event('focus')));
    expect(await screen.findByText('Renamed in another tab')).toBeTruthy();
    mcp.registrations[0]!.displayName = 'Renamed while disconnected';
    act(() => setBridgeState(bridge, 'closed', { code: 'mcp.host_unavailable', message: 'gone' }));
    act(() => setBridgeState(bridge, 'open'));
    expect(await screen.findByText('Renamed while disconnected')).toBeTruthy();
  });

  test('texts go through SillyTavern translate with mcp_manager keys and {param} substitution', async () => {
    const zh: Record<string, string> = {
      'mcp_manager.title': 'MCP 工具',
      'mcp_manager.servers_count': '服务器 · {count}',
    };
    const translate = vi.fn((text: string, key?: string | null) => (key && zh[key]) || text);
    installSillyTavern({ translate });
    settingsColumn();
    start(loaderPublishing(new FakeMcp([server()]), new FakeStore(), openBridge()));
    expect(document.querySelector('#mcp_manager_container b')?.textContent).toBe(' MCP 工具');
    expect(await screen.findByText('服务器 · 2')).toBeTruthy();
    expect(translate).toHaveBeenCalledWith('Servers · {count}', 'mcp_manager.servers_count');
  });
});

describe('SillyTavern’s ttmcp plugin (issue 28)', () => {
  const CONFIG_URL = 'http://localhost:3000/scripts/extensions/third-party/mcp-manager/ttmcp.json';
  /** SillyTavern with ttmcp.json saying the plugin was installed, and the plugin answering status. */
  const plugin = (status: Record<string, unknown> | null, ok = true, installed = true) =>
    vi.fn(async (url: string | URL | Request) => {
      if (String(url) === CONFIG_URL) return { ok: true, json: async () => ({ backendUrl: 'http://127.0.0.1:7878', ...(installed ? { plugin: true } : {}) }) } as Response;
      if (!String(url).endsWith('/api/plugins/ttmcp/_plugin/status')) throw new TypeError('unexpected fetch ' + String(url));
      if (status === null) throw new TypeError('Failed to fetch');
      return { ok, json: async () => status } as Response;
    }) as unknown as typeof fetch;

  function startWith(importModule: (url: string) => Promise<unknown>, answer: typeof globalThis.fetch) {
    act(() => {
      started = startManager({ importModule, clock, fetch: answer, configUrl: CONFIG_URL });
    });
  }

  test('when it answers, the API comes through it from SillyTavern’s own origin, and the Manager says so', async () => {
    installSillyTavern();
    settingsColumn();
    const mcp = new FakeMcp([server()]);
    const importModule = loaderPublishing(mcp, new FakeStore(), openBridge());
    startWith(importModule, plugin({ plugin: 'ttmcp', version: '1', backend: 'up', user: 'alice' }));
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(importModule.mock.calls.map((c) => c[0])).toEqual([`${window.location.origin}/api/plugins/ttmcp/jsapi/tauritavern-mcp.js`]);
    expect(screen.getByText(/Through SillyTavern \(its ttmcp plugin\), as alice/)).toBeTruthy();
  });

  test('the backend behind it not running yet: the plugin starts it, so no command is given', async () => {
    installSillyTavern();
    settingsColumn();
    startWith(() => Promise.reject(new TypeError('Failed to fetch dynamically imported module')), plugin({ plugin: 'ttmcp', backend: 'starting' }));
    const panel = await screen.findByRole('alert');
    expect(within(panel).getByRole('heading').textContent).toBe(' ttmcp is not running yet');
    expect(panel.textContent).toContain('[ttmcp]');
    expect(panel.querySelector('code.tt-mcp-command')).toBeNull();
    expect(within(panel).queryByRole('textbox', { name: 'Backend URL' })).toBeNull();
  });

  test.each([
    ['no plugin (404)', plugin({ error: 'not found' }, false)],
    ['another plugin', plugin({ plugin: 'mcp' })],
    ['not SillyTavern', plugin(null)],
    // an install without the plugin never asks for it (the 404 would show in the console)
    ['not installed', plugin({ plugin: 'ttmcp', backend: 'up' }, true, false)],
  ])('%s: the direct path as before, and the Manager says so', async (_, fetch) => {
    installSillyTavern();
    settingsColumn();
    const importModule = loaderPublishing(new FakeMcp([server()]), new FakeStore(), openBridge());
    startWith(importModule, fetch);
    expect(await screen.findByText('Local tools')).toBeTruthy();
    expect(importModule.mock.calls.map((c) => c[0])).toEqual(['http://127.0.0.1:7878/jsapi/tauritavern-mcp.js']);
    expect(screen.getByText(/Directly to ttmcp at http:\/\/127\.0\.0\.1:7878: this works only in a browser on the computer that runs ttmcp/)).toBeTruthy();
    if (_ === 'not installed') expect((fetch as unknown as ReturnType<typeof vi.fn>).mock.calls.map((c) => String(c[0]))).toEqual([CONFIG_URL]);
  });
});

describe('the route’s pieces', () => {
  test('probePlugin: only a ttmcp answer counts; a backend state it does not know is down', async () => {
    const answer = (body: unknown, ok = true) => vi.fn(async () => ({ ok, json: async () => body }) as Response) as unknown as typeof fetch;
    expect(await probePlugin('https://st.example', answer({ plugin: 'ttmcp', backend: 'untrusted' }))).toEqual({ backend: 'untrusted' });
    expect(await probePlugin('https://st.example', answer({ plugin: 'ttmcp', backend: 'exploded', user: 'bob' }))).toEqual({ backend: 'down', user: 'bob' });
    expect(await probePlugin('https://st.example', answer({ plugin: 'ttmcp' }, false))).toBeUndefined();
    expect(await probePlugin('https://st.example', answer('<html>'))).toBeUndefined();
  });

  test.each([
    ['http://127.0.0.1:8000', true],
    ['http://localhost:8000', true],
    ['http://[::1]:8000', true],
    ['http://192.168.1.20:8000', false],
    ['https://st.example.com', false],
  ])('isLoopbackOrigin(%s) is %s', (origin, loopback) => {
    expect(isLoopbackOrigin(origin)).toBe(loopback);
  });

  test('a page opened from another device is told the plugin is the way, not to start ttmcp beside the browser', () => {
    render(
      <TrContext.Provider value={englishTr}>
        <BackendDown backend="http://127.0.0.1:7878" message="" busy={false} remotePage onRetry={() => {}} onSaveUrl={() => {}} />
      </TrContext.Provider>,
    );
    const panel = screen.getByRole('alert');
    expect(panel.textContent).toContain('opened from another device');
    expect(panel.textContent).toContain('enableServerPlugins: true');
    expect(panel.textContent).toContain('SILLYTAVERN_ENABLESERVERPLUGINS=true');
    expect([...panel.querySelectorAll('code.tt-mcp-command')].map((c) => c.textContent)).toEqual([
      'ttmcp install-extension --sillytavern <SillyTavern folder> --enable-server-plugins',
    ]);
  });
});
