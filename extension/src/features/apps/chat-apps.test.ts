import { afterEach, describe, expect, test } from 'vitest';
import { useFrameWindows } from '../../../test/frame-windows';
import type { AppFrameDeps, AppRecord } from './app-frame';
import { APPS_EXTRA, appRecords, ChatApps, MAX_LIVE_APPS } from './chat-apps';

function record(id: string): AppRecord {
  return { invocationId: id, registrationId: 'r1', serverDisplayName: 'Chess', appToolName: 'board', arguments: {}, result: { content: [{ type: 'text', text: id }] } };
}

/** Deps whose interface read fails or succeeds; counts reads and teardowns. */
function deps(fail = false) {
  const reads: string[] = [];
  const teardowns: string[] = [];
  const contexts: string[] = [];
  const d = {
    readInterface: async (_r: string, tool: string) => {
      reads.push(tool);
      if (fail) throw new Error('mcp.app_unknown');
      return { viewId: 'v', permissions: {}, declared: {} };
    },
    loadBridge: async () => ({
      AppBridge: class {
        async connect() {}
        sendToolInput() {}
        sendToolResult() {}
        sendToolCancelled() {}
        async teardownResource() {
          teardowns.push('x');
          return {};
        }
      },
      PostMessageTransport: class {},
    }),
    viewUrl: (id: string) => `http://backend.invalid/apps/view/${id}`,
    hostContext: () => ({}),
    setModelContext: (key: string, text: string | null) => void contexts.push(`${key}=${text}`),
    now: () => 0,
  } as unknown as AppFrameDeps;
  return { d, reads, teardowns, contexts };
}

function chatDom(n: number): void {
  document.body.innerHTML = '<div id="chat">' + Array.from({ length: n }, (_, i) => `<div class="mes" mesid="${i}"><div class="mes_text">m${i}</div></div>`).join('') + '</div>';
}

useFrameWindows();
afterEach(() => document.body.replaceChildren());

