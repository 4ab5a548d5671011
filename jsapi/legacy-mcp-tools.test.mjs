// node --test jsapi/legacy-mcp-tools.test.mjs (make test-js): the legacy
// adapter's contract, tauritavern-reference §6 and the cases of §9.6.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  LegacyMcpOutcomeUnknownError,
  allocateMcpAlias,
  createEmptyLegacyMcpGenerationContext,
  createLegacyMcpGenerationContext,
  invokeLegacyMcpTool,
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

// A fake host: records every command; answers from `answers`. It is the
// options object of createLegacyMcpGenerationContext (invokeCommand) and of
// the toast helper (toastr, console).
function fakeHost(answers = {}) {
  const calls = [];
  const host = {
    calls,
    errors: [],
    toasts: [],
    console: { error: (...m) => host.errors.push(m.join(' ')) },
    toastr: {
      warning: (text, title) => host.toasts.push(['warning', title]),
      error: (text, title) => host.toasts.push(['error', title]),
    },
    invokeCommand: async (command, args, ...options) => {
      calls.push([command, args, ...options]);
      const a = answers[command];
      return typeof a === 'function' ? a(args, ...options) : a;
    },
  };
  return host;
}

function resolution(tools, diagnostics = []) {
  return { list_legacy_mcp_tools: { tools, diagnostics } };
}

// warnings runs fn with console.warn recorded.
async function warnings(fn) {
  const warned = [];
  const original = console.warn;
  console.warn = (...m) => warned.push(m.join(' '));
  try {
    await fn();
  } finally {
    console.warn = original;
  }
  return warned;
}

async function round(host, localTools = [], hook = (d) => d) {
  const ctx = await createLegacyMcpGenerationContext(host);
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

test('alias segments: the one-pass normaliser is the regex rule of upstream', () => {
  const reference = (text, fallback) =>
    String(text ?? '').replace(/[^A-Za-z0-9-]+/g, '_').replace(/_+/g, '_').replace(/^_+|_+$/g, '') || fallback;
  const alphabet = ['a', 'Z', '0', '9', '-', '_', '.', ' ', '__', 'é', '日', '\u{1F600}', '\uD800', ':', '/'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 5000; i++) {
    let text = '';
    for (let n = next() % 12; n > 0; n--) text += alphabet[next() % alphabet.length];
    assert.equal(normalizeAliasSegment(text, 'tool'), reference(text, 'tool'), JSON.stringify(text));
  }
});

test('aliases from remembered segments are those of the rule, fallbacks included, round after round', () => {
  const names = [['my server', 'issue.create'], ['日本語', '...'], ['', ''], [null, undefined], [42, 'a b'], ['my server', 'issue.create']];
  const expected = (server, tool) => 'mcp__' + normalizeAliasSegment(server, 'server') + '__' + normalizeAliasSegment(tool, 'tool');
  for (let r = 0; r < 3; r++) {
    const used = new Set();
    const got = names.map(([server, tool]) => allocateMcpAlias(server, tool, used));
    assert.deepEqual(got, [
      expected('my server', 'issue.create'), 'mcp__server__tool', 'mcp__server__tool__2', 'mcp__server__tool__3',
      expected(42, 'a b'), expected('my server', 'issue.create') + '__2',
    ]);
    assert.equal(got[1], expected('日本語', '...'));
    assert.equal(got[4], 'mcp__42__a_b');
  }
});

test('schemas are copied as JSON data, a property named __proto__ included', async () => {
  const inputSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"list":{"type":"array","items":[{"const":null},{"const":1.5}]}},"required":["__proto__"]}');
  const { data } = await round(fakeHost(resolution([tool({ inputSchema })])));
  const copy = data.tools[0].function.parameters;
  assert.deepEqual(copy, inputSchema);
  assert.equal(JSON.stringify(copy), JSON.stringify(inputSchema));
  assert.equal(Object.getPrototypeOf(copy.properties), Object.prototype);
  assert.ok(Object.hasOwn(copy.properties, '__proto__'));
  assert.notEqual(copy.properties.list.items, inputSchema.properties.list.items);
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
  const ctx = await createLegacyMcpGenerationContext(host);
  assert.deepEqual(ctx.tools.map((x) => x.toolId), [t.toolId, 'mcp/x:issue.create']);
  assert.deepEqual(ctx.diagnostics, []);
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
  data.tools[1].function.parameters.properties.title.type = 'number'; // a hook edits the request
  const next = {};
  ctx.createRound().mergeIntoToolData(next); // a recursive round reuses the root's list
  assert.equal(next.tools[0].function.parameters.properties.title.type, 'string');
  assert.equal(host.calls.filter(([c]) => c === 'list_legacy_mcp_tools').length, 1);
});

