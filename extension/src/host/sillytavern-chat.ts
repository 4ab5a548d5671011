// What a SillyTavern page offers for resources and prompts in its chats, as
// this extension uses it (sillytavern-host-notes §8, SillyTavern 1.18.0
// st-context.js): extension prompts (setExtensionPrompt, the live
// extensionPrompts object, which clearChat replaces on every chat change),
// the chat's metadata, the slash-command classes, and the event bus. Every
// member is optional: an older SillyTavern, or a page without it, lacks
// some or all of them, and the parts that need them are not offered there.

import type { StBindingContext } from './bindings';
import { stToolContext, type StEventSource } from './sillytavern-tools';

/** script.js extension_prompt_types. */
export const EXTENSION_PROMPT_TYPES = { NONE: -1, IN_PROMPT: 0, IN_CHAT: 1, BEFORE_PROMPT: 2 } as const;
/** script.js extension_prompt_roles. */
export const EXTENSION_PROMPT_ROLES = { SYSTEM: 0, USER: 1, ASSISTANT: 2 } as const;
/** script.js MAX_INJECTION_DEPTH. */
export const MAX_INJECTION_DEPTH = 10000;

export interface StExtensionPrompt {
  value: string;
  position: number;
  depth: number;
  scan: boolean;
  role: number;
}

/** A slash command's named argument as the autocomplete reads it (SlashCommandNamedArgument). */
export type StEnumProvider = (executor: StSlashExecutor, scope: unknown) => unknown[];

/** The parsed command the autocomplete passes to an enum provider (SlashCommandExecutor). */
export interface StSlashExecutor {
  namedArgumentList?: Array<{ name?: string; value?: unknown }>;
}

export interface StSlashCommandClasses {
  SlashCommandParser: { addCommandObject(command: unknown): void; commands?: Record<string, unknown> };
  SlashCommand: { fromProps(props: Record<string, unknown>): unknown };
  SlashCommandNamedArgument: { fromProps(props: Record<string, unknown>): unknown };
  SlashCommandEnumValue: new (value: string, description?: string | null, type?: string | null, typeIcon?: string | null) => unknown;
  ARGUMENT_TYPE: Record<string, string>;
}

export interface StChatContext extends StBindingContext {
  setExtensionPrompt?(key: string, value: string, position: number, depth: number, scan?: boolean, role?: number): void;
  extensionPrompts?: Record<string, StExtensionPrompt>;
  SlashCommandParser?: StSlashCommandClasses['SlashCommandParser'];
  SlashCommand?: StSlashCommandClasses['SlashCommand'];
  SlashCommandNamedArgument?: StSlashCommandClasses['SlashCommandNamedArgument'];
  SlashCommandEnumValue?: StSlashCommandClasses['SlashCommandEnumValue'];
  ARGUMENT_TYPE?: Record<string, string>;
  eventSource?: StEventSource;
}

/** The current context with its chat members. */
export function stChatContext(): StChatContext | undefined {
  return stToolContext() as StChatContext | undefined;
}

/** The slash-command classes, when this SillyTavern has all of them (1.12.7 and later). */
export function slashCommandClasses(ctx: StChatContext | undefined): StSlashCommandClasses | undefined {
  if (!ctx) return undefined;
  const { SlashCommandParser, SlashCommand, SlashCommandNamedArgument, SlashCommandEnumValue, ARGUMENT_TYPE } = ctx;
  if (
    typeof SlashCommandParser?.addCommandObject !== 'function' ||
    typeof SlashCommand?.fromProps !== 'function' ||
    typeof SlashCommandNamedArgument?.fromProps !== 'function' ||
    typeof SlashCommandEnumValue !== 'function' ||
    !ARGUMENT_TYPE
  ) {
    return undefined;
  }
  return { SlashCommandParser, SlashCommand, SlashCommandNamedArgument, SlashCommandEnumValue, ARGUMENT_TYPE };
}

/** The open chat's id; undefined when none is open (or the page cannot say). */
export function currentChatId(ctx: StChatContext | undefined): string | undefined {
  const id = typeof ctx?.getCurrentChatId === 'function' ? ctx.getCurrentChatId() : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
