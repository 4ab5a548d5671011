// `/mcp-prompt` (issue 18 item 5): gets an MCP prompt and returns its text,
// so STscript can pipe it on — `/mcp-prompt server=Docs name=summarize
// topic=x | /send`. The server and the prompt are named arguments with
// autocomplete (SillyTavern's enum providers, which it calls synchronously:
// they answer from what this page has read — the servers from the backend,
// a server's prompts through the backend's cached list —, read ahead as
// soon as an /mcp command is typed in the chat input, and what is still
// missing for the next keystroke); every other named argument is one of
// the prompt's, and `args` takes a JSON object for names a named argument
// cannot spell (SillyTavern's are \w+) or that are the command's own.
// The text is the prompt's user messages (prompt-text.ts); what was left
// out is said in a toast, and a prompt without user text is an error, so a
// pipe never sends an empty message.

import type {
  GetMcpPromptInput,
  McpPrompt,
  McpPromptGetOutcome,
  McpPromptList,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import { requestFailure } from './failure';
import { leftOutText, promptText } from './prompt-text';
import { slashCommandClasses, type StChatContext, type StSlashExecutor } from '../../host/sillytavern-chat';

export const COMMAND_NAME = 'mcp-prompt';
/** The command's own named arguments; the rest are the prompt's. */
const OWN = new Set(['server', 'name', 'args']);
/** How long a list read for the autocomplete is used before it is read again. */
export const CATALOG_TTL_MS = 10_000;
/** How long after a failed read it is tried again. */
export const RETRY_MS = 1_000;

export interface PromptCommandHost {
  context(): StChatContext | undefined;
  servers(): Promise<TauriTavernMcpServer[]>;
  prompts(registrationId: string): Promise<McpPromptList>;
  get(input: GetMcpPromptInput): Promise<McpPromptGetOutcome>;
  /** A toast, one line per entry. */
  toast(level: 'warning' | 'error', lines: readonly string[], title: string): void;
  now?(): number;
  tr: Tr;
}

interface Cached<T> {
  value?: T;
  at: number;
  loading?: Promise<void>;
}

/** What the autocomplete offers, read as it is asked for. */
export class PromptCatalog {
  readonly #host: PromptCommandHost;
  #servers: Cached<TauriTavernMcpServer[]> = { at: -Infinity };
  #prompts = new Map<string, Cached<McpPrompt[]>>();

  constructor(host: PromptCommandHost) {
    this.#host = host;
  }

  #now(): number {
    return this.#host.now?.() ?? Date.now();
  }

  #load<T>(c: Cached<T>, read: () => Promise<T>): Promise<void> {
    if (c.loading) return c.loading;
    c.loading = read().then(
      (v) => {
        c.value = v;
        c.at = this.#now();
        c.loading = undefined;
      },
      () => {
        // not again at once (the command itself says why), but soon: the
        // API may just not have been loaded yet
        c.at = this.#now() - CATALOG_TTL_MS + RETRY_MS;
        c.loading = undefined;
      },
    );
    return c.loading;
  }

  #fresh<T>(c: Cached<T>, read: () => Promise<T>): T | undefined {
    if (this.#now() - c.at >= CATALOG_TTL_MS) void this.#load(c, read);
    return c.value;
  }

  /** Forgets what was read (registrations or a server's prompts changed). */
  invalidate(registrationId?: string): void {
    if (registrationId === undefined) {
      this.#servers.at = -Infinity;
      for (const c of this.#prompts.values()) c.at = -Infinity;
    } else {
      const c = this.#prompts.get(registrationId);
      if (c) c.at = -Infinity;
    }
  }

  /** The servers now (reading them again when stale). */
  servers(): TauriTavernMcpServer[] {
    return this.#fresh(this.#servers, () => this.#host.servers()) ?? [];
  }

  /** A server's prompts now (reading them again when stale). */
  prompts(registrationId: string): McpPrompt[] {
    let c = this.#prompts.get(registrationId);
    if (!c) {
      c = { at: -Infinity };
      this.#prompts.set(registrationId, c);
    }
    return this.#fresh(c, async () => (await this.#host.prompts(registrationId)).items) ?? [];
  }

  /**
   * Reads ahead what the autocomplete will ask for: the servers, then the
   * prompts of each that offers them. SillyTavern asks its enum providers
   * synchronously, so what is read at the first ask shows only at the next
   * keystroke; reading as soon as the user starts typing the command has
   * it there at the first (install.ts calls this on the chat input).
   */
  async prefetch(): Promise<void> {
    this.servers();
    await this.#servers.loading;
    for (const s of this.servers()) if (offersPrompts(s)) this.prompts(s.id);
  }

  /** Waits for the reads under way (tests). */
  async settled(): Promise<void> {
    await Promise.all([this.#servers.loading, ...[...this.#prompts.values()].map((c) => c.loading)]);
  }
}

/** Whether the autocomplete offers a server: active, its prompts allowed and not known to be missing. */
function offersPrompts(s: TauriTavernMcpServer): boolean {
  return s.state === 'active' && s.capabilities?.allowed.prompts !== false && s.capabilities?.advertised?.prompts !== false;
}

/** Whether the chat input's text is (or pipes to) a command of ttmcp's being typed: time to prefetch. */
export function typingCommand(text: string): boolean {
  return text.includes('/mcp');
}

/** The server a `server=` value names: by display name (case-insensitive), else by id. */
export function findServer(servers: readonly TauriTavernMcpServer[], value: string, tr: Tr): TauriTavernMcpServer {
  const v = value.trim();
  const byId = servers.find((s) => s.id === v);
  if (byId) return byId;
  const named = servers.filter((s) => s.displayName.trim().toLowerCase() === v.toLowerCase());
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new Error(tr('cmd_server_ambiguous', { server: v, ids: named.map((s) => s.id).join(', ') }));
  throw new Error(tr('cmd_server_unknown', { server: v, servers: servers.map((s) => s.displayName).join(', ') || '—' }));
}

function argText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return argText(v[v.length - 1]);
  return String(v);
}

/** The prompt's arguments: args= JSON first, then every other named argument. */
export function promptArguments(named: Record<string, unknown>, tr: Tr): Record<string, string> {
  const out: Record<string, string> = {};
  const json = argText(named.args);
  if (json !== undefined && json.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (err) {
      throw new Error(tr('cmd_args_invalid', { message: errorMessage(err) }));
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(tr('cmd_args_invalid', { message: 'not an object' }));
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') throw new Error(tr('cmd_args_invalid', { message: `${k} is not a string` }));
      out[k] = v;
    }
  }
  for (const [k, v] of Object.entries(named)) {
    if (OWN.has(k) || k.startsWith('_')) continue; // SillyTavern's own members (_scope, _parserFlags, …)
    const t = argText(v);
    if (t !== undefined) out[k] = t;
  }
  return out;
}

/** A prompt as the autocomplete describes it: its title or description, and its arguments. */
function promptSummary(p: McpPrompt, tr: Tr): string {
  const args = p.arguments.map((a) => (a.required ? `${a.name}*` : a.name)).join(', ');
  const about = p.title ?? p.description ?? '';
  return [about, args !== '' ? tr('cmd_prompt_args', { args }) : ''].filter((x) => x !== '').join(' · ');
}

function namedValue(executor: StSlashExecutor | undefined, name: string): string | undefined {
  const v = executor?.namedArgumentList?.find((a) => a.name === name)?.value;
  return typeof v === 'string' ? v : undefined;
}

/** Runs `/mcp-prompt` with SillyTavern's named arguments; resolves the prompt's text. */
export async function runPromptCommand(host: PromptCommandHost, named: Record<string, unknown>): Promise<string> {
  const tr = host.tr;
  const serverArg = argText(named.server)?.trim();
  const nameArg = argText(named.name)?.trim();
  if (!serverArg || !nameArg) throw new Error(tr('cmd_usage'));
  const server = findServer(await host.servers(), serverArg, tr);
  const args = promptArguments(named, tr);
  let outcome: McpPromptGetOutcome;
  try {
    outcome = await host.get({ registrationId: server.id, name: nameArg, arguments: args });
  } catch (err) {
    throw new Error(tr('cmd_failed', { name: nameArg, server: server.displayName, message: errorMessage(err) }));
  }
  const failed = requestFailure(outcome, tr);
  if (failed !== undefined || outcome.outcome !== 'known_response' || outcome.response.kind !== 'prompt_messages') {
    throw new Error(tr('cmd_failed', { name: nameArg, server: server.displayName, message: failed ?? '' }));
  }
  const { text, leftOut } = promptText(outcome.response);
  if (leftOut.length > 0) {
    host.toast('warning', leftOut.map((l) => leftOutText(l, tr)), tr('cmd_left_out_title', { name: nameArg }));
  }
  if (text === '') throw new Error(tr('cmd_no_user_text', { name: nameArg, server: server.displayName }));
  return text;
}

/** Registers `/mcp-prompt`; false when this SillyTavern has no slash-command classes. */
export function registerPromptCommand(host: PromptCommandHost, catalog = new PromptCatalog(host)): boolean {
  const tr = host.tr;
  const st = slashCommandClasses(host.context());
  if (!st) return false;
  const { SlashCommandParser, SlashCommand, SlashCommandNamedArgument, SlashCommandEnumValue, ARGUMENT_TYPE } = st;
  const string = ARGUMENT_TYPE.STRING ?? 'string';
  const serverEnum = () =>
    catalog
      .servers()
      .filter(offersPrompts)
      .map((s) => new SlashCommandEnumValue(s.displayName, s.endpoint, 'name'));
  const promptEnum = (executor: StSlashExecutor) => {
    const value = namedValue(executor, 'server');
    if (value === undefined) return [];
    let server: TauriTavernMcpServer;
    try {
      server = findServer(catalog.servers(), value, tr);
    } catch {
      return [];
    }
    return catalog.prompts(server.id).map((p) => new SlashCommandEnumValue(p.name, promptSummary(p, tr), 'enum'));
  };
  SlashCommandParser.addCommandObject(
    SlashCommand.fromProps({
      name: COMMAND_NAME,
      // SillyTavern shows a command's error as HTML (its error toast): a server's
      // or prompt's name, the usage's <server>, are text
      callback: (named: Record<string, unknown>) =>
        runPromptCommand(host, named).catch((err: unknown) => {
          throw new Error(escapeHtml(errorMessage(err)));
        }),
      returns: tr('cmd_returns'),
      helpString: `<div>${escapeHtml(tr('cmd_help'))}</div><div><code>/${COMMAND_NAME} server=Docs name=summarize topic=x | /setinput</code></div>`,
      namedArgumentList: [
        SlashCommandNamedArgument.fromProps({
          name: 'server',
          description: tr('cmd_arg_server'),
          typeList: [string],
          isRequired: true,
          enumProvider: serverEnum,
        }),
        SlashCommandNamedArgument.fromProps({
          name: 'name',
          description: tr('cmd_arg_name'),
          typeList: [string],
          isRequired: true,
          enumProvider: promptEnum,
        }),
        SlashCommandNamedArgument.fromProps({
          name: 'args',
          description: tr('cmd_arg_args'),
          typeList: [ARGUMENT_TYPE.DICTIONARY ?? string, string],
        }),
      ],
    }),
  );
  return true;
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
