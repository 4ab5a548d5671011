// Which tool set a generation uses (issue 19 item 2): the chat's, else the
// character's (in a group chat, the group's), else the user's default;
// without any, every permitted tool (ttmcp without sets). The choices live
// where SillyTavern users expect them:
//
//   the chat        chat metadata, chatMetadata.mcp_manager.toolSetId
//                   (saved with the chat, saveMetadata)
//   a character     extensionSettings.mcp_manager.toolSets.characters[<avatar file>]
//   a group         extensionSettings.mcp_manager.toolSets.groups[<group id>]
//   the default     extensionSettings.mcp_manager.toolSets.default
//
// (per user, saved with saveSettingsDebounced; the avatar file is the key
// SillyTavern itself keys a character's per-user data by). A binding to a
// set that no longer exists is skipped, as if it were not there.

import type { McpToolSet } from '../../../jsapi/tauritavern-mcp';
import { SETTINGS_KEY } from './settings';
import type { StContext } from './sillytavern';
import { isRecord } from '../base/values';

export type BindingLevel = 'chat' | 'character' | 'group' | 'default';

/** The bindings of the current chat, as read from SillyTavern. */
export interface BindingScope {
  chat?: string;
  /** The chat's character (absent in a group chat, or with none open). */
  character?: { key: string; name: string; toolSetId?: string };
  /** The chat's group, in a group chat. */
  group?: { key: string; name: string; toolSetId?: string };
  default?: string;
  /** Whether a chat is open (the chat's binding can be saved). */
  chatOpen: boolean;
}

export interface AppliedToolSet {
  /** The set in use; absent: every permitted tool. */
  set?: McpToolSet;
  level?: BindingLevel;
  /** Levels whose binding names a set that no longer exists (skipped). */
  missing: BindingLevel[];
}

/** The set id level of scope is bound to, if any. */
export function boundSetId(scope: BindingScope, level: BindingLevel): string | undefined {
  switch (level) {
    case 'chat':
      return scope.chat;
    case 'character':
      return scope.character?.toolSetId;
    case 'group':
      return scope.group?.toolSetId;
    case 'default':
      return scope.default;
  }
}

/** The set a generation in scope uses. */
export function applyBindings(scope: BindingScope, sets: readonly McpToolSet[]): AppliedToolSet {
  const byId = new Map(sets.map((s) => [s.id, s]));
  const missing: BindingLevel[] = [];
  for (const level of ['chat', 'character', 'group', 'default'] as const) {
    const id = boundSetId(scope, level);
    if (id === undefined) continue;
    const set = byId.get(id);
    if (set) return { set, level, missing };
    missing.push(level);
  }
  return { missing };
}

// ---------------------------------------------------------------- SillyTavern's side

/** The members of getContext() the bindings use (SillyTavern 1.18). */
export interface StBindingContext extends StContext {
  chatMetadata?: Record<string, unknown>;
  saveMetadata?: () => unknown;
  saveMetadataDebounced?: () => unknown;
  characterId?: string | number;
  characters?: Array<{ avatar?: string; name?: string }>;
  groupId?: string | null;
  groups?: Array<{ id?: string; name?: string }>;
  getCurrentChatId?: () => string | undefined;
}

interface StoredBindings {
  default?: string;
  characters: Record<string, string>;
  groups: Record<string, string>;
}


