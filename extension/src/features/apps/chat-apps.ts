// MCP Apps in SillyTavern's chat (issue 30): each tool message whose calls
// had an interface carries their records (extra.ttmcp_apps, saved with the
// chat); each record's App is drawn below that message's text — message
// HTML is sanitised and cannot hold an iframe — and drawn again from the
// saved record when the chat is opened again. Apps far out of view are
// torn down (and drawn again when scrolled back), at most MAX_LIVE_APPS
// live at once; changing the chat or deleting a message tears its Apps
// down first.

import { mountApp, showAppFailure, type AppFrameDeps, type AppRecord, type MountedApp } from './app-frame';
import { INITIAL_APP_HEIGHT } from './policy';

/** The extra member of a tool message that holds its Apps. */
export const APPS_EXTRA = 'ttmcp_apps';
/** The most Apps live at once; the oldest beyond it are torn down. */
export const MAX_LIVE_APPS = 12;

export interface ChatMessageLike {
  extra?: Record<string, unknown>;
}

/** The records of a message, as saved (anything malformed left out). */
export function appRecords(message: ChatMessageLike | undefined): AppRecord[] {
  const raw = message?.extra?.[APPS_EXTRA];
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (r): r is AppRecord =>
      !!r && typeof r === 'object' && typeof r.invocationId === 'string' && typeof r.registrationId === 'string' &&
      typeof r.appToolName === 'string' && typeof r.serverDisplayName === 'string' && !!r.arguments && typeof r.arguments === 'object',
  );
}

interface Live {
  key: string;
  mounting: Promise<MountedApp | null>;
}

export class ChatApps {
  #live = new Map<string, Live>();
  #observer: IntersectionObserver | null = null;
  #visible = new Set<string>();
  #failed = new Set<string>();
  /** Every App's place in the chat, by key — also those whose message SillyTavern already removed. */
  #slots = new Map<string, HTMLElement>();
  /**
   * A number for each message object: an App's key is its message's and
   * its invocation's, never the message's index, which SillyTavern
   * renumbers when an earlier message is deleted (the App stays).
   */
  #ids = new WeakMap<object, number>();
  #nextId = 0;

  /**
   * lazy (by default where the page has IntersectionObserver): an App is
   * drawn only near the view and torn down once scrolled far away; else
   * every App is drawn (within MAX_LIVE_APPS).
   */
  constructor(
    private readonly deps: AppFrameDeps,
    private readonly root: () => ParentNode = () => document,
    lazy = typeof IntersectionObserver === 'function',
  ) {
    if (lazy) {
      this.#observer = new IntersectionObserver((entries) => this.#seen(entries), { rootMargin: '600px 0px' });
    }
  }

