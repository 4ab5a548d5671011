import { afterEach, describe, expect, test } from 'vitest';
import type { McpElicitationHandler, McpElicitationRequest, McpElicitationResponse } from '../../../../jsapi/tauritavern-mcp';
import type { ElicitationAnswer } from './elicitation-dialog';
import { FakeMcp, publishHost } from '../../../test/fakes';
import { createElicitationHandler, installElicitationHandler, uninstallElicitationHandler, type Ask } from './handler';

function question(callId: string, patch: Partial<McpElicitationRequest> = {}): McpElicitationRequest {
  return {
    callId,
    registrationId: 'r1',
    serverDisplayName: 'Greeter',
    nativeName: 'greet',
    source: 'model',
    mode: 'form',
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
    ...patch,
  };
}

/** An Ask whose popups the test answers one by one. */
function popups() {
  const open: Array<{ request: McpElicitationRequest; values?: Record<string, string>; answer(a: ElicitationAnswer): void }> = [];
  const ask: Ask = (request, opts) =>
    new Promise((resolve) => {
      open.push({ request, ...(opts.values ? { values: opts.values } : {}), answer: resolve });
    });
  return { open, ask };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('the page’s elicitation handler', () => {
  test('one popup at a time, in the order the questions came', async () => {
    const { open, ask } = popups();
    const handler = createElicitationHandler(ask);
    const first = handler(question('a'), { signal: new AbortController().signal });
    const second = handler(question('b'), { signal: new AbortController().signal });
    await tick();
    expect(open.map((o) => o.request.callId)).toEqual(['a']);
    open[0]!.answer({ response: { action: 'decline' } });
    expect(await first).toEqual({ action: 'decline' });
    await tick();
    expect(open.map((o) => o.request.callId)).toEqual(['a', 'b']);
    open[1]!.answer({ response: { action: 'accept', content: { name: 'x' } } });
    expect(await second).toEqual({ action: 'accept', content: { name: 'x' } });
  });

  test('a question withdrawn while it waits is answered at once and never shown', async () => {
    const { open, ask } = popups();
    const handler = createElicitationHandler(ask);
    const first = handler(question('a'), { signal: new AbortController().signal });
    const stop = new AbortController();
    const second = handler(question('b'), { signal: stop.signal });
    stop.abort();
    expect(await second).toEqual({ action: 'cancel' });
    open[0]!.answer({ response: { action: 'cancel' } });
    await first;
    await tick();
    expect(open.map((o) => o.request.callId)).toEqual(['a']);
    // and the queue goes on
    const third = handler(question('c'), { signal: new AbortController().signal });
    await tick();
    open[1]!.answer({ response: { action: 'decline' } });
    expect(await third).toEqual({ action: 'decline' });
  });

  test('a failing popup answers nothing (the transport says cancel) and does not block the next', async () => {
    let calls = 0;
    const handler = createElicitationHandler(() => (++calls === 1 ? Promise.reject(new Error('no Popup')) : Promise.resolve({ response: { action: 'decline' } })));
    await expect(handler(question('a'), { signal: new AbortController().signal })).rejects.toThrow('no Popup');
    expect(await handler(question('b'), { signal: new AbortController().signal })).toEqual({ action: 'decline' });
  });

  test('a re-ask of the same question opens with what the user typed; another question does not', async () => {
    const { open, ask } = popups();
    const handler = createElicitationHandler(ask);
    const signal = new AbortController().signal;
    const first = handler(question('a'), { signal });
    await tick();
    open[0]!.answer({ response: { action: 'accept', content: { name: 'bad' } }, values: { name: 'bad' } });
    await first;
    const again = handler(question('a', { error: 'name: at least 5 characters' }), { signal });
    const other = handler(question('b', { error: 'name: at least 5 characters' }), { signal });
    await tick();
    expect(open[1]?.values).toEqual({ name: 'bad' });
    open[1]!.answer({ response: { action: 'cancel' } });
    await again;
    await tick();
    expect(open[2]?.values).toBeUndefined();
    open[2]!.answer({ response: { action: 'cancel' } });
    await other;
  });
});

describe('installing it', () => {
  afterEach(() => {
    delete (window as { __TAURITAVERN__?: unknown }).__TAURITAVERN__;
  });

  const handler: McpElicitationHandler = (): McpElicitationResponse => ({ action: 'cancel' });

  test('only where ttmcp’s api.mcp.elicitation exists, once per published API, and taken away again', () => {
    expect(installElicitationHandler(handler)).toBe(false); // no API yet
    publishHost({ mcp: new FakeMcp() }); // TauriTavern's: no elicitation namespace
    expect(installElicitationHandler(handler)).toBe(false);

    const set: Array<McpElicitationHandler | null> = [];
    const mcp = Object.assign(new FakeMcp(), { elicitation: { setHandler: (h: McpElicitationHandler | null) => void set.push(h) } });
    publishHost({ mcp });
    expect(installElicitationHandler(handler)).toBe(true);
    expect(installElicitationHandler(handler)).toBe(true);
    expect(set).toEqual([handler]);
    uninstallElicitationHandler();
    expect(set).toEqual([handler, null]);
    // a new API (the loader imported again) gets it again
    const next = Object.assign(new FakeMcp(), { elicitation: { setHandler: (h: McpElicitationHandler | null) => void set.push(h) } });
    publishHost({ mcp: next });
    installElicitationHandler(handler);
    expect(set).toEqual([handler, null, handler]);
  });
});
