// The page-level fuzz of the hostile-input suite (issue 9), driven by
// webtest/fuzz_test.go: random DTOs and args (JSON shapes, sizes, depths,
// lone surrogates, values JSON.stringify cannot write) through the host
// API and safeInvoke, and random frames on a raw WebSocket of the page.
// Everything is drawn from one seeded generator, so a seed replays a run.
//
// runBatch returns what the Go test checks on disk (the registration
// writes the API acknowledged, in order) and every broken promise found.

// mulberry32: a small seeded generator.
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = (k) => Math.floor(next() * k);
  const pick = (list) => list[n(list.length)];
  return { next, n, pick, chance: (p) => next() < p };
}

const HOSTILE = [
  '', ' ', '..', '../outside/a.json', '..\\..\\outside', '/etc/passwd', 'C:\\Windows\\win.ini', '%2e%2e%2f',
  'con', 'NUL', 'a\u0000b', '\u202e', '\ufeff', '__proto__', 'constructor', 'toString',
  '550e8400-e29b-41d4-a716-446655440000', 'mcp/x', 'mcp__a__b', 'http://127.0.0.1:9/mcp', 'file:///etc/passwd',
  'javascript:alert(1)', 'auto', 'active', 'paused', 'ask', 'allow', 'off', 'main', 'tauritavern.mcp-manager',
  'x'.repeat(251), 'é'.repeat(300), '😀', '😀'.slice(0, 1), '😀'.slice(1), '\ud800\ud800', 'a\udc00b', '\t\n\r',
];

const COMMANDS = [
  'list_mcp_servers', 'create_mcp_server', 'update_mcp_server', 'set_mcp_server_state', 'remove_mcp_server',
  'discover_mcp_tools', 'refresh_mcp_tools', 'set_mcp_tool_permission', 'set_mcp_tool_description_override',
  'start_mcp_test_call', 'test_mcp_tool_call', 'cancel_mcp_test_call', 'list_legacy_mcp_tools',
  'start_legacy_mcp_tool_call', 'call_legacy_mcp_tool', 'cancel_legacy_mcp_tool_call', 'list_mcp_audit_entries',
  'get_extension_store_json', 'try_get_extension_store_json', 'set_extension_store_json', 'update_extension_store_json',
  'rename_extension_store_key', 'delete_extension_store_json', 'list_extension_store_keys', 'list_extension_store_tables',
  'delete_extension_store_table', 'get_extension_store_blob', 'set_extension_store_blob', 'delete_extension_store_blob',
  'list_extension_store_blob_keys', 'no_such_command',
];

const REGISTRATION_WRITES = new Set(['create_mcp_server', 'update_mcp_server', 'set_mcp_server_state', 'remove_mcp_server',
  'set_mcp_tool_permission', 'set_mcp_tool_description_override']);

// json is JSON.stringify that never throws (BigInt, cycles): 'null' then.
function json(v) {
  try {
    return JSON.stringify(v) ?? 'null';
  } catch {
    return 'null';
  }
}

const KINDS = new Set(['BadRequest', 'NotFound', 'Conflict', 'Unavailable']);

