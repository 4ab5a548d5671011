// Where the ttmcp backend is (C4, C7) and how its loader is brought into
// the page.

import { savedBackendUrl } from './settings';

export const DEFAULT_BACKEND_URL = 'http://127.0.0.1:7878';

/** The loader module, relative to the backend origin. */
export const LOADER_PATH = '/jsapi/tauritavern-mcp.js';

/** The origin of an http(s) URL (the loader derives everything from it), or undefined. */
export function normalizeBackendUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/**
 * The loader's URL. A retry gets its own URL: a browser may remember that
 * a module failed to load and refuse the same URL again without a reload.
 * (The loader keys its single boot on a global, not on its URL.)
 */
export function loaderUrl(backendUrl: string, attempt: number): string {
  const url = backendUrl + LOADER_PATH;
  return attempt > 0 ? `${url}?attempt=${attempt}` : url;
}

export interface BackendUrlSources {
  /** The URL saved in extensionSettings, if any. */
  saved?: () => string | undefined;
  /**
   * The URL of ttmcp.json beside manifest.json: the extension ships it with
   * the default, `ttmcp install-extension` writes it (--backend's URL, else
   * the default), so a normal install never answers 404.
   */
  configUrl?: string;
  fetch?: typeof fetch;
}

/**
 * The backend URL, in order: the extension's settings, ttmcp.json beside
 * the manifest, http://127.0.0.1:7878. An unreadable or invalid source is
 * skipped.
 */
export async function resolveBackendUrl(sources: BackendUrlSources = {}): Promise<string> {
  const saved = (sources.saved ?? savedBackendUrl)();
  const fromSettings = saved !== undefined ? normalizeBackendUrl(saved) : undefined;
  if (fromSettings) return fromSettings;
  const doFetch = sources.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
  if (sources.configUrl && doFetch) {
    try {
      const r = await doFetch(sources.configUrl, { cache: 'no-store', credentials: 'same-origin' });
      if (r.ok) {
        const body: unknown = await r.json();
        const url = (body as { backendUrl?: unknown } | null)?.backendUrl;
        const fromFile = typeof url === 'string' ? normalizeBackendUrl(url) : undefined;
        if (fromFile) return fromFile;
      }
    } catch {
      // no ttmcp.json (an install older than the shipped one) or not JSON: the default applies
    }
  }
  return DEFAULT_BACKEND_URL;
}

/**
 * The command that starts the backend at backendUrl: plain `ttmcp serve`
 * for the default address, with --listen otherwise; extra flags follow.
 */
export function serveCommand(backendUrl: string, extra = ''): string {
  let cmd = 'ttmcp serve';
  if (backendUrl !== DEFAULT_BACKEND_URL) {
    try {
      const u = new URL(backendUrl);
      cmd += ` --listen ${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
    } catch {
      // an invalid URL is not offered here
    }
  }
  return extra ? `${cmd} ${extra}` : cmd;
}
