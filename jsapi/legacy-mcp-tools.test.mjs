// node --test jsapi/legacy-mcp-tools.test.mjs (make test-js): the legacy
// adapter's contract, tauritavern-reference §6 and the cases of §9.6.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  LegacyMcpOutcomeUnknownError,
  allocateMcpAlias,
  normalizeAliasSegment,
  prepareLegacyMcpGenerationContext,
} from './legacy-mcp-tools.js';

const tool = (over = {}) => ({
  toolId: 'mcp/550e8400-e29b-41d4-a716-446655440000:issue.create',
  nativeName: 'issue.create',
  serverDisplayName: 'my server',
  title: 'Create issue',
  description: 'Creates an issue',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
  ...over,
});

// A fake host: records every command; answers from `answers`.
function fakeHost(answers = {}) {
  const calls = [];
  const host = {
    calls,
    warnings: [],
    toasts: [],
    console: { warn: (m) => host.warnings.push(m), error: () => {}, debug: () => {} },
    toastr: {
      warning: (text, title) => host.toasts.push(['warning', title]),
      error: (text, title) => host.toasts.push(['error', title]),
    },
    safeInvoke: async (command, args) => {
      calls.push([command, args]);
      const a = answers[command];
      return typeof a === 'function' ? a(args) : a;
    },
  };
  return host;
}

function resolution(tools, diagnostics = []) {
  return { list_legacy_mcp_tools: { tools, diagnostics } };
}

async function round(host, localTools = [], hook = (d) => d) {
  const ctx = await prepareLegacyMcpGenerationContext(host);
  const r = ctx.createRound();
  const data = { tools: localTools.map((name) => ({ type: 'function', function: { name, description: '', parameters: {} } })) };
  r.mergeIntoToolData(data);
  r.finalizeAdvertisedTools(hook(data));
  return { ctx, r, data };
}

test('alias segments: [A-Za-z0-9-] kept with case, others one underscore, fallbacks', () => {
  assert.equal(normalizeAliasSegment('my server', 'server'), 'my_server');
  assert.equal(normalizeAliasSegment('my.server', 'server'), 'my_server');
  assert.equal(normalizeAliasSegment('issue.create', 'tool'), 'issue_create');
  assert.equal(normalizeAliasSegment('__A--b__', 'tool'), 'A--b');
  assert.equal(normalizeAliasSegment('日本語', 'server'), 'server');
  assert.equal(normalizeAliasSegment('', 'tool'), 'tool');
});

test('aliases fit 64 bytes, are unique and stay in [A-Za-z0-9_-]', () => {
  const used = new Set();
  const long = 'x'.repeat(80);
  const names = [
    allocateMcpAlias('my server', 'issue.create', used),
    allocateMcpAlias('my server', 'issue.create', used),
    allocateMcpAlias('服务器'.repeat(30), '工具'.repeat(40), used),
    allocateMcpAlias(long, long, used),
    allocateMcpAlias(long, long, used),
  ];
  assert.equal(names[0], 'mcp__my_server__issue_create');
  assert.equal(names[1], 'mcp__my_server__issue_create__2');
  assert.equal(new Set(names).size, names.length);
  for (const n of names) {
    assert.ok(n.length <= 64, n);
    assert.match(n, /^[A-Za-z0-9_-]+$/);
  }
  assert.equal(names[3], 'mcp__' + 'x'.repeat(20) + '__' + 'x'.repeat(37));
});

test('one list per root; aliases avoid local names; schemas are deep clones', async () => {
  const t = tool();
  const host = fakeHost(resolution([t, tool({ toolId: 'mcp/x:issue.create', serverDisplayName: 'my server' })]));
  const ctx = await prepareLegacyMcpGenerationContext(host);
  const first = ctx.createRound();
  const data = { tools: [{ type: 'function', function: { name: 'mcp__my_server__issue_create' } }] };
  first.mergeIntoToolData(data);
  assert.deepEqual(data.tools.map((x) => x.function.name),
    ['mcp__my_server__issue_create', 'mcp__my_server__issue_create__2', 'mcp__my_server__issue_create__3']);
  assert.equal(data.tool_choice, 'auto');
  assert.deepEqual(data.tools[1].function.parameters, t.inputSchema);
  assert.notEqual(data.tools[1].function.parameters, t.inputSchema);
  assert.equal(data.tools[1].function.description, 'Creates an issue');
  assert.throws(() => first.mergeIntoToolData(data), /already merged/);
  ctx.createRound().mergeIntoToolData({ tools: [] }); // a recursive round reuses the root's list
  assert.equal(host.calls.filter(([c]) => c === 'list_legacy_mcp_tools').length, 1);
});

