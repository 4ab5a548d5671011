// What a SillyTavern page offers for function tools, as this extension uses
// it (sillytavern-host-notes §2.6, §5): the registry through getContext(),
// the Chat Completion settings that gate tool calling, the event bus, and
// stopGeneration. Every member is optional: SillyTavern 1.12.6 has no
// registerFunctionTool, the first build with it exposes no ToolManager or
// chatCompletionSettings, and a page without SillyTavern has nothing.

import { stContext, type StContext } from './sillytavern';

/** One tool as registerFunctionTool takes it. */
export interface StFunctionTool {
  name: string;
  displayName?: string;
  description: string;
  parameters: unknown;
  /** Gets the model's arguments, JSON.parse'd by SillyTavern; a non-string result is JSON-stringified. */
  action(args: unknown): unknown;
  formatMessage?(args: unknown): string | Promise<string>;
  /** Asked before every request: false leaves the tool out of it. */
  shouldRegister?(): boolean | Promise<boolean>;
}

/** A registered tool as ToolManager.tools lists it (its name through toFunctionOpenAI in SillyTavern). */
export interface StToolDefinition {
  name?: string;
  toFunctionOpenAI?(): { function?: { name?: string } };
}

export interface StEventSource {
  on(event: string, listener: (...args: never[]) => unknown): void;
  removeListener?(event: string, listener: (...args: never[]) => unknown): void;
}

/** The event names this extension listens to (SillyTavern's exact strings). */
export const ST_EVENTS = {
  GENERATION_STARTED: 'generation_started',
  GENERATION_AFTER_COMMANDS: 'GENERATION_AFTER_COMMANDS',
  GENERATION_STOPPED: 'generation_stopped',
  CHAT_COMPLETION_SETTINGS_READY: 'chat_completion_settings_ready',
  TOOL_CALLS_PERFORMED: 'tool_calls_performed',
  TOOL_CALLS_RENDERED: 'tool_calls_rendered',
  MAIN_API_CHANGED: 'main_api_changed',
  CHATCOMPLETION_SOURCE_CHANGED: 'chatcompletion_source_changed',
  SETTINGS_UPDATED: 'settings_updated',
  CHAT_CHANGED: 'chat_id_changed',
} as const;

export interface StToolContext extends StContext {
  registerFunctionTool?(tool: StFunctionTool): void;
  unregisterFunctionTool?(name: string): void;
  isToolCallingSupported?(): boolean;
  canPerformToolCalls?(type: string): boolean;
  ToolManager?: { tools?: StToolDefinition[] };
  chatCompletionSettings?: { function_calling?: boolean; chat_completion_source?: string; custom_prompt_post_processing?: string };
  mainApi?: string;
  eventSource?: StEventSource;
  eventTypes?: Record<string, string>;
  event_types?: Record<string, string>;
  stopGeneration?(): boolean | void;
}

/** The current context with its tool-calling members. */
export function stToolContext(): StToolContext | undefined {
  return stContext() as StToolContext | undefined;
}

/** The name of a registered tool. */
export function toolName(t: StToolDefinition): string | undefined {
  try {
    const fn = t.toFunctionOpenAI?.().function?.name;
    if (typeof fn === 'string') return fn;
  } catch {
    // a definition that cannot describe itself has no name we can use
  }
  return typeof t.name === 'string' ? t.name : undefined;
}
