// What a rejection says, whatever was thrown.

/** The backend cannot be reached (the shim's code). */
export const CODE_HOST_UNAVAILABLE = 'mcp.host_unavailable';
/** The backend refused this page's origin. */
export const CODE_ORIGIN_NOT_ALLOWED = 'mcp.origin_not_allowed';

/** The message of an Error (the backend's message, starting with its code), or the value as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** The `code` of an API rejection (e.g. mcp.host_unavailable); else a leading `mcp.*:` of its message. */
export function errorCode(err: unknown): string | undefined {
  if (err !== null && typeof err === 'object') {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
  }
  const m = /^(mcp\.[a-z0-9_.]+):/.exec(errorMessage(err));
  return m?.[1];
}
