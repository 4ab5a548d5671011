// The host's event bus: SillyTavern's eventSource and event_types.
//
// emit() is async and awaits each listener in turn, in registration order,
// catching and logging what a listener throws (one bad extension must not
// stop the others). Events in the auto-fire list remember the arguments of
// their last emit: a listener attached afterwards is called at once with
// them, so `eventSource.on(event_types.APP_READY, init)` works whenever an
// extension's module happens to run.

/** SillyTavern's event names (exact strings; newest set). */
export const event_types = Object.freeze({
    APP_INITIALIZED: 'app_initialized',
    APP_READY: 'app_ready',
    EXTRAS_CONNECTED: 'extras_connected',
    MESSAGE_SWIPED: 'message_swiped',
    MESSAGE_SENT: 'message_sent',
    MESSAGE_RECEIVED: 'message_received',
    MESSAGE_EDITED: 'message_edited',
    MESSAGE_DELETED: 'message_deleted',
    MESSAGE_UPDATED: 'message_updated',
    MESSAGE_FILE_EMBEDDED: 'message_file_embedded',
    IMPERSONATE_READY: 'impersonate_ready',
    CHAT_CHANGED: 'chat_id_changed',
    CHAT_LOADED: 'chatLoaded',
    GENERATION_AFTER_COMMANDS: 'GENERATION_AFTER_COMMANDS',
    GENERATION_STARTED: 'generation_started',
    GENERATION_STOPPED: 'generation_stopped',
    GENERATION_ENDED: 'generation_ended',
    GENERATION_FAILED: 'generation_failed',
    EXTENSIONS_FIRST_LOAD: 'extensions_first_load',
    EXTENSION_SETTINGS_LOADED: 'extension_settings_loaded',
    SETTINGS_LOADED: 'settings_loaded',
    SETTINGS_UPDATED: 'settings_updated',
    SETTINGS_LOADED_BEFORE: 'settings_loaded_before',
    SETTINGS_LOADED_AFTER: 'settings_loaded_after',
    MAIN_API_CHANGED: 'main_api_changed',
    CHATCOMPLETION_SOURCE_CHANGED: 'chatcompletion_source_changed',
    CHATCOMPLETION_MODEL_CHANGED: 'chatcompletion_model_changed',
    GENERATE_BEFORE_COMBINE_PROMPTS: 'generate_before_combine_prompts',
    GENERATE_AFTER_COMBINE_PROMPTS: 'generate_after_combine_prompts',
    GENERATE_AFTER_DATA: 'generate_after_data',
    TEXT_COMPLETION_SETTINGS_READY: 'text_completion_settings_ready',
    CHAT_COMPLETION_SETTINGS_READY: 'chat_completion_settings_ready',
    CHAT_COMPLETION_PROMPT_READY: 'chat_completion_prompt_ready',
    STREAM_TOKEN_RECEIVED: 'stream_token_received',
    ONLINE_STATUS_CHANGED: 'online_status_changed',
    TOOL_CALLS_PERFORMED: 'tool_calls_performed',
    TOOL_CALLS_RENDERED: 'tool_calls_rendered',
});

/** SillyTavern's EventEmitter contract. */
export class EventEmitter {
    /** @param {string[]} autoFire events whose late listeners run at once */
    constructor(autoFire = []) {
        /** @type {Record<string, Function[]>} */
        this.events = {};
        this.autoFire = new Set(autoFire);
        /** @type {Map<string, any[]>} last arguments of each auto-fire event emitted */
        this.fired = new Map();
    }

    on(event, listener) {
        if (event === undefined) {
            console.trace('EventEmitter: cannot listen to an undefined event');
            return;
        }
        (this.events[event] ??= []).push(listener);
        if (this.fired.has(event)) {
            // The event is over: run the late listener now, as an emit would.
            call(this, event, listener, this.fired.get(event));
        }
    }

    once(event, listener) {
        const wrapper = (...args) => {
            this.removeListener(event, wrapper);
            return listener.apply(this, args);
        };
        this.on(event, wrapper);
    }

    removeListener(event, listener) {
        const list = this.events[event];
        const i = list ? list.indexOf(listener) : -1;
        if (i >= 0) list.splice(i, 1);
    }

    makeFirst(event, listener) {
        const list = (this.events[event] ??= []);
        const i = list.indexOf(listener);
        if (i >= 0) list.splice(i, 1);
        list.unshift(listener);
    }

    makeLast(event, listener) {
        const list = (this.events[event] ??= []);
        const i = list.indexOf(listener);
        if (i >= 0) list.splice(i, 1);
        list.push(listener);
    }

    async emit(event, ...args) {
        console.debug('Event emitted: ' + event);
        if (this.autoFire.has(event)) this.fired.set(event, args);
        for (const listener of (this.events[event] ?? []).slice()) {
            await call(this, event, listener, args);
        }
    }

    /** Despite its name, synchronous: listeners are called, not awaited. */
    emitAndWait(event, ...args) {
        console.debug('Event emitted: ' + event);
        if (this.autoFire.has(event)) this.fired.set(event, args);
        for (const listener of (this.events[event] ?? []).slice()) {
            try {
                listener.apply(this, args);
            } catch (err) {
                console.error(`Error in a listener of ${event}`, err);
            }
        }
    }
}

async function call(emitter, event, listener, args) {
    try {
        await listener.apply(emitter, args);
    } catch (err) {
        console.error(`Error in a listener of ${event}`, err);
    }
}

export const eventSource = new EventEmitter([
    event_types.APP_READY,
    event_types.APP_INITIALIZED,
    event_types.SETTINGS_LOADED,
]);
