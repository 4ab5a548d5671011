// ttmcp loader: publishes TauriTavern's MCP host API in any page.
//
//   <script type="module" src="http://127.0.0.1:7878/jsapi/tauritavern-mcp.js"></script>
//   await (window.__TAURITAVERN__?.ready ?? window.__TAURITAVERN_MAIN_READY__);
//   const mcp = window.__TAURITAVERN__.api.mcp;
//
// Synchronously, on evaluation, this module creates window.__TAURITAVERN__
// if absent (keeping any existing properties), sets its `ready` promise and
// window.__TAURITAVERN_MAIN_READY__ (the same promise), and sets
// __TAURITAVERN__.mcpBridge = { state: 'connecting', backend }. Then it
// loads wasm_exec.js and tauritavern-mcp.wasm from beside itself and runs
// the Go shim (../wasm), which publishes __TAURITAVERN__.api.mcp and
// __TAURITAVERN__.invoke.safeInvoke and connects to the backend's
// WebSocket.
//
// Boot data: the backend is where this module was served from, without
// /jsapi/<file> (the backend's origin, or SillyTavern's origin +
// /api/plugins/ttmcp through its server plugin). It reaches the shim through a private
// global that exists only while go.run() executes the Go main (which reads
// it synchronously, before its first block) and is deleted right after:
//
//   globalThis.__ttmcpBoot = { backend: '<base>', settled: () => void, session: Promise<Response>,
//                              transport: createTransport, httpSocket: HttpSocket }
//
// (session is GET /jsapi/session, started while the wasm downloads, so the
// shim's first connection does not wait for another round trip; transport
// is the bridge's data plane, bridge-transport.js beside this file: the
// per-call path of api.mcp in JavaScript, which the shim drives; httpSocket
// is http-socket.js beside this file, a WebSocket-shaped object over the
// HTTP transport, which the shim opens when the session says
// transport "http": a page reaching the backend through SillyTavern's
// plugin, which cannot upgrade to a WebSocket.)
//
// Credentials are 'same-origin': through SillyTavern's plugin the page's
// own cookies and basic auth must go along (SillyTavern's gate judges
// them); to a backend on another origin nothing is sent.
//
// The shim calls settled() once the API is published and its first
// handshake has settled (succeeded, failed or refused); `ready` then
// resolves. `ready` never rejects (as upstream): when the backend cannot be
// reached the API methods reject with an Error whose code is
// 'mcp.host_unavailable' and whose message names the backend; when the
// backend refuses this page's origin they reject with
// 'mcp.origin_not_allowed' and the backend's message (it names the origin
// and --allow-origin). When the shim itself cannot be loaded, or the Go
// program exits, this module publishes fallback methods that reject with
// 'mcp.host_unavailable', and resolves `ready`.
//
// Bridge status (ttmcp's, contract C2): __TAURITAVERN__.mcpBridge =
// { state, backend, error?, reconnect() } is kept current (state
// 'connecting' | 'open' | 'closed' | 'refused'; error {code, message} says
// why it is not open) and every change dispatches
// CustomEvent('tauritavern-mcp:state', { detail: { state } }) on window.
// reconnect() makes one attempt now and resolves when it has settled; after
// a refusal it is the only way (besides a call 30 s later) to try again. In
// the fallback it loads the shim again.
//
// Extension store: __TAURITAVERN__.api.extension.store (extension-store.js,
// beside this file) is published synchronously too; its methods wait for
// `ready` and then send their commands through the shim's safeInvoke.
//
// Importing this module twice (even from two URLs) boots the shim once.
//
// Cache: the backend serves this file with its five './<name>' URLs below
// (the wasm, wasm_exec.js, bridge-transport.js, extension-store.js,
// http-socket.js)
// rewritten to './<name>?v=<content version>' (jsapi.Assets), which it
// answers as immutable; this file itself is revalidated on every load, so
// a reload takes the rest from the HTTP cache without a round trip and a
// rebuilt backend is picked up at once. Each must stay written exactly
// once, as that literal (a Go test checks).

import { createTransport } from './bridge-transport.js';
import { createExtensionStore } from './extension-store.js';
import { HttpSocket } from './http-socket.js';

const BOOT_KEY = '__ttmcpBoot';
const LOADER_KEY = Symbol.for('ttmcp.loader');
const STATE_EVENT = 'tauritavern-mcp:state';
const CODE_HOST_UNAVAILABLE = 'mcp.host_unavailable';

const g = globalThis;
// Where this module was served from, without /jsapi/<file>: the backend's
// origin on the direct path, SillyTavern's origin + /api/plugins/ttmcp
// through its plugin. Every URL below derives from it.
const backend = new URL('..', import.meta.url).href.replace(/\/$/, '');

function hostAbi() {
  let tt = g.__TAURITAVERN__;
  if (tt === null || (typeof tt !== 'object' && typeof tt !== 'function')) {
    tt = {};
    g.__TAURITAVERN__ = tt;
  }
  return tt;
}

function childObject(parent, key) {
  let v = parent[key];
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
    v = {};
    parent[key] = v;
  }
  return v;
}

function setBridgeState(state) {
  const tt = hostAbi();
  const status = childObject(tt, 'mcpBridge');
  status.backend = status.backend ?? backend;
  if (status.state === state) return;
  status.state = state;
  if (typeof g.dispatchEvent === 'function' && typeof g.CustomEvent === 'function') {
    g.dispatchEvent(new g.CustomEvent(STATE_EVENT, { detail: { state } }));
  }
}

