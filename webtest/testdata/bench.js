// Benchmarks of the wasm bridge against the plain-JavaScript client
// (plainclient.js), run in host.html by webtest/bench_test.go. Both talk to
// the same backend from the same page; every measure interleaves them
// (alternating which goes first) and returns raw samples in ms, which the
// Go side reduces to medians.

import { connect } from './plainclient.js';

const bridge = () => window.__TAURITAVERN__.api.mcp;
let plainClient;

async function clients() {
  plainClient ??= await connect(location.origin);
  const p = plainClient;
  return [
    ['bridge', () => bridge().servers.list()],
    ['plain', () => p.invoke('list_mcp_servers')],
  ];
}

function ordered(pair, round) {
  return round % 2 === 0 ? pair : [pair[1], pair[0]];
}

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

// sequential: `runs` runs of `calls` awaited list() round trips each.
// Returns per run the median per-call time and the run's mean per call.
export async function sequential(runs, calls) {
  const pair = await clients();
  for (let i = 0; i < 100; i++) for (const [, fn] of pair) await fn(); // warm-up
  const out = { bridge: [], plain: [] };
  for (let r = 0; r < runs; r++) {
    for (const [name, fn] of ordered(pair, r)) {
      const d = new Array(calls);
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) {
        const s = performance.now();
        await fn();
        d[i] = performance.now() - s;
      }
      out[name].push({ median: median(d), mean: (performance.now() - t0) / calls });
    }
  }
  return out;
}

// calls: `n` awaited list() calls through one client (for a profile).
export async function calls(name, n) {
  const fn = new Map(await clients()).get(name);
  for (let i = 0; i < n; i++) await fn();
}

// concurrent: `batches` batches of `size` list() calls in one Promise.all.
// Returns the time of each batch.
export async function concurrent(batches, size) {
  const pair = await clients();
  for (const [, fn] of pair) await Promise.all(Array.from({ length: size }, fn)); // warm-up
  const out = { bridge: [], plain: [] };
  for (let r = 0; r < batches; r++) {
    for (const [name, fn] of ordered(pair, r)) {
      const t0 = performance.now();
      await Promise.all(Array.from({ length: size }, fn));
      out[name].push(performance.now() - t0);
    }
  }
  return out;
}

// large: `reps` list() calls whose result is large, each timed until the
// parsed object is in hand. Also returns the result's JSON size, checked
// equal on both sides.
export async function large(reps) {
  const pair = await clients();
  const sizes = {};
  for (const [name, fn] of pair) sizes[name] = JSON.stringify(await fn()).length; // warm-up
  if (sizes.bridge !== sizes.plain) throw new Error(`results differ: ${sizes.bridge} vs ${sizes.plain} chars`);
  const out = { bridge: [], plain: [], chars: sizes.bridge };
  for (let r = 0; r < reps; r++) {
    for (const [name, fn] of ordered(pair, r)) {
      const t0 = performance.now();
      const v = await fn();
      out[name].push(performance.now() - t0);
      if (!Array.isArray(v.servers)) throw new Error('list() returned no servers');
    }
  }
  return out;
}

// testCalls: `n` awaited tools.testCall(input), each timed until its
// outcome is in hand; every outcome must be a known response.
export async function testCalls(n, input) {
  const d = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const out = await bridge().tools.testCall(input);
    d[i] = performance.now() - t0;
    if (out.outcome !== 'known_response') throw new Error('testCall: ' + JSON.stringify(out));
  }
  return d;
}

// blobs: `reps` round trips of a `size`-byte blob, each timed from
// setBlob until getBlob's bytes are in hand: through api.extension.store,
// and through the plain client sending the same two commands with the same
// base64 conversions (Uint8Array's toBase64/fromBase64). Returns the times
// of set and get apart.
export async function blobs(reps, size) {
  plainClient ??= await connect(location.origin);
  const p = plainClient;
  const store = window.__TAURITAVERN__.api.extension.store;
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
  const entry = (key) => ({ namespace: 'bench', key });
  const pair = [
    ['bridge', async () => {
      await store.setBlob({ ...entry('bridge.bin'), data: bytes });
      const t = performance.now();
      const blob = await store.getBlob(entry('bridge.bin'));
      return [t, new Uint8Array(await blob.arrayBuffer())];
    }],
    ['plain', async () => {
      await p.invoke('set_extension_store_blob', { ...entry('plain.bin'), dataBase64: bytes.toBase64() });
      const t = performance.now();
      const r = await p.invoke('get_extension_store_blob', entry('plain.bin'));
      const blob = new Blob([Uint8Array.fromBase64(r.content_base64)], { type: r.mime_type });
      return [t, new Uint8Array(await blob.arrayBuffer())];
    }],
  ];
  const same = (b) => b.length === bytes.length && b.every((x, i) => x === bytes[i]);
  for (const [name, fn] of pair) if (!same((await fn())[1])) throw new Error(name + ': the bytes differ'); // warm-up
  const out = { bridgeSet: [], bridgeGet: [], plainSet: [], plainGet: [] };
  for (let r = 0; r < reps; r++) {
    for (const [name, fn] of ordered(pair, r)) {
      const t0 = performance.now();
      const [t1] = await fn();
      const t2 = performance.now();
      out[name + 'Set'].push(t1 - t0);
      out[name + 'Get'].push(t2 - t1);
    }
  }
  return out;
}

// plainTestCalls: `n` test calls through the plain-JavaScript client, as
// the shim makes them (one run_mcp_test_call, issue 31): the backend's
// share of a test call without the wasm shim.
export async function plainTestCalls(n, input) {
  plainClient ??= await connect(location.origin);
  const d = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const out = await plainClient.invoke('run_mcp_test_call', { dto: { ...input, callId: crypto.randomUUID() } });
    d[i] = performance.now() - t0;
    if (out.outcome !== 'known_response') throw new Error('plain test call: ' + JSON.stringify(out));
  }
  return d;
}

// plainRoundTrips: `n` awaited round trips of a small command through the
// plain-JavaScript WebSocket client (the socket's floor under a call from
// the page). Returns each one's time.
export async function plainRoundTrips(n, command = 'list_mcp_servers') {
  plainClient ??= await connect(location.origin);
  const d = new Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await plainClient.invoke(command);
    d[i] = performance.now() - t0;
  }
  return d;
}
