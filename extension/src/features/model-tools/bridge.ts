// MCP tools for the model in vanilla SillyTavern (SPEC §7, issue 8): the
// tools set to Ask or Allow on active servers are offered through
// SillyTavern's own tool calling (registerFunctionTool), and the model's
// calls run through ttmcp.
//
// SillyTavern calls Generate once per round: the user's request is a root,
// and each batch of tool calls it answers (saved, TOOL_CALLS_RENDERED) is
// followed by another round. GENERATION_STARTED carries no depth, so a
// round that follows a saved batch is taken as its root's next round; any
// other is a new root. Per root the tools are listed once from the cached
// catalogs (list_legacy_mcp_tools: never a discovery); per round they get
// aliases mcp__<server>__<tool> that avoid every other tool's name, and are
// (re)registered; shouldRegister offers exactly the current round's, so a
// permission change or a pause applies to the next root without a reload.
//
// Which tools a root lists is its tool set's (binding.ts: the chat's, the
// character's or group's, the default; none: every permitted tool), and
// the provider's tool limit decides how many of them a round offers
// (limit.ts; the generation says which were left out). In search mode
// (search.ts, issue 31) a round offers a small constant set instead —
// search, details, call, the pinned tools, the reader — and a call through
// the call tool is the real tool's call, down to its Ask popup and
// SillyTavern's record of it. Whatever the mode, the tools array keeps one
// documented order (search.ts): a round whose tools or order differ from
// what is registered registers all of ttmcp's tools again, in order.
//
// A call: the permission is read again (Ask prompts, Allow runs; the
// backend refuses Off and paused servers itself), the arguments go on as
// SillyTavern parsed them, and the tool result is what the model reads
// well (the backend's projection, readable.ts for the page's own answers):
// text, not ttmcp's outcome JSON; a result over the set's inline limit is
// a note with a preview, read back with the reader tool (reader.ts). It is
// also what SillyTavern shows in the tool-call block. An unknown outcome
// (the tool may have run) ends the tool loop:
// the rest of the batch is not called, a persistent warning says so, and
// the round SillyTavern starts next is stopped before its request. Nothing
// is retried. Stop during a call or a prompt cancels it and ends the loop
// the same way.

import {
  allocateMcpAlias,
  createLegacyMcpGenerationContext,
  invokeLegacyMcpTool,
  LegacyMcpOutcomeUnknownError,
  type LegacyMcpGenerationContext,
  type LegacyMcpInvokeCommand,
} from '../../../../jsapi/legacy-mcp-tools.js';
import type { LegacyMcpTool, McpCallProgress, McpReadableOptions, McpToolPermission, TtmcpMcpApi } from '../../../../jsapi/tauritavern-mcp';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import type { ApprovalAnswer, ApprovalRequest } from './approval';
import { applyBindings, boundSetId, type AppliedToolSet, type BindingScope } from '../../host/bindings';
import { providerToolLimit } from './limit';
import { notCalledText, unknownText } from './readable';
import { READER_TOOL, readerDefinition } from './reader';
import { ST_EVENTS, toolName, type StFunctionTool, type StToolContext } from '../../host/sillytavern-tools';
import { isRecord } from '../../base/values';
import {
  CALL_DESCRIPTION,
  CALL_PARAMETERS,
  CALL_TOOL,
  callArguments,
  contextTokens,
  DEFAULT_SEARCH,
  DEFAULT_SEARCH_LIMIT,
  DETAILS_DESCRIPTION,
  DETAILS_PARAMETERS,
  DETAILS_TOOL,
  formatDetails,
  formatHits,
  MAX_SEARCH_LIMIT,
  relabelInvocations,
  resolveName,
  unresolvedName,
  SEARCH_DESCRIPTION,
  SEARCH_PARAMETERS,
  SEARCH_TOOL,
  planRequest,
  setSearch,
  type SearchSettings,
  type StInvocation,
} from './search';

export const CODE_CALL_DENIED = 'mcp.call_denied_by_user';
export const CODE_CALL_SKIPPED = 'mcp.call_skipped_after_unknown';
export const CODE_CALL_CANCELLED = 'mcp.call_cancelled_before_send';
export const CODE_TOOL_NOT_OFFERED = 'mcp.tool_not_offered';

