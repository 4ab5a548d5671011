// Slash commands as an extension sees them through getContext()
// (SillyTavern 1.18.0 public/scripts/slash-commands/): SlashCommandParser
// with its static command registry (addCommandObject refuses reserved
// names and warns on duplicates), SlashCommand.fromProps (the props as the
// command's members), SlashCommandArgument / SlashCommandNamedArgument
// .fromProps, SlashCommandEnumValue, ARGUMENT_TYPE, and
// executeSlashCommandsWithOptions(text, options) — the part of STscript an
// extension's command meets: commands separated by `|`, each with named
// arguments `name=value` (a value quoted with "…" may hold spaces; names
// are \w+) and the rest as its unnamed argument; a command without one gets
// the previous command's result (the pipe). A callback gets
// (namedArguments, unnamedArgument) with SillyTavern's own `_scope`,
// `_parserFlags`, `_abortController`, `_hasUnnamedArgument` beside the
// named ones (unknown names are passed on, as SillyTavern does), and its
// result is the pipe. Closures, macros, variables and the autocomplete UI
// are not emulated; the autocomplete's enum providers are there to call.
// Core commands: /echo (a toast), /setinput (the chat input), /pass.

import { provide } from './context.js';

/** SlashCommandArgument.js ARGUMENT_TYPE. */
export const ARGUMENT_TYPE = Object.freeze({
    STRING: 'string',
    NUMBER: 'number',
    RANGE: 'range',
    BOOLEAN: 'bool',
    VARIABLE_NAME: 'varname',
    CLOSURE: 'closure',
    SUBCOMMAND: 'subcommand',
    LIST: 'list',
    DICTIONARY: 'dictionary',
});

export class SlashCommandEnumValue {
    constructor(value, description = null, type = 'enum', typeIcon = '◊', matchProvider = null, valueProvider = null, makeSelectable = false) {
        Object.assign(this, { value, description, type: type ?? 'enum', typeIcon, matchProvider, valueProvider, makeSelectable });
    }

    toString() {
        return this.value;
    }
}

export class SlashCommandArgument {
    static fromProps(props) {
        return new SlashCommandArgument(props.description, props.typeList ?? [ARGUMENT_TYPE.STRING], props.isRequired ?? false,
            props.acceptsMultiple ?? false, props.defaultValue ?? null, props.enumList ?? [], props.enumProvider ?? null, props.forceEnum ?? false);
    }

    constructor(description, types, isRequired = false, acceptsMultiple = false, defaultValue = null, enums = [], enumProvider = null, forceEnum = false) {
        this.description = description;
        this.typeList = types ? (Array.isArray(types) ? types : [types]) : [];
        this.isRequired = isRequired ?? false;
        this.acceptsMultiple = acceptsMultiple ?? false;
        this.defaultValue = defaultValue;
        this.enumList = (enums ? (Array.isArray(enums) ? enums : [enums]) : []).map((e) => (e instanceof SlashCommandEnumValue ? e : new SlashCommandEnumValue(e)));
        this.enumProvider = enumProvider;
        this.forceEnum = forceEnum;
    }
}

export class SlashCommandNamedArgument extends SlashCommandArgument {
    static fromProps(props) {
        return new SlashCommandNamedArgument(props.name, props.description, props.typeList ?? [ARGUMENT_TYPE.STRING], props.isRequired ?? false,
            props.acceptsMultiple ?? false, props.defaultValue ?? null, props.enumList ?? [], props.aliasList ?? [], props.enumProvider ?? null,
            props.forceEnum ?? false);
    }

    constructor(name, description, types, isRequired = false, acceptsMultiple = false, defaultValue = null, enums = [], aliases = [], enumProvider = null, forceEnum = false) {
        super(description, types, isRequired, acceptsMultiple, defaultValue, enums, enumProvider, forceEnum);
        this.name = name;
        this.aliasList = aliases ? (Array.isArray(aliases) ? aliases : [aliases]) : [];
    }
}

export class SlashCommand {
    static fromProps(props) {
        return Object.assign(new this(), props);
    }

    name;
    callback;
    helpString;
    returns;
    aliases = [];
    namedArgumentList = [];
    unnamedArgumentList = [];
}

export class SlashCommandParserError extends Error {}

export class SlashCommandExecutionError extends Error {
    constructor(cause, message, commandName) {
        super(message);
        this.cause = cause;
        this.commandName = commandName;
    }
}

export class SlashCommandParser {
    /** @type {Record<string, SlashCommand>} */
    static commands = {};

    static addCommandObject(command) {
        for (const start of ['/', '#', ':', 'parser-flag', 'breakpoint']) {
            if (command.name.toLowerCase().startsWith(start) || (command.aliases ?? []).some((a) => a.toLowerCase().startsWith(start))) {
                throw new Error(`Illegal Name. Slash command name cannot begin with "${start}".`);
            }
        }
        if ([command.name, ...(command.aliases ?? [])].some((x) => Object.hasOwn(this.commands, x))) {
            console.trace('WARN: Duplicate slash command registered!', [command.name, ...(command.aliases ?? [])]);
        }
        this.commands[command.name] = command;
        for (const alias of command.aliases ?? []) this.commands[alias] = command;
    }

    get commands() {
        return SlashCommandParser.commands;
    }