describe('ChatApps', () => {
  test('records are read leniently: malformed ones are left out', () => {
    expect(appRecords({ extra: { [APPS_EXTRA]: [record('a'), { invocationId: 1 }, null, 'x'] } })).toEqual([record('a')]);
    expect(appRecords({})).toEqual([]);
  });

  test('each App below its message’s text, once; gone when its message is', async () => {
    chatDom(3);
    const { d, reads } = deps();
    const apps = new ChatApps(d, () => document, false);
    const chat = [{}, { extra: { [APPS_EXTRA]: [record('c1'), record('c2')] } }, {}];
    apps.render(chat);
    apps.render(chat); // again: nothing new
    await new Promise((r) => setTimeout(r, 0));
    const box = document.querySelector('.mes[mesid="1"] .ttmcp-apps')!;
    expect(box.previousElementSibling?.className).toBe('mes_text');
    expect(box.querySelectorAll('.ttmcp-app').length).toBe(2);
    expect(reads.length).toBe(2);
    expect(apps.live).toBe(2);
    apps.render([{}, {}, {}]); // the message lost its Apps (deleted, swiped)
    await new Promise((r) => setTimeout(r, 0));
    expect(document.querySelectorAll('.ttmcp-app').length).toBe(0);
    expect(apps.live).toBe(0);
  });

  test('a message deleted before an App’s: SillyTavern renumbers the messages, the App stays as it is', async () => {
    chatDom(3);
    const { d, reads, teardowns, contexts } = deps();
    const apps = new ChatApps(d, () => document, false);
    const chat = [{}, { extra: { [APPS_EXTRA]: [record('c1')] } }, {}];
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    const frame = document.querySelector('.ttmcp-app-frame');
    // deleteMessage(0): the chat spliced, its element removed, the others renumbered (updateViewMessageIds)
    chat.splice(0, 1);
    document.querySelector('.mes[mesid="0"]')!.remove();
    document.querySelectorAll('.mes').forEach((m, i) => m.setAttribute('mesid', String(i)));
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    expect(document.querySelector('.ttmcp-app-frame')).toBe(frame);
    expect(reads.length).toBe(1);
    expect(teardowns).toEqual([]);
    expect(contexts).toEqual([]); // its part of the model's context kept
  });

  test('the App’s own message deleted (its element already removed): torn down, its context forgotten, nothing of it kept', async () => {
    chatDom(2);
    const { d, teardowns, contexts } = deps();
    const apps = new ChatApps(d, () => document, false);
    const chat = [{}, { extra: { [APPS_EXTRA]: [record('c1')] } }];
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    expect(apps.placed).toBe(1);
    chat.splice(1, 1);
    document.querySelector('.mes[mesid="1"]')!.remove();
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 600));
    expect(teardowns).toEqual(['x']);
    expect(contexts).toEqual(['ttmcp_app_r1_c1=null']);
    expect(apps.live).toBe(0);
    expect(apps.placed).toBe(0);
  });

  test('Stop reaches the calls under way of every live App; the Apps stay', async () => {
    chatDom(2);
    const { d } = deps();
    const bridges: Array<{ oncalltool?: (p: { name: string }) => Promise<unknown> }> = [];
    const base = await d.loadBridge();
    const aborted: string[] = [];
    const apps = new ChatApps(
      {
        ...d,
        loadBridge: async () => ({
          ...base,
          AppBridge: class extends (base.AppBridge as unknown as new () => object) {
            constructor() {
              super();
              bridges.push(this);
            }
          } as never,
        }),
        permission: async () => 'allow',
        callTool: (req, signal) =>
          new Promise((resolve) =>
            signal.addEventListener('abort', () => {
              aborted.push(req.appToolName);
              resolve({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'stopped' });
            }),
          ),
      },
      () => document,
      false,
    );
    apps.render([{ extra: { [APPS_EXTRA]: [record('c1')] } }, { extra: { [APPS_EXTRA]: [record('c2')] } }]);
    await new Promise((r) => setTimeout(r, 0));
    expect(await apps.stop()).toBe(0); // nothing under way
    const answers = bridges.map((b) => b.oncalltool?.({ name: 'board' }));
    await new Promise((r) => setTimeout(r, 0));
    expect(await apps.stop()).toBe(2);
    await Promise.all(answers);
    expect(aborted).toEqual(['board', 'board']);
    expect(apps.live).toBe(2);
  });

  test('a second clear and render while the first clear still waits for its teardowns: the new chat’s Apps are drawn', async () => {
    chatDom(1);
    const { d } = deps();
    let answer: () => void = () => {};
    const slow = {
      ...d,
      loadBridge: async () => {
        const base = await d.loadBridge();
        return { ...base, AppBridge: class extends (base.AppBridge as unknown as new () => { teardownResource(): Promise<unknown> }) {
          override teardownResource() { return new Promise((r) => (answer = () => r({}))); }
        } as never };
      },
    };
    const apps = new ChatApps(slow, () => document, false);
    const chat = [{ extra: { [APPS_EXTRA]: [record('c1')] } }];
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    const first = apps.clear().then(() => apps.render(chat)); // its App does not answer yet
    await apps.clear();
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    answer();
    await first;
    await new Promise((r) => setTimeout(r, 0));
    expect(apps.live).toBe(1);
    expect(document.querySelectorAll('.ttmcp-app .ttmcp-app-frame').length).toBe(1);
  });

  test('an App that cannot be shown says so in its place, and is not retried on every render', async () => {
    chatDom(1);
    const { d, reads } = deps(true);
    const apps = new ChatApps(d, () => document, false);
    const chat = [{ extra: { [APPS_EXTRA]: [record('c1')] } }];
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    expect(document.querySelector('.ttmcp-app-failed')?.textContent).toContain('mcp.app_unknown');
    expect(reads.length).toBe(1);
  });

  test(`at most ${MAX_LIVE_APPS} live at once, however many messages have Apps; clear tears all down`, async () => {
    chatDom(50);
    const { d } = deps();
    const apps = new ChatApps(d, () => document, false);
    const chat = Array.from({ length: 50 }, (_, i) => ({ extra: { [APPS_EXTRA]: [record(`c${i}`)] } }));
    apps.render(chat);
    await new Promise((r) => setTimeout(r, 0));
    expect(apps.live).toBeLessThanOrEqual(MAX_LIVE_APPS);
    expect(apps.live).toBe(MAX_LIVE_APPS); // the newest, the oldest torn down
    expect(document.querySelectorAll('.ttmcp-app-frame').length).toBe(MAX_LIVE_APPS);
    await apps.clear();
    expect(apps.live).toBe(0);
    expect(document.querySelectorAll('.ttmcp-app').length).toBe(0);
  });
});
