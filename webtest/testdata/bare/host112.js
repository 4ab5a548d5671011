// A bare host that gives an extension only what SillyTavern 1.12 gives it
// (sillytavern-host-notes.md §2.6a): getContext() with Popup, POPUP_TYPE,
// POPUP_RESULT (AFFIRMATIVE, NEGATIVE, CANCELLED only), callGenericPopup,
// translate, t, eventSource (no auto-fire of late listeners),
// eventTypes/event_types (1.12's: no APP_INITIALIZED), extensionSettings
// and saveSettingsDebounced. No manifest i18n, no hooks: 1.12 had neither.
// The page's DOM, CSS, jQuery and toastr are the playground's (1.12 has
// the same). The Popup drops the options 1.12's popup.js did not know.

import { EventEmitter, event_types as newestEventTypes } from '/host/events.js';
import { initInlineDrawers } from '/host/drawers.js';
import { t, translate } from '/host/i18n.js';
import { Popup as NewestPopup, POPUP_TYPE } from '/host/popup.js';

const POPUP_RESULT = Object.freeze({ AFFIRMATIVE: 1, NEGATIVE: 0, CANCELLED: null });

// 1.12's event names (newest minus what came later).
const LATER = ['APP_INITIALIZED', 'CHAT_LOADED', 'GENERATION_FAILED', 'MAIN_API_CHANGED'];
const event_types = Object.freeze(Object.fromEntries(Object.entries(newestEventTypes).filter(([k]) => !LATER.includes(k))));

/** 1.12's Popup: no leftAlign, onOpen, allowEscapeClose, placeholder, tooltip; only checkbox inputs; okButton:false does not hide OK. */
class Popup extends NewestPopup {
    constructor(content, type, inputValue = '', options = {}) {
        const { leftAlign, onOpen, allowEscapeClose, placeholder, tooltip, ...known } = options ?? {};
        if (known.okButton === false) known.okButton = null;
        if (known.cancelButton === false && type === POPUP_TYPE.CONFIRM) known.cancelButton = null;
        if (known.customInputs) known.customInputs = known.customInputs.filter((i) => !i.type || i.type === 'checkbox');
        for (const b of known.customButtons ?? []) if (b && typeof b === 'object') delete b.icon;
        super(content, type, inputValue, known);
    }
}

function callGenericPopup(content, type, inputValue = '', popupOptions = {}) {
    return new Popup(content, type, inputValue, popupOptions).show();
}

const SETTINGS_KEY = 'ttmcp.bare112.extension_settings';
const extensionSettings = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}');
extensionSettings.mcp_manager ??= {};
extensionSettings.mcp_manager.backendUrl ??= location.origin;
let timer;
function saveSettingsDebounced() {
    clearTimeout(timer);
    timer = setTimeout(() => localStorage.setItem(SETTINGS_KEY, JSON.stringify(extensionSettings)), 300);
}

const eventSource = new EventEmitter([]); // 1.12: no auto-fire

globalThis.SillyTavern = {
    getContext: () => ({
        Popup, POPUP_TYPE, POPUP_RESULT, callGenericPopup, translate, t,
        eventSource, eventTypes: event_types, event_types, extensionSettings, saveSettingsDebounced,
    }),
};

// 1.12's loader: manifests sorted by loading_order; <script type=module
// id=name> and <link id=name> together; nothing else.
const config = await (await fetch('/playground.json')).json();
const manifests = await Promise.all(config.extensions.map(async (name) =>
    [name, await (await fetch(`/scripts/extensions/${name}/manifest.json`)).json()]));
manifests.sort((a, b) => a[1].loading_order - b[1].loading_order);
for (const [name, manifest] of manifests) {
    const base = `/scripts/extensions/${name}/`;
    const script = new Promise((resolve, reject) => {
        const s = Object.assign(document.createElement('script'), { id: name, type: 'module', async: true, src: base + manifest.js });
        s.onload = resolve;
        s.onerror = reject;
        document.body.appendChild(s);
    });
    const style = !manifest.css ? null : new Promise((resolve, reject) => {
        const l = Object.assign(document.createElement('link'), { id: name, rel: 'stylesheet', type: 'text/css', href: base + manifest.css });
        l.onload = resolve;
        l.onerror = reject;
        document.head.appendChild(l);
    });
    await Promise.all([script, style]).catch((err) => console.log('Could not activate extension: ' + name, err));
}
initInlineDrawers();
await eventSource.emit(event_types.APP_READY);
document.body.dataset.appReady = 'true';