test('no MCP tools leave toolData alone', async () => {
  const { data } = await round(fakeHost(resolution([])), ['local']);
  assert.equal(data.tool_choice, undefined);
  assert.equal(data.tools.length, 1);
  const empty = createEmptyLegacyMcpGenerationContext();
  assert.deepEqual([empty.tools, empty.diagnostics], [[], []]);
  const r = empty.createRound();
  const request = { tools: [{ type: 'function', function: { name: 'local' } }] };
  r.mergeIntoToolData(request);
  r.finalizeAdvertisedTools(request);
  assert.deepEqual(request, { tools: [{ type: 'function', function: { name: 'local' } }] });
  assert.equal(r.resolveTool('local'), null);
});

test('the context warns each diagnostic; an invalid or failed listing rejects', async () => {
  const host = fakeHost(resolution([tool()], [{ code: 'mcp.catalog_not_cached', message: 'refresh it' }]));
  let ctx;
  const warned = await warnings(async () => { ctx = await createLegacyMcpGenerationContext(host); });
  assert.deepEqual(warned, ['[Legacy MCP] mcp.catalog_not_cached: refresh it']);
  assert.deepEqual(ctx.diagnostics, [{ code: 'mcp.catalog_not_cached', message: 'refresh it' }]);
  assert.equal(ctx.tools.length, 1);
  assert.deepEqual(host.calls, [['list_legacy_mcp_tools', undefined]]);

  for (const bad of [null, 'x', {}, { tools: [] }, { diagnostics: [] }, { tools: 'nope', diagnostics: [] },
    { tools: [{ toolId: 't' }], diagnostics: [] }]) {
    await assert.rejects(createLegacyMcpGenerationContext(fakeHost({ list_legacy_mcp_tools: bad })),
      { message: 'list_legacy_mcp_tools returned an invalid resolution' }, JSON.stringify(bad));
  }
  await assert.rejects(createLegacyMcpGenerationContext(fakeHost({ list_legacy_mcp_tools: () => { throw new Error('backend down'); } })),
    { message: 'backend down' });
});

test('without invokeCommand the host safeInvoke is used, looked up when a command is sent', async () => {
  await assert.rejects(createLegacyMcpGenerationContext(), { message: 'Host ABI safeInvoke is missing' });
  const host = fakeHost(resolution([tool()]));
  globalThis.window = { __TAURITAVERN__: { invoke: { safeInvoke: host.invokeCommand } } };
  try {
    const ctx = await createLegacyMcpGenerationContext();
    assert.equal(ctx.tools.length, 1);
    assert.deepEqual(host.calls.map(([c]) => c), ['list_legacy_mcp_tools']);
  } finally {
    delete globalThis.window;
  }
});

test('the toast helper: a warning for diagnostics, an error toast and the empty context on failure', async () => {
  const warned = fakeHost(resolution([tool()], [{ code: 'mcp.catalog_not_cached', message: 'refresh it' }]));
  const ctx = await warnings(() => prepareLegacyMcpGenerationContext(warned));
  assert.deepEqual(warned.toasts, [['warning', 'MCP tools unavailable']]);
  assert.ok(ctx);

  const broken = fakeHost({ list_legacy_mcp_tools: { tools: 'nope' } });
  const empty = await prepareLegacyMcpGenerationContext(broken);
  assert.deepEqual(broken.toasts, [['error', 'MCP tools unavailable']]);
  assert.match(broken.errors[0], /list_legacy_mcp_tools returned an invalid resolution/);
  assert.deepEqual(empty.tools, []);
  const data = { tools: [{ type: 'function', function: { name: 'local' } }] };
  empty.createRound().mergeIntoToolData(data);
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
    assert.equal(out.result, JSON.stringify({
      outcome: 'not_sent',
      code: 'mcp.legacy_tool_not_advertised',
      message: `MCP tool alias "${alias}" was not uniquely advertised in the post-hook frontend payload`,
    }, null, 2));
  }
  assert.equal(host.calls.filter(([c]) => c !== 'list_legacy_mcp_tools').length, 0, 'not-advertised tools send nothing');
});

