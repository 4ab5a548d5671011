import { describe, expect, test } from 'vitest';
import type { McpResourceContentsResponse, McpResourceReadOutcome } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern, SERVER_ID, StChatDouble, textRead } from '../../../test/fakes';
import { englishTr } from '../../base/texts';
import {
  ATTACHMENT_CHAR_CAP,
  ATTACHMENTS_KEY,
  ChatAttachments,
  injectionText,
  readAttachments,
  snapshotOf,
  type Placement,
} from './attachments';
import { EXTENSION_PROMPT_ROLES, EXTENSION_PROMPT_TYPES, stChatContext } from '../../host/sillytavern-chat';

const source = { registrationId: SERVER_ID, serverName: 'Docs', name: 'Read me' };

function contents(uri: string, parts: Array<{ text?: string; blob?: string; mimeType?: string; size?: number }>): McpResourceContentsResponse {
  return {
    kind: 'resource_contents',
    uri,
    contents: parts.map((p, i) => ({
      type: p.text !== undefined ? 'text' : 'blob',
      uri: `${uri}#${i}`,
      ...(p.mimeType !== undefined ? { mimeType: p.mimeType } : {}),
      ...(p.text !== undefined ? { text: p.text } : {}),
      ...(p.blob !== undefined ? { blob: p.blob } : {}),
      size: p.size ?? (p.text ?? '').length,
    })),
    totalBytes: 0,
    diagnostics: [],
  };
}

function setup(read: (id: string, uri: string) => Promise<McpResourceReadOutcome> = (_id, uri) => Promise.resolve(textRead(uri, `fresh ${uri}`))) {
  const st = new StChatDouble();
  installSillyTavern({ context: st.members });
  const reads: string[] = [];
  const attachments = new ChatAttachments({
    context: stChatContext,
    read: (id, uri) => {
      reads.push(uri);
      return read(id, uri);
    },
    now: () => new Date('2026-12-01T12:00:00Z'),
    tr: englishTr,
  });
  attachments.install();
  const chat = attachments.chat()!;
  return { st, attachments, chat, reads };
}

const inChat4: Placement = { position: 'in_chat', depth: 4, role: 'system' };

describe('snapshotOf', () => {
  test('keeps every text content in order, decodes a text blob, and lists binary ones as skipped', () => {
    const r = contents('file:///a', [
      { text: 'one', mimeType: 'text/markdown' },
      { blob: btoa('plain as a blob'), mimeType: 'text/plain', size: 15 },
      { blob: 'iVBORw0KGgo=', mimeType: 'image/png', size: 8 },
      { text: '{"b":2}', mimeType: 'application/json' },
      { blob: btoa('\xff\xfe'), mimeType: 'text/plain', size: 2 }, // not UTF-8: not text
    ]);
    const s = snapshotOf(r, source);
    expect(s.parts.map((p) => p.text)).toEqual(['one', 'plain as a blob', '{"b":2}']);
    expect(s.skipped).toEqual([
      { uri: 'file:///a#2', mimeType: 'image/png', size: 8 },
      { uri: 'file:///a#4', mimeType: 'text/plain', size: 2 },
    ]);
    expect(s).toMatchObject({ uri: 'file:///a', name: 'Read me', serverName: 'Docs', registrationId: SERVER_ID });
  });
});

describe('injectionText', () => {
  test('each part in a tag naming the resource, its server and URI (attribute quotes escaped)', () => {
    const text = injectionText({
      name: 'Say "hi" & <go>',
      serverName: 'Docs',
      parts: [
        { uri: 'file:///a', text: 'A' },
        { uri: 'file:///b', text: 'B' },
      ],
    });
    expect(text).toBe(
      '<mcp_resource name="Say &quot;hi&quot; &amp; &lt;go>" server="Docs" uri="file:///a">\nA\n</mcp_resource>\n' +
        '<mcp_resource name="Say &quot;hi&quot; &amp; &lt;go>" server="Docs" uri="file:///b">\nB\n</mcp_resource>',
    );
  });
});

