// node --test jsapi/bridge-transport.test.mjs (make test-js): the bridge's
// data plane against a fake socket and fake Go hooks. The shim's side
// (wasm/*_test.go, which loads this module too) and the real page
// (webtest/) are tested apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTransport, resultHeadID } from './bridge-transport.js';

// The layout the shim passes (wasm/transport.go, jsapi/wire.go).
const layout = {
  invokeHead: '{"type":"invoke","id":',
  invokeCommand: ',"command":',
  invokeArgs: ',"args":',
  invokeTail: '}',
  invokeProgress: ',"progress":true',
  resultHead: '{"type":"result","id":',
  resultOK: ',"ok":true,"value":',
  resultError: ',"ok":false,"error":',
  maxFrame: 4 << 20,
  maxIDDigits: 15,
  runTestCall: 'run_mcp_test_call',
  cancelTestCall: 'cancel_mcp_test_call',
  testCallLost: { outcome: 'outcome_unknown', code: 'mcp.host_connection_lost', message: 'dropped after the tool request was sent' },
};

class GoError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// fakeGo records what reaches the hooks; calls it is handed stay pending
// unless a test settles them.
function fakeGo() {
  const seen = { calls: [], safeInvokes: [], results: [], testCalls: [] };
  const hooks = {
    call(command, args, onProgress) {
      seen.calls.push(onProgress === undefined ? [command, args] : [command, args, onProgress]);
      return Promise.resolve(`go:${command}`);
    },
    safeInvoke(command, args) {
      seen.safeInvokes.push([command, args]);
      return Promise.reject(new GoError('mcp.args_invalid', 'refused by Go'));
    },
    argsError: (err) => new GoError('mcp.args_invalid', `args: ${err.message}`),
    backendError: (body) => new GoError(body?.code ?? '', body?.message ?? 'no message'),
    malformed: (command) => new GoError('mcp.host_internal', `malformed result for ${command}`),
    sendFailed: (err) => new GoError('mcp.host_internal', `send: ${err.message}`),
    testCall(input, options) {
      seen.testCalls.push([input, options]);
      return Promise.resolve('go:testCall');
    },
    result(id, status, value) {
      seen.results.push([id, status, value]);
    },
  };
  return { hooks, seen };
}

function fakeSocket() {
  return {
    sent: [],
    fail: null,
    onmessage: null,
    send(s) {
      if (this.fail) throw this.fail;
      this.sent.push(s);
    },
    deliver(data) {
      this.onmessage({ data });
    },
    reply(id, value) {
      this.deliver(`${layout.resultHead}${id}${layout.resultOK}${value}}`);
    },
    replyError(id, error) {
      this.deliver(`${layout.resultHead}${id}${layout.resultError}${error}}`);
    },
  };
}

function setup() {
  const go = fakeGo();
  const t = createTransport(go.hooks, layout);
  const ws = fakeSocket();
  t.open(ws);
  const list = t.method('list_mcp_servers', 'none');
  return { ...go, t, ws, list };
}

const settled = (p) =>
  p.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );

test('a call sends one frame in the fixed layout and settles from its result', async () => {
  const { ws, list, t } = setup();
  const p = list();
  assert.deepEqual(ws.sent, ['{"type":"invoke","id":1,"command":"list_mcp_servers","args":{}}']);
  assert.equal(t.inflight(), 1);
  ws.reply(1, '{"servers":[{"id":"a","displayName":"é 世界"}],"storageIssues":[]}');
  assert.deepEqual(await p, { servers: [{ id: 'a', displayName: 'é 世界' }], storageIssues: [] });
  assert.equal(t.inflight(), 0);
});

test('calls made in one turn go out in order; results settle in any order', async () => {
  const { ws, t } = setup();
  const create = t.method('create_mcp_server', 'dto');
  const remove = t.method('remove_mcp_server', 'registrationId');
  const ps = [create({ displayName: 'a' }), remove('x'), create({ displayName: 'b' })];
  assert.deepEqual(
    ws.sent.map((f) => JSON.parse(f)),
    [
      { type: 'invoke', id: 1, command: 'create_mcp_server', args: { dto: { displayName: 'a' } } },
      { type: 'invoke', id: 2, command: 'remove_mcp_server', args: { dto: { registrationId: 'x' } } },
      { type: 'invoke', id: 3, command: 'create_mcp_server', args: { dto: { displayName: 'b' } } },
    ],
  );
  ws.reply(3, '"third"');
  ws.replyError(1, '{"kind":"BadRequest","code":"mcp.endpoint_invalid","message":"mcp.endpoint_invalid: empty host"}');
  ws.reply(2, 'null');
  const [a, b, c] = await Promise.all(ps.map(settled));
  assert.equal(a.error.code, 'mcp.endpoint_invalid');
  assert.equal(a.error.message, 'mcp.endpoint_invalid: empty host');
  assert.deepEqual(b, { value: null });
  assert.deepEqual(c, { value: 'third' });
});

