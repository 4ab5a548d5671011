// Declarations of jsapi/legacy-mcp-tools.js, the legacy generation adapter.
import type { LegacyMcpTool } from './tauritavern-mcp.js';

/** The option key under which a root generation passes its context to its recursive rounds. */
export declare const LEGACY_MCP_GENERATION_CONTEXT: unique symbol;

/** Thrown when a call may have run but its result is unknown: end the generation. */
export declare class LegacyMcpOutcomeUnknownError extends Error {
  readonly name: 'LegacyMcpOutcomeUnknownError';
  readonly code: string;
  constructor(code: string, message: string);
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
  /** The pretty-printed call outcome, the Tool message's content. */
  result: string;
  /** True for not_sent, server_error, unsupported_response and isError results. */
  error: boolean;
}

export interface LegacyResolvedTool {
  displayName: string;
  formatMessage(): string;
  invoke(options: { argumentsJson: string; signal?: AbortSignal }): Promise<LegacyToolResult>;
}

export interface LegacyMcpRound {
  /** Adds the MCP tools after the local ones; exactly once per round. */
  mergeIntoToolData(toolData: LegacyToolData): void;
  /** Binds the aliases that occur exactly once after the hooks; exactly once, before sending. */
  finalizeAdvertisedTools(generateData: LegacyToolData): void;
  /** null for names that are not this round's MCP aliases. */
  resolveTool(name: string): LegacyResolvedTool | null;
}

export interface LegacyMcpGenerationContext {
  readonly descriptors: readonly LegacyMcpTool[];
  createRound(): LegacyMcpRound;
}

export interface LegacyMcpHost {
  safeInvoke?: (command: string, args?: unknown) => Promise<unknown>;
  console?: Pick<Console, 'warn' | 'error' | 'debug'>;
  toastr?: { warning?(text: string, title?: string): void; error?(text: string, title?: string): void };
}

/** Lists the permitted MCP tools once for a root generation; never rejects. */
export declare function prepareLegacyMcpGenerationContext(host?: LegacyMcpHost): Promise<LegacyMcpGenerationContext>;
export declare function normalizeAliasSegment(text: string, fallback: string): string;
export declare function allocateMcpAlias(serverName: string, toolName: string, used: Set<string>): string;
