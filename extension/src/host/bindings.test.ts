// Which tool set a chat uses, and where the choices are kept in SillyTavern.

import { describe, expect, test } from 'vitest';
import type { McpToolSet } from '../../../jsapi/tauritavern-mcp';
import { applyBindings, bindToolSet, readScope, type StBindingContext } from './bindings';

const set = (id: string): McpToolSet => ({ id, name: id, tools: [], descriptionOverrides: {}, resultInlineCharLimit: 50000, readerTool: true, toolMode: 'all', searchMaxTools: 40, searchContextPercent: 10, pinnedTools: [] });
const sets = [set('chat-set'), set('char-set'), set('group-set'), set('default-set')];

describe('precedence', () => {
  test.each([
    ['the chat over the character and the default', { chat: 'chat-set', character: { key: 'a', name: 'A', toolSetId: 'char-set' }, default: 'default-set' }, 'chat-set', 'chat'],
    ['the character over the default', { character: { key: 'a', name: 'A', toolSetId: 'char-set' }, default: 'default-set' }, 'char-set', 'character'],
    ['the group over the default', { group: { key: 'g', name: 'G', toolSetId: 'group-set' }, default: 'default-set' }, 'group-set', 'group'],
    ['the default', { character: { key: 'a', name: 'A' }, default: 'default-set' }, 'default-set', 'default'],
    ['none: every permitted tool', { character: { key: 'a', name: 'A' } }, undefined, undefined],
  ] as const)('%s', (_, scope, id, level) => {
    const applied = applyBindings({ chatOpen: true, ...scope }, sets);
    expect(applied.set?.id).toBe(id);
    expect(applied.level).toBe(level);
    expect(applied.missing).toEqual([]);
  });

  test('a binding to a removed set is skipped and reported', () => {
    const applied = applyBindings({ chatOpen: true, chat: 'gone', character: { key: 'a', name: 'A', toolSetId: 'also-gone' }, default: 'default-set' }, sets);
    expect(applied).toMatchObject({ level: 'default', missing: ['chat', 'character'] });
    expect(applyBindings({ chatOpen: true, default: 'gone' }, sets)).toEqual({ missing: ['default'] });
  });
});

describe('in SillyTavern', () => {
  function st(patch: Partial<StBindingContext> = {}) {
    const saved = { metadata: 0, settings: 0 };
    const ctx: StBindingContext = {
      chatMetadata: {},
      saveMetadata: () => void saved.metadata++,
      characterId: '1',
      characters: [{ avatar: 'other.png', name: 'Other' }, { avatar: 'ada.png', name: 'Ada' }],
      groupId: null,
      groups: [{ id: 'g1', name: 'Team' }],
      extensionSettings: { mcp_manager: { backendUrl: 'http://127.0.0.1:7878' } },
      saveSettingsDebounced: () => void saved.settings++,
      getCurrentChatId: () => 'Ada - 2026-12-01',
      ...patch,
    };
    return { ctx, saved };
  }

  test('the chat in its metadata, the character by its avatar, the default in the settings', async () => {
    const { ctx, saved } = st();
    expect(readScope(ctx)).toEqual({ chatOpen: true, character: { key: 'ada.png', name: 'Ada' } });
    expect(await bindToolSet(ctx, 'chat', 'chat-set')).toBe(true);
    expect(await bindToolSet(ctx, 'character', 'char-set')).toBe(true);
    expect(await bindToolSet(ctx, 'default', 'default-set')).toBe(true);
    expect(ctx.chatMetadata).toEqual({ mcp_manager: { toolSetId: 'chat-set' } });
    expect(ctx.extensionSettings).toEqual({
      mcp_manager: { backendUrl: 'http://127.0.0.1:7878', toolSets: { characters: { 'ada.png': 'char-set' }, groups: {}, default: 'default-set' } },
    });
    expect(saved).toEqual({ metadata: 1, settings: 2 });
    expect(readScope(ctx)).toEqual({ chatOpen: true, chat: 'chat-set', character: { key: 'ada.png', name: 'Ada', toolSetId: 'char-set' }, default: 'default-set' });
    // another character of the same user has no binding of its own
    expect(readScope({ ...ctx, characterId: 0 }).character).toEqual({ key: 'other.png', name: 'Other' });
    // none: the binding goes
    await bindToolSet(ctx, 'chat', undefined);
    await bindToolSet(ctx, 'character', undefined);
    expect(readScope(ctx)).toEqual({ chatOpen: true, character: { key: 'ada.png', name: 'Ada' }, default: 'default-set' });
  });

  test('a group chat binds the group; without a chat only the default can be kept', async () => {
    const { ctx } = st({ groupId: 'g1', characterId: undefined });
    expect(await bindToolSet(ctx, 'group', 'group-set')).toBe(true);
    expect(await bindToolSet(ctx, 'character', 'char-set')).toBe(false);
    expect(readScope(ctx)).toMatchObject({ group: { key: 'g1', name: 'Team', toolSetId: 'group-set' } });
    expect(readScope(ctx).character).toBeUndefined();
    const none = st({ characterId: undefined, getCurrentChatId: () => undefined }).ctx;
    expect(readScope(none).chatOpen).toBe(false);
    expect(await bindToolSet(none, 'character', 'x')).toBe(false);
    expect(await bindToolSet(undefined, 'default', 'x')).toBe(false);
  });
});