function fuzzer(g, ids) {
  const f = {
    str() {
      switch (g.n(8)) {
        case 0: case 1: case 2: return g.pick(HOSTILE);
        case 3: return String.fromCharCode(0xd800 + g.n(0x800)); // a lone surrogate
        case 4: return g.pick('abcdefgh').repeat(1 << g.n(17));
        case 5: return Array.from({ length: g.n(12) }, () => String.fromCodePoint(g.n(0x30000))).join('');
        case 6: if (ids.length) return g.pick(ids);
      }
      return 's' + g.n(1000);
    },
    // A value, including what JSON.stringify drops, changes or refuses.
    value(depth) {
      switch (depth <= 0 ? g.n(9) : g.n(13)) {
        case 0: return null;
        case 1: return g.chance(0.5);
        case 2: return g.pick([0, -0, 1.5, -1, 2 ** 53 + 2, 1e308, NaN, Infinity, -Infinity]);
        case 3: case 4: return f.str();
        case 5: return undefined;
        case 6: return g.pick([() => 1, Symbol('s'), new Date(0), /re/g, new Map([[1, 2]])]);
        case 7: return g.chance(0.2) ? 10n : 'n';
        case 8: return g.pick(ids.length ? ids : ['x']);
        case 9: case 10: return Array.from({ length: g.n(6) }, () => f.value(depth - 1));
        default: {
          const o = {};
          for (let i = g.n(6); i > 0; i--) o[g.chance(0.5) ? f.str() : 'k' + g.n(9)] = f.value(depth - 1);
          return o;
        }
      }
    },
    deep(n) {
      let v = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    },
    id() {
      return ids.length && g.chance(0.7) ? g.pick(ids) : f.str();
    },
    // A DTO of the right shape with hostile values, then broken.
    dto(method) {
      const base = {
        create: { displayName: f.str(), endpoint: 'http://127.0.0.1:9/mcp', headers: { 'X-Key': f.str() }, protocolVersion: 'auto' },
        update: { registrationId: f.id(), displayName: f.str(), endpoint: 'http://127.0.0.1:9/mcp', headers: {}, protocolVersion: g.pick(['auto', '2025-06-18', f.str()]) },
        setState: { registrationId: f.id(), state: g.pick(['active', 'paused', f.str()]) },
        setPermission: { registrationId: f.id(), nativeName: f.str(), permission: g.pick(['off', 'ask', 'allow', f.str()]) },
        setDescriptionOverride: { registrationId: f.id(), nativeName: f.str(), override: g.chance(0.2) ? null : { description: f.str(), properties: { q: f.str() } } },
      }[method] ?? { registrationId: f.id() };
      return f.mutate(base);
    },
    mutate(o) {
      switch (g.n(8)) {
        case 0: case 1: case 2: return o; // the shape is right
        case 3: return f.value(3);
        case 4: return f.deep(1 + g.n(3000));
      }
      const keys = Object.keys(o);
      for (let i = 1 + g.n(3); i > 0; i--) {
        const k = keys.length ? g.pick(keys) : 'k';
        switch (g.n(4)) {
          case 0: delete o[k]; break;
          case 1: o[f.str()] = f.value(2); break;
          case 2: o[k] = f.value(3); break;
          default: o[k] = f.str();
        }
      }
      return o;
    },
  };
  return f;
}

// settle waits for p, or reports a hang (a promise that never settles).
async function settle(p, what) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('never settled: ' + what), { hang: true })), 20000);
  });
  try {
    return { ok: true, value: await Promise.race([p, hang]) };
  } catch (e) {
    return { ok: false, error: e };
  } finally {
    clearTimeout(timer);
  }
}

// clear reports what is wrong with a rejection, or '' if it is a clear
// error: an Error with a code and a kind a bad input may get, its message
// led by the code.
function unclear(e) {
  if (e?.hang) return e.message;
  if (!(e instanceof Error)) return 'rejected with a non-Error ' + String(e);
  if (!KINDS.has(e.kind)) return `kind ${e.kind} (${e.code}: ${e.message})`;
  if (!e.code || !e.message.startsWith(e.code + ': ')) return `message ${JSON.stringify(e.message)} not led by its code ${e.code}`;
  for (const bad of ['<nil>', 'jsontext:', 'cannot unmarshal', 'panic', '%!']) {
    if (e.message.includes(bad)) return `message ${JSON.stringify(e.message)} holds ${bad}`;
  }
  return '';
}

// A raw socket of the page's own, speaking the protocol by hand.
async function rawSocket() {
  const s = await (await fetch('/jsapi/session', { cache: 'no-store' })).json();
  const ws = new WebSocket(s.ws);
  const pending = new Map();
  let closed = null;
  await new Promise((resolve, reject) => {
    ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', token: s.token }));
    ws.onmessage = () => resolve();
    ws.onclose = (e) => reject(new Error(`raw socket closed ${e.code} ${e.reason}`));
  });
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  };
  const onClose = [];
  ws.onclose = (e) => {
    closed = { code: e.code, reason: e.reason };
    for (const f of onClose) f();
  };
  return {
    get closed() { return closed; },
    // send returns the result of id, or the close that ended the socket.
    send(frame, id) {
      return new Promise((resolve) => {
        if (closed) return resolve({ closed });
        pending.set(id, (m) => resolve({ result: m }));
        onClose.push(() => resolve({ closed }));
        ws.send(frame);
      });
    },
    close() { ws.close(); },
  };
}

const RAW_STRINGS = ['"\\ud83d"', '"x\\udc00y"', '"\\ud83d\\u0041"', '"\\u0000"', '"\\q"', '"\\u12"'];