test('argument shapes', () => {
  const { ws, t } = setup();
  const cases = [
    ['none', undefined, '{}'],
    ['none', { x: 1 }, '{}'],
    ['dto', { displayName: 'a', headers: { A: 'b' } }, '{"dto":{"displayName":"a","headers":{"A":"b"}}}'],
    ['dto', undefined, '{}'],
    ['dto', null, '{"dto":null}'],
    ['registrationId', 'id-1', '{"dto":{"registrationId":"id-1"}}'],
    ['registrationId', { registrationId: 'abc', extra: true }, '{"dto":{"registrationId":"abc"}}'],
    ['registrationId', {}, '{"dto":{}}'],
    ['registrationId', null, '{"dto":{}}'],
    ['registrationId', 5, '{"dto":{}}'],
    ['optionalDto', undefined, '{"dto":{}}'],
    ['optionalDto', null, '{"dto":{}}'],
    ['optionalDto', { limit: 5 }, '{"dto":{"limit":5}}'],
    ['registrationIdOrDto', 'id-1', '{"dto":{"registrationId":"id-1"}}'],
    ['registrationIdOrDto', { registrationId: 'abc', refresh: true }, '{"dto":{"registrationId":"abc","refresh":true}}'],
    ['registrationIdOrDto', undefined, '{"dto":{}}'],
    ['id', 'set-1', '{"dto":{"id":"set-1"}}'],
    ['id', { id: 'set-2', name: 'x' }, '{"dto":{"id":"set-2"}}'],
    ['id', undefined, '{"dto":{}}'],
    // big integers travel inside argumentsJson strings untouched
    ['dto', { argumentsJson: '{"n":9007199254740993}' }, '{"dto":{"argumentsJson":"{\\"n\\":9007199254740993}"}}'],
  ];
  for (const [shape, input, want] of cases) {
    t.method('cmd', shape)(input);
    const sent = ws.sent.at(-1);
    assert.equal(sent.slice(sent.indexOf(',"args":') + 8, -1), want, `${shape} ${JSON.stringify(input)}`);
  }
});

test('arguments without a JSON form are refused through Go, unsent', async () => {
  const { ws, t, seen } = setup();
  const cyclic = {};
  cyclic.self = cyclic;
  for (const bad of [cyclic, { n: 1n }]) {
    const r = await settled(t.method('create_mcp_server', 'dto')(bad));
    assert.equal(r.error.code, 'mcp.args_invalid');
    assert.match(r.error.message, /^args: /);
  }
  assert.deepEqual(ws.sent, []);
  assert.deepEqual(seen.calls, []);
  assert.equal(t.inflight(), 0);
});

test('without an open socket, and for large arguments, calls go to Go', async () => {
  const go = fakeGo();
  const t = createTransport(go.hooks, layout);
  const list = t.method('list_mcp_servers', 'none');
  assert.equal(await list(), 'go:list_mcp_servers');
  assert.deepEqual(go.seen.calls, [['list_mcp_servers', '{}']]);

  const ws = fakeSocket();
  t.open(ws);
  const big = 'x'.repeat(Math.floor(layout.maxFrame / 3));
  assert.equal(await t.method('create_mcp_server', 'dto')({ displayName: big }), 'go:create_mcp_server');
  assert.equal(go.seen.calls.length, 2);
  assert.equal(go.seen.calls[1][1].length, big.length + '{"dto":{"displayName":""}}'.length);
  assert.deepEqual(ws.sent, []);
});

test("Go's own calls: ids from the same counter, results handed to Go", () => {
  const { ws, t, list, seen } = setup();
  list();
  const id = t.send('start_mcp_test_call', '{"dto":{"callId":"c"}}');
  assert.equal(id, 2);
  assert.equal(ws.sent[1], '{"type":"invoke","id":2,"command":"start_mcp_test_call","args":{"dto":{"callId":"c"}}}');
  const id3 = t.send('test_mcp_tool_call', '{}');
  const id4 = t.send('test_mcp_tool_call', '{}');
  ws.replyError(id3, '{"kind":"NotFound","message":"gone"}');
  ws.reply(id, '{"ok":1}');
  ws.deliver(`${layout.resultHead}${id4}${layout.resultOK}{broken}`);
  assert.deepEqual(seen.results, [
    [3, 0, { kind: 'NotFound', message: 'gone' }],
    [2, 1, { ok: 1 }],
    [4, -1, undefined],
  ]);
  assert.equal(t.inflight(), 1); // the list() call
});

