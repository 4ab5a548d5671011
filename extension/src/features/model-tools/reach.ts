// Whether the MCP tools reach the model right now, and if not, why: what
// the Manager shows above the server list.

import type { LegacyMcpInvokeCommand } from '../../../../jsapi/legacy-mcp-tools.js';
import { allocateMcpAlias } from '../../../../jsapi/legacy-mcp-tools.js';
import type { LegacyMcpTool, LegacyMcpToolList, McpToolMode } from '../../../../jsapi/tauritavern-mcp';
import { errorMessage } from '../../base/errors';
import type { AppliedToolSet, BindingLevel } from '../../host/bindings';
import { providerToolLimit } from './limit';
import { readerTokens } from './reader';
import { contextTokens, DEFAULT_SEARCH, planRequest, setSearch, type SearchSettings } from './search';
import type { StToolContext } from '../../host/sillytavern-tools';

/** The tool set a reach was worked out for, and which bindings named a set that is gone. */
export interface ReachSet {
  set?: { name: string; level: BindingLevel };
  missing: BindingLevel[];
}

export type ToolReach =
  /**
   * Offered to the model in the next generation: tools from servers,
   * diagnostics left out; of total listed, leftOut over the provider's
   * limit (which counts local tools of SillyTavern's own).
   */
  | ({
      kind: 'ready';
      tools: number;
      servers: number;
      diagnostics: number;
      total: number;
      leftOut: number;
      limit?: number;
      local: number;
      /**
       * Issue 31: how the tools reach the model (search: tools is what the
       * model can find, request what the request carries), the mode chosen
       * (automatic decides per request), how many of ttmcp's tool
       * definitions the next request carries and their estimated tokens.
       */
      search: boolean;
      mode: McpToolMode;
      request: number;
      tokens: number;
      maxTools: number;
      contextPercent: number;
      context?: number;
    } & ReachSet)
  /** The chat's tool set offers none of its tools now (Off, paused, removed). */
  | ({ kind: 'set_offers_nothing'; diagnostics: number } & ReachSet)
  /** TauriTavern: its own Generate hooks offer the tools. */
  | { kind: 'host_offers_tools' }
  /** No registerFunctionTool (SillyTavern 1.12.6 and older). */
  | { kind: 'too_old' }
  | { kind: 'not_chat_completion'; api: string }
  | { kind: 'function_calling_off' }
  /** A Prompt Post-Processing mode that removes tools (SillyTavern's "no tools" modes: merge, semi, strict, single). */
  | { kind: 'post_processing_without_tools'; mode: string }
  | { kind: 'source_without_tools'; source: string }
  /** Function calling off, or a source without tools (this SillyTavern does not say which). */
  | { kind: 'tool_calling_unsupported' }
  | { kind: 'backend_down'; message: string }
  /** No Ask or Allow tool on an active server (with a cached catalog). */
  | { kind: 'nothing_allowed'; diagnostics: number };

export interface ReachInputs {
  context: StToolContext | undefined;
  isTtmcp: boolean;
  connected: boolean;
  invokeCommand: LegacyMcpInvokeCommand | undefined;
  /** The tool set the chat open now uses (absent: every permitted tool). */
  appliedSet?: () => Promise<AppliedToolSet>;
  /** SillyTavern's own tools a request may carry (the limit counts them). */
  localTools?: () => number;
  /** The default's search settings (no set applies). */
  defaultSearch?: () => SearchSettings;
}

/**
 * The Prompt Post-Processing modes that keep tools: SillyTavern's isToolCallingSupported refuses
 * every other one (tool-calling.js: NONE, MERGE_TOOLS, SEMI_TOOLS, STRICT_TOOLS), whatever the
 * source, so the source is not the reason then.
 */
const TOOL_POST_PROCESSING: readonly string[] = ['', 'merge_tools', 'semi_tools', 'strict_tools'];

/** Works out the reach; lists the tools (cached catalogs only) when SillyTavern can take them. */
export async function toolReach(inputs: ReachInputs): Promise<ToolReach> {
  const ctx = inputs.context;
  if (!inputs.isTtmcp) return { kind: 'host_offers_tools' };
  if (!ctx || typeof ctx.registerFunctionTool !== 'function') return { kind: 'too_old' };
  if (typeof ctx.mainApi === 'string' && ctx.mainApi !== 'openai') return { kind: 'not_chat_completion', api: ctx.mainApi };
  if (typeof ctx.isToolCallingSupported === 'function' && !ctx.isToolCallingSupported()) {
    const settings = ctx.chatCompletionSettings;
    if (settings?.function_calling === false) return { kind: 'function_calling_off' };
    const mode = settings?.custom_prompt_post_processing;
    if (typeof mode === 'string' && !TOOL_POST_PROCESSING.includes(mode)) return { kind: 'post_processing_without_tools', mode };
    if (settings && typeof settings.chat_completion_source === 'string') {
      return { kind: 'source_without_tools', source: settings.chat_completion_source };
    }
    return { kind: 'tool_calling_unsupported' };
  }
  if (!inputs.connected || !inputs.invokeCommand) return { kind: 'backend_down', message: '' };
  let list: LegacyMcpToolList;
  let applied: AppliedToolSet = { missing: [] };
  try {
    applied = (await inputs.appliedSet?.()) ?? applied;
    const args = applied.set ? { dto: { toolSetId: applied.set.id } } : undefined;
    list = (await inputs.invokeCommand('list_legacy_mcp_tools', args)) as LegacyMcpToolList;
  } catch (err) {
    return { kind: 'backend_down', message: errorMessage(err) };
  }
  const reachSet: ReachSet = {
    missing: applied.missing,
    ...(applied.set && applied.level ? { set: { name: applied.set.name, level: applied.level } } : {}),
  };
  const tools = Array.isArray(list?.tools) ? list.tools : [];
  const diagnostics = Array.isArray(list?.diagnostics) ? list.diagnostics.length : 0;
  if (tools.length === 0) return applied.set ? { kind: 'set_offers_nothing', diagnostics, ...reachSet } : { kind: 'nothing_allowed', diagnostics };
  const local = inputs.localTools?.() ?? 0;
  // the bridge's plan for the next request (its aliases avoid the local names; here only their count is known)
  const taken = new Set<string>();
  const catalog = tools.map((t): [string, LegacyMcpTool] => [allocateMcpAlias(t.serverDisplayName, t.nativeName, taken), t]);
  const settings = applied.set ? setSearch(applied.set) : (inputs.defaultSearch?.() ?? DEFAULT_SEARCH);
  const limit = providerToolLimit(ctx);
  const context = contextTokens(ctx);
  const plan = planRequest(catalog, { settings, limit, local, reader: applied.set?.readerTool ?? true, readerTokens: readerTokens(), context });
  const reachable = plan.search ? tools : plan.offered.map(([, t]) => t);
  const servers = new Set(reachable.map((t) => t.toolId.slice(0, t.toolId.indexOf(':')))).size;
  return {
    kind: 'ready',
    tools: reachable.length,
    servers,
    diagnostics,
    total: tools.length,
    leftOut: plan.leftOut.length,
    local,
    ...(limit !== undefined ? { limit } : {}),
    search: plan.search,
    mode: settings.mode,
    request: plan.count,
    tokens: plan.tokens,
    maxTools: settings.maxTools,
    contextPercent: settings.contextPercent,
    ...(context !== undefined ? { context } : {}),
    ...reachSet,
  };
}