// runBatch runs n random operations. It returns the acknowledged
// registration writes and every problem found.
export async function runBatch(seed, batch, n, ids) {
  const g = generator(seed ^ Math.imul(batch + 1, 0x9e3779b1));
  const f = fuzzer(g, ids);
  const api = window.__TAURITAVERN__.api;
  const problems = [];
  const writes = []; // [method, resolved value] of registration writes, in order
  const states = tt.states.length;
  let raw = null;
  for (let i = 0; i < n; i++) {
    const what = g.n(10);
    if (what < 5) { // the host API
      const method = g.pick(['create', 'update', 'setState', 'remove', 'discover', 'refresh', 'setPermission', 'setDescriptionOverride', 'list']);
      const fn = ['setPermission', 'setDescriptionOverride'].includes(method) ? api.mcp.tools[method] : api.mcp.servers[method];
      const arg = method === 'remove' || method === 'discover' || method === 'refresh'
        ? (g.chance(0.5) ? f.id() : f.dto(method)) : f.dto(method);
      const shown = json(arg).slice(0, 200);
      const r = await settle((async () => fn(arg))(), `${method}(${shown})`);
      if (!r.ok) {
        const why = unclear(r.error);
        if (why) problems.push(`${method}(${shown}): ${why}`);
      } else if (method !== 'list' && method !== 'discover' && method !== 'refresh') {
        writes.push([method, method === 'remove' ? (typeof arg === 'string' ? arg : arg?.registrationId) : r.value]);
      }
    } else if (what < 7) { // safeInvoke with any args
      const command = g.pick(COMMANDS);
      const args = g.chance(0.5) ? { dto: f.value(3) } : f.value(3);
      const r = await settle((async () => window.__TAURITAVERN__.invoke.safeInvoke(command, args))(), `safeInvoke(${command})`);
      if (!r.ok) {
        const why = unclear(r.error);
        if (why) problems.push(`safeInvoke(${command}): ${why}`);
      } else if (REGISTRATION_WRITES.has(command)) {
        writes.push(['invoke:' + command, r.value, json(args)]);
      }
    } else { // a raw frame on the page's own socket
      if (!raw || raw.closed) raw = await rawSocket();
      const id = batch * 100000 + i + 1;
      const readable = g.chance(0.7);
      let frame;
      if (readable) {
        const args = g.chance(0.5) ? json(f.value(3)) : `{"dto":{"displayName":${g.pick(RAW_STRINGS)},"endpoint":"x"}}`;
        frame = `{"type":"invoke","id":${id},"command":${JSON.stringify(g.pick(COMMANDS))},"args":${args}}`;
        if (g.chance(0.2)) frame = frame.slice(0, frame.length - 1 - g.n(Math.max(1, args.length)));
        // An id is enough to be answered: a missing or broken command is that request's error.
        if (g.chance(0.1)) frame = g.pick([`{"type":"invoke","id":${id}}`, `{"type":"invoke","id":${id},"command":null}`]);
      } else {
        frame = g.pick([`{"type":"invoke","id":-1,"command":"x"}`, `{"type":"invoke","command":"x"}`, `[1]`, `hello`,
          `{"type":"invoke","id":${id},"id":${id},"command":"x"}`, g.pick(RAW_STRINGS)]);
      }
      const r = await settle(raw.send(frame, id), 'raw frame ' + frame.slice(0, 200));
      if (!r.ok) {
        problems.push(`raw frame ${frame.slice(0, 200)}: ${r.error.message}`);
      } else if (readable && r.value.closed) {
        problems.push(`raw frame ${frame.slice(0, 200)}: the socket closed ${r.value.closed.code} ${r.value.closed.reason}; want a result`);
      } else if (!readable && !r.value.closed) {
        problems.push(`raw frame ${frame.slice(0, 200)}: answered ${JSON.stringify(r.value.result).slice(0, 200)}; want a close`);
      } else if (!readable && r.value.closed.code !== 1008) {
        problems.push(`raw frame ${frame.slice(0, 200)}: closed ${r.value.closed.code}; want 1008`);
      } else if (readable && !r.value.result.ok) {
        const e = Object.assign(new Error(r.value.result.error.message), r.value.result.error);
        const why = unclear(e);
        if (why) problems.push(`raw frame ${frame.slice(0, 200)}: ${why}`);
      }
    }
  }
  raw?.close();
  if (tt.states.length !== states || tt.state() !== 'open') {
    problems.push(`the bridge left open: states ${tt.states.slice(states).join(',')}, now ${tt.state()}`);
  }
  return { writes: JSON.stringify(writes), problems };
}