test('frames out of the layout, malformed and foreign frames', async () => {
  const { ws, list } = setup();
  const [p1, p2, p3, p4] = [list(), list(), list(), list()].map(settled);
  // members in another order / with spaces: still results
  ws.deliver('{"id":1,"type":"result","ok":true,"value":{"n":1}}');
  ws.deliver('{"type": "result", "id": 2, "ok": false, "error": {"kind": "NotFound", "message": "MCP registration not found: x"}}');
  // the head names the call but the rest is broken: it fails instead of hanging
  ws.deliver(`${layout.resultHead}3${layout.resultOK}{broken}`);
  const errors = [];
  const saved = console.error;
  console.error = (...a) => errors.push(a.join(' '));
  try {
    ws.deliver('not json');
    ws.deliver(`${layout.resultHead}99${layout.resultOK}{broken}`); // an unknown id: nothing to settle, nothing said
    ws.deliver('{"type":"notice"}');
    ws.deliver('{"type":"result","id":"4","ok":true,"value":1}');
    ws.deliver('{"type":"result","id":4.5,"ok":true,"value":1}');
    ws.deliver('[1,2]');
    ws.deliver(new ArrayBuffer(4)); // binary: not the protocol
  } finally {
    console.error = saved;
  }
  assert.deepEqual(errors, ['ttmcp bridge: ignoring a malformed frame from the backend']); // 'not json' only
  assert.deepEqual(await p1, { value: { n: 1 } });
  assert.equal((await p2).error.message, 'MCP registration not found: x');
  assert.equal((await p3).error.message, 'malformed result for list_mcp_servers');
  ws.reply(4, '"late"');
  assert.deepEqual(await p4, { value: 'late' });
});

test('drop hands back the calls in flight for Go to reject; later frames and calls', async () => {
  const { ws, t, list, seen } = setup();
  const p1 = list();
  t.send('test_mcp_tool_call', '{}'); // Go's: Go knows it is lost
  const p3 = t.method('discover_mcp_tools', 'registrationId')('r');
  const lost = t.drop();
  assert.equal(lost.length, 4);
  assert.deepEqual([lost[0], lost[2]], ['list_mcp_servers', 'discover_mcp_tools']);
  lost[1](new GoError('mcp.host_connection_lost', 'lost list'));
  lost[3](new GoError('mcp.host_connection_lost', 'lost discover'));
  assert.equal((await settled(p1)).error.message, 'lost list');
  assert.equal((await settled(p3)).error.message, 'lost discover');
  assert.equal(t.inflight(), 0);
  // a late frame of the old socket settles nothing
  ws.reply(1, '1');
  ws.reply(2, '1');
  assert.deepEqual(seen.results, []);
  // until the next socket opens, calls go to Go; then ids continue
  assert.equal(await list(), 'go:list_mcp_servers');
  const ws2 = fakeSocket();
  t.open(ws2);
  list();
  assert.equal(JSON.parse(ws2.sent[0]).id, 4);
});

test('a send that throws rejects that call through Go and keeps nothing', async () => {
  const { ws, t, list } = setup();
  ws.fail = new Error('InvalidStateError');
  const r = await settled(list());
  assert.equal(r.error.message, 'send: InvalidStateError');
  assert.equal(t.inflight(), 0);
  ws.fail = null;
  const p = list();
  ws.reply(JSON.parse(ws.sent[0]).id, '7');
  assert.equal(await p, 7);
});

test('safeInvoke: sends what it can, hands what it must refuse to Go', async () => {
  const { ws, t, seen } = setup();
  const p = t.safeInvoke('list_mcp_servers');
  t.safeInvoke('set_mcp_tool_permission', { dto: { permission: 'ask' } });
  t.safeInvoke('list_mcp_servers', null);
  assert.deepEqual(
    ws.sent.map((f) => JSON.parse(f)),
    [
      { type: 'invoke', id: 1, command: 'list_mcp_servers', args: {} },
      { type: 'invoke', id: 2, command: 'set_mcp_tool_permission', args: { dto: { permission: 'ask' } } },
      { type: 'invoke', id: 3, command: 'list_mcp_servers', args: {} },
    ],
  );
  ws.reply(1, '[]');
  assert.deepEqual(await p, []);
  for (const [command, args] of [
    [undefined, {}],
    ['', {}],
    [5, {}],
    ['cmd', [1]],
    ['cmd', 'text'],
    ['cmd', () => 1],
    ['cmd', { toJSON: () => undefined }],
  ]) {
    const r = await settled(t.safeInvoke(command, args));
    assert.equal(r.error.message, 'refused by Go');
  }
  assert.equal(seen.safeInvokes.length, 7);
  const r = await settled(t.safeInvoke('cmd', { n: 1n }));
  assert.equal(r.error.code, 'mcp.args_invalid');
  assert.equal(ws.sent.length, 3);
});