test('no MCP tools leave toolData alone', async () => {
  const { data } = await round(fakeHost(resolution([])), ['local']);
  assert.equal(data.tool_choice, undefined);
  assert.equal(data.tools.length, 1);
});

test('diagnostics warn once per root; a failed list gives an empty context', async () => {
  const warned = fakeHost(resolution([tool()], [{ code: 'mcp.catalog_not_cached', message: 'refresh it' }]));
  await prepareLegacyMcpGenerationContext(warned);
  assert.deepEqual(warned.warnings, ['[Legacy MCP] mcp.catalog_not_cached: refresh it']);
  assert.deepEqual(warned.toasts, [['warning', 'MCP tools unavailable']]);

  const broken = fakeHost({ list_legacy_mcp_tools: { tools: 'nope' } });
  const { data } = await round(broken, ['local']);
  assert.deepEqual(broken.toasts, [['error', 'MCP tools unavailable']]);
  assert.deepEqual(data.tools.map((x) => x.function.name), ['local']);

  const failing = fakeHost({ list_legacy_mcp_tools: () => { throw new Error('backend down'); } });
  await assert.doesNotReject(prepareLegacyMcpGenerationContext(failing));
});

test('binding = initial alias ∩ names occurring once after the hooks', async () => {
  const host = fakeHost({
    ...resolution([tool(), tool({ toolId: 't2', nativeName: 'b' }), tool({ toolId: 't3', nativeName: 'c' }), tool({ toolId: 't4', nativeName: 'd' })]),
    start_legacy_mcp_tool_call: null,
  });
  const { r } = await round(host, [], (data) => {
    data.tools = data.tools.filter((x) => x.function.name !== 'mcp__my_server__b'); // removed
    data.tools.find((x) => x.function.name === 'mcp__my_server__c').function.name = 'renamed'; // renamed
    data.tools.push(structuredClone(data.tools.find((x) => x.function.name === 'mcp__my_server__d'))); // duplicated
    return data;
  });
  const ok = r.resolveTool('mcp__my_server__issue_create');
  assert.equal(ok.displayName, 'Create issue (my server)');
  assert.equal(ok.formatMessage(), 'Invoking MCP tool: Create issue (my server)');
  assert.equal(r.resolveTool('renamed'), null);
  assert.equal(r.resolveTool('local_tool'), null);
  for (const alias of ['mcp__my_server__b', 'mcp__my_server__c', 'mcp__my_server__d']) {
    const out = await r.resolveTool(alias).invoke({ argumentsJson: '{}' });
    assert.equal(out.error, true);
    assert.equal(JSON.parse(out.result).code, 'mcp.legacy_tool_not_advertised');
  }
  assert.equal(host.calls.filter(([c]) => c !== 'list_legacy_mcp_tools').length, 0, 'not-advertised tools send nothing');
});

test('resolving before finalize is a programming error', async () => {
  const ctx = await prepareLegacyMcpGenerationContext(fakeHost(resolution([tool()])));
  const r = ctx.createRound();
  assert.throws(() => r.finalizeAdvertisedTools({ tools: [] }), /merged/);
  r.mergeIntoToolData({});
  assert.throws(() => r.resolveTool('x'), /finalized/);
});

async function invokeWith(outcome, options = {}) {
  const host = fakeHost({ ...resolution([tool()]), start_legacy_mcp_tool_call: null, call_legacy_mcp_tool: outcome, cancel_legacy_mcp_tool_call: null });
  const { r } = await round(host);
  const invoke = r.resolveTool('mcp__my_server__issue_create').invoke;
  return { host, result: await invoke({ argumentsJson: '{"title":"x","n":9007199254740993}', ...options }).catch((e) => e) };
}