describe('ChatAttachments', () => {
  test('attaching keeps the snapshot in the chat metadata, saves it and gives SillyTavern the extension prompt', async () => {
    const { st, attachments, chat } = setup();
    expect(chat).toEqual({ chatId: 'Seraphina - 2026-12-01', name: 'Seraphina' });
    const a = await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'Alpha' }]), source), inChat4);
    expect(st.saves).toBe(1);
    const stored = st.metadata['Seraphina - 2026-12-01']![ATTACHMENTS_KEY] as { version: number; items: unknown[] };
    expect(stored.version).toBe(1);
    expect(stored.items).toEqual([
      {
        id: a.id,
        ...source,
        uri: 'file:///a',
        parts: [{ uri: 'file:///a#0', text: 'Alpha' }],
        skipped: [],
        placement: inChat4,
        attachedAt: '2026-12-01T12:00:00.000Z',
        readAt: '2026-12-01T12:00:00.000Z',
      },
    ]);
    expect(st.extensionPrompts).toEqual({
      mcp_manager_resource_000: {
        value: '<mcp_resource name="Read me" server="Docs" uri="file:///a#0">\nAlpha\n</mcp_resource>',
        position: EXTENSION_PROMPT_TYPES.IN_CHAT,
        depth: 4,
        scan: false,
        role: EXTENSION_PROMPT_ROLES.SYSTEM,
      },
    });
  });

  test('before and after the main prompt are BEFORE_PROMPT and IN_PROMPT, with the role the user chose', async () => {
    const { st, attachments, chat } = setup();
    await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'A' }]), source), { position: 'before_main', depth: 9, role: 'user' });
    await attachments.attach(chat, snapshotOf(contents('file:///b', [{ text: 'B' }]), source), { position: 'after_main', depth: 0, role: 'assistant' });
    expect(st.extensionPrompts.mcp_manager_resource_000).toMatchObject({ position: EXTENSION_PROMPT_TYPES.BEFORE_PROMPT, depth: 0, role: EXTENSION_PROMPT_ROLES.USER });
    expect(st.extensionPrompts.mcp_manager_resource_001).toMatchObject({ position: EXTENSION_PROMPT_TYPES.IN_PROMPT, depth: 0, role: EXTENSION_PROMPT_ROLES.ASSISTANT });
  });

  test('removing takes the prompt away at once; the next attachment keeps the list order', async () => {
    const { st, attachments, chat } = setup();
    const a = await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'A' }]), source), inChat4);
    await attachments.attach(chat, snapshotOf(contents('file:///b', [{ text: 'B' }]), source), inChat4);
    await attachments.remove(chat, a.id);
    expect(Object.keys(st.extensionPrompts)).toEqual(['mcp_manager_resource_000']);
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toContain('\nB\n');
    await attachments.remove(chat, attachments.list()[0]!.id);
    expect(st.extensionPrompts).toEqual({});
    expect(ATTACHMENTS_KEY in st.metadata['Seraphina - 2026-12-01']!).toBe(false);
  });

  test('a chat opened is given its own attachments (SillyTavern emptied the prompts); a chat without any gets none', async () => {
    const { st, attachments, chat } = setup();
    await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'A' }]), source), inChat4);
    st.metadata['Other - chat'] = {};
    await st.openChat('Other - chat');
    expect(st.extensionPrompts).toEqual({});
    await st.openChat('Seraphina - 2026-12-01');
    expect(Object.keys(st.extensionPrompts)).toEqual(['mcp_manager_resource_000']);
    // a generation gives them again (another extension may have cleared them)
    st.extensionPrompts = {};
    await st.emit('generation_started', 'normal', {}, false);
    expect(Object.keys(st.extensionPrompts)).toEqual(['mcp_manager_resource_000']);
  });

  test('a write for a chat that is no longer open is refused, changing nothing', async () => {
    const { st, attachments, chat } = setup();
    st.metadata['Other - chat'] = {};
    await st.openChat('Other - chat');
    await expect(attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'A' }]), source), inChat4)).rejects.toThrow(
      'Another chat is open now; the chat with Seraphina was not changed.',
    );
    expect(st.saves).toBe(0);
    expect(st.metadata['Other - chat']).toEqual({});
  });

  test('the cap: an attachment that would take the chat over it is refused whole, with the count', async () => {
    const { st, attachments, chat } = setup();
    await attachments.attach(chat, snapshotOf(contents('file:///big', [{ text: 'x'.repeat(ATTACHMENT_CHAR_CAP - 10) }]), source), inChat4);
    await expect(attachments.attach(chat, snapshotOf(contents('file:///more', [{ text: 'y'.repeat(11) }]), source), inChat4)).rejects.toThrow(
      'Read me has 11 characters, but the chat’s attachments can take only 10 more (at most 100,000 together). Nothing was attached',
    );
    expect(attachments.list()).toHaveLength(1);
    // exactly up to the cap is fine
    await attachments.attach(chat, snapshotOf(contents('file:///fits', [{ text: 'z'.repeat(10) }]), source), inChat4);
    expect(attachments.list()).toHaveLength(2);
    expect(st.saves).toBe(2);
  });

  test('a resource longer than the cap itself is refused as such: removing attachments would not make room', async () => {
    const { attachments, chat } = setup();
    await expect(attachments.attach(chat, snapshotOf(contents('file:///huge', [{ text: 'x'.repeat(ATTACHMENT_CHAR_CAP + 1) }]), source), inChat4)).rejects.toThrow(
      'Read me has 100,001 characters, more than a chat’s attachments can hold (100,000 together). It cannot be attached.',
    );
    expect(attachments.list()).toHaveLength(0);
  });

  test('attachments before the main prompt reach the model in the order they were attached', async () => {
    const { st, attachments, chat } = setup();
    const before = { position: 'before_main', depth: 0, role: 'system' } as const;
    for (const name of ['A', 'B', 'C']) await attachments.attach(chat, snapshotOf(contents(`file:///${name}`, [{ text: name }]), source), name === 'B' ? inChat4 : before);
    await attachments.attach(chat, snapshotOf(contents('file:///D', [{ text: 'D' }]), source), before);
    // SillyTavern 1.18 (openai.js) puts each BEFORE_PROMPT extension prompt at the start, in key order
    const start: string[] = [];
    for (const p of Object.values(st.extensionPrompts)) if (p.position === EXTENSION_PROMPT_TYPES.BEFORE_PROMPT) start.unshift(p.value);
    expect(start.map((v) => /\n(\w)\n/.exec(v)![1])).toEqual(['A', 'C', 'D']);
  });

  test('a resource without text is refused', async () => {
    const { attachments, chat } = setup();
    await expect(attachments.attach(chat, snapshotOf(contents('file:///img', [{ blob: 'iVBORw0KGgo=', mimeType: 'image/png' }]), source), inChat4)).rejects.toThrow(
      'Read me has no text to attach',
    );
  });

  test('Refresh reads the resource again and keeps its new text and its place; a failed read keeps the old text', async () => {
    let next: McpResourceReadOutcome = textRead('file:///a', 'Second');
    const { st, attachments, chat, reads } = setup(() => Promise.resolve(next));
    const a = await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'First' }]), source), { position: 'in_chat', depth: 2, role: 'user' });
    expect(reads).toEqual([]); // attaching reads nothing by itself
    const refreshed = await attachments.refresh(chat, a.id);
    expect(reads).toEqual(['file:///a']);
    expect(refreshed.parts.map((p) => p.text)).toEqual(['Second']);
    expect(refreshed.placement).toEqual({ position: 'in_chat', depth: 2, role: 'user' });
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toContain('\nSecond\n');

    next = { outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'no answer within 30 s' };
    await expect(attachments.refresh(chat, a.id)).rejects.toThrow(
      'Read me could not be read again, so its text stays as it was: The outcome is unknown (mcp.call_timeout): no answer within 30 s',
    );
    expect(attachments.list()[0]!.parts.map((p) => p.text)).toEqual(['Second']);
  });

  test('a refresh over the cap keeps the old text', async () => {
    const { attachments, chat } = setup(() => Promise.resolve(textRead('file:///a', 'x'.repeat(ATTACHMENT_CHAR_CAP + 1))));
    const a = await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'small' }]), source), inChat4);
    await expect(attachments.refresh(chat, a.id)).rejects.toThrow('more than a chat’s attachments can hold (100,000 together)');
    expect(attachments.list()[0]!.parts[0]!.text).toBe('small');
  });

  test('a placement change moves the prompt', async () => {
    const { st, attachments, chat } = setup();
    const a = await attachments.attach(chat, snapshotOf(contents('file:///a', [{ text: 'A' }]), source), inChat4);
    await attachments.setPlacement(chat, a.id, { position: 'in_chat', depth: 0, role: 'assistant' });
    expect(st.extensionPrompts.mcp_manager_resource_000).toMatchObject({ depth: 0, role: EXTENSION_PROMPT_ROLES.ASSISTANT });
  });

  test('damaged entries in the metadata are ignored, never given to the model', () => {
    const st = new StChatDouble();
    installSillyTavern({ context: st.members });
    st.metadata['Seraphina - 2026-12-01'] = {
      [ATTACHMENTS_KEY]: {
        version: 1,
        items: [
          { id: 'x' },
          'nonsense',
          {
            id: 'ok',
            registrationId: SERVER_ID,
            serverName: 'Docs',
            uri: 'file:///a',
            name: 'A',
            parts: [{ uri: 'file:///a', text: 'kept' }],
            placement: { position: 'in_chat', depth: 3, role: 'system' },
            attachedAt: 't',
            readAt: 't',
          },
          { id: 'bad-depth', registrationId: SERVER_ID, serverName: 'D', uri: 'u:x', name: 'B', parts: [], placement: { position: 'in_chat', depth: -1, role: 'system' }, attachedAt: 't', readAt: 't' },
        ],
      },
    };
    expect(readAttachments(stChatContext()).map((a) => a.id)).toEqual(['ok']);
  });

  test('without setExtensionPrompt (an older SillyTavern) attachments are not offered', () => {
    installSillyTavern({ context: { chatMetadata: {}, saveMetadata: () => {} } });
    expect(new ChatAttachments({ context: stChatContext, read: () => Promise.reject(new Error('no')), tr: englishTr }).supported()).toBe(false);
  });
});
