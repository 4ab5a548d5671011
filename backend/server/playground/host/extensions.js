// Loads third-party extensions the way SillyTavern does (notes §1.3): fetch
// every /scripts/extensions/<name>/manifest.json, sort by loading_order
// then display_name, and activate them one after another: the manifest's
// i18n for the current locale first, then the css (<link> in head) and the
// js (<script type=module async> in body) together, then the exported
// `activate` hook. A failure is recorded and shown; the others still load.

import { addLocaleData, getCurrentLocale } from './i18n.js';
import { extensionSettings } from './settings.js';

const HOOK_TIMEOUT_MS = 5000;

/** @type {Set<string>} names of the active extensions */
export const activeExtensions = new Set();
/** @type {Record<string, object>} manifests by extension name */
export const manifests = {};
/** @type {Record<string, string>} why an extension failed to load, by name */
export const loadErrors = {};

/** The playground's root path: '/', or '/api/plugins/ttmcp/' through SillyTavern's plugin. */
const PLAYGROUND_ROOT = new URL('..', import.meta.url).pathname;

/** @param {string} name e.g. "third-party/mcp-manager" */
function extensionUrl(name, file) {
    // a path from the playground's root, as SillyTavern writes it; the root
    // is '/' unless the playground is served under a prefix (through
    // SillyTavern's server plugin)
    return `${PLAYGROUND_ROOT}scripts/extensions/${name}/${file}`;
}

/** A name usable in an id attribute and a CSS selector. */
function sanitizeSelector(name) {
    return name.replace(/[^a-zA-Z0-9_-]/g, '-');
}

async function getManifest(name) {
    const response = await fetch(extensionUrl(name, 'manifest.json'), { cache: 'no-cache' });
    if (!response.ok) throw new Error(`manifest.json: HTTP ${response.status}`);
    return response.json();
}

/**
 * Fetches the manifests of names and activates the extensions in order.
 * @param {string[]} names
 * @param {(name: string, manifest: object|null, error: unknown) => void} onError
 */
export async function activateExtensions(names, onError) {
    const fetched = await Promise.all(names.map(async (name) => {
        try {
            return [name, await getManifest(name)];
        } catch (err) {
            loadErrors[name] = String(err?.message ?? err);
            onError(name, null, err);
            return null;
        }
    }));
    for (const entry of fetched) if (entry) manifests[entry[0]] = entry[1];

    const order = Object.entries(manifests).sort(([, a], [, b]) =>
        (parseInt(a.loading_order) || 0) - (parseInt(b.loading_order) || 0) ||
        String(a.display_name ?? '').localeCompare(String(b.display_name ?? '')));

    for (const [name, manifest] of order) {
        if (activeExtensions.has(name) || extensionSettings.disabledExtensions?.includes(name)) continue;
        // The playground has no Extras API, so an extension that requires
        // Extras modules does not load, as in SillyTavern without Extras.
        if (Array.isArray(manifest.requires) && manifest.requires.length) {
            console.warn(`Extension ${name} requires Extras modules (${manifest.requires}); not loaded.`);
            continue;
        }
        const missing = (manifest.dependencies ?? []).filter((dep) => !activeExtensions.has(dep));
        if (missing.length) {
            console.warn(`Extension ${name} depends on ${missing.join(', ')}; not loaded.`);
            continue;
        }
        try {
            await addExtensionLocale(name, manifest);
            await Promise.all([addExtensionScript(name, manifest), addExtensionStyle(name, manifest)]);
            activeExtensions.add(name);
            await callExtensionHook(name, manifest, 'activate');
        } catch (err) {
            loadErrors[name] = String(err?.message ?? err);
            onError(name, manifest, err);
        }
    }
}

/** Merges the manifest's file for the current locale (only that one). */
async function addExtensionLocale(name, manifest) {
    const locale = getCurrentLocale();
    const file = manifest.i18n?.[locale];
    if (!file) return;
    try {
        const response = await fetch(extensionUrl(name, file));
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        addLocaleData(locale, await response.json());
    } catch (err) {
        console.error(`Could not load the ${locale} locale of extension ${name}`, err);
    }
}

function addExtensionScript(name, manifest) {
    if (!manifest.js) return Promise.resolve();
    const id = sanitizeSelector(name) + '-js';
    if (document.getElementById(id)) return Promise.resolve();
    return new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.id = id;
        script.type = 'module';
        script.async = true;
        script.src = extensionUrl(name, manifest.js);
        script.onload = () => resolve();
        script.onerror = () => reject(new Error(`could not load ${script.src}`));
        document.body.appendChild(script);
    });
}

function addExtensionStyle(name, manifest) {
    if (!manifest.css) return Promise.resolve();
    const id = sanitizeSelector(name) + '-css';
    if (document.getElementById(id)) return Promise.resolve();
    return new Promise((resolve, reject) => {
        const link = document.createElement('link');
        link.id = id;
        link.rel = 'stylesheet';
        link.type = 'text/css';
        link.href = extensionUrl(name, manifest.css);
        link.onload = () => resolve();
        link.onerror = () => reject(new Error(`could not load ${link.href}`));
        document.head.appendChild(link);
    });
}

/**
 * Calls the function the manifest's hooks name, exported by the js module
 * (the same module instance the script tag evaluated). A hook that takes
 * longer than 5 s is left running with a warning.
 */
async function callExtensionHook(name, manifest, hook) {
    const exported = manifest.hooks?.[hook];
    if (!exported || !manifest.js) return;
    const module = await import(extensionUrl(name, manifest.js));
    const fn = module[exported];
    if (typeof fn !== 'function') {
        console.warn(`Extension ${name}: hook ${hook} names ${exported}, which the module does not export.`);
        return;
    }
    let timer;
    const timeout = new Promise((resolve) => {
        timer = setTimeout(() => {
            console.warn(`Extension ${name}: hook ${hook} did not finish in ${HOOK_TIMEOUT_MS} ms; continuing.`);
            resolve();
        }, HOOK_TIMEOUT_MS);
    });
    try {
        await Promise.race([Promise.resolve().then(() => fn()), timeout]);
    } catch (err) {
        console.error(`Extension ${name}: hook ${hook} failed`, err);
    } finally {
        clearTimeout(timer);
    }
}