test('merge, finalize and resolve are each in their place', async () => {
  const ctx = await createLegacyMcpGenerationContext(fakeHost(resolution([tool()])));
  const r = ctx.createRound();
  assert.throws(() => r.finalizeAdvertisedTools({ tools: [] }), /merged/);
  r.mergeIntoToolData({});
  assert.throws(() => r.resolveTool('x'), /finalized/);
  r.finalizeAdvertisedTools({});
  assert.throws(() => r.finalizeAdvertisedTools({}), /already finalized/);
});

const ARGS = '{"title":"x","n":9007199254740993}';

async function invokeWith(outcome, options = {}) {
  let n = 0;
  const host = fakeHost({ ...resolution([tool()]), start_legacy_mcp_tool_call: null, call_legacy_mcp_tool: outcome, cancel_legacy_mcp_tool_call: null });
  host.createExecutionCallId = () => `exec-${++n}`;
  const { r } = await round(host);
  const invoke = r.resolveTool('mcp__my_server__issue_create').invoke;
  return { host, result: await invoke({ argumentsJson: ARGS, ...options }).catch((e) => e) };
}

test('execution: an executionCallId per call, start then call with the exact arguments', async () => {
  const known = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'ok' }], diagnostics: [] } };
  const { host, result } = await invokeWith(known);
  assert.deepEqual(host.calls.slice(1), [
    ['start_legacy_mcp_tool_call', { dto: { executionCallId: 'exec-1' } }],
    ['call_legacy_mcp_tool', { dto: { executionCallId: 'exec-1', toolId: tool().toolId, argumentsJson: ARGS } }],
  ]);
  assert.deepEqual(result, { result: JSON.stringify(known, null, 2), error: false });

  // By default every call gets a fresh random UUID.
  const ids = [];
  const plain = fakeHost({ ...resolution([tool()]), call_legacy_mcp_tool: known });
  const { r } = await round({ invokeCommand: plain.invokeCommand });
  for (let i = 0; i < 2; i++) await r.resolveTool('mcp__my_server__issue_create').invoke({ argumentsJson: '{}' });
  for (const [c, args] of plain.calls) if (c === 'start_legacy_mcp_tool_call') ids.push(args.dto.executionCallId);
  assert.equal(ids.length, 2);
  assert.notEqual(ids[0], ids[1]);
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('without crypto.randomUUID (an insecure context: SillyTavern at a LAN address over http) the default id is still a fresh v4 UUID', async () => {
  const randomUUID = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(globalThis.crypto), 'randomUUID');
  Object.defineProperty(Object.getPrototypeOf(globalThis.crypto), 'randomUUID', { value: undefined, configurable: true });
  try {
    assert.equal(typeof globalThis.crypto.randomUUID, 'undefined');
    const known = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [] } };
    const plain = fakeHost({ ...resolution([tool()]), call_legacy_mcp_tool: known });
    const { r } = await round({ invokeCommand: plain.invokeCommand });
    for (let i = 0; i < 2; i++) await r.resolveTool('mcp__my_server__issue_create').invoke({ argumentsJson: '{}' });
    const ids = plain.calls.filter(([c]) => c === 'start_legacy_mcp_tool_call').map(([, a]) => a.dto.executionCallId);
    assert.equal(ids.length, 2);
    assert.notEqual(ids[0], ids[1]);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  } finally {
    Object.defineProperty(Object.getPrototypeOf(globalThis.crypto), 'randomUUID', randomUUID);
  }
});