test('resultHeadID reads the fixed layout only', () => {
  const long = '9'.repeat(15);
  const cases = [
    ['{"type":"result","id":7,"ok":true,"value":{"servers":[]}}', 7],
    ['{"type":"result","id":42,"ok":false,"error":{"kind":"NotFound"}}', 42],
    ['{"type":"result","id":0,"ok":true,"value":1}', 0],
    [`{"type":"result","id":${long},"ok":false,"error":{`, 999999999999999],
    ['{"id":7,"type":"result","ok":true,"value":1}', -1],
    ['{"type":"result", "id":7,"ok":true,"value":1}', -1],
    ['{"type":"result","id":,"ok":true,"value":1}', -1],
    ['{"type":"result","id":-1,"ok":true,"value":1}', -1],
    ['{"type":"result","id":07,"ok":true,"value":1}', -1],
    ['{"type":"result","id":1.5,"ok":true,"value":1}', -1],
    [`{"type":"result","id":${long}9,"ok":true,"value":1}`, -1],
    ['{"type":"result","id":7,"ok":true,"error":{}}', -1],
    ['{"type":"result","id":7,"value":1,"ok":true}', -1],
    ['{"type":"welcome","server":{}}', -1],
    ['{"type":"result","id":7', -1],
    ['', -1],
  ];
  for (const [frame, want] of cases) assert.equal(resultHeadID(frame, layout), want, frame);
});

test('event frames reach hooks.event, or the page as a window event', () => {
  const { hooks } = fakeGo();
  const events = [];
  hooks.event = (name, data) => events.push([name, data]);
  const t = createTransport(hooks, layout);
  const ws = fakeSocket();
  t.open(ws);
  ws.onmessage({ data: '{"type":"event","event":"servers_changed","data":{"registrationId":"r","lists":["tools"]}}' });
  ws.onmessage({ data: '{"type":"event","data":{}}' }); // no name: ignored
  ws.onmessage({ data: '{"type":"someday","id":1}' }); // unknown kinds are ignored
  assert.deepEqual(events, [['servers_changed', { registrationId: 'r', lists: ['tools'] }]]);

  const { hooks: plain } = fakeGo();
  const seen = [];
  const had = globalThis.dispatchEvent; // Node's global is no EventTarget: stand in for the window's
  globalThis.dispatchEvent = (e) => seen.push([e.type, e.detail]);
  try {
    const t2 = createTransport(plain, layout);
    const ws2 = fakeSocket();
    t2.open(ws2);
    ws2.onmessage({ data: '{"type":"event","event":"servers_changed","data":{"registrationId":"x","lists":["prompts"]}}' });
  } finally {
    globalThis.dispatchEvent = had;
  }
  assert.deepEqual(seen, [['tauritavern-mcp:event', { event: 'servers_changed', data: { registrationId: 'x', lists: ['prompts'] } }]]);
});

test('elicitation: the handlers frame on set and on every socket; questions answered on the socket that asked', async () => {
  const { hooks } = fakeGo();
  const t = createTransport(hooks, layout);
  const ws = fakeSocket();
  t.open(ws);
  assert.deepEqual(ws.sent, []); // no handler: nothing to say
  const asked = [];
  t.setElicitationHandler(async (req, { signal }) => {
    asked.push([req, signal.aborted]);
    return { action: 'accept', content: { name: 'octo' }, extra: 1 };
  });
  assert.deepEqual(ws.sent.map((f) => JSON.parse(f)), [{ type: 'handlers', elicitation: true, apps: false }]);

  const answers = () => ws.sent.slice(1).map((f) => JSON.parse(f));
  ws.onmessage({ data: JSON.stringify({ type: 'request', id: 3, method: 'elicitation', params: { mode: 'form', message: 'Name?' } }) });
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(asked, [[{ mode: 'form', message: 'Name?' }, false]]);
  assert.deepEqual(answers(), [{ type: 'response', id: 3, ok: true, value: { action: 'accept', content: { name: 'octo' } } }]);

  // a handler that throws, an unknown method, content with decline, a bad action: cancel or no content
  const replies = [
    () => { throw new Error('boom'); },
    () => ({ action: 'decline', content: { x: 1 } }),
    () => ({ action: 'maybe' }),
  ];
  for (const [i, reply] of replies.entries()) {
    t.setElicitationHandler(reply);
    ws.onmessage({ data: JSON.stringify({ type: 'request', id: 10 + i, method: 'elicitation', params: {} }) });
  }
  ws.onmessage({ data: JSON.stringify({ type: 'request', id: 20, method: 'sampling', params: {} }) });
  await new Promise((r) => setTimeout(r, 0));
  const values = Object.fromEntries(answers().filter((f) => f.type === 'response').map((f) => [f.id, f.value]));
  assert.deepEqual(values[10], { action: 'cancel' });
  assert.deepEqual(values[11], { action: 'decline' });
  assert.deepEqual(values[12], { action: 'cancel' });
  assert.deepEqual(values[20], { action: 'cancel' });

  // withdrawn: the signal aborts and nothing is answered
  let release;
  let signal;
  t.setElicitationHandler((_req, opts) => {
    signal = opts.signal;
    return new Promise((r) => (release = r));
  });
  ws.onmessage({ data: JSON.stringify({ type: 'request', id: 30, method: 'elicitation', params: {} }) });
  await new Promise((r) => setTimeout(r, 0));
  ws.onmessage({ data: JSON.stringify({ type: 'cancel', id: 30 }) });
  assert.equal(signal.aborted, true);
  release({ action: 'accept', content: {} });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(answers().some((f) => f.id === 30), false);

  // an answer for a socket that dropped never reaches the next one; the question is withdrawn
  ws.onmessage({ data: JSON.stringify({ type: 'request', id: 31, method: 'elicitation', params: {} }) });
  await new Promise((r) => setTimeout(r, 0));
  t.drop();
  assert.equal(signal.aborted, true);
  const next = fakeSocket();
  t.open(next);
  release({ action: 'accept', content: {} });
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(next.sent.map((f) => JSON.parse(f)), [{ type: 'handlers', elicitation: true, apps: false }]);

  t.setElicitationHandler(null);
  assert.deepEqual(JSON.parse(next.sent.at(-1)), { type: 'handlers', elicitation: false, apps: false });
  assert.throws(() => t.setElicitationHandler('no'), TypeError);
});

