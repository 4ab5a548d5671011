// The retry loop: the backoff while the backend stays down, attempts one at
// a time, pokes at once but not more than one a second, a fresh count after
// success, nothing after stop.

import { describe, expect, test } from 'vitest';
import { ManualClock } from '../../test/fakes';
import { POKE_GAP_MS, RETRY_DELAYS_MS, retryDelay, RetryLoop, type AttemptOutcome } from './retry';

describe('retryDelay', () => {
  test('about 1, 2, 4 s, then 5 s for ever, each ±20 %', () => {
    expect([1, 2, 3, 4, 5, 50].map((n) => retryDelay(n, 0.5))).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
    for (let n = 1; n <= 6; n++) {
      const nominal = RETRY_DELAYS_MS[Math.min(n, RETRY_DELAYS_MS.length) - 1]!;
      expect(retryDelay(n, 0)).toBe(nominal * 0.8);
      expect(retryDelay(n, 0.999999)).toBeCloseTo(nominal * 1.2, -1);
    }
    // out-of-range inputs are clamped
    expect(retryDelay(0, -1)).toBe(retryDelay(1, 0));
    expect(retryDelay(3, 7)).toBe(retryDelay(3, 1));
  });

  test('the backend is found within the cap of its start; a minute down costs about a dozen attempts', () => {
    let t = 0;
    const starts = [0];
    for (let n = 1; t < 60_000; n++) {
      t += retryDelay(n, 0.5);
      starts.push(t);
    }
    expect(starts.slice(0, 5)).toEqual([0, 1000, 3000, 7000, 12000]);
    expect(starts.filter((s) => s < 60_000)).toHaveLength(14); // against 60+ at the old ≈1 s cap
  });
});

/** A loop over scripted outcomes; records each attempt (asked or automatic). */
function loopWith(outcomes: AttemptOutcome[], clock = new ManualClock()) {
  const attempts: boolean[] = [];
  let release: (() => void) | null = null;
  let hold = false;
  const loop = new RetryLoop(async (asked) => {
    attempts.push(asked);
    if (hold) await new Promise<void>((r) => (release = r));
    return outcomes.shift() ?? 'retry';
  }, clock);
  return {
    loop,
    clock,
    attempts,
    hold: () => (hold = true),
    release: () => {
      hold = false;
      release?.();
    },
  };
}

/** Lets the loop's promise chains run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('RetryLoop', () => {
  test('retries on the backoff while down, stops once settled, counts afresh after', async () => {
    const { loop, clock, attempts } = loopWith(['retry', 'retry', 'retry', 'settled', 'retry']);
    await loop.now();
    expect(clock.pending).toEqual([1000]);
    clock.fire();
    await settle();
    expect(clock.pending).toEqual([2000]);
    clock.fire();
    await settle();
    expect(clock.pending).toEqual([4000]);
    clock.fire();
    await settle();
    expect(clock.pending).toEqual([]); // settled: no timer
    expect(loop.failures).toBe(0);
    expect(attempts).toEqual([true, false, false, false]);
    await loop.now(); // down again: starts from 1 s
    expect(clock.pending).toEqual([1000]);
  });

  test('a poke attempts at once and replaces the timer; within a second of the last start it does nothing', async () => {
    const { loop, clock, attempts } = loopWith(['retry', 'retry', 'retry']);
    await loop.now();
    expect(clock.pending).toEqual([1000]);
    await loop.poke(); // at the same instant: too soon
    expect(attempts).toHaveLength(1);
    clock.advance(POKE_GAP_MS);
    await loop.poke();
    expect(attempts).toEqual([true, false]);
    expect(clock.pending).toEqual([2000]); // one timer, the next step
    clock.advance(POKE_GAP_MS - 1);
    await loop.poke();
    expect(attempts).toHaveLength(2);
  });

  test('one attempt at a time: now() and poke() join the one running', async () => {
    const w = loopWith(['retry', 'settled']);
    w.hold();
    const first = w.loop.now();
    await settle();
    const joined = [w.loop.now(), w.loop.poke()];
    w.clock.advance(5000);
    const third = w.loop.poke();
    w.release();
    await Promise.all([first, ...joined, third]);
    expect(w.attempts).toEqual([true]);
  });

  test('what an attempt causes at once (a state event calling now()) joins it', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const loop: RetryLoop = new RetryLoop(async () => {
      runs++;
      void loop.now(); // e.g. the bridge dispatching "open" from inside reconnect()
      return 'settled';
    }, clock);
    await loop.now();
    await settle();
    expect(runs).toBe(1);
  });

  test('an attempt that throws counts as still down; stop() ends the timer and every later attempt', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const loop = new RetryLoop(async () => {
      runs++;
      throw new Error('boom');
    }, clock);
    await loop.now();
    expect(clock.pending).toEqual([1000]);
    loop.stop();
    expect(clock.pending).toEqual([]);
    clock.advance(10_000);
    await loop.now();
    await loop.poke();
    expect(runs).toBe(1);
  });
});
