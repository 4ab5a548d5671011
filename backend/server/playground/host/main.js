// The playground host: a page that gives a third-party extension what a
// SillyTavern page gives it, in SillyTavern's start-up order:
//
//   1. saved extension settings in place (settings.js), the Manager's
//      backend URL seeded with this page's origin when unset (C4);
//   2. globalThis.SillyTavern.getContext(), jQuery and toastr globals;
//   3. EXTENSIONS_FIRST_LOAD, then each extension of /playground.json
//      loaded through its manifest (extensions.js);
//   4. EXTENSION_SETTINGS_LOADED, SETTINGS_LOADED, APP_INITIALIZED,
//      APP_READY.
//
// It emulates SillyTavern's contracts; it is not a second SillyTavern.

import { getContext, provide } from './context.js';
import { initDemoButton } from './demo.js';
import { initInlineDrawers, initTopDrawers } from './drawers.js';
import { eventSource, event_types } from './events.js';
import { activateExtensions } from './extensions.js';
import { addLocaleData, applyLocale, getCurrentLocale, t, translate } from './i18n.js';
import { callGenericPopup, Popup, POPUP_RESULT, POPUP_TYPE } from './popup.js';
import { extensionSettings, PLAYGROUND_BASE, saveSettingsDebounced } from './settings.js';
import './tools.js'; // ToolManager, registerFunctionTool and the Chat Completion settings
import { initChatPicker, initExtensionsMenu } from './chat.js'; // characters, chatMetadata, the wand menu
import './prompts.js'; // setExtensionPrompt and extensionPrompts
import { executeSlashCommandsWithOptions } from './slash-commands.js'; // SlashCommandParser & co.

/** The page's languages (SillyTavern's ids for them). */
const LANGUAGES = [['en', 'English'], ['zh-cn', '简体中文'], ['zh-tw', '繁體中文']];

// The Manager talks to the backend that serves this page, unless the user
// chose another one in its settings.
extensionSettings.mcp_manager ??= {};
extensionSettings.mcp_manager.backendUrl ??= PLAYGROUND_BASE;

provide('extensionSettings', extensionSettings);
provide('saveSettingsDebounced', saveSettingsDebounced);
provide('eventSource', eventSource);
provide('eventTypes', event_types);
provide('event_types', event_types);
provide('t', t);
provide('translate', translate);
provide('getCurrentLocale', getCurrentLocale);
provide('addLocaleData', addLocaleData);
provide('Popup', Popup);
provide('POPUP_TYPE', POPUP_TYPE);
provide('POPUP_RESULT', POPUP_RESULT);
provide('callGenericPopup', callGenericPopup);
provide('getRequestHeaders', () => ({ 'Content-Type': 'application/json', 'X-CSRF-Token': 'disabled' }));
provide('isMobile', () => matchMedia('(max-width: 1000px)').matches);

globalThis.SillyTavern = { getContext, libs: {} };

// Elements added later (popups, extension markup) get their data-i18n
// translated too, as SillyTavern's observer does.
new MutationObserver((mutations) => {
    for (const m of mutations) for (const node of m.addedNodes) if (node instanceof Element) applyLocale(node);
}).observe(document.body, { childList: true, subtree: true });
applyLocale(document);
document.documentElement.lang = getCurrentLocale();

initInlineDrawers();
initTopDrawers();
initExtensionsMenu(/** @type {HTMLElement} */ (document.getElementById('leftSendForm')));
initChatPicker(/** @type {HTMLSelectElement} */ (document.getElementById('ttmcp_chat')));
initChatInput(/** @type {HTMLTextAreaElement} */ (document.getElementById('send_textarea')));
initLanguageSelect(/** @type {HTMLSelectElement} */ (document.getElementById('ttmcp_language')));

const config = await loadConfig();
initDemoButton(document.getElementById('ttmcp_add_demo'), config.demo ?? null);
initDemoButton(document.getElementById('ttmcp_add_demo_auth'), config.demoAuth ?? null);

await eventSource.emit(event_types.EXTENSIONS_FIRST_LOAD);
await activateExtensions(config.extensions ?? [], (name, manifest, err) => {
    console.error(`Extension "${name}" failed to load`, err);
    toastr.error(String(err?.message ?? err), `Extension "${manifest?.display_name ?? name}" failed to load`);
});
await eventSource.emit(event_types.EXTENSION_SETTINGS_LOADED);
await eventSource.emit(event_types.SETTINGS_LOADED);
await eventSource.emit(event_types.APP_INITIALIZED);
document.body.dataset.hostReady = 'true';
await eventSource.emit(event_types.APP_READY);
openExtensionDrawers();

/**
 * A newcomer comes for the Manager: the playground opens the drawers of
 * the extensions in the right-hand column (SillyTavern leaves them closed).
 */
function openExtensionDrawers() {
    for (const toggle of document.querySelectorAll('#extensions_settings2 .inline-drawer > .inline-drawer-toggle')) {
        const content = toggle.parentElement.querySelector(':scope > .inline-drawer-content');
        if (content && getComputedStyle(content).display === 'none') toggle.click();
    }
}

/** /playground.json: the extensions to load and the demo server, if any. */
async function loadConfig() {
    try {
        const response = await fetch(new URL('../playground.json', import.meta.url), { cache: 'no-store' });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return await response.json();
    } catch (err) {
        console.error('Could not read /playground.json', err);
        return {};
    }
}

/**
 * The chat input: Enter (without Shift) runs a slash command, as
 * SillyTavern's send does for text starting with "/"; the playground has
 * no model of its own to send other text to.
 * @param {HTMLTextAreaElement} box
 */
function initChatInput(box) {
    box.addEventListener('keydown', (e) => {
        if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return;
        const text = box.value.trim();
        if (!text.startsWith('/')) return;
        e.preventDefault();
        box.value = '';
        executeSlashCommandsWithOptions(text, { handleParserErrors: true, handleExecutionErrors: true }).catch((err) => console.error(err));
    });
}

/** @param {HTMLSelectElement} select */
function initLanguageSelect(select) {
    const current = getCurrentLocale();
    for (const [id, label] of LANGUAGES) select.add(new Option(label, id, false, id === current));
    if (!LANGUAGES.some(([id]) => id === current)) select.value = 'en';
    select.addEventListener('change', () => {
        localStorage.setItem('language', select.value);
        location.reload();
    });
}
