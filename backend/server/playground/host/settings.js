// extension_settings: the object extensions keep their settings in, and
// saveSettingsDebounced. SillyTavern saves the whole settings file to its
// server; the playground keeps them in this origin's localStorage. As in
// SillyTavern, the saved values are in place before any extension runs.

import { eventSource, event_types } from './events.js';

const STORAGE_KEY = 'ttmcp.playground.extension_settings';
const SAVE_DELAY_MS = 500;

/** The live settings object (getContext().extensionSettings). */
/** Where the playground is served from, without a trailing slash: the
 * backend's origin, or SillyTavern's origin + /api/plugins/ttmcp through its
 * server plugin; the Manager's default backend. */
export const PLAYGROUND_BASE = new URL('..', import.meta.url).href.replace(/\/$/, '');

export const extensionSettings = load();
extensionSettings.disabledExtensions ??= [];

function load() {
    try {
        const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}');
        if (saved && typeof saved === 'object' && !Array.isArray(saved)) return saved;
    } catch (err) {
        console.warn('Saved extension settings are unreadable; starting afresh.', err);
    }
    return {};
}

/** Writes the settings now. */
export function saveSettings() {
    clearTimeout(timer);
    timer = undefined;
    try {
        localStorage.setItem(STORAGE_KEY, JSON.stringify(extensionSettings));
    } catch (err) {
        console.error('Could not save the extension settings.', err);
        return;
    }
    eventSource.emit(event_types.SETTINGS_UPDATED);
}

let timer;

/** Saves the settings once calls stop for a moment. */
export function saveSettingsDebounced() {
    clearTimeout(timer);
    timer = setTimeout(saveSettings, SAVE_DELAY_MS);
}

// A pending save is not lost when the page goes away.
addEventListener('pagehide', () => {
    if (timer !== undefined) saveSettings();
});
