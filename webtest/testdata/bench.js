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
