// search.ts's pure parts: the size estimate, the mode decision, what the
// model reads, and the relabelled record.

import { describe, expect, test } from 'vitest';
import type { LegacyMcpTool } from '../../../../jsapi/tauritavern-mcp';
import { CALL_TOOL, definitionTokens, formatHits, planRequest, relabelInvocations, resolveName, searches, toolTokens, unresolvedName, type SearchSettings } from './search';

const tool = (name: string, description = 'Does it.'): LegacyMcpTool => ({
  toolId: `mcp/r:${name}`, nativeName: name, serverDisplayName: 'Demo', title: name.toUpperCase(), description,
  inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'what "quoted" ünï' } } },
});
const settings = (patch: Partial<SearchSettings>): SearchSettings => ({ mode: 'all', maxTools: 40, contextPercent: 10, pinned: [], ...patch });

describe('sizes', () => {
  test('a tool\'s estimate is its definition\'s, measured once', () => {
    const t = tool('find', 'Finds "things"\nand more.');
    expect(toolTokens(t, 'mcp__Demo__find')).toBe(definitionTokens('mcp__Demo__find', t.description!, t.inputSchema));
    expect(toolTokens(t, 'mcp__Demo__find__2')).toBe(definitionTokens('mcp__Demo__find__2', t.description!, t.inputSchema));
    const bare: LegacyMcpTool = { ...t, description: undefined as unknown as string, title: undefined as unknown as string };
    expect(toolTokens(bare, 'a')).toBe(definitionTokens('a', 'find', t.inputSchema));
  });

  test.each([
    ['all never searches', settings({}), 500, 1e6, 100, false],
    ['search always', settings({ mode: 'search' }), 1, 1, 100, true],
    ['automatic: at the count', settings({ mode: 'automatic', maxTools: 3 }), 3, 1, 100, false],
    ['automatic: over the count', settings({ mode: 'automatic', maxTools: 3 }), 4, 1, 100, true],
    ['automatic: at the share', settings({ mode: 'automatic', contextPercent: 10 }), 1, 100, 1000, false],
    ['automatic: over the share', settings({ mode: 'automatic', contextPercent: 10 }), 1, 101, 1000, true],
    ['automatic: no context, the count alone', settings({ mode: 'automatic' }), 1, 1e9, undefined, false],
  ] as const)('%s', (_n, s, count, tokens, context, want) => {
    expect(searches(s, count, tokens, context)).toBe(want);
  });

  test('a plan under the provider\'s limit: search keeps the constant set, pins in order, the reader if there is room', () => {
    const catalog = ['a', 'b', 'c'].map((n): [string, LegacyMcpTool] => [`mcp__Demo__${n}`, tool(n)]);
    const pinned = settings({ mode: 'search', pinned: ['mcp/r:c', 'mcp/r:gone', 'mcp/r:a'] });
    const o = { limit: 128, local: 0, reader: true, readerTokens: 50, context: undefined };
    const p = planRequest(catalog, { ...o, settings: pinned });
    expect(p.offered.map(([alias]) => alias)).toEqual(['mcp__Demo__c', 'mcp__Demo__a']);
    expect([p.search, p.reader, p.count]).toEqual([true, true, 6]);
    // a full request: 124 local tools leave room for the constant set and one more, the reader first
    const tight = planRequest(catalog, { ...o, local: 124, settings: pinned });
    expect([tight.offered.length, tight.reader, tight.count]).toEqual([0, true, 4]);
    const all = planRequest(catalog, { ...o, limit: 3, settings: settings({}) });
    expect(all.offered.map(([alias]) => alias)).toEqual(['mcp__Demo__a', 'mcp__Demo__b']);
    expect(all.leftOut.map((t) => t.nativeName)).toEqual(['c']);
    expect(all.tokens).toBe(toolTokens(catalog[0]![1], catalog[0]![0]) + toolTokens(catalog[1]![1], catalog[1]![0]) + 50);
  });
});

