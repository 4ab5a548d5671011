// Whether the MCP tools reach the model right now, and if not, why: what
// the Manager shows above the server list.

import type { LegacyMcpInvokeCommand } from '../../../../jsapi/legacy-mcp-tools.js';
import type { LegacyMcpToolList } from '../../../../jsapi/tauritavern-mcp';
import { errorMessage } from '../../base/errors';
import type { AppliedToolSet, BindingLevel } from '../../host/bindings';
import { fitToolLimit, providerToolLimit } from './limit';
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
  | ({ kind: 'ready'; tools: number; servers: number; diagnostics: number; total: number; leftOut: number; limit?: number; local: number } & ReachSet)
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
  const fit = fitToolLimit(tools, { limit: providerToolLimit(ctx), local: inputs.localTools?.() ?? 0, reader: applied.set?.readerTool ?? true });
  const servers = new Set(fit.offered.map((t) => t.toolId.slice(0, t.toolId.indexOf(':')))).size;
  return {
    kind: 'ready',
    tools: fit.offered.length,
    servers,
    diagnostics,
    total: tools.length,
    leftOut: fit.leftOut.length,
    local: fit.local,
    ...(fit.limit !== undefined ? { limit: fit.limit } : {}),
    ...reachSet,
  };
}