/** The host as the bridge uses it; tests give their own. */
export interface ToolBridgeHost {
  /** SillyTavern's context, fresh. */
  context(): StToolContext | undefined;
  /** api.mcp, once the Manager loaded it. */
  api(): TtmcpMcpApi | undefined;
  /** invoke.safeInvoke, once loaded. */
  invokeCommand(): LegacyMcpInvokeCommand | undefined;
  /**
   * Whether ttmcp offers the tools here: its bridge status is published,
   * or no host API is (the Manager is still loading ttmcp's). In
   * TauriTavern the host's own Generate hooks offer the tools: the
   * extension must not offer them twice.
   */
  isTtmcp(): boolean;
  /** Whether the backend connection is open now. */
  connected(): boolean;
  /**
   * One attempt to connect now (load the API, or reconnect the bridge);
   * resolves once it settled or a short wait is over. Absent: no attempt.
   */
  wake?(): Promise<void>;
  askApproval(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
  toast(level: 'warning' | 'error', text: string, title: string, persistent?: boolean): void;
  /** Called after each root's listing (the Manager checks the reach again). */
  listed?(): void;
  /** Called after the bridge changed a registration ("Always allow"): the Manager shows it at once. */
  changed?(): void;
  /** The tool set bindings of the chat open now (absent: none, every permitted tool). */
  scope?(): BindingScope;
  /**
   * Whether the user's last Stop came from a server's question to them
   * (the question popup's Stop generation), read once per stopped call.
   * Absent: the page cannot say.
   */
  stoppedWhileAsked?(): boolean;
  /**
   * Shows a model's call in the chat while it runs, with its server's
   * progress (issue 29); end() removes it. Absent: nothing is shown.
   */
  callStatus?(name: string): { progress(p: McpCallProgress): void; end(): void };
  /** The search settings of the default (no tool set applies); absent: every schema. */
  defaultSearch?(): SearchSettings;
  /**
   * Told of each call that returned an outcome (MCP Apps, issue 30: a tool
   * with an interface shows it in the chat): the alias the model called,
   * the tool, its arguments and the outcome as upstream serialises it.
   */
  called?(call: { alias: string; tool: LegacyMcpTool; argumentsJson: string; result: string }): void;
  /** Told of the user's Stop (never of the bridge's own stop ending its loop): MCP Apps stop their calls too. */
  stopped?(): void;
  tr: Tr;
}

/** A root's listing: its tools, the set it applied, and how results are read. */
interface RootListing {
  context: LegacyMcpGenerationContext;
  applied: AppliedToolSet;
  readable: { inlineCharLimit: number; readerTool: boolean };
  search: SearchSettings;
}

/** Upstream's default inline limit, without a set. */
export const DEFAULT_INLINE_CHAR_LIMIT = 50_000;

interface Binding {
  tool: LegacyMcpTool;
  /** What was registered under the alias, to skip registering it again unchanged. */
  signature: string;
}

/** One tool a round offers, in the tools array's order. */
interface Offer {
  name: string;
  signature: string;
  define(): StFunctionTool;
}

function registrationOf(toolId: string): string {
  // mcp/<registration-id>:<nativeName>; the id holds no ':'
  return toolId.slice('mcp/'.length, toolId.indexOf(':'));
}

export function displayNameOf(tool: LegacyMcpTool): string {
  return `${tool.title || tool.nativeName} (${tool.serverDisplayName})`;
}

export class ToolBridge {
  readonly #host: ToolBridgeHost;
  /** The root's listing; null: none could be made (nothing is offered). */
  #root: RootListing | null = null;
  /** The reader tool is offered in this round. */
  #reader = false;
  /** This root's generation already said which tools the limit left out. */
  #toldLeftOut = false;
  /** Bindings to a set that is gone, already told in the console (once each, not per generation). */
  #toldMissing = new Set<string>();
  /** The current round: alias → tool. */
  #round = new Map<string, Binding>();
  /** Aliases registered with SillyTavern. */
  #registered = new Set<string>();
  /** What is registered, in registration order, with each one's signature. */
  #order: Array<{ name: string; signature: string }> = [];
  /** This round offers the constant set (search mode). */
  #search = false;
  /** Search mode: every listed tool by alias, and the alias of each ToolId. */
  #catalog = new Map<string, LegacyMcpTool>();
  #aliasOf = new Map<string, string>();
  /** Names of other tools seen in requests (SillyTavern before ToolManager was in getContext()). */
  #foreign = new Set<string>();
  /** A batch was saved: the next round continues its root. */
  #afterBatch = false;
  /** This round continues a root. */
  #continuing = false;
  /** Stop the next continuing round before its request. */
  #stopArmed = false;
  /** An outcome was unknown or Stop was pressed: the rest of this batch is not called. */
  #halted: 'unknown' | 'stopped' | null = null;
  /** Calls and prompts under way, aborted by Stop. */
  #inflight = new Set<AbortController>();
  #selfStop = false;
  /** This root's generation already said that the MCP tools are unavailable. */
  #toldUnavailable = false;
  #unsubscribe: Array<() => void> = [];

