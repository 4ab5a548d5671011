// Registrations change outside the Manager's own clicks: the tool bridge's
// "Always allow", another tab or window on the same backend, a script
// calling api.mcp, and a server whose lists changed (the backend followed
// its announcement and says so with an event, 'tauritavern-mcp:event'). So
// the Manager re-lists when one of them may have happened: at once when the
// backend or this page's own code says so (REGISTRATIONS_CHANGED_EVENT) or
// the connection opens again, and whenever
// the user may look at the panel again — the window regains focus, the tab
// becomes visible, the panel scrolls or folds into view. Those last three
// often come together (switching tabs is both a visibilitychange and a
// focus) and repeat (scrolling the settings column), so they count at most
// once per quiet period: coming back to the page costs one list, not three.

import { onBridgeChange } from './tauritavern';

/** Dispatched on window by this page's code that changed a registration behind the Manager's back. */
export const REGISTRATIONS_CHANGED_EVENT = 'ttmcp:registrations-changed';

/** Tells the Manager (and anything else listening) that registrations changed. */
export function notifyRegistrationsChanged(): void {
  window.dispatchEvent(new Event(REGISTRATIONS_CHANGED_EVENT));
}

/** The window event of the backend's events (jsapi/bridge-transport.js). */
export const BACKEND_EVENT = 'tauritavern-mcp:event';

/** What a backend event says changed: a server's lists. */
export interface ServerChange {
  registrationId: string;
  lists: string[];
}

/** The server change an event's detail names, if it is one. */
export function serverChange(detail: unknown): ServerChange | undefined {
  const d = detail as { event?: unknown; data?: { registrationId?: unknown; lists?: unknown } } | null;
  if (d?.event !== 'servers_changed' || typeof d.data?.registrationId !== 'string' || !Array.isArray(d.data.lists)) return undefined;
  return { registrationId: d.data.registrationId, lists: d.data.lists.filter((l): l is string => typeof l === 'string') };
}

export interface WatchOptions {
  /** The panel's element: coming into view counts (a drawer opened). */
  panel?: Element;
  /** The bridge state now (a change to open counts); absent: not watched. */
  bridgeState?: () => string | undefined;
  /** How long after one "may look again" moment the next ones are ignored (default 1000 ms). */
  quietMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

const DEFAULT_QUIET_MS = 1000;

/**
 * Calls fn whenever the registrations may have changed elsewhere — with
 * the change when the backend said what changed —; returns the unsubscribe
 * function. fn should still coalesce (the Manager runs at most one list at
 * a time): this page's notices are never dropped.
 */
export function watchRegistrations(fn: (change?: ServerChange) => void, opts: WatchOptions = {}): () => void {
  const offs: Array<() => void> = [];
  const on = (target: EventTarget, event: string, handler: () => void) => {
    target.addEventListener(event, handler);
    offs.push(() => target.removeEventListener(event, handler));
  };
  const quietMs = opts.quietMs ?? DEFAULT_QUIET_MS;
  const now = opts.now ?? Date.now;
  let lastLook = -Infinity;
  // The user may look again: once per quiet period.
  const looked = () => {
    const t = now();
    if (t - lastLook < quietMs) return;
    lastLook = t;
    fn();
  };
  on(window, REGISTRATIONS_CHANGED_EVENT, () => fn());
  const backend = (e: Event) => {
    const change = serverChange((e as CustomEvent).detail);
    if (change) fn(change);
  };
  window.addEventListener(BACKEND_EVENT, backend);
  offs.push(() => window.removeEventListener(BACKEND_EVENT, backend));
  on(window, 'focus', looked);
  on(document, 'visibilitychange', () => {
    if (document.visibilityState === 'visible') looked();
  });
  const bridgeState = opts.bridgeState;
  if (bridgeState) {
    let last = bridgeState();
    offs.push(
      onBridgeChange(() => {
        const state = bridgeState();
        if (state === 'open' && last !== 'open') fn();
        last = state;
      }),
    );
  }
  const panel = opts.panel;
  if (panel && typeof IntersectionObserver === 'function') {
    // The first report is the panel's state now: only later appearances count.
    let seen: boolean | undefined;
    const io = new IntersectionObserver((entries) => {
      const visible = entries[entries.length - 1]?.isIntersecting === true;
      if (visible && seen === false) looked();
      seen = visible;
    });
    io.observe(panel);
    offs.push(() => io.disconnect());
  }
  return () => {
    for (const off of offs.splice(0)) off();
  };
}
