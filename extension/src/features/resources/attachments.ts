// Resources attached to a SillyTavern chat (issue 18 item 5). Nothing
// enters a prompt unless the user attached it: an attachment is a snapshot
// of a resource's text, taken when the user attached it (or pressed
// Refresh), kept in the chat's metadata (chatMetadata.mcp_manager_attachments,
// saved with the chat by saveMetadata) and never re-read by itself. It is
// given to SillyTavern as an extension prompt (setExtensionPrompt), the
// mechanism Author's Note and the Data Bank use, at the place the user
// chose: in the chat at a depth (with a role), or before or after the main
// prompt. SillyTavern empties its extension prompts whenever a chat is
// opened (clearChat), so the open chat's attachments are given again on
// CHAT_CHANGED, and on every GENERATION_STARTED as a safety net; a removed
// attachment's prompt is removed at once.
//
// The cap: a chat's attachments hold at most ATTACHMENT_CHAR_CAP characters
// of text together (UTF-16 code units, as SillyTavern counts string
// lengths); an attachment or a refresh that would go over is refused,
// whole, with the count — nothing is cut. Binary contents are not text: a
// read's images or other blobs are listed as not attached.

import type { McpResourceContentsResponse, McpResourceReadOutcome } from '../../../../jsapi/tauritavern-mcp';
import type { Tr } from '../../base/texts';
import { readScope } from '../../host/bindings';
import { ST_EVENTS } from '../../host/sillytavern-tools';
import { contentText } from '../../ui/content-text';
import { requestFailure } from './failure';
import { parsePlacement, type Placement, type Position, type Role } from './placement';
import { currentChatId, EXTENSION_PROMPT_ROLES, EXTENSION_PROMPT_TYPES, type StChatContext } from '../../host/sillytavern-chat';
import { isRecord, newUUID } from '../../base/values';

export { DEFAULT_PLACEMENT, parsePlacement, type Placement, type Position, type Role } from './placement';

/** Where the chat's metadata keeps its attachments. */
export const ATTACHMENTS_KEY = 'mcp_manager_attachments';
/** The characters of text a chat's attachments hold together, at most. */
export const ATTACHMENT_CHAR_CAP = 100_000;
/** The extension prompts' keys: this prefix and the attachment's place in the list (000, 001, …). */
export const PROMPT_KEY_PREFIX = 'mcp_manager_resource_';

/** One text content of the read. */
export interface AttachmentPart {
  uri: string;
  mimeType?: string;
  text: string;
}

/** A content of the read that is not text (not attached). */
export interface SkippedPart {
  uri: string;
  mimeType?: string;
  size: number;
}

export interface ChatAttachment {
  id: string;
  registrationId: string;
  /** The server's name when attached (shown; the registration id finds it). */
  serverName: string;
  /** The URI read. */
  uri: string;
  name: string;
  parts: AttachmentPart[];
  skipped: SkippedPart[];
  placement: Placement;
  /** RFC 3339. */
  attachedAt: string;
  /** When the snapshot was read (attached or refreshed), RFC 3339. */
  readAt: string;
}

/** What a read gives an attachment. */
export interface Snapshot {
  registrationId: string;
  serverName: string;
  uri: string;
  name: string;
  parts: AttachmentPart[];
  skipped: SkippedPart[];
}

/** A refusal in the user's words (attach, refresh, placement). */
export class AttachmentError extends Error {}


function str(v: unknown): v is string {
  return typeof v === 'string';
}

function parsePart(v: unknown): AttachmentPart | undefined {
  if (!isRecord(v) || !str(v.uri) || !str(v.text)) return undefined;
  return { uri: v.uri, text: v.text, ...(str(v.mimeType) ? { mimeType: v.mimeType } : {}) };
}

function parseSkipped(v: unknown): SkippedPart | undefined {
  if (!isRecord(v) || !str(v.uri) || typeof v.size !== 'number') return undefined;
  return { uri: v.uri, size: v.size, ...(str(v.mimeType) ? { mimeType: v.mimeType } : {}) };
}