// issue 31: a large model listing is kept and asked for again only when the
// backend's digest changed; small ones, errors and an older backend are
// served as before.
test('a large listing is kept and parsed again while its digest holds', async () => {
  const { ws, t } = setup();
  const big = JSON.stringify({ tools: [{ toolId: 'mcp/a:x', description: 'd'.repeat(300 * 1024) }], diagnostics: [] });
  const lastId = () => JSON.parse(ws.sent.at(-1)).id;
  const lastCommand = () => JSON.parse(ws.sent.at(-1)).command;
  // 1: nothing kept: one listing
  let p = t.safeInvoke('list_legacy_mcp_tools');
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), big);
  const first = await p;
  assert.equal(first.tools[0].description.length, 300 * 1024);
  // 2: kept without a digest: the digest, then the listing again (kept with that digest)
  p = t.safeInvoke('list_legacy_mcp_tools');
  assert.equal(lastCommand(), 'digest_legacy_mcp_tools');
  ws.reply(lastId(), '{"digest":"d1"}');
  await new Promise((r) => setImmediate(r));
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), big);
  await p;
  // 3: the same digest: the kept text, parsed into a value of the caller's own
  const sent = ws.sent.length;
  p = t.safeInvoke('list_legacy_mcp_tools');
  ws.reply(lastId(), '{"digest":"d1"}');
  const third = await p;
  assert.equal(ws.sent.length, sent + 1); // only the digest went out
  assert.deepEqual(third, first);
  assert.notEqual(third, first);
  third.tools.length = 0; // a caller's change is its own
  // 4: another digest: listed again
  p = t.safeInvoke('list_legacy_mcp_tools');
  ws.reply(lastId(), '{"digest":"d2"}');
  await new Promise((r) => setImmediate(r));
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), JSON.stringify({ tools: [], diagnostics: [] }));
  assert.deepEqual(await p, { tools: [], diagnostics: [] });
  // 5: small now: nothing kept, one listing
  p = t.safeInvoke('list_legacy_mcp_tools');
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), '{"tools":[],"diagnostics":[]}');
  await p;
  // a set's listing is kept apart from the upstream one, by its arguments
  p = t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 's' } });
  assert.deepEqual(JSON.parse(ws.sent.at(-1)).args, { dto: { toolSetId: 's' } });
  ws.reply(lastId(), big);
  await p;
  p = t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 's' } });
  assert.equal(lastCommand(), 'digest_legacy_mcp_tools');
  assert.deepEqual(JSON.parse(ws.sent.at(-1)).args, { dto: { toolSetId: 's' } });
  // an older backend: the digest is unknown; listed as before, and never asked again
  ws.replyError(lastId(), '{"kind":"BadRequest","code":"mcp.command_unknown","message":"unknown"}');
  await new Promise((r) => setImmediate(r));
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), big);
  await p;
  p = t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 's' } });
  assert.equal(lastCommand(), 'list_legacy_mcp_tools');
  ws.reply(lastId(), big);
  await p;
  assert.equal(t.inflight(), 0);
});

