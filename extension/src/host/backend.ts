// Where the ttmcp backend is (C4, C7) and how its loader is brought into
// the page.

import { savedBackendUrl } from './settings';

export const DEFAULT_BACKEND_URL = 'http://127.0.0.1:7878';

/**
 * Where SillyTavern's ttmcp server plugin answers, on the page's own origin
 * (issue 28): it carries everything to the backend after SillyTavern's own
 * login, so it works from any device that opens SillyTavern.
 */
export const PLUGIN_PATH = '/api/plugins/ttmcp';

/** What the plugin says of itself and of the backend behind it. */
export interface PluginStatus {
  /** up; down (not answering); starting (the plugin is starting it); untrusted (it refused the plugin's secret). */
  backend: 'up' | 'down' | 'starting' | 'untrusted';
  /** The SillyTavern user the page is signed in as. */
  user?: string;
}

/** How the page reaches the backend: through SillyTavern's plugin, or directly on loopback. */
export type BackendRoute = { via: 'plugin'; url: string; plugin: PluginStatus } | { via: 'direct'; url: string };

const BACKEND_STATES: ReadonlySet<string> = new Set(['up', 'down', 'starting', 'untrusted']);

/**
 * The plugin's status on origin, or undefined when no ttmcp plugin answers
 * there (not installed, SillyTavern's server plugins off, not SillyTavern).
 */
export async function probePlugin(origin: string, doFetch: typeof fetch): Promise<PluginStatus | undefined> {
  try {
    const r = await doFetch(`${origin}${PLUGIN_PATH}/_plugin/status`, { cache: 'no-store', credentials: 'same-origin' });
    if (!r.ok) return undefined;
    const body = (await r.json()) as { plugin?: unknown; backend?: unknown; user?: unknown } | null;
    if (body?.plugin !== 'ttmcp') return undefined;
    const backend = typeof body.backend === 'string' && BACKEND_STATES.has(body.backend) ? (body.backend as PluginStatus['backend']) : 'down';
    return { backend, ...(typeof body.user === 'string' ? { user: body.user } : {}) };
  } catch {
    return undefined;
  }
}

/** Whether origin names this computer (a page opened elsewhere cannot reach a backend on loopback). */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const host = new URL(origin).hostname;
    return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

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
  return directUrl(sources, () => readInstallConfig(sources));
}

async function directUrl(sources: BackendUrlSources, config: () => Promise<InstallConfig>): Promise<string> {
  const saved = (sources.saved ?? savedBackendUrl)();
  const fromSettings = saved !== undefined ? normalizeBackendUrl(saved) : undefined;
  return fromSettings ?? (await config()).backendUrl ?? DEFAULT_BACKEND_URL;
}

/** What `ttmcp install-extension` wrote into ttmcp.json beside the manifest. */
interface InstallConfig {
  backendUrl?: string;
  /** The install put ttmcp's SillyTavern server plugin in too. */
  plugin?: boolean;
}

async function readInstallConfig(sources: BackendUrlSources): Promise<InstallConfig> {
  const doFetch = sources.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
  if (!sources.configUrl || !doFetch) return {};
  try {
    const r = await doFetch(sources.configUrl, { cache: 'no-store', credentials: 'same-origin' });
    if (!r.ok) return {};
    const body = (await r.json()) as { backendUrl?: unknown; plugin?: unknown } | null;
    const url = typeof body?.backendUrl === 'string' ? normalizeBackendUrl(body.backendUrl) : undefined;
    return { ...(url ? { backendUrl: url } : {}), ...(body?.plugin === true ? { plugin: true } : {}) };
  } catch {
    // no ttmcp.json (an install older than the shipped one) or not JSON: the default applies
    return {};
  }
}

/**
 * How to reach the backend: SillyTavern's plugin whenever it answers on
 * the page's origin, else the direct URL (resolveBackendUrl). The plugin is
 * asked only where the install put it in (ttmcp.json's plugin): a page
 * without it is spared a request that can only fail (and the 404 the
 * browser's console would show).
 */
export async function resolveBackend(origin: string, sources: BackendUrlSources & { fetch: typeof fetch }): Promise<BackendRoute> {
  const config = await readInstallConfig(sources);
  if (config.plugin) {
    const plugin = await probePlugin(origin, sources.fetch);
    if (plugin) return { via: 'plugin', url: origin + PLUGIN_PATH, plugin };
  }
  return { via: 'direct', url: await directUrl(sources, async () => config) };
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
