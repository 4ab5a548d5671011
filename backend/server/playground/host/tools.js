// SillyTavern's function-tool registry (public/scripts/tool-calling.js,
// ToolManager) and the Chat Completion settings it reads, as an extension
// sees them through getContext(): registerFunctionTool,
// unregisterFunctionTool, isToolCallingSupported, canPerformToolCalls,
// ToolManager, chatCompletionSettings and mainApi
// (sillytavern-host-notes §2.6, §5).
//
// It follows the first SillyTavern with registerFunctionTool (staging after
// 1.12.6, read from its source): a registered name is overwritten with a
// warning; every request asks each tool's shouldRegister(); the model's
// string arguments are JSON.parse'd before the action sees them ('' is an
// error there, as JSON.parse('') is); an action's failure becomes its
// error's text as the result ("Error: <message>"); a batch runs one call after another, each with
// a toast from formatMessage, and is saved as one system message whose
// extra.tool_invocations the next prompt replays. The chat and the Generate
// loop around it are the page's (the playground has none of its own).

import { provide, provideGetter } from './context.js';
import { eventSource, event_types } from './events.js';

/** oai_settings, as far as tool calling reads it. */
export const chatCompletionSettings = {
    function_calling: true,
    chat_completion_source: 'custom',
};

/** main_api: 'openai' is Chat Completion. */
let mainApi = 'openai';

/** Sets main_api, as the API selector does (and emits MAIN_API_CHANGED). */
export function setMainApi(api) {
    mainApi = api;
    eventSource.emit(event_types.MAIN_API_CHANGED, { apiId: api });
}

// The sources that support tools in that SillyTavern.
const TOOL_SOURCES = ['openai', 'custom', 'mistralai', 'claude', 'openrouter', 'groq', 'cohere'];

class ToolDefinition {
    constructor({ name, displayName, description, parameters, action, formatMessage, shouldRegister }) {
        Object.assign(this, { name, displayName, description, parameters, action });
        this.format = formatMessage;
        this.should = shouldRegister;
    }

    toFunctionOpenAI() {
        return { type: 'function', function: { name: this.name, description: this.description, parameters: this.parameters } };
    }

    async formatMessage(parameters) {
        return typeof this.format === 'function' ? await this.format(parameters) : `Invoking tool: ${this.displayName || this.name}`;
    }

    async shouldRegister() {
        return typeof this.should === 'function' ? await this.should() : true;
    }
}

export class ToolManager {
    /** @type {Map<string, ToolDefinition>} */
    static #tools = new Map();

    static RECURSE_LIMIT = 5;

    static get tools() {
        return Array.from(this.#tools.values());
    }

    static registerFunctionTool(tool) {
        if (typeof tool !== 'object') {
            const [name, description, parameters, action] = arguments; // the legacy positional form
            tool = { name, description, parameters, action };
        }
        if (this.#tools.has(tool.name)) {
            console.warn(`[ToolManager] A tool with the name "${tool.name}" has already been registered. The definition will be overwritten.`);
        }
        this.#tools.set(tool.name, new ToolDefinition(tool));
    }

    static unregisterFunctionTool(name) {
        this.#tools.delete(name);
    }

    /** Runs a tool: string parameters are parsed; a failure is its "Error: …" text. */
    static async invokeFunctionTool(name, parameters) {
        try {
            const tool = this.#tools.get(name);
            if (!tool) throw new Error(`No tool with the name "${name}" has been registered.`);
            const args = typeof parameters === 'string' ? JSON.parse(parameters) : parameters;
            const result = await tool.action(args);
            return typeof result === 'string' ? result : JSON.stringify(result);
        } catch (error) {
            console.error(`[ToolManager] An error occurred while invoking the tool "${name}":`, error);
            return error instanceof Error ? error.toString() : 'Error: Unknown error occurred while invoking the tool.';
        }
    }

    static async formatToolCallMessage(name, parameters) {
        const tool = this.#tools.get(name);
        if (!tool) return `Invoked unknown tool: ${name}`;
        try {
            return await tool.formatMessage(typeof parameters === 'string' ? JSON.parse(parameters) : parameters);
        } catch {
            return `Invoking tool: ${name}`;
        }
    }

    static getDisplayName(name) {
        return this.#tools.get(name)?.displayName || name;
    }

    /** Puts the tools whose shouldRegister() holds into the request (replacing data.tools). */
    static async registerFunctionToolsOpenAI(data) {
        const tools = [];
        for (const tool of this.tools) {
            if (await tool.shouldRegister()) tools.push(tool.toFunctionOpenAI());
        }
        if (tools.length) {
            data.tools = tools;
            data.tool_choice = 'auto';
        }
    }

    /** Merges streamed OpenAI tool_calls deltas, by choice and call index. */
    static parseToolCalls(toolCalls, parsed) {
        if (!this.isToolCallingSupported()) return;
        for (const choice of Array.isArray(parsed?.choices) ? parsed.choices : []) {
            const deltas = choice?.delta?.tool_calls;
            if (typeof choice.index !== 'number' || !Array.isArray(deltas)) continue;
            toolCalls[choice.index] ??= [];
            deltas.forEach((delta, i) => {
                const index = typeof delta?.index === 'number' ? delta.index : i;
                toolCalls[choice.index][index] ??= {};
                applyDelta(toolCalls[choice.index][index], delta);
            });
        }
    }

    static isToolCallingSupported() {
        return mainApi === 'openai' && !!chatCompletionSettings.function_calling &&
            TOOL_SOURCES.includes(chatCompletionSettings.chat_completion_source);
    }

    static canPerformToolCalls(type) {
        return this.isToolCallingSupported() && !['impersonate', 'quiet', 'continue'].includes(type);
    }

    /** The tool calls of a response: streamed ([choice][call]) or a completion. */
    static #toolCallsOf(data) {
        if (Array.isArray(data) && Array.isArray(data[0])) return data[0];
        return data?.choices?.find((c) => c.index === 0)?.message?.tool_calls;
    }