  /** Draws the Apps of chat's messages, tears down those no longer there. */
  render(chat: readonly ChatMessageLike[]): void {
    const wanted = new Set<string>();
    chat.forEach((message, i) => {
      const records = appRecords(message);
      if (records.length === 0) return;
      const mes = this.root().querySelector<HTMLElement>(`.mes[mesid="${i}"]`);
      if (!mes) return; // not drawn (older messages not loaded)
      const box = this.#box(mes);
      const id = this.#idOf(message);
      for (const rec of records) {
        const key = `${id}:${rec.invocationId}`;
        wanted.add(key);
        let slot = this.#slots.get(key);
        if (slot && !mes.contains(slot)) {
          // SillyTavern drew the message anew: its App is drawn again there.
          this.#drop(key, false);
          slot = undefined;
        }
        if (!slot) {
          slot = document.createElement('div');
          slot.className = 'ttmcp-app';
          slot.dataset.ttmcpApp = key;
          // Its room before it is drawn: the observer then sees the chat as
          // it will be, and draws only the Apps near the view — not all of
          // them at 0 px, most torn down again a moment later.
          slot.style.minHeight = `${INITIAL_APP_HEIGHT}px`;
          box.append(slot);
          this.#slots.set(key, slot);
          if (this.#observer) this.#observer.observe(slot);
          else this.#visible.add(key);
        }
        slot.dataset.ttmcpRecord = JSON.stringify(rec);
        if (this.#visible.has(key)) this.#mount(key, slot, rec);
      }
    });
    // Gone from the chat (its message deleted — SillyTavern removed its
    // element already —, swiped to a swipe without it): torn down, and
    // nothing of it kept (its place, observer, state).
    for (const key of [...this.#slots.keys()]) if (!wanted.has(key)) this.#drop(key, true);
    for (const key of [...this.#live.keys()]) if (!wanted.has(key)) void this.#unmount(key, true);
  }

  #idOf(message: ChatMessageLike): number {
    let id = this.#ids.get(message);
    if (id === undefined) {
      id = this.#nextId++;
      this.#ids.set(message, id);
    }
    return id;
  }

  /** Forgets key's place: its App torn down (forget: its model context too), its slot unobserved and removed. */
  #drop(key: string, forget: boolean): void {
    const slot = this.#slots.get(key);
    this.#slots.delete(key);
    void this.#unmount(key, forget);
    if (slot) {
      this.#observer?.unobserve(slot);
      slot.remove();
    }
    this.#visible.delete(key);
    this.#failed.delete(key);
  }

  /**
   * Tears every App down (chat changed, extension stopping). What is this
   * chat's is forgotten at once — a render right after (the next chat, a
   * second chat_id_changed) starts clean, whatever the teardowns still
   * wait for —; the old places are hidden and removed once their Apps had
   * their ui/resource-teardown.
   */
  async clear(): Promise<void> {
    const going = [...this.#live.keys()].map((k) => this.#unmount(k, true));
    const slots = new Set([...this.#slots.values(), ...this.root().querySelectorAll<HTMLElement>('[data-ttmcp-app]')]);
    for (const slot of slots) {
      this.#observer?.unobserve(slot);
      slot.hidden = true;
      slot.className = 'ttmcp-app-going';
      delete slot.dataset.ttmcpApp;
    }
    this.#slots.clear();
    this.#visible.clear();
    this.#failed.clear();
    await Promise.all(going);
    for (const slot of slots) slot.remove();
  }

  /** How many Apps have a place in the chat (drawn or not). */
  get placed(): number {
    return this.#slots.size;
  }

  /**
   * The user's Stop: the tool calls under way of every live App are
   * cancelled (the Apps stay). Resolves with how many were stopped.
   */
  async stop(): Promise<number> {
    const apps = await Promise.all([...this.#live.values()].map((l) => l.mounting));
    return apps.reduce((n, app) => n + (app?.stopCalls() ?? 0), 0);
  }

  /** How many Apps are live. */
  get live(): number {
    return this.#live.size;
  }

  #box(mes: HTMLElement): HTMLElement {
    let box = mes.querySelector<HTMLElement>(':scope .ttmcp-apps');
    if (!box) {
      box = document.createElement('div');
      box.className = 'ttmcp-apps';
      const text = mes.querySelector('.mes_text');
      if (text) text.after(box);
      else mes.append(box);
    }
    return box;
  }

  #seen(entries: IntersectionObserverEntry[]): void {
    for (const e of entries) {
      const slot = e.target as HTMLElement;
      const key = slot.dataset.ttmcpApp ?? '';
      if (e.isIntersecting) {
        this.#visible.add(key);
        const rec = JSON.parse(slot.dataset.ttmcpRecord ?? 'null') as AppRecord | null;
        if (rec) this.#mount(key, slot, rec);
      } else {
        this.#visible.delete(key);
        void this.#unmount(key, false); // scrolled away: drawn again when back
      }
    }
  }

  #mount(key: string, slot: HTMLElement, rec: AppRecord): void {
    if (this.#live.has(key) || this.#failed.has(key)) return;
    while (this.#live.size >= MAX_LIVE_APPS) void this.#unmount(this.#live.keys().next().value!, false);
    const mounting = mountApp(slot, rec, this.deps).then((app) => {
      slot.style.minHeight = ''; // the App's own height from now on
      return app;
    }).catch((err: unknown) => {
      this.#failed.add(key);
      slot.style.minHeight = '';
      showAppFailure(slot, rec.serverDisplayName, err);
      this.#live.delete(key);
      return null;
    });
    this.#live.set(key, { key, mounting });
  }

  async #unmount(key: string, forget: boolean): Promise<void> {
    const live = this.#live.get(key);
    if (!live) return;
    this.#live.delete(key);
    // Scrolled away, torn down: its place keeps its height (the chat does not jump).
    const slot = this.#slots.get(key);
    if (slot?.isConnected && slot.offsetHeight > 0) slot.style.minHeight = `${slot.offsetHeight}px`;
    const app = await live.mounting;
    await app?.teardown(forget);
  }
}