// The spare: the parse of the kept text for the next root is made in idle
// time, handed out once, only after its digest is confirmed, and never
// for another entry than the one it was parsed from. The parses of large
// texts are counted, to see which answer came from a spare.
test('a spare parse of the kept listing is made in idle time and handed out once, after its digest', async () => {
  const parse = JSON.parse;
  let parses = 0;
  JSON.parse = function (text, ...rest) {
    if (typeof text === 'string' && text.length > 256 * 1024) parses++;
    return parse.call(this, text, ...rest);
  };
  try {
    const go = fakeGo();
    const jobs = [];
    go.hooks.idle = (fn) => jobs.push(fn);
    const t = createTransport(go.hooks, layout);
    const ws = fakeSocket();
    t.open(ws);
    const idle = () => jobs.splice(0).forEach((fn) => fn());
    const listing = (mark) => JSON.stringify({ tools: [{ toolId: 'mcp/a:x', description: mark + 'd'.repeat(300 * 1024), inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }], diagnostics: [] });
    const lastId = () => JSON.parse(ws.sent.at(-1)).id;
    const lastCommand = () => JSON.parse(ws.sent.at(-1)).command;
    const tick = () => new Promise((r) => setImmediate(r));
    const list = () => t.safeInvoke('list_legacy_mcp_tools');
    // counts the large parses while fn runs
    const counted = async (fn) => {
      const before = parses;
      const v = await fn();
      return { v, parsed: parses - before };
    };
    const hit = (digest) => counted(() => {
      const p = list();
      assert.equal(lastCommand(), 'digest_legacy_mcp_tools');
      ws.reply(lastId(), JSON.stringify({ digest }));
      return p;
    });
    const changed = (digest, mark) => counted(async () => {
      const p = list();
      ws.reply(lastId(), JSON.stringify({ digest }));
      await tick();
      assert.equal(lastCommand(), 'list_legacy_mcp_tools');
      ws.reply(lastId(), listing(mark));
      return p;
    });
    // the first listing, then the one that learns its digest: only then is a spare made
    let p = list();
    ws.reply(lastId(), listing('A'));
    const first = await p;
    assert.equal(jobs.length, 0); // kept without a digest: no spare
    await changed('d1', 'A');
    assert.equal(jobs.length, 1);
    idle();
    // the spare is the answer once the digest holds; each answer is the caller's own
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const { v, parsed } = await hit('d1');
      assert.equal(parsed, i === 1 ? 1 : 0); // the second root finds no spare ready: parsed then
      assert.deepEqual(v, first);
      for (const w of [first, ...seen]) {
        assert.notEqual(v, w);
        assert.notEqual(v.tools[0], w.tools[0]);
        assert.notEqual(v.tools[0].inputSchema, w.tools[0].inputSchema);
      }
      seen.push(v);
      assert.equal(jobs.length, 1); // the next spare
      if (i !== 0) idle();
    }
    for (const v of seen) v.tools[0].inputSchema.properties.q.type = 'changed by a caller';
    assert.equal((await hit('d1')).v.tools[0].inputSchema.properties.q.type, 'string');
    // the listing changed: the ready spare is not the answer
    idle();
    let r = await changed('d2', 'B');
    assert.ok(r.v.tools[0].description.startsWith('Bd'));
    assert.equal(jobs.length, 1);
    idle();
    r = await hit('d2');
    assert.ok(r.v.tools[0].description.startsWith('Bd'));
    assert.equal(r.parsed, 0); // B's spare
    // an entry replaced while its spare waits: the late job makes nothing, the new entry's makes its spare
    assert.equal(jobs.length, 1);
    r = await changed('d3', 'C');
    assert.ok(r.v.tools[0].description.startsWith('Cd'));
    assert.equal(jobs.length, 2);
    const before = parses;
    idle();
    assert.equal(parses - before, 1);
    r = await hit('d3');
    assert.ok(r.v.tools[0].description.startsWith('Cd'));
    assert.equal(r.parsed, 0);
    // one spare at a time: the listing used last
    p = t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 's' } });
    ws.reply(lastId(), listing('S'));
    await p;
    r = await hit('d3');
    assert.ok(r.v.tools[0].description.startsWith('Cd'));
    assert.equal(t.inflight(), 0);
  } finally {
    JSON.parse = parse;
  }
});

test('a listing error is the caller\'s, and nothing is kept of it', async () => {
  const { ws, t } = setup();
  const p = t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 'gone' } });
  ws.replyError(JSON.parse(ws.sent.at(-1)).id, '{"kind":"NotFound","code":"mcp.tool_set_not_found","message":"mcp.tool_set_not_found: gone"}');
  assert.equal((await settled(p)).error.code, 'mcp.tool_set_not_found');
  t.safeInvoke('list_legacy_mcp_tools', { dto: { toolSetId: 'gone' } });
  assert.equal(JSON.parse(ws.sent.at(-1)).command, 'list_legacy_mcp_tools');
});