    /** The executors of text: [{name, command, named: [[name, value]], unnamed}] in order. */
    parse(text) {
        const out = [];
        let i = 0;
        const ws = () => {
            while (i < text.length && /\s/.test(text[i])) i++;
        };
        const quoted = () => {
            i++; // the opening quote
            let v = '';
            while (i < text.length && text[i] !== '"') {
                if (text[i] === '\\' && text[i + 1] === '"') i++;
                v += text[i++];
            }
            if (text[i] !== '"') throw new SlashCommandParserError(`Unclosed quote at position ${i}`);
            i++;
            return v;
        };
        ws();
        while (i < text.length) {
            if (text[i] !== '/') throw new SlashCommandParserError(`Unexpected "${text[i]}" at position ${i}: a command starts with /`);
            i++;
            let name = '';
            while (i < text.length && !/\s/.test(text[i]) && text[i] !== '|') name += text[i++];
            const command = this.commands[name];
            if (!command) throw new SlashCommandParserError(`Unknown command at position ${i - name.length}: "/${name}"`);
            ws();
            const named = [];
            for (let m; (m = /^(\w+)=/.exec(text.slice(i))); ) {
                i += m[0].length;
                let v = '';
                if (text[i] === '"') v = quoted();
                else while (i < text.length && !/\s/.test(text[i]) && text[i] !== '|') v += text[i++];
                named.push([m[1], v]);
                ws();
            }
            let unnamed = '';
            while (i < text.length && text[i] !== '|') unnamed += text[i] === '"' && unnamed === '' ? `"${quoted()}"` : text[i++];
            unnamed = unnamed.trim();
            if (unnamed.length >= 2 && unnamed.startsWith('"') && unnamed.endsWith('"') && !command.rawQuotes) unnamed = unnamed.slice(1, -1);
            out.push({ name, command, named, unnamed: unnamed === '' ? undefined : unnamed });
            if (text[i] === '|') i++;
            ws();
        }
        return out;
    }
}

/** What executeSlashCommandsWithOptions resolves (SlashCommandClosureResult). */
export class SlashCommandClosureResult {
    interrupt = false;
    pipe;
    isBreak = false;
    isAborted = false;
    isQuietlyAborted = false;
    abortReason;
    isError = false;
    errorMessage;
}

const parser = new SlashCommandParser();

export async function executeSlashCommandsWithOptions(text, options = {}) {
    if (!text) return null;
    options = { handleParserErrors: true, handleExecutionErrors: false, ...options };
    let executors;
    try {
        executors = parser.parse(text);
    } catch (e) {
        if (options.handleParserErrors && e instanceof SlashCommandParserError) {
            toastr.error(e.message, 'SlashCommandParserError');
            return new SlashCommandClosureResult();
        }
        throw e;
    }
    const result = new SlashCommandClosureResult();
    let pipe;
    try {
        for (const [n, ex] of executors.entries()) {
            const args = { _scope: null, _parserFlags: {}, _abortController: null, _debugController: null, _hasUnnamedArgument: ex.unnamed !== undefined };
            for (const [name, value] of ex.named) args[name] = value;
            let value = ex.unnamed;
            if (value === undefined && n > 0) {
                value = pipe;
                args._hasUnnamedArgument = pipe !== null && pipe !== undefined;
            }
            try {
                pipe = await ex.command.callback(args, value ?? '');
            } catch (err) {
                throw new SlashCommandExecutionError(err, err?.message ?? String(err), ex.name);
            }
        }
    } catch (e) {
        if (!options.handleExecutionErrors) throw e;
        toastr.error(e.message, 'SlashCommandExecutionError');
        result.isError = true;
        result.errorMessage = e.message;
        return result;
    }
    result.pipe = pipe;
    return result;
}

// Core commands (slash-commands.js) the playground can run without a chat.
SlashCommandParser.addCommandObject(SlashCommand.fromProps({
    name: 'echo',
    callback: (_args, value) => {
        toastr.info(String(value ?? ''));
        return String(value ?? '');
    },
    returns: 'the text',
    unnamedArgumentList: [SlashCommandArgument.fromProps({ description: 'text', isRequired: true })],
    helpString: 'Writes a toast with the text.',
}));
SlashCommandParser.addCommandObject(SlashCommand.fromProps({
    name: 'setinput',
    callback: (_args, value) => {
        const box = document.getElementById('send_textarea');
        if (box) {
            box.value = String(value ?? '');
            box.dispatchEvent(new Event('input', { bubbles: true }));
        }
        return '';
    },
    unnamedArgumentList: [SlashCommandArgument.fromProps({ description: 'text', isRequired: true })],
    helpString: 'Puts the text in the chat input box.',
}));
SlashCommandParser.addCommandObject(SlashCommand.fromProps({
    name: 'pass',
    callback: (_args, value) => value,
    returns: 'the text',
    helpString: 'Passes the text on.',
}));

provide('SlashCommandParser', SlashCommandParser);
provide('SlashCommand', SlashCommand);
provide('SlashCommandArgument', SlashCommandArgument);
provide('SlashCommandNamedArgument', SlashCommandNamedArgument);
provide('SlashCommandEnumValue', SlashCommandEnumValue);
provide('ARGUMENT_TYPE', ARGUMENT_TYPE);
provide('executeSlashCommandsWithOptions', executeSlashCommandsWithOptions);
