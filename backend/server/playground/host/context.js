// SillyTavern.getContext(): a fresh object on every call, assembled from
// members the host modules provide. A module adds its part with provide()
// (say, a ToolManager stand-in providing registerFunctionTool) without
// touching the others.

/** @type {Map<string, () => any>} */
const members = new Map();

/**
 * Adds a member to every context built from now on.
 * @param {string} name
 * @param {any} value the member's value (shared by every context)
 */
export function provide(name, value) {
    members.set(name, () => value);
}

/**
 * Adds a member computed at each getContext() call (for values that are
 * copied at call time in SillyTavern, such as chat or characterId).
 * @param {string} name
 * @param {() => any} get
 */
export function provideGetter(name, get) {
    members.set(name, get);
}

/** @returns {Record<string, any>} a new context object */
export function getContext() {
    const ctx = {};
    for (const [name, get] of members) ctx[name] = get();
    return ctx;
}
