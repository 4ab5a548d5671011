// Extension prompts as an extension sees them through getContext()
// (SillyTavern 1.18.0 script.js and st-context.js): setExtensionPrompt(key,
// value, position, depth, scan, role, filter) stores {value, position,
// depth, scan, role, filter} under key in extension_prompts, which
// getContext().extensionPrompts returns live; clearChat() replaces the
// object with an empty one whenever a chat is opened (chat.js calls it
// before CHAT_CHANGED); getExtensionPrompt(position, depth, separator,
// role, wrap) joins the values of one position (and depth and role), keys
// in sorted order, each trimmed — what the prompt assembly reads. The
// playground has no macros: values are used as they are (SillyTavern runs
// substituteParams on them).

import { provideGetter, provide } from './context.js';

/** script.js extension_prompt_types. */
export const extension_prompt_types = Object.freeze({ NONE: -1, IN_PROMPT: 0, IN_CHAT: 1, BEFORE_PROMPT: 2 });
/** script.js extension_prompt_roles. */
export const extension_prompt_roles = Object.freeze({ SYSTEM: 0, USER: 1, ASSISTANT: 2 });
/** script.js MAX_INJECTION_DEPTH. */
export const MAX_INJECTION_DEPTH = 10000;

/** @type {Record<string, {value: string, position: number, depth: number, scan: boolean, role: number, filter: Function|null}>} */
export let extension_prompts = {};

export function setExtensionPrompt(key, value, position, depth, scan = false, role = extension_prompt_roles.SYSTEM, filter = null) {
    extension_prompts[key] = {
        value: String(value),
        position: Number(position),
        depth: Number(depth),
        scan: !!scan,
        role: Number(role ?? extension_prompt_roles.SYSTEM),
        filter,
    };
}

/** What clearChat() does to the extension prompts when another chat opens. */
export function clearExtensionPrompts() {
    extension_prompts = {};
}

/** The values of one position (and depth, and role), joined as SillyTavern joins them. */
export async function getExtensionPrompt(position = extension_prompt_types.IN_PROMPT, depth = undefined, separator = '\n', role = undefined, wrap = true) {
    const kept = [];
    for (const key of Object.keys(extension_prompts).sort()) {
        const x = extension_prompts[key];
        if (x.position != position || !x.value) continue;
        if (depth !== undefined && x.depth !== undefined && x.depth !== depth) continue;
        if (role !== undefined && x.role !== undefined && x.role !== role) continue;
        if (typeof x.filter === 'function' && !(await x.filter())) continue;
        kept.push(x);
    }
    let values = kept.map((x) => x.value.trim()).join(separator);
    if (wrap && values.length && !values.startsWith(separator)) values = separator + values;
    if (wrap && values.length && !values.endsWith(separator)) values = values + separator;
    return values;
}

provide('setExtensionPrompt', setExtensionPrompt);
provideGetter('extensionPrompts', () => extension_prompts);