function strings(v: unknown): Record<string, string> {
  if (!isRecord(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** extensionSettings.mcp_manager.toolSets, made when create is set. */
function storedBindings(ctx: StBindingContext | undefined, create: boolean): StoredBindings | undefined {
  const all = ctx?.extensionSettings;
  if (!isRecord(all)) return undefined;
  let own = all[SETTINGS_KEY];
  if (!isRecord(own)) {
    if (!create) return undefined;
    own = {};
    all[SETTINGS_KEY] = own;
  }
  const mine = own as Record<string, unknown>;
  let sets = mine.toolSets;
  if (!isRecord(sets)) {
    if (!create) return undefined;
    sets = {};
    mine.toolSets = sets;
  }
  const s = sets as Record<string, unknown>;
  if (create) {
    if (!isRecord(s.characters)) s.characters = {};
    if (!isRecord(s.groups)) s.groups = {};
  }
  return {
    ...(typeof s.default === 'string' ? { default: s.default } : {}),
    characters: create ? (s.characters as Record<string, string>) : strings(s.characters),
    groups: create ? (s.groups as Record<string, string>) : strings(s.groups),
  };
}

function currentCharacter(ctx: StBindingContext): { key: string; name: string } | undefined {
  if (ctx.groupId) return undefined;
  const id = ctx.characterId;
  if (id === undefined || id === null || id === '') return undefined;
  const c = Array.isArray(ctx.characters) ? ctx.characters[Number(id)] : undefined;
  if (typeof c?.avatar !== 'string' || c.avatar === '') return undefined;
  return { key: c.avatar, name: typeof c.name === 'string' ? c.name : c.avatar };
}

function currentGroup(ctx: StBindingContext): { key: string; name: string } | undefined {
  const id = ctx.groupId;
  if (typeof id !== 'string' || id === '') return undefined;
  const g = Array.isArray(ctx.groups) ? ctx.groups.find((x) => x?.id === id) : undefined;
  return { key: id, name: typeof g?.name === 'string' ? g.name : id };
}

function chatBinding(ctx: StBindingContext): string | undefined {
  const own = ctx.chatMetadata?.[SETTINGS_KEY];
  return isRecord(own) && typeof own.toolSetId === 'string' ? own.toolSetId : undefined;
}

/** The bindings of the chat open in SillyTavern now. */
export function readScope(ctx: StBindingContext | undefined): BindingScope {
  if (!ctx) return { chatOpen: false };
  const stored = storedBindings(ctx, false);
  const character = currentCharacter(ctx);
  const group = currentGroup(ctx);
  const chat = chatBinding(ctx);
  const chatId = typeof ctx.getCurrentChatId === 'function' ? ctx.getCurrentChatId() : undefined;
  return {
    chatOpen: isRecord(ctx.chatMetadata) && (typeof ctx.getCurrentChatId !== 'function' || !!chatId),
    ...(chat !== undefined ? { chat } : {}),
    ...(character ? { character: { ...character, ...withId(stored?.characters[character.key]) } } : {}),
    ...(group ? { group: { ...group, ...withId(stored?.groups[group.key]) } } : {}),
    ...(stored?.default !== undefined ? { default: stored.default } : {}),
  };
}

function withId(id: string | undefined): { toolSetId?: string } {
  return id !== undefined ? { toolSetId: id } : {};
}

/**
 * Binds level of the current chat to the set id (undefined: no binding at
 * that level) and saves it; false when this SillyTavern cannot keep it
 * (no chat open, no character, no extension settings).
 */
export async function bindToolSet(ctx: StBindingContext | undefined, level: BindingLevel, id: string | undefined): Promise<boolean> {
  if (!ctx) return false;
  if (level === 'chat') {
    const meta = ctx.chatMetadata;
    if (!isRecord(meta)) return false;
    if (id === undefined) delete meta[SETTINGS_KEY];
    else meta[SETTINGS_KEY] = { toolSetId: id };
    await (ctx.saveMetadata ?? ctx.saveMetadataDebounced)?.();
    return true;
  }
  const key = level === 'character' ? currentCharacter(ctx)?.key : level === 'group' ? currentGroup(ctx)?.key : '';
  if (key === undefined) return false;
  const stored = storedBindings(ctx, true);
  if (!stored) return false;
  const own = (ctx.extensionSettings![SETTINGS_KEY] as Record<string, unknown>).toolSets as Record<string, unknown>;
  if (level === 'default') {
    if (id === undefined) delete own.default;
    else own.default = id;
  } else {
    const map = level === 'character' ? stored.characters : stored.groups;
    if (id === undefined) delete map[key];
    else map[key] = id;
  }
  ctx.saveSettingsDebounced?.();
  return true;
}