test('execution: fresh executionCallId, start then call with the exact arguments', async () => {
  const known = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'ok' }], diagnostics: [] } };
  const a = await invokeWith(known);
  const b = await invokeWith(known);
  const [start, call] = a.host.calls.slice(1);
  assert.equal(start[0], 'start_legacy_mcp_tool_call');
  assert.equal(call[0], 'call_legacy_mcp_tool');
  assert.equal(call[1].dto.executionCallId, start[1].dto.executionCallId);
  assert.notEqual(start[1].dto.executionCallId, b.host.calls[1][1].dto.executionCallId);
  assert.deepEqual(call[1].dto, { executionCallId: start[1].dto.executionCallId, toolId: tool().toolId, argumentsJson: '{"title":"x","n":9007199254740993}' });
  assert.deepEqual(a.result, { result: JSON.stringify(known, null, 2), error: false });
});

test('errors: isError, server_error, unsupported and not_sent are error results', async () => {
  for (const outcome of [
    { outcome: 'known_response', response: { kind: 'tool_result', isError: true, textBlocks: [], diagnostics: [] } },
    { outcome: 'known_response', response: { kind: 'server_error', code: -32602, message: 'bad' } },
    { outcome: 'known_response', response: { kind: 'unsupported_response', responseType: 'task', message: 'm' } },
    { outcome: 'not_sent', code: 'mcp.call_permission_off', message: 'off' },
  ]) {
    const { result } = await invokeWith(outcome);
    assert.deepEqual(result, { result: JSON.stringify(outcome, null, 2), error: true });
  }
});

test('outcome_unknown throws LegacyMcpOutcomeUnknownError; unexpected outcomes throw', async () => {
  const { result } = await invokeWith({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'may have run' });
  assert.ok(result instanceof LegacyMcpOutcomeUnknownError);
  assert.equal(result.name, 'LegacyMcpOutcomeUnknownError');
  assert.equal(result.code, 'mcp.call_timeout');
  assert.equal(result.message, 'mcp.call_timeout: may have run');
  const odd = await invokeWith({ outcome: 'maybe' });
  assert.match(odd.result.message, /Unexpected Legacy MCP call outcome: maybe/);
});

test('pre-aborted: AbortError and no command', async () => {
  const c = new AbortController();
  c.abort();
  const { host, result } = await invokeWith(null, { signal: c.signal });
  assert.equal(result.name, 'AbortError');
  assert.equal(host.calls.length, 1); // the root's list only
});

test('abort during the call: cancel sent; not_sent becomes AbortError, a known answer is kept', async () => {
  for (const [outcome, expectAbort] of [
    [{ outcome: 'not_sent', code: 'mcp.call_cancelled_before_send', message: 'm' }, true],
    [{ outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [] } }, false],
  ]) {
    const c = new AbortController();
    const { host, result } = await invokeWith(() => { c.abort(); return outcome; }, { signal: c.signal });
    const commands = host.calls.map(([cmd]) => cmd);
    assert.deepEqual(commands.slice(1), ['start_legacy_mcp_tool_call', 'call_legacy_mcp_tool', 'cancel_legacy_mcp_tool_call']);
    assert.equal(host.calls[3][1].dto.executionCallId, host.calls[1][1].dto.executionCallId);
    if (expectAbort) assert.equal(result.name, 'AbortError');
    else assert.equal(result.error, false);
  }
});

test('abort during the start acknowledgement: start, cancel, AbortError', async () => {
  const c = new AbortController();
  const host = fakeHost({ ...resolution([tool()]), start_legacy_mcp_tool_call: () => { c.abort(); return null; }, cancel_legacy_mcp_tool_call: null });
  const { r } = await round(host);
  const err = await r.resolveTool('mcp__my_server__issue_create').invoke({ argumentsJson: '{}', signal: c.signal }).catch((e) => e);
  assert.equal(err.name, 'AbortError');
  assert.deepEqual(host.calls.slice(1).map(([cmd]) => cmd), ['start_legacy_mcp_tool_call', 'cancel_legacy_mcp_tool_call']);
});

test('structural: the adapter never touches request-body options or the local tool registry', async () => {
  const source = await readFile(new URL('./legacy-mcp-tools.js', import.meta.url), 'utf8');
  for (const banned of ['custom_include_body', 'custom_exclude_body', 'registerFunctionTool']) {
    assert.ok(!source.includes(banned), banned);
  }
});
