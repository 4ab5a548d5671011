// The extension's settings (C4): extensionSettings.mcp_manager =
// { backendUrl?: string, attachPlacement?: Placement, toolSets?: … },
// saved with saveSettingsDebounced(). SillyTavern
// keeps this object in plain text and lets every extension read it, so
// nothing secret goes here.

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

/** A member of the extension's settings as stored (unchecked: its feature parses it). */
export function readSetting(name: string): unknown {
  return settingsObject(false)?.[name];
}

/**
 * Stores a member of the extension's settings and saves them. It reports
 * false when the page has no extensionSettings (the value then lasts until
 * reload, if its caller keeps it).
 */
export function writeSetting(name: string, value: unknown): boolean {
  const own = settingsObject(true);
  if (!own) return false;
  own[name] = value;
  stContext()?.saveSettingsDebounced?.();
  return true;
}

/** The backend URL the user set, if any. */
export function savedBackendUrl(): string | undefined {
  const v = readSetting('backendUrl');
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** Saves the backend URL in SillyTavern's settings (false: only until reload). */
export function saveBackendUrl(url: string): boolean {
  return writeSetting('backendUrl', url);
}