    static hasToolCalls(data) {
        const calls = this.#toolCallsOf(data);
        return Array.isArray(calls) && calls.length > 0;
    }

    /** Runs a response's calls one after another; every call becomes an invocation. */
    static async invokeFunctionTools(data) {
        const result = { invocations: [], errors: [] };
        const calls = this.#toolCallsOf(data);
        if (!Array.isArray(calls)) return result;
        for (const call of calls) {
            if (typeof call?.function !== 'object') continue;
            const { id } = call;
            const { name, arguments: parameters } = call.function;
            const displayName = this.getDisplayName(name);
            const message = await this.formatToolCallMessage(name, parameters);
            const toast = message && toastr.info(message, 'Tool Calling', { timeOut: 0 });
            const text = await this.invokeFunctionTool(name, parameters);
            toastr.clear(toast);
            result.invocations.push({ id, displayName, name, parameters: stringify(parameters), result: text });
        }
        return result;
    }

    /** One system message holding the batch, then the events, then the chat is saved. */
    static async saveFunctionToolInvocations(chat, invocations, { render, save } = {}) {
        if (!Array.isArray(invocations) || invocations.length === 0) return;
        const message = {
            name: 'SillyTavern System',
            is_system: true,
            is_user: false,
            mes: `Tool calls: ${invocations.map((i) => i.displayName || i.name).join(', ')}`,
            extra: { isSmallSys: true, tool_invocations: invocations },
        };
        chat.push(message);
        await eventSource.emit(event_types.TOOL_CALLS_PERFORMED, invocations);
        await render?.(message);
        await eventSource.emit(event_types.TOOL_CALLS_RENDERED, invocations);
        await save?.();
    }

    static showToolCallError(errors) {
        toastr.error('An error occurred while invoking function tools. Click here for more details.', 'Tool Calling', { timeOut: 5000 });
        console.error('[ToolManager] Tool calling errors:', errors);
    }
}

function stringify(v) {
    return typeof v === 'string' ? v : JSON.stringify(v);
}

/** ToolManager's delta merge: strings append, objects merge, the rest is replaced. */
function applyDelta(target, delta) {
    for (const key of Object.keys(delta ?? {})) {
        if (key === '__proto__' || key === 'constructor') continue;
        const d = delta[key];
        if (typeof d === 'string' && typeof target[key] === 'string') {
            target[key] += d;
        } else if (d !== null && typeof d === 'object' && !Array.isArray(d)) {
            if (target[key] === null || typeof target[key] !== 'object' || Array.isArray(target[key])) target[key] = {};
            applyDelta(target[key], d);
        } else {
            target[key] = d;
        }
    }
}

provide('ToolManager', ToolManager);
provide('registerFunctionTool', ToolManager.registerFunctionTool.bind(ToolManager));
provide('unregisterFunctionTool', ToolManager.unregisterFunctionTool.bind(ToolManager));
provide('isToolCallingSupported', ToolManager.isToolCallingSupported.bind(ToolManager));
provide('canPerformToolCalls', ToolManager.canPerformToolCalls.bind(ToolManager));
provide('chatCompletionSettings', chatCompletionSettings);
provideGetter('mainApi', () => mainApi);
