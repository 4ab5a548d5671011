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
// A call: the permission is read again (Ask prompts, Allow runs; the
// backend refuses Off and paused servers itself), the arguments go on as
// SillyTavern parsed them, and the outcome, pretty JSON, is the tool
// result. An unknown outcome (the tool may have run) ends the tool loop:
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
} from '../../../jsapi/legacy-mcp-tools.js';
import type { LegacyMcpTool, McpToolPermission, TtmcpMcpApi } from '../../../jsapi/tauritavern-mcp';
import type { Tr } from '../texts';
import { errorMessage } from '../ui/errors';
import type { ApprovalAnswer, ApprovalRequest } from './approval';
import { ST_EVENTS, toolName, type StFunctionTool, type StToolContext } from './sillytavern-tools';

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
  tr: Tr;
}

interface Binding {
  tool: LegacyMcpTool;
  /** What was registered under the alias, to skip registering it again unchanged. */
  signature: string;
}

function pretty(outcome: Record<string, unknown>): string {
  return JSON.stringify(outcome, null, 2);
}

/** text as a sentence: with a full stop unless it already ends one (the backend's messages have none). */
export function sentence(text: string): string {
  const t = text.trimEnd();
  return t === '' || /[.!?…]$/.test(t) ? t : `${t}.`;
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
  #root: LegacyMcpGenerationContext | null = null;
  /** The current round: alias → tool. */
  #round = new Map<string, Binding>();
  /** Aliases registered with SillyTavern. */
  #registered = new Set<string>();
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
    on(ST_EVENTS.TOOL_CALLS_PERFORMED, () => this.onBatchSaved());
    on(ST_EVENTS.TOOL_CALLS_RENDERED, () => this.onBatchSaved());
    return true;
  }

  /** Stops listening and unregisters every alias. */
  uninstall(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#unregister(new Set());
    this.#round.clear();
  }

  /** The aliases offered in the current round (for the Manager and tests). */
  get offered(): string[] {
    return [...this.#round.keys()];
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
      this.#toldUnavailable = false;
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

  /** Lists the tools for a new root; null (after telling the user) when they cannot be listed. */
  async #listRoot(): Promise<LegacyMcpGenerationContext | null> {
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
      const root = await createLegacyMcpGenerationContext({ invokeCommand });
      if (root.diagnostics.length > 0) this.#host.toast('warning', tr('tools_partly_unavailable_body'), tr('tools_unavailable_title'));
      return root;
    } catch (err) {
      console.error('[mcp-manager] MCP tools could not be listed for this generation:', err);
      this.#unavailable();
      return null;
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
    const round = new Map<string, Binding>();
    for (const tool of this.#root?.tools ?? []) {
      const alias = allocateMcpAlias(tool.serverDisplayName, tool.nativeName, used);
      const description = tool.description || tool.title || tool.nativeName;
      round.set(alias, { tool, signature: `${tool.toolId}\n${description}\n${JSON.stringify(tool.inputSchema)}` });
    }
    const ctx = this.#host.context();
    for (const [alias, binding] of round) {
      if (this.#registered.has(alias) && this.#round.get(alias)?.signature === binding.signature) continue;
      ctx?.registerFunctionTool?.(this.#definition(alias, binding.tool));
      this.#registered.add(alias);
    }
    this.#round = round;
    this.#unregister(new Set(round.keys()));
  }

  #unregister(keep: Set<string>): void {
    const ctx = this.#host.context();
    for (const alias of this.#registered) {
      if (keep.has(alias)) continue;
      ctx?.unregisterFunctionTool?.(alias);
      this.#registered.delete(alias);
    }
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
      return pretty({ outcome: 'not_sent', code: CODE_TOOL_NOT_OFFERED, message: `MCP tool alias "${alias}" is not offered in this round` });
    }
    if (this.#halted === 'unknown') {
      return pretty({ outcome: 'not_sent', code: CODE_CALL_SKIPPED, message: 'Not called: an earlier MCP tool call in this batch may have run, but its result is unknown; the tool loop ends here.' });
    }
    if (this.#halted === 'stopped') {
      return pretty({ outcome: 'not_sent', code: CODE_CALL_CANCELLED, message: 'Not called: the generation was stopped.' });
    }
    const invokeCommand = this.#host.invokeCommand();
    if (!invokeCommand) throw new Error('The ttmcp backend is not connected');
    const argumentsJson = JSON.stringify(args ?? {});
    const controller = new AbortController();
    this.#inflight.add(controller);
    try {
      let approval: ApprovalAnswer | undefined;
      if ((await this.#permission(tool)) === 'ask') {
        approval = await this.#host.askApproval(
          { serverDisplayName: tool.serverDisplayName, toolTitle: tool.title || tool.nativeName, nativeName: tool.nativeName, argumentsJson },
          controller.signal,
        );
        if (approval === 'denied') return await this.#deny(invokeCommand, tool, argumentsJson, controller.signal.aborted);
        if (approval === 'always') await this.#allowAlways(tool);
      }
      const { result } = await invokeLegacyMcpTool(
        { invokeCommand },
        { toolId: tool.toolId, argumentsJson, signal: controller.signal, ...(approval ? { approval } : {}) },
      );
      return result;
    } catch (err) {
      if (err instanceof LegacyMcpOutcomeUnknownError) return this.#unknown(err, tool);
      if ((err as { name?: unknown })?.name === 'AbortError') {
        this.#halted ??= 'stopped';
        this.#stopArmed = true;
        return pretty({ outcome: 'not_sent', code: CODE_CALL_CANCELLED, message: 'The generation was stopped before the tool request was sent.' });
      }
      throw err;
    } finally {
      this.#inflight.delete(controller);
    }
  }

  /** A denial: recorded by the backend (never a call), and the model is told. */
  async #deny(invokeCommand: LegacyMcpInvokeCommand, tool: LegacyMcpTool, argumentsJson: string, stopped: boolean): Promise<string> {
    if (stopped) {
      this.#halted ??= 'stopped';
      this.#stopArmed = true;
    }
    const denied = { outcome: 'not_sent', code: CODE_CALL_DENIED, message: `The user denied the call to MCP tool ${displayNameOf(tool)}; it was not sent.` };
    try {
      const { result } = await invokeLegacyMcpTool({ invokeCommand }, { toolId: tool.toolId, argumentsJson, approval: 'denied' });
      // The backend names the tool by its id (mcp/<uuid>:<name>); the chat
      // shows the result, so it names the tool as the Ask prompt did.
      const outcome = JSON.parse(result) as { code?: unknown };
      return outcome.code === CODE_CALL_DENIED ? pretty({ ...outcome, message: denied.message }) : result;
    } catch (err) {
      console.error('[mcp-manager] The denial could not be recorded:', err);
      return pretty(denied);
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

  #unknown(err: LegacyMcpOutcomeUnknownError, tool: LegacyMcpTool): string {
    const { tr } = this.#host;
    this.#halted = 'unknown';
    this.#stopArmed = true;
    this.#host.toast('warning', `${tr('outcome_unknown_warning', { name: displayNameOf(tool) })}\n\n${err.message}`, tr('outcome_unknown_title'), true);
    return pretty({
      outcome: 'outcome_unknown',
      code: err.code,
      message: `${sentence(err.message.slice(err.code.length + 2))} The tool may have run; ttmcp did not retry it, and the tool loop ends here.`,
    });
  }
}
