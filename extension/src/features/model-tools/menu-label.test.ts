// The chat-side control's label (the wand menu's "MCP: … · N tools").

import { describe, expect, test } from 'vitest';
import { englishTr } from '../../base/texts';
import { menuLabel } from './menu-label';
import type { ToolReach } from './reach';

describe('the chat menu label', () => {
  test('names the set in use, or every allowed tool, with the count of tools in words (walked in SillyTavern 1.18.0)', () => {
    const ready: Extract<ToolReach, { kind: 'ready' }> = { kind: 'ready', search: false, mode: 'all', request: 4, tokens: 900, maxTools: 40, contextPercent: 10, tools: 127, servers: 2, diagnostics: 0, total: 307, leftOut: 180, local: 0, limit: 128, missing: [] };
    expect(menuLabel(ready, englishTr)).toBe('MCP: every allowed tool · 127 tools');
    expect(menuLabel({ ...ready, tools: 1 }, englishTr)).toBe('MCP: every allowed tool · 1 tool');
    expect(menuLabel({ ...ready, tools: 2, set: { name: 'Coding', level: 'character' } }, englishTr)).toBe('MCP: Coding · 2 tools');
    expect(menuLabel({ kind: 'set_offers_nothing', diagnostics: 1, set: { name: 'Coding', level: 'chat' }, missing: [] }, englishTr)).toBe('MCP: Coding · 0 tools');
    expect(menuLabel({ kind: 'nothing_allowed', diagnostics: 0 }, englishTr)).toBe('MCP: every allowed tool · 0 tools');
    expect(menuLabel({ kind: 'backend_down', message: 'x' }, englishTr)).toBe('MCP tools: not connected');
  });
});