  constructor(host: ToolBridgeHost) {
    this.#host = host;
  }

  /** Listens to SillyTavern's events; false when this SillyTavern cannot take function tools. */
  install(): boolean {
    const ctx = this.#host.context();
    const events = ctx?.eventSource;
    if (!ctx || !events || typeof ctx.registerFunctionTool !== 'function') return false;
    const on = (event: string, fn: (...args: never[]) => unknown) => {
      events.on(event, fn);
      this.#unsubscribe.push(() => events.removeListener?.(event, fn));
    };
    on(ST_EVENTS.GENERATION_STARTED, (type: string, _options: unknown, dryRun: boolean) => this.onGenerationStarted(type, dryRun));
    on(ST_EVENTS.GENERATION_AFTER_COMMANDS, (type: string, _options: unknown, dryRun: boolean) =>
      this.onAfterCommands(type, dryRun),
    );
    on(ST_EVENTS.GENERATION_STOPPED, () => this.onStopped());
    on(ST_EVENTS.CHAT_COMPLETION_SETTINGS_READY, (data: { tools?: unknown }) => this.onRequest(data));
    on(ST_EVENTS.TOOL_CALLS_PERFORMED, (invocations: unknown) => {
      this.onBatchPerformed(invocations);
      this.onBatchSaved();
    });
    on(ST_EVENTS.TOOL_CALLS_RENDERED, () => this.onBatchSaved());
    return true;
  }

  /** Stops listening and unregisters every alias. */
  uninstall(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#sync([]);
    this.#round.clear();
    this.#reader = false;
    this.#search = false;
  }

  /** The tools offered in the current round, in the tools array's order (for the Manager and tests). */
  get offered(): string[] {
    return this.#order.map((o) => o.name);
  }

  /** Whether the current round offers the constant set. */
  get searching(): boolean {
    return this.#search;
  }

  /** How many of SillyTavern's own tools a request may carry beside ttmcp's (the limit counts them). */
  localToolCount(): number {
    return this.#localNames().size;
  }

  #eligible(type: string, dryRun: boolean): boolean {
    const ctx = this.#host.context();
    if (dryRun || !ctx || typeof ctx.registerFunctionTool !== 'function') return false;
    if (typeof ctx.canPerformToolCalls === 'function') return ctx.canPerformToolCalls(type);
    return !['impersonate', 'quiet', 'continue'].includes(type);
  }

