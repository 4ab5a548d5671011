// SillyTavern's i18n contract: the locale, the locale data, translate and t.
//
// The current locale is localStorage.language if set, else
// navigator.language, lower-cased (en-us, zh-cn, …). Only that locale's
// data is ever loaded. addLocaleData ignores other locales and never
// replaces a key the data already has: the host's own (core) strings win
// over an extension's, and the first extension to add a key keeps it.

import { coreLocales } from './locales.js';

const STORAGE_KEY = 'language';

/** @returns {string} the current locale id, lower-cased */
export function getCurrentLocale() {
    let stored = null;
    try {
        stored = localStorage.getItem(STORAGE_KEY);
    } catch { /* storage may be disabled */ }
    return String(stored || navigator.language || 'en').toLowerCase();
}

const locale = getCurrentLocale();

/** @type {Record<string, string>} */
const localeData = { ...(coreLocales[locale] ?? {}) };

/**
 * Adds translations for a locale: only for the current one, only new keys.
 * @param {string} id
 * @param {Record<string, string>} data
 */
export function addLocaleData(id, data) {
    if (String(id).toLowerCase() !== locale) {
        console.warn(`Ignoring locale data for ${id}: the current locale is ${locale}`);
        return;
    }
    if (!data || typeof data !== 'object') return;
    for (const [key, value] of Object.entries(data)) {
        if (!Object.hasOwn(localeData, key) && typeof value === 'string') {
            localeData[key] = value;
        }
    }
}

/**
 * Translates by key (or by the text itself when no key is given); an
 * unknown or empty translation falls back to text.
 * @param {string} text
 * @param {string?} key
 */
export function translate(text, key = null) {
    return localeData[key || text] || text;
}

/**
 * The tagged template: t`Saved ${n} tools` looks up "Saved ${0} tools" and
 * puts the values back into the translation.
 * @param {TemplateStringsArray} strings
 * @param {...any} values
 */
export function t(strings, ...values) {
    const key = strings.reduce((acc, part, i) => acc + part + (values[i] !== undefined ? '${' + i + '}' : ''), '');
    return translate(key).replace(/\$\{(\d+)\}/g, (_, i) => values[Number(i)]);
}

/**
 * Translates the data-i18n attributes under root, as SillyTavern's page
 * does: "key" sets the text, "[attr]key" an attribute, ";" separates several.
 * @param {ParentNode} root
 */
export function applyLocale(root = document) {
    const nodes = root instanceof Element && root.hasAttribute('data-i18n') ? [root] : [];
    nodes.push(...root.querySelectorAll('[data-i18n]'));
    for (const el of nodes) {
        for (const entry of el.getAttribute('data-i18n').split(';')) {
            const attr = entry.match(/^\[(\S+)\](.+)$/);
            if (attr) {
                const value = localeData[attr[2]];
                if (value) el.setAttribute(attr[1], value);
            } else if (localeData[entry]) {
                el.textContent = localeData[entry];
            }
        }
    }
}
