import { afterEach, describe, expect, test, vi } from 'vitest';
import { newUUID } from './values';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newUUID', () => {
  afterEach(() => vi.unstubAllGlobals());

  test('a fresh v4 UUID, with crypto.randomUUID', () => {
    const a = newUUID();
    expect(a).toMatch(V4);
    expect(newUUID()).not.toBe(a);
  });

  test('and without it (a page that is not a secure context: SillyTavern at a LAN address over http)', () => {
    const real = globalThis.crypto;
    vi.stubGlobal('crypto', { getRandomValues: (b: Uint8Array) => real.getRandomValues(b) });
    expect(typeof globalThis.crypto.randomUUID).toBe('undefined');
    const a = newUUID();
    expect(a).toMatch(V4);
    expect(newUUID()).not.toBe(a);
  });
});