test('progress: a call with onProgress asks for it and gets its own frames until its result, none after', async () => {
  const { ws, t, seen } = setup();
  const got = [];
  const other = [];
  const p = t.safeInvoke('call_legacy_mcp_tool', { dto: { executionCallId: 'e' } }, { onProgress: (v) => got.push(v) });
  const q = t.safeInvoke('list_mcp_servers', undefined, { onProgress: 'not a function' });
  const r = t.safeInvoke('test_mcp_tool_call', { dto: {} }, { onProgress: (v) => other.push(v) });
  assert.deepEqual(
    ws.sent.map((f) => JSON.parse(f)),
    [
      { type: 'invoke', id: 1, command: 'call_legacy_mcp_tool', args: { dto: { executionCallId: 'e' } }, progress: true },
      { type: 'invoke', id: 2, command: 'list_mcp_servers', args: {} },
      { type: 'invoke', id: 3, command: 'test_mcp_tool_call', args: { dto: {} }, progress: true },
    ],
  );
  const frame = (id, value) => ws.deliver(JSON.stringify({ type: 'progress', id, value }));
  frame(1, { progress: 1, total: 5, message: 'step 1 of 5', updates: 1 });
  frame(2, { progress: 9, updates: 1 }); // a call that did not ask: dropped
  frame(3, { progress: 7, updates: 3 });
  frame(1, { progress: 2, total: 5, message: 'step 2 of 5', updates: 2 });
  frame(1, 'not an object');
  ws.reply(1, '{"outcome":"known_response"}');
  frame(1, { progress: 3, total: 5, updates: 3 }); // after the result: dropped
  assert.deepEqual(got, [
    { progress: 1, total: 5, message: 'step 1 of 5', updates: 1 },
    { progress: 2, total: 5, message: 'step 2 of 5', updates: 2 },
  ]);
  assert.deepEqual(other, [{ progress: 7, updates: 3 }]);
  assert.deepEqual(await p, { outcome: 'known_response' });
  ws.reply(2, 'null');
  await q;

  // a callback that throws is logged and keeps getting frames
  const errors = [];
  const log = console.error;
  console.error = (...a) => errors.push(a);
  try {
    let n = 0;
    t.safeInvoke('x', {}, {
      onProgress: () => {
        n++;
        throw new Error('boom');
      },
    });
    frame(4, { progress: 1, updates: 1 });
    frame(4, { progress: 2, updates: 2 });
    assert.equal(n, 2);
    assert.equal(errors.length, 2);
  } finally {
    console.error = log;
  }

  // Go's own calls (testCall) take it through send; drop forgets them all
  const got5 = [];
  const id = t.send('test_mcp_tool_call', '{"dto":{}}', (v) => got5.push(v));
  assert.equal(JSON.parse(ws.sent.at(-1)).progress, true);
  frame(id, { progress: 1, updates: 1 });
  t.drop();
  frame(id, { progress: 2, updates: 2 });
  assert.deepEqual(got5, [{ progress: 1, updates: 1 }]);
  // a call queued for Go passes its onProgress on
  const fn = () => {};
  await t.safeInvoke('call_legacy_mcp_tool', { dto: {} }, { onProgress: fn });
  assert.equal(seen.calls.at(-1)[2], fn);
});

test('apps: setRenderer says so in the handlers frame, on set and on every new socket; anything but a boolean is refused', () => {
  const { hooks } = fakeGo();
  const t = createTransport(hooks, layout);
  const ws = fakeSocket();
  t.open(ws);
  assert.deepEqual(ws.sent, []);
  t.setAppsRenderer(true);
  assert.deepEqual(ws.sent.map((f) => JSON.parse(f)), [{ type: 'handlers', elicitation: false, apps: true }]);
  assert.throws(() => t.setAppsRenderer('yes'), TypeError);
  t.drop();
  const next = fakeSocket();
  t.open(next);
  assert.deepEqual(next.sent.map((f) => JSON.parse(f)), [{ type: 'handlers', elicitation: false, apps: true }]);
  t.setAppsRenderer(false);
  assert.deepEqual(JSON.parse(next.sent.at(-1)), { type: 'handlers', elicitation: false, apps: false });
});

// An AbortSignal stand-in that counts its listeners.
function fakeSignal() {
  const sig = {
    aborted: false,
    listeners: new Set(),
    addEventListener(type, fn) {
      if (type === 'abort') this.listeners.add(fn);
    },
    removeEventListener(type, fn) {
      if (type === 'abort') this.listeners.delete(fn);
    },
    abort() {
      this.aborted = true;
      for (const fn of [...this.listeners]) fn();
    },
  };
  return sig;
}

const testInput = { registrationId: 'r1', nativeName: 'echo', argumentsJson: '{"n":9007199254740993}' };
const known = '{"outcome":"known_response","response":{"kind":"tool_result","isError":false,"textBlocks":[],"diagnostics":[]}}';

