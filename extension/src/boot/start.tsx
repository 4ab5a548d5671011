// Starting the Manager in a page: mount the drawer and render the Root with
// the real host adapters.

import { createRoot } from 'react-dom/client';
import { resolveBackendUrl } from '../host/backend';
import { watchRegistrations } from '../host/changes';
import { createManagerActions } from '../host/actions';
import { saveBackendUrl } from '../host/settings';
import { stTranslate } from '../host/sillytavern';
import { bridgeStatus, onBridgeChange } from '../host/tauritavern';
import { startModelTools } from '../tools/install';
import { createTr } from '../texts';
import { TrContext } from '../ui/tr';
import { connect } from './connect';
import { mountDrawer } from './mount';
import { Root, type RootDeps } from './Root';

export interface StartOptions {
  doc?: Document;
  /** Imports the loader module (the bundle's dynamic import). */
  importModule(url: string): Promise<unknown>;
  /** ttmcp.json beside manifest.json. */
  configUrl?: string;
}

export interface Started {
  unmount(): void;
}

/** Mounts the Manager; null (after saying why) when the page has no extension settings column. */
export function startManager(opts: StartOptions): Started | null {
  const doc = opts.doc ?? document;
  const tr = createTr(stTranslate);
  const content = mountDrawer(tr('title'), doc);
  if (!content) {
    const message = tr('settings_column_unavailable');
    console.error(`[mcp-manager] ${message}`);
    (globalThis as { toastr?: { error?: (m: string) => void } }).toastr?.error?.(message);
    return null;
  }
  // Offering the MCP tools to the model does not wait for the drawer: it
  // listens to SillyTavern's generations from now on.
  const tools = startModelTools(tr);
  const deps: RootDeps = {
    backendUrl: () => resolveBackendUrl(opts.configUrl !== undefined ? { configUrl: opts.configUrl } : {}),
    connect: (backendUrl, attempt) =>
      connect({ backendUrl, attempt, origin: window.location.origin, importModule: opts.importModule, tr }),
    saveBackendUrl: (url) => {
      saveBackendUrl(url);
    },
    createActions: (api) => createManagerActions(api, tr),
    bridge: bridgeStatus,
    onBridgeChange,
    origin: window.location.origin,
    tools: tools.panel,
    watchChanges: (fn) => watchRegistrations(fn, { panel: content, bridgeState: () => bridgeStatus()?.state }),
  };
  const root = createRoot(content);
  root.render(
    <TrContext.Provider value={tr}>
      <Root deps={deps} />
    </TrContext.Provider>,
  );
  return {
    unmount() {
      tools.bridge?.uninstall();
      root.unmount();
      content.closest('.extension_container')?.remove();
    },
  };
}
