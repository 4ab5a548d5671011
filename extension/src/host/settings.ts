// The extension's settings (C4): extensionSettings.mcp_manager =
// { backendUrl?: string, attachPlacement?: Placement, toolSets?: … },
// saved with saveSettingsDebounced(). SillyTavern
// keeps this object in plain text and lets every extension read it, so
// nothing secret goes here.

import { DEFAULT_PLACEMENT, parsePlacement, type Placement } from '../features/resources/placement';
import { stContext } from './sillytavern';

export const SETTINGS_KEY = 'mcp_manager';

export interface ManagerSettings {
  backendUrl?: string;
}

function settingsObject(create: boolean): Record<string, unknown> | undefined {
  const all = stContext()?.extensionSettings;
  if (!all || typeof all !== 'object') return undefined;
  let own = all[SETTINGS_KEY];
  if (own === null || typeof own !== 'object' || Array.isArray(own)) {
    if (!create) return undefined;
    own = {};
    all[SETTINGS_KEY] = own;
  }
  return own as Record<string, unknown>;
}

/** The backend URL the user set, if any. */
export function savedBackendUrl(): string | undefined {
  const v = settingsObject(false)?.backendUrl;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Saves the backend URL in SillyTavern's settings. It reports false when
 * the page has no extensionSettings (the URL then lasts until reload).
 */
export function saveBackendUrl(url: string): boolean {
  const own = settingsObject(true);
  if (!own) return false;
  own.backendUrl = url;
  stContext()?.saveSettingsDebounced?.();
  return true;
}

/** Where the user put their last resource attachment (the next one's default). */
export function savedPlacement(): Placement {
  return parsePlacement(settingsObject(false)?.attachPlacement) ?? DEFAULT_PLACEMENT;
}

export function savePlacement(p: Placement): void {
  const own = settingsObject(true);
  if (!own) return;
  own.attachPlacement = { ...p };
  stContext()?.saveSettingsDebounced?.();
}