test('testCall: one run_mcp_test_call frame with the input and a fresh call id; the outcome as the backend gave it', async () => {
  const { ws, t, seen } = setup();
  const sig = fakeSignal();
  const input = { ...testInput };
  const p = t.testCall(input, { signal: sig });
  input.nativeName = 'changed'; // captured when called
  assert.equal(ws.sent.length, 1);
  const f = JSON.parse(ws.sent[0]);
  assert.equal(f.command, 'run_mcp_test_call');
  assert.match(f.args.dto.callId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual({ ...f.args.dto, callId: undefined }, { ...testInput, callId: undefined });
  assert.ok(ws.sent[0].includes('9007199254740993')); // argumentsJson stays a string
  assert.equal(sig.listeners.size, 1);
  ws.reply(f.id, known);
  assert.deepEqual(await p, JSON.parse(known));
  assert.equal(sig.listeners.size, 0);
  sig.abort(); // after the answer: nothing is sent
  assert.equal(ws.sent.length, 1);
  const p2 = t.testCall(testInput);
  const f2 = JSON.parse(ws.sent[1]);
  assert.notEqual(f2.args.dto.callId, f.args.dto.callId);
  ws.reply(f2.id, known);
  await p2;
  assert.deepEqual(seen.testCalls, []);
});

test('testCall: an abort in flight sends cancel_mcp_test_call once, on its socket, and the outcome is still the backend\'s', async () => {
  const { ws, t } = setup();
  const sig = fakeSignal();
  const p = t.testCall(testInput, { signal: sig });
  const f = JSON.parse(ws.sent[0]);
  sig.abort();
  sig.abort();
  assert.equal(ws.sent.length, 2);
  const c = JSON.parse(ws.sent[1]);
  assert.deepEqual([c.command, c.args], ['cancel_mcp_test_call', { dto: { callId: f.args.dto.callId } }]);
  ws.reply(c.id, 'null');
  const notSent = '{"outcome":"not_sent","code":"mcp.call_cancelled_before_send","message":"m"}';
  ws.reply(f.id, notSent);
  assert.deepEqual(await p, JSON.parse(notSent));
  assert.equal(t.inflight(), 0);
});

test('testCall: the backend\'s error rejects; a dropped socket makes it outcome_unknown and cancels nothing on the next', async () => {
  const { ws, t } = setup();
  const p = t.testCall(testInput);
  ws.replyError(JSON.parse(ws.sent[0]).id, '{"kind":"Conflict","code":"mcp.call_id_in_use","message":"mcp.call_id_in_use: active"}');
  const r = await settled(p);
  assert.equal(r.error.code, 'mcp.call_id_in_use');

  const sig = fakeSignal();
  const q = t.testCall(testInput, { signal: sig });
  const list = t.method('list_mcp_servers', 'none')();
  const lost = t.drop();
  assert.deepEqual([lost[0], lost[2]], ['run_mcp_test_call', 'list_mcp_servers']);
  lost[1](new GoError('mcp.host_connection_lost', 'lost'));
  lost[3](new GoError('mcp.host_connection_lost', 'lost list'));
  const out = await q;
  assert.deepEqual(out, layout.testCallLost);
  assert.notEqual(out, layout.testCallLost); // each caller's own object
  assert.equal((await settled(list)).error.message, 'lost list');
  const ws2 = fakeSocket();
  t.open(ws2);
  sig.abort();
  assert.deepEqual(ws2.sent, []);
});

test('testCall goes to Go without an open socket, with an aborted signal, and for large arguments; bad input rejects unsent', async () => {
  const { ws, t, seen } = setup();
  const sig = fakeSignal();
  sig.aborted = true;
  assert.equal(await t.testCall(testInput, { signal: sig }), 'go:testCall');
  const big = { ...testInput, argumentsJson: JSON.stringify({ s: 'x'.repeat(layout.maxFrame) }) };
  assert.equal(await t.testCall(big), 'go:testCall');
  const cyclic = { ...testInput };
  cyclic.self = cyclic;
  assert.match((await settled(t.testCall(cyclic))).error.message, /^args: /);
  assert.deepEqual(ws.sent, []);
  t.drop();
  assert.equal(await t.testCall(testInput), 'go:testCall');
  assert.equal(seen.testCalls.length, 3);
  assert.equal(seen.testCalls[0][0], testInput);
});

test('testCall without crypto.randomUUID (an insecure context) makes a v4 id from getRandomValues', async () => {
  const { ws, t } = setup();
  const real = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  const getRandomValues = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  Object.defineProperty(globalThis, 'crypto', { value: { getRandomValues }, configurable: true });
  try {
    const p = t.testCall(testInput);
    const f = JSON.parse(ws.sent[0]);
    assert.match(f.args.dto.callId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    ws.reply(f.id, known);
    await p;
  } finally {
    Object.defineProperty(globalThis, 'crypto', real);
  }
});

test('testCall: progress frames reach onProgress until the outcome', async () => {
  const { ws, t } = setup();
  const got = [];
  const p = t.testCall(testInput, { onProgress: (v) => got.push(v.progress) });
  const f = JSON.parse(ws.sent[0]);
  assert.equal(f.progress, true);
  ws.deliver(JSON.stringify({ type: 'progress', id: f.id, value: { progress: 1 } }));
  ws.reply(f.id, known);
  ws.deliver(JSON.stringify({ type: 'progress', id: f.id, value: { progress: 2 } }));
  await p;
  assert.deepEqual(got, [1]);
});
