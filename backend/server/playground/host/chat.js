// The chat as an extension sees it through getContext() (SillyTavern
// 1.18.0, st-context.js; sillytavern-host-notes §2.1, §8): the characters
// and groups, the one open (characterId, an index into characters, or
// groupId), its chat's metadata (chatMetadata, the open chat's own object,
// saved with saveMetadata/saveMetadataDebounced), getCurrentChatId, and
// CHAT_CHANGED with the chat id when another chat opens. Also the wand
// menu beside the chat input: #extensionsMenu (a hidden .options-content in
// the body) and #extensionsMenuButton, which shows once the menu has an
// item and toggles it; a click elsewhere closes it.
//
// The playground has no chat of its own to read: a few sample characters
// and a group, one chat each, whose metadata the page keeps in this
// origin's localStorage (SillyTavern keeps it in the chat file).

import { provide, provideGetter } from './context.js';
import { eventSource, event_types } from './events.js';
import { clearExtensionPrompts } from './prompts.js';

const STORAGE_KEY = 'ttmcp.playground.chat_metadata';

/** The characters (SillyTavern's characters array: name and avatar file). */
export const characters = [
    { name: 'Seraphina', avatar: 'Seraphina.png' },
    { name: 'Coding Assistant', avatar: 'Coding Assistant.png' },
];

/** The groups (id, name, members by avatar). */
export const groups = [{ id: '1733000000000', name: 'Adventurers', members: ['Seraphina.png', 'Coding Assistant.png'] }];

/** @type {Record<string, Record<string, any>>} chat id → its metadata */
const saved = load();
let characterId; // undefined: no character open
let groupId = null;
let chatId; // undefined: no chat open
let chatMetadata = {};
let saves = 0;

function load() {
    try {
        const v = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}');
        if (v && typeof v === 'object' && !Array.isArray(v)) return v;
    } catch (err) {
        console.warn('Saved chat metadata is unreadable; starting afresh.', err);
    }
    return {};
}

/** Saves the open chat's metadata (SillyTavern writes the chat file). */
export async function saveMetadata() {
    if (chatId === undefined) return;
    saved[chatId] = chatMetadata;
    saves++;
    try {
        localStorage.setItem(STORAGE_KEY, JSON.stringify(saved));
    } catch (err) {
        console.error('Could not save the chat metadata.', err);
    }
}

let timer;
export function saveMetadataDebounced() {
    clearTimeout(timer);
    timer = setTimeout(saveMetadata, 1000);
}

/** How many times the chat metadata was saved (tests). */
export function metadataSaves() {
    return saves;
}

/**
 * Opens a chat: of the character at index character, or of the group with
 * the id group, or none; emits CHAT_CHANGED with the chat id, as
 * SillyTavern does once the chat is loaded. Before, as clearChat() does,
 * the extension prompts of the chat left are emptied.
 */
export async function openChat({ character, group } = {}) {
    clearExtensionPrompts();
    characterId = undefined;
    groupId = null;
    chatId = undefined;
    if (group !== undefined && groups.some((g) => g.id === group)) {
        groupId = group;
        chatId = `${groups.find((g) => g.id === group).name} - playground`;
    } else if (character !== undefined && characters[character]) {
        characterId = String(character);
        chatId = `${characters[character].name} - playground`;
    }
    chatMetadata = chatId === undefined ? {} : structuredClone(saved[chatId] ?? {});
    await eventSource.emit(event_types.CHAT_CHANGED, chatId);
}

provide('characters', characters);
provide('groups', groups);
provideGetter('characterId', () => characterId);
provideGetter('groupId', () => groupId);
provideGetter('chatMetadata', () => chatMetadata);
provide('saveMetadata', saveMetadata);
provide('saveMetadataDebounced', saveMetadataDebounced);
provide('getCurrentChatId', () => chatId);

/** The wand menu (extensions.js addExtensionsButtonAndMenu). */
export function initExtensionsMenu(sendForm) {
    const menu = document.createElement('div');
    menu.id = 'extensionsMenu';
    menu.className = 'options-content';
    menu.style.display = 'none';
    document.body.append(menu);
    const button = document.createElement('div');
    button.id = 'extensionsMenuButton';
    button.className = 'fa-solid fa-magic-wand-sparkles interactable';
    button.title = 'Extras Extensions';
    button.tabIndex = 0;
    button.style.display = 'none';
    sendForm.append(button);
    const showButton = () => {
        button.style.display = menu.children.length > 0 ? '' : 'none';
    };
    new MutationObserver(showButton).observe(menu, { childList: true });
    const place = () => {
        const r = button.getBoundingClientRect();
        menu.style.left = `${Math.max(4, r.left)}px`;
        menu.style.bottom = `${Math.max(4, innerHeight - r.top + 4)}px`;
    };
    button.addEventListener('click', (e) => {
        e.stopPropagation();
        if (menu.style.display === 'none') {
            menu.style.display = '';
            place();
        } else {
            menu.style.display = 'none';
        }
    });
    document.addEventListener('click', (e) => {
        if (menu.style.display !== 'none' && !menu.contains(/** @type {Node} */ (e.target))) menu.style.display = 'none';
    });
    // SillyTavern keeps the menu at its button (Popper) when the page reflows.
    addEventListener('resize', () => {
        if (menu.style.display !== 'none') place();
    });
    showButton();
}

/** The playground's chat picker: which character (or group) the page has open. */
export function initChatPicker(select) {
    const none = new Option('—', '');
    none.dataset.i18n = 'No chat';
    select.append(none);
    characters.forEach((c, i) => select.append(new Option(c.name, `c${i}`)));
    for (const g of groups) select.append(new Option(`${g.name} (group)`, `g${g.id}`));
    select.addEventListener('change', () => {
        const v = select.value;
        void openChat(v.startsWith('c') ? { character: Number(v.slice(1)) } : v.startsWith('g') ? { group: v.slice(1) } : {});
    });
    // A chat opened otherwise (a script, the tests) shows in the picker too.
    eventSource.on(event_types.CHAT_CHANGED, () => {
        select.value = groupId !== null ? `g${groupId}` : characterId !== undefined ? `c${characterId}` : '';
    });
}
