// When the Manager lists the registrations again: this page's own notice,
// the window's focus, the tab becoming visible, the panel coming into view,
// the connection opening again — and nothing after unsubscribing.

import { afterEach, describe, expect, test, vi } from 'vitest';
import { type BridgeDouble, publishHost, setBridgeState } from '../../test/fakes';
import { bridgeStatus } from './tauritavern';
import { BACKEND_EVENT, notifyRegistrationsChanged, serverChange, watchRegistrations } from './changes';

/** An IntersectionObserver whose reports the test makes. */
class FakeObserver {
  static last: FakeObserver | undefined;
  observed: Element[] = [];
  disconnected = false;
  constructor(private readonly cb: (entries: Array<{ isIntersecting: boolean }>) => void) {
    FakeObserver.last = this;
  }
  observe(el: Element) {
    this.observed.push(el);
  }
  disconnect() {
    this.disconnected = true;
  }
  report(isIntersecting: boolean) {
    this.cb([{ isIntersecting }]);
  }
}

let visibility: DocumentVisibilityState = 'visible';

afterEach(() => {
  vi.unstubAllGlobals();
  FakeObserver.last = undefined;
  visibility = 'visible';
});

function setVisibility(v: DocumentVisibilityState) {
  visibility = v;
  document.dispatchEvent(new Event('visibilitychange'));
}

describe('watchRegistrations', () => {
  test('each moment registrations may have changed elsewhere calls fn; unsubscribing stops it', () => {
    vi.stubGlobal('IntersectionObserver', FakeObserver);
    vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
    const bridge: BridgeDouble = { state: 'open', backend: 'http://127.0.0.1:7878' };
    publishHost({ bridge });
    const panel = document.createElement('div');
    const fn = vi.fn();
    let clock = 0;
    const off = watchRegistrations(fn, { panel, bridgeState: () => bridgeStatus()?.state, now: () => clock });

    notifyRegistrationsChanged(); // the tool bridge's "Always allow"
    expect(fn).toHaveBeenCalledTimes(1);
    window.dispatchEvent(new Event('focus')); // back from another window or tab
    expect(fn).toHaveBeenCalledTimes(2);
    clock += 1000;
    setVisibility('hidden');
    expect(fn).toHaveBeenCalledTimes(2);
    setVisibility('visible');
    expect(fn).toHaveBeenCalledTimes(3);

    // the panel: its state at start does not count; coming into view again does
    expect(FakeObserver.last?.observed).toEqual([panel]);
    clock += 1000;
    FakeObserver.last!.report(false);
    expect(fn).toHaveBeenCalledTimes(3);
    FakeObserver.last!.report(true);
    expect(fn).toHaveBeenCalledTimes(4);
    FakeObserver.last!.report(true);
    expect(fn).toHaveBeenCalledTimes(4);

    // the connection: only a change to open counts
    setBridgeState(bridge, 'closed');
    setBridgeState(bridge, 'connecting');
    expect(fn).toHaveBeenCalledTimes(4);
    setBridgeState(bridge, 'open');
    expect(fn).toHaveBeenCalledTimes(5);
    setBridgeState(bridge, 'open');
    expect(fn).toHaveBeenCalledTimes(5);

    off();
    expect(FakeObserver.last?.disconnected).toBe(true);
    notifyRegistrationsChanged();
    window.dispatchEvent(new Event('focus'));
    setVisibility('visible');
    setBridgeState(bridge, 'closed');
    setBridgeState(bridge, 'open');
    expect(fn).toHaveBeenCalledTimes(5);
  });

  test('coming back to the page (visible, focus, the panel in view at once) lists once per quiet period; notices always', () => {
    vi.stubGlobal('IntersectionObserver', FakeObserver);
    vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
    const bridge: BridgeDouble = { state: 'open', backend: 'http://127.0.0.1:7878' };
    publishHost({ bridge });
    const fn = vi.fn();
    let clock = 5000;
    const off = watchRegistrations(fn, {
      panel: document.createElement('div'),
      bridgeState: () => bridgeStatus()?.state,
      now: () => clock,
    });
    FakeObserver.last!.report(false);

    // a tab switch: visibilitychange, focus and the panel's intersection within a moment
    setVisibility('visible');
    clock += 20;
    window.dispatchEvent(new Event('focus'));
    FakeObserver.last!.report(true);
    expect(fn).toHaveBeenCalledTimes(1);
    // scrolling the panel out and in again and again
    for (let i = 0; i < 10; i++) {
      clock += 50;
      FakeObserver.last!.report(false);
      FakeObserver.last!.report(true);
    }
    expect(fn).toHaveBeenCalledTimes(1);
    // this page's notices and a reconnection are never held back
    notifyRegistrationsChanged();
    notifyRegistrationsChanged();
    setBridgeState(bridge, 'closed');
    setBridgeState(bridge, 'open');
    expect(fn).toHaveBeenCalledTimes(4);
    // after the quiet period, the next look counts again
    clock += 1000;
    window.dispatchEvent(new Event('focus'));
    expect(fn).toHaveBeenCalledTimes(5);
    off();
  });

  test('a panel visible from the start counts when it comes back into view', () => {
    vi.stubGlobal('IntersectionObserver', FakeObserver);
    const fn = vi.fn();
    const off = watchRegistrations(fn, { panel: document.createElement('div') });
    FakeObserver.last!.report(true);
    FakeObserver.last!.report(false); // the drawer folded
    expect(fn).not.toHaveBeenCalled();
    FakeObserver.last!.report(true); // and opened again
    expect(fn).toHaveBeenCalledTimes(1);
    off();
  });
});

describe('backend events', () => {
  test("a server's lists changed: fn gets the change; other events and malformed ones are ignored", () => {
    const fn = vi.fn();
    const off = watchRegistrations(fn);
    const send = (detail: unknown) => window.dispatchEvent(new CustomEvent(BACKEND_EVENT, { detail }));
    send({ event: 'servers_changed', data: { registrationId: 'r1', lists: ['tools', 7, 'prompts'] } });
    expect(fn).toHaveBeenLastCalledWith({ registrationId: 'r1', lists: ['tools', 'prompts'] });
    send({ event: 'something_else', data: {} });
    send({ event: 'servers_changed', data: { lists: [] } });
    send(null);
    expect(fn).toHaveBeenCalledTimes(1);
    off();
    send({ event: 'servers_changed', data: { registrationId: 'r1', lists: [] } });
    expect(fn).toHaveBeenCalledTimes(1);
    expect(serverChange({ event: 'servers_changed', data: { registrationId: 'x', lists: 'tools' } })).toBeUndefined();
  });
});
