// Checks on values of unknown shape (what SillyTavern, a server or a stored
// file gave us), shared so each layer reads them the same way.

/** A plain object: not null, not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
