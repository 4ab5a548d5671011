// Where an attached resource goes in the prompt (attachments.ts), as the
// chat's metadata and the user's settings keep it.

import { readSetting, writeSetting } from '../../host/settings';
import { MAX_INJECTION_DEPTH } from '../../host/sillytavern-chat';
import { isRecord } from '../../base/values';

export type Position = 'in_chat' | 'before_main' | 'after_main';
export type Role = 'system' | 'user' | 'assistant';

export interface Placement {
  position: Position;
  /** Messages from the end of the chat (in_chat only): 0 after the last message. */
  depth: number;
  role: Role;
}

/** Author's Note's default: in the chat, four messages deep, as a system message. */
export const DEFAULT_PLACEMENT: Placement = { position: 'in_chat', depth: 4, role: 'system' };


export const POSITIONS: readonly Position[] = ['in_chat', 'before_main', 'after_main'];
export const ROLES: readonly Role[] = ['system', 'user', 'assistant'];

/** A placement as stored, or undefined when it is not one. */
export function parsePlacement(v: unknown): Placement | undefined {
  if (!isRecord(v)) return undefined;
  const { position, depth, role } = v;
  if (!POSITIONS.includes(position as Position) || !ROLES.includes(role as Role)) return undefined;
  if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 0 || depth > MAX_INJECTION_DEPTH) return undefined;
  return { position: position as Position, depth, role: role as Role };
}

/** Where the user put their last resource attachment (the next one's default), kept in the extension's settings. */
export function savedPlacement(): Placement {
  return parsePlacement(readSetting('attachPlacement')) ?? DEFAULT_PLACEMENT;
}

export function savePlacement(p: Placement): void {
  writeSetting('attachPlacement', { ...p });
}