describe('what the model and the record read', () => {
  test('hits keep the ranking\'s order, one line each, grouped by server in runs', () => {
    const hit = (server: string, name: string, description: string) => ({
      alias: `mcp__${server}__${name}`,
      hit: { toolId: `mcp/r:${name}`, registrationId: 'r', serverDisplayName: server, nativeName: name, title: name, description, score: 1 },
    });
    expect(formatHits('x', [hit('B', 'one', 'First.\nSecond line.'), hit('B', 'four', 'Fourth.'), hit('A', 'two', 'x'.repeat(300)), hit('B', 'three', '')])).toBe(
      '4 MCP tools for "x", best first (read one\'s parameters with ttmcp_tool_details, call it with ttmcp_call_tool):\n\n' +
        `B:\n- mcp__B__one — First.\n- mcp__B__four — Fourth.\n\nA:\n- mcp__A__two — ${'x'.repeat(199)}…\n\nB:\n- mcp__B__three — three`,
    );
  });

  test('the record of a batch names the real tools, in the invocations and in the message, escaped as SillyTavern writes text', () => {
    const invocations = [
      { name: 'weather', displayName: 'Weather', parameters: '{}' },
      { name: CALL_TOOL, displayName: 'Call an MCP tool', parameters: '{"name":"a"}' },
      { name: CALL_TOOL, displayName: 'Call an MCP tool', parameters: '{"name":"b"}' },
    ];
    const message = {
      mes:
        '<details><summary>Tool calls: Weather, Call an MCP tool, Call an MCP tool</summary><pre><code>' +
        '[{"displayName": "Weather"}, {"displayName": "Call an MCP tool"}, {"displayName": "Call an MCP tool"}]</code></pre></details>',
    };
    const names: Record<string, string> = { a: 'Q&A <x> (Demo)', b: 'B (Demo)' };
    expect(relabelInvocations(invocations, (inv) => names[JSON.parse(String(inv.parameters)).name], message)).toBe(true);
    expect(invocations.map((i) => i.displayName)).toEqual(['Weather', 'Q&A <x> (Demo)', 'B (Demo)']);
    expect(message.mes).toBe(
      '<details><summary>Tool calls: Weather, Q&amp;A &lt;x&gt; (Demo), B (Demo)</summary><pre><code>' +
        '[{"displayName": "Weather"}, {"displayName": "Q&amp;A &lt;x&gt; (Demo)"}, {"displayName": "B (Demo)"}]</code></pre></details>',
    );
    // nothing of ttmcp's in a batch: nothing changes
    const other = [{ name: 'weather', displayName: 'Weather' }];
    expect(relabelInvocations(other, () => 'x', { mes: 'Tool calls: Weather' })).toBe(false);
  });
});

describe('names the model calls by', () => {
  const tool = (toolId: string, nativeName: string) => ({ toolId, nativeName }) as unknown as LegacyMcpTool;
  const catalog = new Map<string, LegacyMcpTool>([
    ['mcp__a__get-sum', tool('mcp/a:get-sum', 'get-sum')],
    ['mcp__b__get-sum', tool('mcp/b:get-sum', 'get-sum')],
    ['mcp__a__echo', tool('mcp/a:echo', 'echo')],
  ]);
  test('a full name, or a native name only one tool has; a shared native name resolves to none', () => {
    expect(resolveName('mcp__b__get-sum', catalog)).toBe('mcp__b__get-sum');
    expect(resolveName(' echo ', catalog)).toBe('mcp__a__echo');
    expect(resolveName('get-sum', catalog)).toBeUndefined();
  });
  test('a shared native name is told as such, with the full names; an unknown one as unknown', () => {
    expect(unresolvedName('get-sum', catalog, 'Nothing was called.')).toBe(
      '"get-sum" is the name of 2 MCP tools (mcp__a__get-sum, mcp__b__get-sum): use the full name of the one you mean. Nothing was called.',
    );
    expect(unresolvedName('nope', catalog, 'Nothing was called.')).toBe('No MCP tool is named "nope" here. Nothing was called.');
  });
});