/** An attachment as stored, or undefined (a damaged entry is ignored, never given to the model). */
function parseAttachment(v: unknown): ChatAttachment | undefined {
  if (!isRecord(v)) return undefined;
  const { id, registrationId, serverName, uri, name, attachedAt, readAt } = v;
  const placement = parsePlacement(v.placement);
  if (!str(id) || !str(registrationId) || !str(serverName) || !str(uri) || !str(name) || !str(attachedAt) || !str(readAt) || !placement) {
    return undefined;
  }
  if (!Array.isArray(v.parts)) return undefined;
  const parts = v.parts.map(parsePart);
  if (parts.some((p) => p === undefined)) return undefined;
  const skipped = (Array.isArray(v.skipped) ? v.skipped : []).map(parseSkipped).filter((s) => s !== undefined);
  return { id, registrationId, serverName, uri, name, parts: parts as AttachmentPart[], skipped, placement, attachedAt, readAt };
}

/** The attachments of the chat open in ctx, in the user's order. */
export function readAttachments(ctx: StChatContext | undefined): ChatAttachment[] {
  const own = ctx?.chatMetadata?.[ATTACHMENTS_KEY];
  if (!isRecord(own) || !Array.isArray(own.items)) return [];
  return own.items.map(parseAttachment).filter((a) => a !== undefined);
}

/** The characters an attachment gives the model (its parts' text). */
export function attachmentChars(a: Pick<ChatAttachment, 'parts'>): number {
  return a.parts.reduce((n, p) => n + p.text.length, 0);
}

export function totalChars(list: readonly ChatAttachment[]): number {
  return list.reduce((n, a) => n + attachmentChars(a), 0);
}

/** The snapshot of a read: its text contents, and the others as skipped. */
export function snapshotOf(
  response: McpResourceContentsResponse,
  source: { registrationId: string; serverName: string; name: string },
): Snapshot {
  const parts: AttachmentPart[] = [];
  const skipped: SkippedPart[] = [];
  for (const c of response.contents) {
    const text = contentText(c);
    const mime = c.mimeType !== undefined ? { mimeType: c.mimeType } : {};
    if (text !== undefined) parts.push({ uri: c.uri, text, ...mime });
    else skipped.push({ uri: c.uri, size: c.size, ...mime });
  }
  return { ...source, uri: response.uri, parts, skipped };
}

