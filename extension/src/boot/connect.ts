// Getting from a fresh page to a working Manager: load the host API (unless
// something already published it), wait for it, list the registrations and
// handle the Exa recommendation — or say which honest state stops us.

import type { TauriTavernMcpApi } from '../../../jsapi/tauritavern-mcp';
import { loaderUrl } from '../host/backend';
import { bridgeStatus, extensionStore, mcpApi, mcpApiPublished, waitForHostReady } from '../host/tauritavern';
import type { McpManagerInitial } from '../features/manager/McpManagerApp';
import { ensureExaRecommendation } from '../features/manager/recommendation';
import type { Tr } from '../base/texts';
import { CODE_HOST_UNAVAILABLE, CODE_ORIGIN_NOT_ALLOWED, errorCode, errorMessage } from '../base/errors';


export type Connection =
  | { kind: 'ready'; api: TauriTavernMcpApi; initial: McpManagerInitial }
  /** The loader could not be imported, or the backend cannot be reached. */
  | { kind: 'backend_down'; backend: string; message: string }
  /**
   * The backend refused this page's origin; command is its own restart
   * command with --allow-origin added, when it says it.
   */
  | { kind: 'origin_refused'; backend: string; origin: string; message: string; command?: string }
  /** The host has no (usable) api.mcp. */
  | { kind: 'api_missing' }
  /** The backend answered, but listing failed for another reason. */
  | { kind: 'load_failed'; message: string };

export interface ConnectOptions {
  /** The backend origin to load the API from. */
  backendUrl: string;
  /** 0 for the first attempt; each Retry counts up. */
  attempt: number;
  /** This page's origin (what the backend must allow). */
  origin: string;
  importModule(url: string): Promise<unknown>;
  tr: Tr;
}

/** The refusal as the drawer shows it; command only when the backend gave one. */
export function refusal(backend: string, origin: string, message: string, command: unknown): Connection {
  return {
    kind: 'origin_refused',
    backend,
    origin,
    message,
    ...(typeof command === 'string' && command !== '' ? { command } : {}),
  };
}

/**
 * What the drawer says of a loader that would not import: nothing more
 * than its own words ("Could not reach the ttmcp backend at …") when the
 * browser's message is only that the module could not be fetched
 * (Chromium, Firefox and Safari each word it their own way); anything
 * else, as the browser said it.
 */
export function importFailure(err: unknown): string {
  const message = errorMessage(err);
  return /dynamically imported module|importing a module script failed/i.test(message) ? '' : message;
}

function classify(err: unknown, backend: string, origin: string): Connection {
  const code = errorCode(err);
  const message = errorMessage(err);
  if (code === CODE_ORIGIN_NOT_ALLOWED) return refusal(backend, origin, message, (err as { command?: unknown }).command);
  if (code === CODE_HOST_UNAVAILABLE) return { kind: 'backend_down', backend, message };
  return { kind: 'load_failed', message };
}

export async function connect(opts: ConnectOptions): Promise<Connection> {
  const { backendUrl, attempt, origin, tr } = opts;
  if (!mcpApiPublished()) {
    try {
      await opts.importModule(loaderUrl(backendUrl, attempt));
    } catch (err) {
      return { kind: 'backend_down', backend: backendUrl, message: importFailure(err) };
    }
  } else if (attempt > 0) {
    // The bridge gave up or waits (refused: no automatic attempts at all);
    // a retry asks it for one attempt now.
    const bridge = bridgeStatus();
    if (bridge && bridge.state !== 'open' && typeof bridge.reconnect === 'function') {
      try {
        await bridge.reconnect();
      } catch {
        // the state and the next call say how it went
      }
    }
  }
  await waitForHostReady();
  const api = mcpApi();
  if (!api) return { kind: 'api_missing' };

  const bridge = bridgeStatus();
  const backend = bridge?.backend ?? backendUrl;
  if (bridge?.state === 'refused') return refusal(backend, origin, bridge.error?.message ?? '', bridge.error?.command);

  let list;
  try {
    list = await api.servers.list();
  } catch (err) {
    return classify(err, backend, origin);
  }
  const initial: McpManagerInitial = { servers: list.servers, storageIssues: list.storageIssues };
  const store = extensionStore();
  if (!store) return { kind: 'ready', api, initial: { ...initial, error: tr('store_unavailable') } };
  const rec = await ensureExaRecommendation(list, (input) => api.servers.create(input), store);
  return {
    kind: 'ready',
    api,
    initial: {
      servers: rec.initial.servers,
      storageIssues: rec.initial.storageIssues,
      ...(rec.error !== undefined ? { error: rec.error } : {}),
    },
  };
}