test('an omitted argumentsJson is passed on omitted, an empty one as it is', async () => {
  const known = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [] } };
  for (const [options, wire] of [[{ argumentsJson: undefined }, '{"dto":{"executionCallId":"exec-1","toolId":"T"}}'],
    [{ argumentsJson: '' }, '{"dto":{"executionCallId":"exec-1","toolId":"T","argumentsJson":""}}']]) {
    const host = fakeHost({ call_legacy_mcp_tool: known });
    await invokeLegacyMcpTool({ invokeCommand: host.invokeCommand, createExecutionCallId: () => 'exec-1' }, { toolId: 'T', ...options });
    assert.equal(JSON.stringify(host.calls[1][1]), wire);
  }
  const host = fakeHost({ ...resolution([tool()]), call_legacy_mcp_tool: known });
  const { r } = await round(host);
  await r.resolveTool('mcp__my_server__issue_create').invoke();
  assert.equal(JSON.stringify(host.calls.at(-1)[1].dto.argumentsJson), undefined);
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
  assert.equal(odd.result.message, 'Unexpected Legacy MCP call outcome: maybe');
});

test('a lost connection during the call is an unknown outcome; other rejections pass through', async () => {
  const lost = Object.assign(new Error('mcp.host_connection_lost: the connection to http://127.0.0.1:7878 was lost'), { code: 'mcp.host_connection_lost', kind: 'Unavailable' });
  const { host, result } = await invokeWith(() => { throw lost; });
  assert.ok(result instanceof LegacyMcpOutcomeUnknownError, String(result));
  assert.equal(result.code, 'mcp.host_connection_lost');
  assert.equal(result.message, 'mcp.host_connection_lost: the connection to http://127.0.0.1:7878 was lost');
  assert.deepEqual(host.calls.slice(1).map(([c]) => c), ['start_legacy_mcp_tool_call', 'call_legacy_mcp_tool', 'cancel_legacy_mcp_tool_call']);

  const other = Object.assign(new Error('mcp.dto_invalid: unknown field'), { code: 'mcp.dto_invalid', kind: 'BadRequest' });
  assert.equal((await invokeWith(() => { throw other; })).result, other);

  // Lost before the call was sent (the start acknowledgement): nothing ran.
  const early = fakeHost({ ...resolution([tool()]), start_legacy_mcp_tool_call: () => { throw lost; } });
  const { r } = await round(early);
  assert.equal(await r.resolveTool('mcp__my_server__issue_create').invoke({ argumentsJson: '{}' }).catch((e) => e), lost);
});

test('pre-aborted: AbortError with the reason, and no command', async () => {
  for (const [reason, message] of [['stop', 'stop'], [undefined, 'Generation was aborted.'], [new Error('x'), 'Generation was aborted.']]) {
    const c = new AbortController();
    c.abort(reason);
    const { host, result } = await invokeWith(null, { signal: c.signal });
    assert.ok(result instanceof Error);
    assert.equal(result.name, 'AbortError');
    assert.equal(result.message, message);
    assert.equal(host.calls.length, 1); // the root's list only
  }
});

test('abort during the call: cancel sent; not_sent becomes AbortError, a known answer is kept', async () => {
  for (const [outcome, expectAbort] of [
    [{ outcome: 'not_sent', code: 'mcp.call_cancelled_before_send', message: 'm' }, true],
    [{ outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [] } }, false],
  ]) {
    const c = new AbortController();
    const { host, result } = await invokeWith(() => { c.abort('Stopped by the user'); return outcome; }, { signal: c.signal });
    assert.deepEqual(host.calls.slice(1), [
      ['start_legacy_mcp_tool_call', { dto: { executionCallId: 'exec-1' } }],
      ['call_legacy_mcp_tool', { dto: { executionCallId: 'exec-1', toolId: tool().toolId, argumentsJson: ARGS } }],
      ['cancel_legacy_mcp_tool_call', { dto: { executionCallId: 'exec-1' } }],
    ]);
    if (expectAbort) assert.deepEqual([result.name, result.message], ['AbortError', 'Stopped by the user']);
    else assert.equal(result.error, false);
  }
});

test('abort during the start acknowledgement: start, cancel, AbortError', async () => {
  const c = new AbortController();
  const host = fakeHost({ ...resolution([tool()]), start_legacy_mcp_tool_call: () => { c.abort(); return null; }, cancel_legacy_mcp_tool_call: null });
  const { r } = await round(host);
  const err = await r.resolveTool('mcp__my_server__issue_create').invoke({ argumentsJson: '{}', signal: c.signal }).catch((e) => e);
  assert.deepEqual([err.name, err.message], ['AbortError', 'Generation was aborted.']);
  assert.deepEqual(host.calls.slice(1).map(([cmd]) => cmd), ['start_legacy_mcp_tool_call', 'cancel_legacy_mcp_tool_call']);
});

