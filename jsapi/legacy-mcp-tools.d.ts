// Declarations of jsapi/legacy-mcp-tools.js, the legacy generation adapter.
// The first three exports are TauriTavern's (tauritavern-reference §6.2);
// the rest are ttmcp's helpers beside them.
import type { LegacyMcpDiagnostic, LegacyMcpTool, McpProgressCallback, McpReadableOptions, McpReadableResult } from './tauritavern-mcp.js';

/** Thrown when a call may have run but its result is unknown: end the generation, save nothing, retry nothing. */
export declare class LegacyMcpOutcomeUnknownError extends Error {
  readonly name: 'LegacyMcpOutcomeUnknownError';
  readonly code: string;
  constructor(code: string, message: string);
}

/** Sends one backend command (the host's safeInvoke by default). */
export type LegacyMcpInvokeCommand = (command: string, args?: unknown, options?: { onProgress?: McpProgressCallback }) => Promise<unknown> | unknown;

export interface LegacyMcpContextOptions {
  /** Default: window.__TAURITAVERN__.invoke.safeInvoke, looked up when a command is sent. */
  invokeCommand?: LegacyMcpInvokeCommand;
  /** Names each call (executionCallId). Default: a v4 UUID (crypto.randomUUID(), or from getRandomValues where a page that is not a secure context lacks it). */
  createExecutionCallId?: () => string;
}

export interface OpenAiFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

/** The part of a chat-completions request the adapter reads and extends. */
export interface LegacyToolData {
  tools?: OpenAiFunctionTool[];
  tool_choice?: unknown;
  [key: string]: unknown;
}

export interface LegacyToolResult {
  /** The pretty-printed call outcome (upstream's), the Tool message's content in TauriTavern. */
  result: string;
  /** True for not_sent, server_error, unsupported_response and isError results. */
  error: boolean;
  /** ttmcp's addition, only when the call asked for it: what the model reads of the outcome. */
  readable?: McpReadableResult;
}

export interface LegacyToolInvokeOptions {
  /** Passed on exactly; an omitted value stays omitted. */
  argumentsJson?: string;
  /**
   * Stop: before the call is sent it rejects with an Error named AbortError
   * (message: the signal's reason when a string, else "Generation was
   * aborted."); after, the backend is asked to stop and its outcome counts.
   */
  signal?: AbortSignal;
}

export interface LegacyResolvedTool {
  /** "<title or nativeName> (<server display name>)". */
  displayName: string;
  formatMessage(): string;
  /**
   * Rejects with LegacyMcpOutcomeUnknownError for outcome_unknown and for a
   * connection lost while the call was in flight (mcp.host_connection_lost).
   */
  invoke(options?: LegacyToolInvokeOptions): Promise<LegacyToolResult>;
}

export interface LegacyMcpRound {
  /** Adds the MCP tools after the local ones; exactly once per round. */
  mergeIntoToolData(toolData: LegacyToolData): void;
  /** Binds the aliases that occur exactly once after the hooks; exactly once, before sending. */
  finalizeAdvertisedTools(generateData: LegacyToolData): void;
  /** null for names that are not this round's MCP aliases. */
  resolveTool(name: string): LegacyResolvedTool | null;
}

/** One root generation's frozen listing. */
export interface LegacyMcpGenerationContext {
  readonly tools: readonly LegacyMcpTool[];
  readonly diagnostics: readonly LegacyMcpDiagnostic[];
  createRound(): LegacyMcpRound;
}

/**
 * Lists the permitted tools once (list_legacy_mcp_tools) and warns each
 * diagnostic on the console. Rejects with "list_legacy_mcp_tools returned
 * an invalid resolution" when the answer is not { tools: [], diagnostics: [] },
 * or with the command's own error.
 */
export declare function createLegacyMcpGenerationContext(options?: LegacyMcpContextOptions): Promise<LegacyMcpGenerationContext>;

/** A context without tools: the fallback when listing failed. */
export declare function createEmptyLegacyMcpGenerationContext(): LegacyMcpGenerationContext;

// ---------------------------------------------------------------- ttmcp helpers

/** A key under which a root may pass its context to its recursive rounds (TauriTavern's hook keeps its own). */
export declare const LEGACY_MCP_GENERATION_CONTEXT: unique symbol;

export interface LegacyMcpPrepareOptions extends LegacyMcpContextOptions {
  toastr?: { warning?(text: string, title?: string): void; error?(text: string, title?: string): void };
  console?: Pick<Console, 'error'>;
}

/**
 * The hook's helper: createLegacyMcpGenerationContext that never rejects.
 * A warning toast when there are diagnostics; on failure an error toast and
 * the empty context.
 */
export declare function prepareLegacyMcpGenerationContext(options?: LegacyMcpPrepareOptions): Promise<LegacyMcpGenerationContext>;

/** What the user answered an Ask prompt (a ttmcp addition). */
export type McpCallApproval = 'once' | 'always' | 'denied';

export interface LegacyMcpToolCall extends LegacyToolInvokeOptions {
  toolId: string;
  /** Sent only when given; 'denied' is recorded and answered not_sent mcp.call_denied_by_user without a call. */
  approval?: McpCallApproval;
  /** Sent only when given: the result then carries `readable`. */
  readable?: McpReadableOptions;
  /** ttmcp's: the call's progress while it runs, passed to invokeCommand as its third argument. */
  onProgress?: McpProgressCallback;
}

/** Executes one call (start, call, cancel on abort) as resolveTool(...).invoke does. */
export declare function invokeLegacyMcpTool(options: LegacyMcpContextOptions, call: LegacyMcpToolCall): Promise<LegacyToolResult>;

export declare function normalizeAliasSegment(text: string, fallback: string): string;
export declare function allocateMcpAlias(serverName: string, toolName: string, used: Set<string>): string;