function attr(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * What the model reads of an attachment: each text part in a tag naming the
 * resource, its server and its URI, so the model can tell it from the
 * chat and cite it.
 */
export function injectionText(a: Pick<ChatAttachment, 'name' | 'serverName' | 'parts'>): string {
  return a.parts
    .map((p) => `<mcp_resource name="${attr(a.name)}" server="${attr(a.serverName)}" uri="${attr(p.uri)}">\n${p.text}\n</mcp_resource>`)
    .join('\n');
}

const POSITION_TYPES: Record<Position, number> = {
  in_chat: EXTENSION_PROMPT_TYPES.IN_CHAT,
  before_main: EXTENSION_PROMPT_TYPES.BEFORE_PROMPT,
  after_main: EXTENSION_PROMPT_TYPES.IN_PROMPT,
};

const ROLE_IDS: Record<Role, number> = {
  system: EXTENSION_PROMPT_ROLES.SYSTEM,
  user: EXTENSION_PROMPT_ROLES.USER,
  assistant: EXTENSION_PROMPT_ROLES.ASSISTANT,
};

/** The extension prompt key of the attachment at index i. */
export function promptKey(i: number): string {
  return PROMPT_KEY_PREFIX + String(i).padStart(3, '0');
}

/** Keys this page gave SillyTavern (an older SillyTavern has no extensionPrompts to look them up in). */
const given = new Set<string>();

/**
 * Gives SillyTavern the open chat's attachments as extension prompts, and
 * removes the prompts of attachments no longer there (or of another chat).
 */
export function applyAttachments(ctx: StChatContext | undefined): void {
  const set = ctx?.setExtensionPrompt;
  if (!ctx || typeof set !== 'function') return;
  const list = readAttachments(ctx);
  const prompts = isRecord(ctx.extensionPrompts) ? ctx.extensionPrompts : undefined;
  const stale = new Set([...given, ...Object.keys(prompts ?? {}).filter((k) => k.startsWith(PROMPT_KEY_PREFIX))]);
  // SillyTavern puts each "before the main prompt" extension prompt at the
  // start of the prompt, one after another in the order of its keys (openai.js,
  // 'start'): the one given last is read first. So those are given in
  // reverse, and every key afresh (a key keeps the place it was first given
  // at), for the model to read them in the order they were attached.
  if (prompts) for (const key of stale) delete prompts[key];
  const indexes = list.map((_, i) => i);
  const first = (i: number) => list[i]!.placement.position === 'before_main';
  for (const i of [...indexes.filter((i) => !first(i)), ...indexes.filter(first).reverse()]) {
    const a = list[i]!;
    const key = promptKey(i);
    const { position, depth, role } = a.placement;
    set.call(ctx, key, injectionText(a), POSITION_TYPES[position], position === 'in_chat' ? depth : 0, false, ROLE_IDS[role]);
    given.add(key);
    stale.delete(key);
  }
  for (const key of stale) {
    given.delete(key);
    // SillyTavern deletes stale entries itself (flushWIInjections); where it cannot be reached, an empty value is skipped by every reader
    if (prompts) delete prompts[key];
    else set.call(ctx, key, '', EXTENSION_PROMPT_TYPES.NONE, 0, false, EXTENSION_PROMPT_ROLES.SYSTEM);
  }
}



/** The chat a dialog works on: its id when opened (a change since refuses the write). */
export interface ChatRef {
  chatId: string;
  /** The character's or group's name, for the user. */
  name: string;
}

/** What the attachments need from the page. */
export interface AttachmentsHost {
  context(): StChatContext | undefined;
  /** Reads a resource (api.mcp.resources.read). */
  read(registrationId: string, uri: string): Promise<McpResourceReadOutcome>;
  now?(): Date;
  tr: Tr;
}

/**
 * The open chat's attachments, as the dialogs and the wand menu use them.
 * Each change is saved with the chat and given to SillyTavern at once;
 * listeners hear of every change and of another chat being opened.
 */
export class ChatAttachments {
  readonly #host: AttachmentsHost;
  readonly #events = new EventTarget();
  #off: Array<() => void> = [];

  constructor(host: AttachmentsHost) {
    this.#host = host;
  }

  /** Whether this SillyTavern can take attachments (extension prompts and chat metadata). */
  supported(): boolean {
    const ctx = this.#host.context();
    return typeof ctx?.setExtensionPrompt === 'function' && typeof (ctx.saveMetadata ?? ctx.saveMetadataDebounced) === 'function';
  }

  /** Listens to SillyTavern: the open chat's attachments are given again whenever it opens a chat or generates. */
  install(): void {
    const events = this.#host.context()?.eventSource;
    if (!events) return;
    const onChat = () => {
      applyAttachments(this.#host.context());
      this.#changed();
    };
    const onGeneration = () => applyAttachments(this.#host.context());
    events.on(ST_EVENTS.CHAT_CHANGED, onChat);
    events.on(ST_EVENTS.GENERATION_STARTED, onGeneration);
    this.#off.push(() => events.removeListener?.(ST_EVENTS.CHAT_CHANGED, onChat));
    this.#off.push(() => events.removeListener?.(ST_EVENTS.GENERATION_STARTED, onGeneration));
    applyAttachments(this.#host.context());
  }

  uninstall(): void {
    for (const off of this.#off.splice(0)) off();
  }

  /** Calls fn on every change; returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.#events.addEventListener('change', fn);
    return () => this.#events.removeEventListener('change', fn);
  }

  #changed(): void {
    this.#events.dispatchEvent(new Event('change'));
  }

  /** The chat open now; undefined when none is (nothing can be attached). */
  chat(): ChatRef | undefined {
    const ctx = this.#host.context();
    const chatId = currentChatId(ctx);
    if (!ctx || chatId === undefined || !isRecord(ctx.chatMetadata)) return undefined;
    const scope = readScope(ctx);
    return { chatId, name: scope.group?.name ?? scope.character?.name ?? chatId };
  }

  list(): ChatAttachment[] {
    return readAttachments(this.#host.context());
  }

  /** The context of chat, refusing when another chat is open now. */
  #contextOf(chat: ChatRef): StChatContext {
    const ctx = this.#host.context();
    if (!ctx || currentChatId(ctx) !== chat.chatId || !isRecord(ctx.chatMetadata)) {
      throw new AttachmentError(this.#host.tr('attach_chat_changed', { chat: chat.name }));
    }
    return ctx;
  }

  async #write(ctx: StChatContext, items: ChatAttachment[]): Promise<void> {
    const meta = ctx.chatMetadata!;
    if (items.length === 0) delete meta[ATTACHMENTS_KEY];
    else meta[ATTACHMENTS_KEY] = { version: 1, items };
    applyAttachments(ctx);
    this.#changed();
    await (ctx.saveMetadata ?? ctx.saveMetadataDebounced)?.();
  }

  #checkCap(others: readonly ChatAttachment[], snapshot: Pick<Snapshot, 'parts' | 'name'>): void {
    const tr = this.#host.tr;
    if (snapshot.parts.length === 0) throw new AttachmentError(tr('attach_no_text', { name: snapshot.name }));
    const used = totalChars(others);
    const adding = attachmentChars(snapshot);
    if (adding > ATTACHMENT_CHAR_CAP) {
      // no removal makes room for it
      throw new AttachmentError(tr('attach_too_long', { name: snapshot.name, chars: adding.toLocaleString(), cap: ATTACHMENT_CHAR_CAP.toLocaleString() }));
    }
    if (used + adding > ATTACHMENT_CHAR_CAP) {
      throw new AttachmentError(
        tr('attach_over_cap', {
          name: snapshot.name,
          chars: adding.toLocaleString(),
          free: Math.max(0, ATTACHMENT_CHAR_CAP - used).toLocaleString(),
          cap: ATTACHMENT_CHAR_CAP.toLocaleString(),
        }),
      );
    }
  }

  #now(): string {
    return (this.#host.now?.() ?? new Date()).toISOString();
  }

  /** Attaches a snapshot to chat (the chat open now) at placement. */
  async attach(chat: ChatRef, snapshot: Snapshot, placement: Placement): Promise<ChatAttachment> {
    const ctx = this.#contextOf(chat);
    const list = readAttachments(ctx);
    this.#checkCap(list, snapshot);
    const at = this.#now();
    const a: ChatAttachment = { id: newUUID(), ...snapshot, placement: { ...placement }, attachedAt: at, readAt: at };
    await this.#write(ctx, [...list, a]);
    return a;
  }

  async remove(chat: ChatRef, id: string): Promise<void> {
    const ctx = this.#contextOf(chat);
    await this.#write(ctx, readAttachments(ctx).filter((a) => a.id !== id));
  }

  async setPlacement(chat: ChatRef, id: string, placement: Placement): Promise<void> {
    const ctx = this.#contextOf(chat);
    await this.#write(ctx, readAttachments(ctx).map((a) => (a.id === id ? { ...a, placement: { ...placement } } : a)));
  }

  /** Reads the attachment's resource again and keeps the new text (the old one stays when the read fails or is over the cap). */
  async refresh(chat: ChatRef, id: string): Promise<ChatAttachment> {
    const tr = this.#host.tr;
    const before = readAttachments(this.#contextOf(chat)).find((a) => a.id === id);
    if (!before) throw new AttachmentError(tr('attachment_gone'));
    const outcome = await this.#host.read(before.registrationId, before.uri);
    const failed = requestFailure(outcome, tr);
    if (failed !== undefined || outcome.outcome !== 'known_response' || outcome.response.kind !== 'resource_contents') {
      throw new AttachmentError(tr('refresh_failed', { name: before.name, message: failed ?? '' }));
    }
    const ctx = this.#contextOf(chat);
    const list = readAttachments(ctx);
    const current = list.find((a) => a.id === id);
    if (!current) throw new AttachmentError(tr('attachment_gone'));
    const snap = snapshotOf(outcome.response, current);
    this.#checkCap(
      list.filter((a) => a.id !== id),
      { parts: snap.parts, name: current.name },
    );
    const next: ChatAttachment = { ...current, parts: snap.parts, skipped: snap.skipped, readAt: this.#now() };
    await this.#write(
      ctx,
      list.map((a) => (a.id === id ? next : a)),
    );
    return next;
  }
}
