// Checks on values of unknown shape (what SillyTavern, a server or a stored
// file gave us), shared so each layer reads them the same way.

/** A plain object: not null, not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A v4 UUID: crypto.randomUUID() where the page has it, else one made from
 * crypto.getRandomValues. randomUUID exists only in secure contexts, and
 * SillyTavern opened from a phone at http://<LAN address>/ is not one.
 */
export function newUUID(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