  async onGenerationStarted(type: string, dryRun: boolean): Promise<void> {
    if (!this.#eligible(type, dryRun)) return;
    this.#continuing = this.#afterBatch;
    this.#afterBatch = false;
    this.#halted = null;
    if (!this.#continuing) {
      this.#stopArmed = false;
      this.#host.stoppedWhileAsked?.(); // a Stop of an earlier generation says nothing of this one
      this.#toldUnavailable = false;
      this.#toldLeftOut = false;
      this.#root = await this.#listRoot();
      this.#host.listed?.();
    } else if (this.#root === null) {
      this.#root = await this.#listRoot();
    }
    this.#newRound();
  }

  onAfterCommands(type: string, dryRun: boolean): void {
    if (!this.#eligible(type, dryRun) || !this.#continuing || !this.#stopArmed) return;
    // The loop must end here: SillyTavern started the round after a batch
    // whose outcome is unknown or that the user stopped.
    this.#stopArmed = false;
    const ctx = this.#host.context();
    this.#selfStop = true;
    try {
      ctx?.stopGeneration?.();
    } finally {
      this.#selfStop = false;
    }
  }

  /**
   * Stop: whatever runs is cancelled, the rest of the batch is not called,
   * and the round SillyTavern may start after the batch is stopped too
   * (SillyTavern goes on with a batch and its next round after Stop). A
   * Stop outside a batch leaves nothing behind: the next root starts clean.
   */
  onStopped(): void {
    if (this.#selfStop) return;
    this.#halted ??= 'stopped';
    this.#stopArmed = true;
    for (const c of this.#inflight) c.abort();
    this.#host.stopped?.();
  }

  onRequest(data: { tools?: unknown }): void {
    if (!Array.isArray(data?.tools)) return;
    for (const t of data.tools as Array<{ function?: { name?: unknown } }>) {
      const name = t?.function?.name;
      if (typeof name === 'string' && !this.#registered.has(name)) this.#foreign.add(name);
    }
  }

  onBatchSaved(): void {
    this.#afterBatch = true;
  }

  /**
   * SillyTavern's record of a batch names the real tools: calls through
   * the call tool get the real tool's display name, in the invocations and
   * in the chat message made of them (TOOL_CALLS_PERFORMED comes after the
   * message is pushed, before it is rendered and saved).
   */
  onBatchPerformed(invocations: unknown): void {
    if (!Array.isArray(invocations) || this.#catalog.size === 0) return;
    const chat = (this.#host.context() as { chat?: unknown } | undefined)?.chat;
    const last = Array.isArray(chat) ? (chat.at(-1) as unknown) : undefined;
    const message =
      isRecord(last) && isRecord(last.extra) && last.extra.tool_invocations === invocations ? (last as { mes?: unknown }) : undefined;
    relabelInvocations(invocations as StInvocation[], (inv) => {
      let params: unknown = inv.parameters;
      if (typeof params === 'string') {
        try {
          params = JSON.parse(params) as unknown;
        } catch {
          return undefined;
        }
      }
      const call = callArguments(params);
      const alias = call && resolveName(call.name, this.#catalog);
      return alias ? displayNameOf(this.#catalog.get(alias)!) : undefined;
    }, message);
  }

  /** Lists the tools for a new root; null (after telling the user) when they cannot be listed. */
  async #listRoot(): Promise<RootListing | null> {
    const { tr } = this.#host;
    if (!this.#host.isTtmcp()) return null;
    // The backend may have come up since the last attempt: try once now.
    if (!this.#host.connected()) await this.#host.wake?.();
    const invokeCommand = this.#host.invokeCommand();
    if (!invokeCommand || !this.#host.connected()) {
      // the API never loaded, the connection is lost, or the origin refused
      this.#unavailable();
      return null;
    }
    try {
      const applied = await this.#appliedSet();
      const args = applied.set ? { dto: { toolSetId: applied.set.id } } : undefined;
      const context = await createLegacyMcpGenerationContext({
        invokeCommand: (command, a) => invokeCommand(command, command === 'list_legacy_mcp_tools' ? args : a),
      });
      if (context.diagnostics.length > 0) this.#host.toast('warning', tr('tools_partly_unavailable_body'), tr('tools_unavailable_title'));
      const set = applied.set;
      return {
        context,
        applied,
        readable: { inlineCharLimit: set?.resultInlineCharLimit ?? DEFAULT_INLINE_CHAR_LIMIT, readerTool: set?.readerTool ?? true },
        search: set ? setSearch(set) : (this.#host.defaultSearch?.() ?? DEFAULT_SEARCH),
      };
    } catch (err) {
      console.error('[mcp-manager] MCP tools could not be listed for this generation:', err);
      this.#unavailable();
      return null;
    }
  }

  /**
   * The tool set this root uses. Without the tool set API (an older
   * backend) or when the sets cannot be listed, every permitted tool, as
   * before sets existed.
   */
  async #appliedSet(): Promise<AppliedToolSet> {
    const toolSets = this.#host.api()?.toolSets;
    const scope = this.#host.scope?.();
    if (!toolSets || !scope) return { missing: [] };
    try {
      const applied = applyBindings(scope, (await toolSets.list()).toolSets);
      for (const level of applied.missing) {
        const key = `${level}\u0000${boundSetId(scope, level)}\u0000${scope.character?.key ?? scope.group?.key ?? ''}`;
        if (this.#toldMissing.has(key)) continue;
        this.#toldMissing.add(key);
        console.warn(`[mcp-manager] The tool set bound to the ${level} no longer exists; the next binding applies.`);
      }
      return applied;
    } catch (err) {
      console.warn('[mcp-manager] The tool sets could not be listed; every permitted tool is offered:', err);
      return { missing: [] };
    }
  }

  /** Tells the user, once per generation (its root and the rounds after it), that no MCP tool is offered. */
  #unavailable(): void {
    if (this.#toldUnavailable) return;
    this.#toldUnavailable = true;
    const { tr } = this.#host;
    this.#host.toast('error', tr('tools_unavailable_body'), tr('tools_unavailable_title'));
  }

  /** Names of the other tools: the registry's when SillyTavern shows it, else those seen in requests. */
  #localNames(): Set<string> {
    const names = new Set(this.#foreign);
    const tools = this.#host.context()?.ToolManager?.tools;
    if (Array.isArray(tools)) {
      for (const t of tools) {
        const name = toolName(t);
        if (name !== undefined && !this.#registered.has(name)) names.add(name);
      }
    }
    return names;
  }

  #newRound(): void {
    const used = this.#localNames();
    const root = this.#root;
    const ctx = this.#host.context();
    const tools = root?.context.tools ?? [];
    const limit = providerToolLimit(ctx);
    // aliases over the whole listing, in its order: the offered tools of
    // "all" are its first ones, so their aliases are the same in both modes
    const taken = new Set(used);
    const catalog = tools.map((tool): [string, LegacyMcpTool] => [allocateMcpAlias(tool.serverDisplayName, tool.nativeName, taken), tool]);
    const plan = planRequest(catalog, {
      settings: root?.search ?? DEFAULT_SEARCH,
      limit,
      local: used.size,
      reader: (root?.readable.readerTool ?? false) && !used.has(READER_TOOL),
      readerTokens: 0,
      context: contextTokens(ctx),
    });
    if (plan.leftOut.length > 0) this.#leftOut(plan.leftOut, catalog.length, limit ?? 0, used.size);
    const round = new Map<string, Binding>();
    for (const [alias, tool] of plan.offered) round.set(alias, this.#binding(tool));
    this.#catalog = plan.search ? new Map(catalog) : new Map();
    this.#aliasOf = plan.search ? new Map(catalog.map(([alias, t]) => [t.toolId, alias])) : new Map();
    this.#round = round;
    this.#reader = plan.reader;
    this.#search = plan.search;
    const offers: Offer[] = [];
    if (plan.search) {
      offers.push(
        { name: SEARCH_TOOL, signature: SEARCH_TOOL, define: () => this.#searchDefinition() },
        { name: DETAILS_TOOL, signature: DETAILS_TOOL, define: () => this.#detailsDefinition() },
        { name: CALL_TOOL, signature: CALL_TOOL, define: () => this.#callDefinition() },
      );
    }
    for (const [alias, binding] of round) offers.push({ name: alias, signature: binding.signature, define: () => this.#definition(alias, binding.tool) });
    if (plan.reader) offers.push({ name: READER_TOOL, signature: READER_TOOL, define: () => this.#readerDefinition() });
    this.#sync(offers);
  }

  #binding(tool: LegacyMcpTool): Binding {
    const description = tool.description || tool.title || tool.nativeName;
    return { tool, signature: `${tool.toolId}\n${description}\n${JSON.stringify(tool.inputSchema)}` };
  }

  /**
   * Registers offers, in their order, as ttmcp's part of the tools array.
   * Unchanged (same names, order and signatures, and ttmcp's tools still
   * the registry's last ones): nothing is done. Otherwise every tool of
   * ttmcp's is unregistered and the offers are registered again in order —
   * SillyTavern's registry keeps insertion order, so keeping a tool that
   * two rounds share would leave it where an earlier round put it (the
   * order changed from chat to chat before issue 31).
   */
  #sync(offers: Offer[]): void {
    const ctx = this.#host.context();
    const same =
      offers.length === this.#order.length &&
      offers.every((o, i) => o.name === this.#order[i]!.name && o.signature === this.#order[i]!.signature) &&
      this.#lastInRegistry(ctx);
    if (same) return;
    for (const { name } of this.#order) ctx?.unregisterFunctionTool?.(name);
    this.#registered.clear();
    for (const o of offers) {
      ctx?.registerFunctionTool?.(o.define());
      this.#registered.add(o.name);
    }
    this.#order = offers.map((o) => ({ name: o.name, signature: o.signature }));
  }

  /** Whether ttmcp's tools are the registry's last ones, in order (true when the registry does not show them). */
  #lastInRegistry(ctx: StToolContext | undefined): boolean {
    const all = ctx?.ToolManager?.tools;
    if (!Array.isArray(all)) return true;
    const names = all.map(toolName);
    const ours = this.#order.map((o) => o.name);
    if (!ours.some((n) => names.includes(n))) return true;
    const tail = names.slice(names.length - ours.length);
    return tail.length === ours.length && tail.every((n, i) => n === ours[i]);
  }

  /** Says, once per generation, which tools the provider's limit left out (the listing's order decides). */
  #leftOut(tools: readonly LegacyMcpTool[], total: number, limit: number, local: number): void {
    if (this.#toldLeftOut) return;
    this.#toldLeftOut = true;
    const { tr } = this.#host;
    const names = tools.map(displayNameOf);
    console.warn(`[mcp-manager] ${names.length} MCP tools left out of this generation (the source takes at most ${limit} tools, ${local} of them SillyTavern's own):`, names);
    const shown = names.slice(0, 8).join(', ') + (names.length > 8 ? tr('and_more', { count: names.length - 8 }) : '');
    this.#host.toast('warning', tr('tools_left_out_body', { offered: total - tools.length, total, limit, local, names: shown }), tr('tools_left_out_title'));
  }

  #readerDefinition(): StFunctionTool {
    const { tr } = this.#host;
    return readerDefinition({
      results: () => this.#host.api()?.results,
      inlineCharLimit: () => this.#root?.readable.inlineCharLimit ?? DEFAULT_INLINE_CHAR_LIMIT,
      shouldRegister: () => this.#reader && this.#host.connected(),
      displayName: tr('reader_tool_name'),
      formatMessage: () => tr('invoking_tool', { name: tr('reader_tool_name') }),
    });
  }

  #definition(alias: string, tool: LegacyMcpTool): StFunctionTool {
    const displayName = displayNameOf(tool);
    return {
      name: alias,
      displayName,
      description: tool.description || tool.title || tool.nativeName,
      parameters: JSON.parse(JSON.stringify(tool.inputSchema)) as unknown,
      action: (args: unknown) => this.call(alias, args),
      formatMessage: () => this.#host.tr('invoking_tool', { name: displayName }),
      shouldRegister: () => this.#round.has(alias) && this.#host.connected(),
    };
  }

  // ------------------------------------------------------------ search mode

  #searchDefinition(): StFunctionTool {
    const { tr } = this.#host;
    return {
      name: SEARCH_TOOL,
      displayName: tr('search_tool_name'),
      description: SEARCH_DESCRIPTION,
      parameters: structuredClone(SEARCH_PARAMETERS),
      action: (args: unknown) => this.search(args),
      formatMessage: () => tr('invoking_tool', { name: tr('search_tool_name') }),
      shouldRegister: () => this.#search && this.#host.connected(),
    };
  }

  #detailsDefinition(): StFunctionTool {
    const { tr } = this.#host;
    return {
      name: DETAILS_TOOL,
      displayName: tr('details_tool_name'),
      description: DETAILS_DESCRIPTION,
      parameters: structuredClone(DETAILS_PARAMETERS),
      action: (args: unknown) => this.details(args),
      formatMessage: () => tr('invoking_tool', { name: tr('details_tool_name') }),
      shouldRegister: () => this.#search && this.#host.connected(),
    };
  }

  #callDefinition(): StFunctionTool {
    const { tr } = this.#host;
    return {
      name: CALL_TOOL,
      displayName: tr('call_tool_name'),
      description: CALL_DESCRIPTION,
      parameters: structuredClone(CALL_PARAMETERS),
      action: (args: unknown) => this.callThrough(args),
      // the toast names the real tool
      formatMessage: (args: unknown) => {
        const call = callArguments(args);
        const alias = call && resolveName(call.name, this.#catalog);
        return tr('invoking_tool', { name: alias ? displayNameOf(this.#catalog.get(alias)!) : tr('call_tool_name') });
      },
      shouldRegister: () => this.#search && this.#host.connected(),
    };
  }

  /** The search tool: the backend's ranking over the root's tools, grouped by server. */
  async search(args: unknown): Promise<string> {
    const a = isRecord(args) ? args : {};
    const query = typeof a.query === 'string' ? a.query.trim() : '';
    if (query === '') return `${SEARCH_TOOL} needs a query: a few words on what you want to do.`;
    const api = this.#host.api()?.toolSearch;
    if (!api) return 'The MCP tool search is not available: this ttmcp backend has no search_mcp_tools. Nothing was searched.';
    let registrationId: string | undefined;
    if (typeof a.server === 'string' && a.server.trim() !== '') {
      const want = a.server.trim().toLowerCase();
      const tool = [...this.#catalog.values()].find((t) => t.serverDisplayName.toLowerCase() === want);
      if (!tool) {
        const servers = [...new Set([...this.#catalog.values()].map((t) => t.serverDisplayName))].sort();
        return `No MCP server is named "${a.server.trim()}" here. The servers are: ${servers.join(', ')}.`;
      }
      registrationId = registrationOf(tool.toolId);
    }
    const limit =
      typeof a.limit === 'number' && Number.isFinite(a.limit) ? Math.min(MAX_SEARCH_LIMIT, Math.max(1, Math.floor(a.limit))) : DEFAULT_SEARCH_LIMIT;
    const setId = this.#root?.applied.set?.id;
    try {
      const { hits } = await api.search({ query, limit, ...(setId ? { toolSetId: setId } : {}), ...(registrationId ? { registrationId } : {}) });
      const shown = hits.flatMap((hit) => {
        const alias = this.#aliasOf.get(hit.toolId);
        return alias ? [{ alias, hit }] : [];
      });
      return formatHits(query, shown);
    } catch (err) {
      return `The MCP tool search failed: ${errorMessage(err)}. Nothing was called.`;
    }
  }

  /** The details tool: one tool's full, projected definition. */
  async details(args: unknown): Promise<string> {
    const name = isRecord(args) && typeof args.name === 'string' ? args.name : '';
    const alias = resolveName(name, this.#catalog);
    if (!alias) return unresolvedName(name, this.#catalog, `Find one with ${SEARCH_TOOL}.`);
    return formatDetails(alias, this.#catalog.get(alias)!);
  }

  /** The call tool: the real tool's call, as if the model had called it by its own name. */
  async callThrough(args: unknown): Promise<string> {
    const call = callArguments(args);
    if (!call) return `${CALL_TOOL} needs {"name": "<a tool's name from ${SEARCH_TOOL}>", "arguments": {…}}. Nothing was called.`;
    const alias = resolveName(call.name, this.#catalog);
    if (!alias) return unresolvedName(call.name, this.#catalog, `Nothing was called; find one with ${SEARCH_TOOL}.`);
    // SillyTavern saves this invocation under the call tool's name: the App host (issue 30) finds it by that
    return this.#run(this.#catalog.get(alias)!, call.arguments, CALL_TOOL);
  }


  /** The permission of a tool now (Off when its registration or tool is gone). */
  async #permission(tool: LegacyMcpTool): Promise<McpToolPermission> {
    const api = this.#host.api();
    if (!api) return 'ask'; // unknown: ask rather than run unasked
    const { servers } = await api.servers.list();
    const reg = servers.find((s) => s.id === registrationOf(tool.toolId));
    return reg?.toolPermissions[tool.nativeName] ?? 'off';
  }

  /** Runs the model's call of alias; resolves the tool result SillyTavern gives the model. */
  async call(alias: string, args: unknown): Promise<string> {
    const tool = this.#round.get(alias)?.tool;
    if (!tool) {
      return `The MCP tool ${alias} was not called (${CODE_TOOL_NOT_OFFERED}): it is not offered in this round.`;
    }
    return this.#run(tool, args, alias);
  }

  /** One call of tool: permission, Ask, the backend's call, the readable result. */
  async #run(tool: LegacyMcpTool, args: unknown, alias?: string): Promise<string> {
    if (this.#halted === 'unknown') {
      return notCalledText(tool, CODE_CALL_SKIPPED, 'an earlier MCP tool call in this batch may have run, but its result is unknown; the tool loop ends here.');
    }
    if (this.#halted === 'stopped') {
      return notCalledText(tool, CODE_CALL_CANCELLED, 'the generation was stopped.');
    }
    const readable: McpReadableOptions = { ...(this.#root?.readable ?? { inlineCharLimit: DEFAULT_INLINE_CHAR_LIMIT, readerTool: true }) };
    readable.readerTool = this.#reader;
    const invokeCommand = this.#host.invokeCommand();
    if (!invokeCommand) throw new Error('The ttmcp backend is not connected');
    const argumentsJson = JSON.stringify(args ?? {});
    const controller = new AbortController();
    this.#inflight.add(controller);
    let status: ReturnType<NonNullable<ToolBridgeHost['callStatus']>> | undefined;
    try {
      let approval: ApprovalAnswer | undefined;
      if ((await this.#permission(tool)) === 'ask') {
        approval = await this.#host.askApproval(
          { serverDisplayName: tool.serverDisplayName, toolTitle: tool.title || tool.nativeName, nativeName: tool.nativeName, argumentsJson },
          controller.signal,
        );
        if (approval === 'denied') return await this.#deny(invokeCommand, tool, argumentsJson, readable, controller.signal.aborted);
        if (approval === 'always') await this.#allowAlways(tool);
      }
      status = this.#host.callStatus?.(displayNameOf(tool));
      const onProgress = status && ((p: McpCallProgress) => status?.progress(p));
      const { result, readable: text } = await invokeLegacyMcpTool(
        { invokeCommand },
        { toolId: tool.toolId, argumentsJson, signal: controller.signal, readable, ...(approval ? { approval } : {}), ...(onProgress ? { onProgress } : {}) },
      );
      // alias: the name SillyTavern saves the invocation under (the call tool's, for a call through it)
      if (alias !== undefined) this.#host.called?.({ alias, tool, argumentsJson, result });
      return text?.text ?? result;
    } catch (err) {
      if (err instanceof LegacyMcpOutcomeUnknownError) return this.#unknown(err, tool, controller.signal.aborted);
      if ((err as { name?: unknown })?.name === 'AbortError') {
        this.#halted ??= 'stopped';
        this.#stopArmed = true;
        return notCalledText(tool, CODE_CALL_CANCELLED, 'the generation was stopped before the tool request was sent.');
      }
      throw err;
    } finally {
      status?.end();
      this.#inflight.delete(controller);
    }
  }

  /** A denial: recorded by the backend (never a call), and the model is told. */
  async #deny(
    invokeCommand: LegacyMcpInvokeCommand,
    tool: LegacyMcpTool,
    argumentsJson: string,
    readable: McpReadableOptions,
    stopped: boolean,
  ): Promise<string> {
    if (stopped) {
      this.#halted ??= 'stopped';
      this.#stopArmed = true;
    }
    try {
      const { result, readable: text } = await invokeLegacyMcpTool({ invokeCommand }, { toolId: tool.toolId, argumentsJson, approval: 'denied', readable });
      return text?.text ?? result;
    } catch (err) {
      console.error('[mcp-manager] The denial could not be recorded:', err);
      return notCalledText(tool, CODE_CALL_DENIED, `The user denied the call to MCP tool \`${tool.title || tool.nativeName}\`; it was not sent`);
    }
  }

  async #allowAlways(tool: LegacyMcpTool): Promise<void> {
    const api = this.#host.api();
    try {
      await api?.tools.setPermission({ registrationId: registrationOf(tool.toolId), nativeName: tool.nativeName, permission: 'allow' });
      this.#host.changed?.();
    } catch (err) {
      const { tr } = this.#host;
      this.#host.toast('error', tr('always_allow_failed', { message: errorMessage(err) }), tr('tools_title'));
    }
  }

  /**
   * A call whose outcome is unknown ends the loop, and the user is told
   * what happened: their own Stop after the call was sent (from a server's
   * question to them, or from SillyTavern), or a failure they did not ask for.
   */
  #unknown(err: LegacyMcpOutcomeUnknownError, tool: LegacyMcpTool, stopped: boolean): string {
    const { tr } = this.#host;
    this.#halted = 'unknown';
    this.#stopArmed = true;
    const name = displayNameOf(tool);
    if (stopped) {
      const asked = this.#host.stoppedWhileAsked?.() === true;
      this.#host.toast('warning', tr(asked ? 'outcome_stopped_asking_warning' : 'outcome_stopped_warning', { name }), tr('outcome_stopped_title'), true);
    } else {
      this.#host.toast('warning', `${tr('outcome_unknown_warning', { name })}\n\n${err.message}`, tr('outcome_unknown_title'), true);
    }
    return unknownText(tool, err.code, err.message.slice(err.code.length + 2));
  }
}