test('approval (a ttmcp addition) is sent only when given', async () => {
  const denied = { outcome: 'not_sent', code: 'mcp.call_denied_by_user', message: 'The user denied this call' };
  const host = fakeHost({ call_legacy_mcp_tool: denied });
  const out = await invokeLegacyMcpTool({ invokeCommand: host.invokeCommand, createExecutionCallId: () => 'e' },
    { toolId: 'T', argumentsJson: '{}', approval: 'denied' });
  assert.deepEqual(host.calls[1], ['call_legacy_mcp_tool', { dto: { executionCallId: 'e', toolId: 'T', argumentsJson: '{}', approval: 'denied' } }]);
  assert.deepEqual(out, { result: JSON.stringify(denied, null, 2), error: true });
});

test('onProgress (a ttmcp addition) goes to invokeCommand as its third argument, only with the call and only when given', async () => {
  const known = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [] } };
  const seen = [];
  const host = fakeHost({
    call_legacy_mcp_tool: (_args, options) => {
      options.onProgress({ progress: 1, total: 2, message: 'half', updates: 1 });
      return known;
    },
  });
  const onProgress = (p) => seen.push(p);
  await invokeLegacyMcpTool({ invokeCommand: host.invokeCommand, createExecutionCallId: () => 'e' }, { toolId: 'T', argumentsJson: '{}', onProgress });
  assert.equal(host.calls[0].length, 2); // the start: no options
  assert.deepEqual(host.calls[1], ['call_legacy_mcp_tool', { dto: { executionCallId: 'e', toolId: 'T', argumentsJson: '{}' } }, { onProgress }]);
  assert.deepEqual(seen, [{ progress: 1, total: 2, message: 'half', updates: 1 }]);
  const plain = fakeHost({ call_legacy_mcp_tool: known });
  await invokeLegacyMcpTool({ invokeCommand: plain.invokeCommand, createExecutionCallId: () => 'e' }, { toolId: 'T', argumentsJson: '{}' });
  assert.equal(plain.calls[1].length, 2); // upstream's two arguments
});

test('readable (a ttmcp addition) is asked for only when given, and returned beside upstream\'s outcome JSON', async () => {
  const outcome = { outcome: 'known_response', response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'hi' }], diagnostics: [] } };
  const readable = { text: 'hi', isError: false };
  const host = fakeHost({ call_legacy_mcp_tool: { ...outcome, readable } });
  const out = await invokeLegacyMcpTool({ invokeCommand: host.invokeCommand, createExecutionCallId: () => 'e' },
    { toolId: 'T', argumentsJson: '{}', readable: { inlineCharLimit: 10 } });
  assert.deepEqual(host.calls[1], ['call_legacy_mcp_tool', { dto: { executionCallId: 'e', toolId: 'T', argumentsJson: '{}', readable: { inlineCharLimit: 10 } } }]);
  assert.deepEqual(out, { result: JSON.stringify(outcome, null, 2), error: false, readable });
  const plain = fakeHost({ call_legacy_mcp_tool: outcome });
  const upstream = await invokeLegacyMcpTool({ invokeCommand: plain.invokeCommand, createExecutionCallId: () => 'e' }, { toolId: 'T', argumentsJson: '{}' });
  assert.deepEqual(plain.calls[1][1].dto, { executionCallId: 'e', toolId: 'T', argumentsJson: '{}' });
  assert.deepEqual(upstream, { result: JSON.stringify(outcome, null, 2), error: false });
});

test('structural: the host safeInvoke as upstream names it; no request-body options, no local tool registry', async () => {
  const source = await readFile(new URL('./legacy-mcp-tools.js', import.meta.url), 'utf8');
  assert.match(source, /globalThis\.window\?\.__TAURITAVERN__\?\.invoke\?\.safeInvoke/);
  for (const banned of ['custom_include_body', 'custom_exclude_body', 'registerFunctionTool']) {
    assert.ok(!source.includes(banned), banned);
  }
});