function unavailableError(reason) {
  return Object.assign(
    new Error(`${CODE_HOST_UNAVAILABLE}: cannot reach the ttmcp backend at ${backend}: ${reason}`),
    { code: CODE_HOST_UNAVAILABLE, kind: 'Unavailable' },
  );
}

// publishFallback installs methods that reject with mcp.host_unavailable,
// replacing a shim that could not start or has exited; the status says
// why, and its reconnect() loads the shim again.
function publishFallback(reason) {
  const error = unavailableError(reason);
  const fail = async () => {
    throw error;
  };
  shimInvoke = fail;
  const tt = hostAbi();
  childObject(tt, 'api').mcp = {
    servers: {
      list: fail, create: fail, update: fail, setState: fail,
      remove: fail, discover: fail, refresh: fail, signIn: fail, signOut: fail,
    },
    tools: { setPermission: fail, setDescriptionOverride: fail, testCall: fail },
    audit: { list: fail },
  };
  childObject(tt, 'invoke').safeInvoke = fail;
  const status = childObject(tt, 'mcpBridge');
  status.error = { code: error.code, message: error.message };
  status.reconnect = restart;
  setBridgeState('closed');
}

// restart loads and runs the shim again (the fallback's reconnect); it
// resolves when the new shim's first attempt has settled, or when it failed
// to start (the fallback is then published again).
let restarting = null;
function restart() {
  restarting ??= new Promise((resolve) => {
    setBridgeState('connecting');
    start(resolve);
  }).finally(() => {
    restarting = null;
  });
  return restarting;
}

function errorText(err) {
  if (err instanceof Error) return err.message || String(err);
  return String(err);
}

async function instantiate(url, response, imports) {
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    try {
      return await WebAssembly.instantiateStreaming(response, imports);
    } catch (err) {
      // e.g. a server that does not send Content-Type: application/wasm;
      // retried below without streaming.
      if (!(err instanceof TypeError)) throw err;
    }
  }
  const r = await fetch(url, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(`GET ${url} answered HTTP ${r.status}`);
  return WebAssembly.instantiate(await r.arrayBuffer(), imports);
}

async function start(settle) {
  const wasmURL = new URL('./tauritavern-mcp.wasm', import.meta.url).href;
  let done = false;
  const finish = (reason) => {
    if (reason !== undefined) publishFallback(reason);
    if (!done) {
      done = true;
      settle();
    }
  };
  try {
    // start the download while wasm_exec.js loads
    const response = fetch(wasmURL, { credentials: 'same-origin' });
    response.catch(() => {}); // reported through instantiate
    // and the session, which the shim's first connection attempt uses
    // (saving a round trip before ready); a failure there makes the shim
    // fetch it again.
    const session = fetch(`${backend}/jsapi/session`, { credentials: 'same-origin', cache: 'no-store' });
    session.catch(() => {});
    // wasm_exec.js is a classic script that defines globalThis.Go; it must
    // come from the toolchain that built the .wasm, so it is served beside it.
    await import(new URL('./wasm_exec.js', import.meta.url).href);
    const Go = g.Go;
    if (typeof Go !== 'function') throw new Error('wasm_exec.js did not define Go');
    const go = new Go();
    const { instance } = await instantiate(wasmURL, response, go.importObject);
    g[BOOT_KEY] = { backend, settled: () => finish(), session, transport: createTransport, httpSocket: HttpSocket };
    let exited;
    try {
      exited = go.run(instance); // runs Go main until it blocks: the API is published
    } finally {
      delete g[BOOT_KEY];
    }
    shimInvoke = hostAbi().invoke?.safeInvoke ?? shimInvoke;
    exited.then(
      () => finish('the bridge program exited'),
      (err) => finish(`the bridge program failed: ${errorText(err)}`),
    );
  } catch (err) {
    finish(`cannot load the bridge (${wasmURL}): ${errorText(err)}`);
  }
}

// shimInvoke sends one command: the shim's safeInvoke once it is
// published (or the fallback's), for the extension store.
let shimInvoke = async () => {
  throw unavailableError('the bridge has not started');
};

function boot() {
  let settle;
  const ready = new Promise((resolve) => {
    settle = () => resolve();
  });
  const store = createExtensionStore(async (command, args) => {
    await ready;
    return shimInvoke(command, args);
  });
  g[LOADER_KEY] = { ready, backend };
  const tt = hostAbi();
  tt.ready = ready;
  g.__TAURITAVERN_MAIN_READY__ = ready;
  const status = childObject(tt, 'mcpBridge');
  status.state = 'connecting';
  status.backend = backend;
  delete status.error;
  // Until the shim publishes its own status: wait for it, then ask it.
  const early = async () => {
    await ready;
    const current = hostAbi().mcpBridge;
    if (typeof current?.reconnect === 'function' && current.reconnect !== early) return current.reconnect();
  };
  status.reconnect = early;
  childObject(childObject(tt, 'api'), 'extension').store = store;
  start(settle);
  return ready;
}

function reuse(loaded) {
  const tt = hostAbi();
  if (!tt.ready) tt.ready = loaded.ready;
  if (!g.__TAURITAVERN_MAIN_READY__) g.__TAURITAVERN_MAIN_READY__ = loaded.ready;
  return loaded.ready;
}

/** Resolves (never rejects) once api.mcp and invoke.safeInvoke are published
 * and the first connection attempt to the backend has settled. */
export const ready = g[LOADER_KEY] ? reuse(g[LOADER_KEY]) : boot();

export default ready;
