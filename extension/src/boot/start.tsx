// Starting the Manager in a page: mount the drawer and render the Root with
// the real host adapters.

import { createRoot } from 'react-dom/client';
import { resolveBackend, resolveBackendUrl } from '../host/backend';
import { watchRegistrations } from '../host/changes';
import { createManagerActions } from '../features/manager/actions';
import { askElicitation } from '../features/elicitation/elicitation-dialog';
import { createElicitationHandler, installElicitationHandler, uninstallElicitationHandler } from '../features/elicitation/handler';
import { saveBackendUrl } from '../host/settings';
import { stLanguage, stStopGeneration, stTranslate } from '../host/sillytavern';
import { bridgeStatus, onBridgeChange } from '../host/tauritavern';
import { startChatFeatures } from './chat-features';
import { startModelTools } from './model-tools';
import { startApps } from './apps';
import { createTr } from '../base/texts';
import { TrContext } from '../base/tr';
import { connect } from './connect';
import { mountDrawer } from './mount';
import type { RetryClock } from './retry';
import { Root, type RootDeps } from './Root';

/**
 * How long a generation waits for the attempt it asked for (ms): a backend
 * that just started connects within a fraction of a second on loopback; a
 * dead one fails at once. Past it the generation goes on without MCP tools
 * and says so.
 */
export const WAKE_WAIT_MS = 3000;

/** Calls every waker and resolves once all settled, or after waitMs. */
export async function wakeAll(wakers: Iterable<() => Promise<void>>, waitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const all = Promise.all([...wakers].map((fn) => fn().catch(() => {})));
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  try {
    await Promise.race([all, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface StartOptions {
  doc?: Document;
  /** Imports the loader module (the bundle's dynamic import). */
  importModule(url: string): Promise<unknown>;
  /** ttmcp.json beside manifest.json. */
  configUrl?: string;
  /** The retry loop's timers (tests). */
  clock?: RetryClock;
  /** Asks SillyTavern's ttmcp plugin on the page's origin with it (absent: the direct path only). */
  fetch?: typeof fetch;
}

export interface Started {
  unmount(): void;
}

/** Mounts the Manager; null (after saying why) when the page has no extension settings column. */
export function startManager(opts: StartOptions): Started | null {
  const doc = opts.doc ?? document;
  const tr = createTr(stTranslate, stLanguage);
  const content = mountDrawer(tr('title'), doc);
  if (!content) {
    const message = tr('settings_column_unavailable');
    console.error(`[mcp-manager] ${message}`);
    (globalThis as { toastr?: { error?: (m: string) => void } }).toastr?.error?.(message);
    return null;
  }
  // Offering the MCP tools to the model does not wait for the drawer: it
  // listens to SillyTavern's generations from now on. A generation that
  // starts while the backend is not connected asks the drawer for one
  // attempt now, and waits for it a little.
  const wakers = new Set<() => Promise<void>>();
  const wake = () => wakeAll(wakers, WAKE_WAIT_MS);
  // A Stop pressed in a server's question popup: the model's call it ends
  // is said to have been stopped while its server asked, not to have failed.
  let stoppedInQuestion = false;
  const stoppedWhileAsked = () => {
    const asked = stoppedInQuestion;
    stoppedInQuestion = false;
    return asked;
  };
  const apps = startApps(tr); // MCP Apps in the chat (issue 30)
  const tools = startModelTools(tr, { wake, stoppedWhileAsked, called: apps.called, stopped: apps.stopped });
  const chat = startChatFeatures(tr);
  // Servers that ask the user (elicitation): this page answers for its own
  // calls once ttmcp's API is there, whatever the attempt found besides (a
  // loader imported again publishes a new API; the model's tools work
  // without the Manager's list).
  // A question during the model's call offers SillyTavern's Stop, which
  // the modal popup hides.
  const elicit = createElicitationHandler((request, o) => {
    const stopGeneration = request.source === 'model' ? stStopGeneration() : undefined;
    const stop = stopGeneration
      ? () => {
          stoppedInQuestion = true;
          stopGeneration();
        }
      : undefined;
    return askElicitation(request, { ...o, ...(stop ? { stop } : {}) }, tr);
  });
  const deps: RootDeps = {
    backend: async () => {
      const sources = opts.configUrl !== undefined ? { configUrl: opts.configUrl } : {};
      // SillyTavern's plugin is asked where the page can ask (SillyTavern's own origin)
      if (!opts.fetch) return { via: 'direct', url: await resolveBackendUrl(sources) };
      return resolveBackend(window.location.origin, { ...sources, fetch: opts.fetch });
    },
    connect: async (backendUrl, attempt) => {
      const c = await connect({ backendUrl, attempt, origin: window.location.origin, importModule: opts.importModule, tr });
      installElicitationHandler(elicit);
      return c;
    },
    saveBackendUrl: (url) => {
      saveBackendUrl(url);
    },
    createActions: (api) => createManagerActions(api, tr, chat.primitives, apps.renderTestApp),
    bridge: bridgeStatus,
    onBridgeChange,
    origin: window.location.origin,
    tools: tools.panel,
    toolSets: tools.toolSets,
    primitives: chat.primitives,
    watchChanges: (fn) => watchRegistrations(fn, { panel: content, bridgeState: () => bridgeStatus()?.state }),
    onWake: (fn) => {
      wakers.add(fn);
      return () => void wakers.delete(fn);
    },
    ...(opts.clock ? { clock: opts.clock } : {}),
  };
  const root = createRoot(content);
  root.render(
    <TrContext.Provider value={tr}>
      <Root deps={deps} />
    </TrContext.Provider>,
  );
  return {
    unmount() {
      uninstallElicitationHandler();
      tools.bridge?.uninstall();
      tools.unmount();
      chat.unmount();
      root.unmount();
      content.closest('.extension_container')?.remove();
    },
  };
}
