// Trying again while the backend is not running (issue 17): the page may
// load before `ttmcp serve` starts, and the Manager must pick the backend up
// by itself once it runs. Each attempt that fails is one red line in the
// browser's console (Chromium prints every failed request, and a page cannot
// hide it), so the attempts thin out while the backend stays down: about
// 1 s, 2 s, 4 s, then every 5 s. The moments when the user is likely to
// have just started it — the window regains focus, the tab becomes visible,
// the drawer opens, a generation starts — make an attempt at once (at most
// one a second), so the wait is rarely felt.

/** The pause after the nth failed attempt in a row (ms), the last repeating. */
export const RETRY_DELAYS_MS = [1000, 2000, 4000, 5000] as const;
/** Each pause varies by ±20 %, so pages opened together do not retry together. */
export const RETRY_JITTER = 0.2;
/** A poke starts no attempt within this long of the previous one's start (ms). */
export const POKE_GAP_MS = 1000;

/** The pause (ms) after `failures` failed attempts in a row (≥ 1), for a random number in [0, 1). */
export function retryDelay(failures: number, random: number): number {
  const i = Math.min(Math.max(failures, 1), RETRY_DELAYS_MS.length) - 1;
  const r = Math.min(Math.max(random, 0), 1);
  return Math.round(RETRY_DELAYS_MS[i]! * (1 - RETRY_JITTER + 2 * RETRY_JITTER * r));
}

/** Timers and randomness (tests give their own). */
export interface RetryClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
  random(): number;
}

const browserClock: RetryClock = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
  random: () => Math.random(),
};

/**
 * What one attempt found: 'retry' — still down, and nobody else tries: the
 * loop tries again after the next pause; 'settled' — connected, or a state
 * that time does not fix, or someone else retries (the page's bridge, once
 * loaded, reconnects with its own backoff): no timer, the count starts over.
 */
export type AttemptOutcome = 'retry' | 'settled';

/**
 * RetryLoop runs attempts one at a time: now(), poke() and its own timer.
 * The attempt is told whether the user asked for it (now(): Retry), or it
 * is automatic (a poke, the timer). An attempt that throws counts as
 * 'retry'.
 */
export class RetryLoop {
  readonly #attempt: (asked: boolean) => Promise<AttemptOutcome>;
  readonly #clock: RetryClock;
  #failures = 0;
  #timer: unknown = undefined;
  #running: Promise<void> | null = null;
  #lastStart = Number.NEGATIVE_INFINITY;
  #stopped = false;

  constructor(attempt: (asked: boolean) => Promise<AttemptOutcome>, clock: RetryClock = browserClock) {
    this.#attempt = attempt;
    this.#clock = clock;
  }

  /** Failed attempts in a row (for tests and the state panel). */
  get failures(): number {
    return this.#failures;
  }

  /** Whether an attempt of the loop's own is scheduled. */
  get scheduled(): boolean {
    return this.#timer !== undefined;
  }

  /** An attempt now, asked for by the user (Retry) or the page (the bridge opened); joins the one running. */
  now(): Promise<void> {
    return this.#start(true);
  }

  /**
   * An automatic attempt now, because the user may have just started the
   * backend (focus, visibility, the drawer, a generation): joins the one
   * running, and starts none within POKE_GAP_MS of the last start.
   */
  poke(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running) return this.#running;
    if (this.#clock.now() - this.#lastStart < POKE_GAP_MS) return Promise.resolve();
    return this.#start(false);
  }

  /** No further attempt (the Manager unmounted). */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimer();
  }

  #start(asked: boolean): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running) return this.#running;
    this.#cancelTimer();
    this.#lastStart = this.#clock.now();
    // The attempt starts a microtask later, so that whatever it causes
    // synchronously (a state event calling now()) already joins it.
    const run = Promise.resolve().then(() => this.#run(asked));
    this.#running = run;
    return run;
  }

  async #run(asked: boolean): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      outcome = await this.#attempt(asked);
    } catch {
      outcome = 'retry';
    }
    this.#running = null;
    if (this.#stopped) return;
    if (outcome === 'settled') {
      this.#failures = 0;
      return;
    }
    this.#failures++;
    this.#cancelTimer();
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#start(false);
    }, retryDelay(this.#failures, this.#clock.random()));
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
