// The wasm bridge's data plane: the per-call path of api.mcp and
// invoke.safeInvoke, in JavaScript, created once by the Go shim
// (wasm/transport.go) through the loader's boot data.
//
// Why this is not Go: every entry from JavaScript into Go/wasm (a js.FuncOf
// call) runs syscall/js's event machinery and the Go scheduler, and every
// JavaScript object or string that Go holds is a js.Value with a finalizer,
// whose registration walks a per-span list; measured in Chromium on the
// development VM, one entry costs tens of µs and each value several, which
// is more than the whole per-call cost of a plain JavaScript client
// (docs/BENCHMARKS.md, "where the time goes"). So an ordinary call never
// enters Go: the method stub shapes the arguments, builds the frame, sends
// it on the open socket and keeps the call's resolve/reject in a table
// keyed by id; the socket's message handler cuts the result out of the
// frame, JSON.parses it and settles the call. Payloads stay JavaScript
// strings (SPEC §4.1).
//
// Go keeps the control plane and everything that is not the common case:
// it tells the transport which methods exist (command names and argument
// shapes, from the shared Go tables), opens the socket, does the handshake,
// hands the welcomed socket over (open) and takes it back when it closes
// (drop); calls made while no socket is open go to Go (hooks.call), which
// queues or refuses them; Go builds every Error (hooks.argsError,
// hooks.backendError, hooks.malformed, hooks.sendFailed, hooks.safeInvoke).
// tools.testCall is here too on an open socket (testCall below); the rest
// of its cases Go runs (hooks.testCall), sending its frames through send()
// and hearing their results through hooks.result.
//
// createTransport(hooks, layout):
//   hooks.call(command, argsText, onProgress) → Promise  a call while no socket is open, or too large for the fast path
//   hooks.safeInvoke(command, args)   → Promise  safeInvoke with arguments it must refuse
//   hooks.argsError(thrown)           → Error    JSON.stringify of the arguments failed
//   hooks.backendError(errorBody)     → Error    the error object of a result frame
//   hooks.malformed(command)          → Error    a result frame that cannot be read
//   hooks.sendFailed(thrown)          → Error    WebSocket.send threw
//   hooks.testCall(input, options)    → Promise  tools.testCall where the fast path does not serve
//                                                (no open socket, an aborted signal, large arguments)
//   hooks.result(id, status, value)              a result of a call Go sent: status 1 ok (value),
//                                                0 error (value is the error object), -1 malformed
//   hooks.event(name, data)                      optional: an event frame; by default it is dispatched
//                                                on globalThis as 'tauritavern-mcp:event', detail {event, data}
//   hooks.idle(fn)                               optional: runs fn in idle time (the kept listing's spare
//                                                parse); by default requestIdleCallback, timeout 1 s
//
// The page's elicitation handler lives here too (setElicitationHandler): the
// backend asks it with request frames and withdraws a question with a cancel
// frame; the transport tells each new socket whether there is one (a
// handlers frame, read by the backend in order with the invoke frames).
//   layout: the frame layout strings of jsapi (wire.go) and the inbound frame limit.
//
// The transport's methods, for Go:
//   method(command, shape) → the stub of an api.mcp method; shape is
//                            'none' | 'dto' | 'registrationId' | 'optionalDto' | 'id' |
//                            'registrationIdOrDto'
//   safeInvoke             → the stub of invoke.safeInvoke
//   testCall               → tools.testCall
//   open(ws)               → the welcomed socket: calls are sent on it, its frames read here
//   send(command, argsText, onProgress) → id: a call whose result goes to hooks.result
//   drop()                 → [command, reject, …]: the socket is gone; the calls this
//                            transport settles that were in flight, for Go to reject
//                            (the questions its handler was asked on it are withdrawn)
//   setElicitationHandler(fn | null) → api.mcp.elicitation.setHandler
//   setAppsRenderer(bool)  → api.mcp.apps.setRenderer (MCP Apps, issue 30)
//   inflight()             → how many calls are in flight (tests)
//
// Progress (issue 29): a call made with an onProgress function asks the
// backend for its progress ("progress":true in its invoke frame); the
// backend's progress frames for that invoke id ({"type":"progress","id":N,
// "value":McpCallProgress}) go to the function until the call's result
// settles it, and none after (the backend sends none after the result;
// a late or unknown one is dropped here too). A function that throws is
// logged and keeps getting them. safeInvoke(command, args, {onProgress})
// takes it as a third argument (ttmcp's addition).

// EVENT is the window event of the backend's event frames (jsapi.FrameEvent).
export const EVENT = 'tauritavern-mcp:event';

export function createTransport(hooks, layout) {
  const { invokeHead, invokeCommand, invokeArgs, invokeTail, invokeProgress, maxFrame } = layout;
  // Arguments up to this many UTF-16 units always fit in a frame (no unit
  // takes more than 3 bytes of UTF-8; 256 bytes cover the envelope of any
  // command name we send); larger ones go to Go, which measures them.
  const maxFastArgs = Math.floor((maxFrame - 256) / 3);

  // pending: id → a Call (settled here) or GO (settled by Go through hooks.result).
  const GO = Symbol('go');
  const pending = new Map();
  // progress: id → the onProgress function of a call in flight that asked.
  const progress = new Map();
  let ws = null;
  let nextID = 0;

  // quoted command names, for the frames
  const quoted = new Map();
  function quote(command) {
    let q = quoted.get(command);
    if (q === undefined) {
      q = JSON.stringify(command);
      if (quoted.size < 64) quoted.set(command, q); // safeInvoke takes any name: keep the table small
    }
    return q;
  }

  function frame(id, command, args, onProgress) {
    const tail = typeof onProgress === 'function' ? invokeProgress + invokeTail : invokeTail;
    return invokeHead + id + invokeCommand + quote(command) + invokeArgs + args + tail;
  }

  // listen keeps a call's onProgress until its result.
  function listen(id, onProgress) {
    if (typeof onProgress === 'function') progress.set(id, onProgress);
  }

  // progressed hands a progress frame to its call's function.
  function progressed(v) {
    const fn = progress.get(v.id);
    if (fn === undefined || !isObject(v.value)) return; // ended, or never asked
    try {
      fn(v.value);
    } catch (err) {
      console.error('ttmcp bridge: an onProgress callback threw:', err);
    }
  }

  // call sends one call on the open socket and returns its Promise, or
  // returns undefined when it cannot (no open socket, arguments that may be
  // too large): the caller then hands it to Go. onProgress, when a
  // function, takes the call's progress frames; onFrame, when given, gets
  // the text of a successful result's frame before the call settles.
  function call(command, args, onProgress, onFrame) {
    if (ws === null || args.length > maxFastArgs) return undefined;
    const c = newCall(command, onFrame);
    try {
      sendCall(c, args, onProgress);
    } catch (err) {
      return Promise.reject(hooks.sendFailed(err));
    }
    return c.promise;
  }

  // newCall is a call of command this transport settles: its promise, its
  // resolve/reject, the onFrame it may have, and lost (drop settles it
  // with that instead of handing its reject to Go, when set).
  function newCall(command, onFrame) {
    const c = { command, promise: null, resolve: null, reject: null, onFrame, lost: null };
    c.promise = new Promise((res, rej) => {
      c.resolve = res;
      c.reject = rej;
    });
    return c;
  }

  // sendCall writes c's invoke frame on the open socket (WebSocket.send
  // may throw) and keeps c for its result; returns its id.
  function sendCall(c, args, onProgress) {
    const id = ++nextID;
    ws.send(frame(id, c.command, args, onProgress));
    pending.set(id, c);
    listen(id, onProgress);
    return id;
  }

  // newCallID is a v4 UUID: crypto.randomUUID(), or one made from
  // crypto.getRandomValues where randomUUID is missing (an insecure
  // context: a SillyTavern page at a LAN address over http); undefined
  // without either (Go then says why).
  function newCallID() {
    const c = globalThis.crypto;
    if (typeof c?.randomUUID === 'function') return c.randomUUID();
    if (typeof c?.getRandomValues !== 'function') return undefined;
    const b = c.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  // testCall is tools.testCall(input, {signal, onProgress}) on an open
  // socket: one run_mcp_test_call frame carries reference §1.5's start and
  // test_mcp_tool_call (issue 31; the backend runs them in turn and
  // answers once), and an abort sends cancel_mcp_test_call on the same
  // socket. The backend's outcome is returned as it is, even after an
  // abort; its error (a failed start, a refused dto) rejects, with nothing
  // left registered; a socket that drops once the frame is written
  // resolves outcome_unknown (the tool may have run). Without an open
  // socket, with a signal aborted already, or with arguments that may not
  // fit a frame, Go runs it (hooks.testCall: queued, refused, measured).
  function testCall(input, options) {
    const signal = isObject(options) ? options.signal : undefined;
    const onProgress = isObject(options) && typeof options.onProgress === 'function' ? options.onProgress : undefined;
    const callId = ws === null || (isObject(signal) && signal.aborted) ? undefined : newCallID();
    if (callId === undefined) return hooks.testCall(input, options);
    let args;
    try {
      // captured now: dto = Object.assign({}, input, {callId})
      args = JSON.stringify({ dto: Object.assign({}, input, { callId }) });
    } catch (err) {
      return Promise.reject(hooks.argsError(err));
    }
    if (args.length > maxFastArgs) return hooks.testCall(input, options);
    const listens = isObject(signal) && typeof signal.addEventListener === 'function';
    const c = newCall(layout.runTestCall);
    const promise = c.promise;
    const sock = ws;
    let id;
    try {
      id = sendCall(c, args, onProgress);
    } catch (err) {
      return Promise.reject(hooks.sendFailed(err));
    }
    c.lost = () => c.resolve({ ...layout.testCallLost });
    if (!listens) return promise;
    let cancelled = false;
    const onAbort = () => {
      if (cancelled || ws !== sock || !pending.has(id)) return; // once; answered; or its socket is gone (which cancelled it)
      cancelled = true;
      call(layout.cancelTestCall, JSON.stringify({ dto: { callId } }))?.catch(() => {});
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const unlisten = () => signal.removeEventListener?.('abort', onAbort);
    promise.then(unlisten, unlisten);
    return promise;
  }

  // A large model listing (list_legacy_mcp_tools, issue 31) is kept as its
  // frame's text, per arguments, with the digest the backend gave for it
  // (digest_legacy_mcp_tools, asked before the listing, so a digest never
  // names a newer listing than the text it is kept with). The next listing
  // with the same arguments asks for the digest first — a small round trip
  // — and, when it is the same, answers from the kept text instead of
  // carrying megabytes through the socket again. Small listings are not
  // kept (one round trip is all they cost).
  //
  // Every caller gets a value of its own, never one another caller has
  // seen: a fresh JSON.parse of the kept text. For the listing used last,
  // that parse is made ahead, in the page's idle time (the spare): the next
  // root with the same arguments takes it once its digest is confirmed, and
  // the next spare is made after it. Without a spare ready, the kept text
  // is parsed while the digest is asked (the two overlap). A spare is
  // handed out at most once, and only for the entry it was parsed from.
  const LIST = 'list_legacy_mcp_tools';
  const DIGEST = 'digest_legacy_mcp_tools';
  const KEEP_ABOVE = 256 * 1024; // characters of the frame
  const KEEP_AT_MOST = 4; // argument sets (the upstream listing, a few tool sets)
  const listings = new Map(); // args text → { args, frame, digest | null }
  let digests = true; // false once the backend said it does not know DIGEST
  // the spare: a parse of spare.entry's frame nobody has seen (value); the
  // entry whose parse waits for idle time (pending)
  const spare = { entry: null, value: undefined, pending: null };
  const idle =
    hooks.idle ??
    ((fn) => {
      if (typeof globalThis.requestIdleCallback === 'function') globalThis.requestIdleCallback(fn, { timeout: 1000 });
      else setTimeout(fn, 50);
    });

  function listLegacy(args) {
    const kept = digests ? listings.get(args) : undefined;
    if (kept === undefined) return fetchListing(args, null);
    const asked = call(DIGEST, args);
    if (asked === undefined) return fastOrGo(LIST, args);
    // what the kept text answers, ready before the digest is back (kept
    // without a digest, it cannot be the answer)
    const value = kept.digest === null ? undefined : (takeSpare(kept) ?? JSON.parse(kept.frame).value);
    return asked.then(
      (d) => {
        const digest = isObject(d) && typeof d.digest === 'string' ? d.digest : null;
        if (digest !== null && digest === kept.digest && listings.get(args) === kept) {
          prepareSpare(kept);
          return value;
        }
        return fetchListing(args, digest);
      },
      (err) => {
        forget(args);
        if (err?.code === 'mcp.command_unknown') digests = false; // an older backend
        return fetchListing(args, null);
      },
    );
  }

  function fetchListing(args, digest) {
    const keep = (frame) => {
      forget(args);
      if (frame.length < KEEP_ABOVE) return;
      const entry = { args, frame, digest };
      listings.set(args, entry);
      if (listings.size > KEEP_AT_MOST) forget(listings.keys().next().value);
      if (digest !== null) prepareSpare(entry); // without a digest it cannot be used yet
    };
    return call(LIST, args, undefined, keep) ?? hooks.call(LIST, args);
  }

  // forget drops what is kept for args (its spare too).
  function forget(args) {
    const entry = listings.get(args);
    listings.delete(args);
    if (entry !== undefined && spare.entry === entry) {
      spare.entry = null;
      spare.value = undefined;
    }
  }

  // takeSpare returns entry's spare, if one is ready, and forgets it.
  function takeSpare(entry) {
    if (spare.entry !== entry || spare.value === undefined) return undefined;
    const value = spare.value;
    spare.value = undefined;
    return value;
  }

  // prepareSpare makes entry's next spare in idle time (one spare at a
  // time: the listing used last).
  function prepareSpare(entry) {
    if (spare.entry !== entry) {
      spare.entry = entry;
      spare.value = undefined;
    }
    if (spare.value !== undefined || spare.pending === entry) return;
    spare.pending = entry;
    idle(() => {
      if (spare.pending === entry) spare.pending = null;
      if (spare.entry !== entry || spare.value !== undefined || listings.get(entry.args) !== entry) return;
      spare.value = JSON.parse(entry.frame).value;
    });
  }

  function fastOrGo(command, args, onProgress) {
    return call(command, args, onProgress) ?? hooks.call(command, args, onProgress);
  }

  function isObject(v) {
    return (typeof v === 'object' && v !== null) || typeof v === 'function';
  }

  // shapeArgs returns the args JSON text of a method's command (the Go side
  // names the shape of each method: wasm/api.go).
  function shapeArgs(shape, input) {
    switch (shape) {
      case 'none':
        return '{}';
      case 'registrationId':
        // {registrationId: typeof input === 'string' ? input : input?.registrationId}
        return JSON.stringify({
          dto: { registrationId: typeof input === 'string' ? input : isObject(input) ? input.registrationId : undefined },
        });
      case 'optionalDto':
        return JSON.stringify({ dto: input ?? {} });
      case 'registrationIdOrDto':
        // a string id, or the whole input (resources.list({registrationId, refresh}))
        return JSON.stringify({ dto: typeof input === 'string' ? { registrationId: input } : (input ?? {}) });
      case 'id':
        // {id: typeof input === 'string' ? input : input?.id} (toolSets.remove)
        return JSON.stringify({ dto: { id: typeof input === 'string' ? input : isObject(input) ? input.id : undefined } });
      default:
        return JSON.stringify({ dto: input });
    }
  }

  function method(command, shape) {
    return function (input) {
      let args;
      try {
        args = shapeArgs(shape, input);
      } catch (err) {
        return Promise.reject(hooks.argsError(err));
      }
      return fastOrGo(command, args);
    };
  }

  // safeInvoke(command, args, options): any command with an upstream-shaped
  // args object; what it must refuse, Go refuses (with its messages).
  // options.onProgress (ttmcp's) takes the progress of the call it makes.
  function safeInvoke(command, args, options) {
    const onProgress = isObject(options) && typeof options.onProgress === 'function' ? options.onProgress : undefined;
    if (typeof command !== 'string' || command === '' || (args != null && (typeof args !== 'object' || Array.isArray(args)))) {
      return hooks.safeInvoke(command, args);
    }
    let text = '{}';
    if (args != null) {
      try {
        text = JSON.stringify(args);
      } catch (err) {
        return Promise.reject(hooks.argsError(err));
      }
      if (typeof text !== 'string') return hooks.safeInvoke(command, args); // a toJSON without a JSON form
    }
    if (command === LIST) return listLegacy(text);
    return fastOrGo(command, text, onProgress);
  }

  // The page's elicitation handler, and the backend's questions it is
  // answering: request id → AbortController (aborted when withdrawn).
  let handler = null;
  const questions = new Map();

  function sendHandlers() {
    if (ws === null) return;
    try {
      ws.send(JSON.stringify({ type: 'handlers', elicitation: handler !== null, apps }));
    } catch {
      // the socket is closing: the next one is told on open
    }
  }

  // Whether the page renders MCP Apps (api.mcp.apps.setRenderer): the
  // backend then declares the io.modelcontextprotocol/ui extension on this
  // page's requests, and on no other page's.
  let apps = false;
  function setAppsRenderer(on) {
    if (typeof on !== 'boolean') throw new TypeError('api.mcp.apps.setRenderer takes true or false');
    apps = on;
    sendHandlers();
  }

  function setElicitationHandler(fn) {
    if (fn !== null && fn !== undefined && typeof fn !== 'function') {
      throw new TypeError('api.mcp.elicitation.setHandler takes a function or null');
    }
    handler = fn ?? null;
    sendHandlers();
  }

  // answer normalizes what a handler resolved to: an action the protocol
  // has, and content only with accept, as a plain object.
  function answer(value) {
    const action = isObject(value) ? value.action : undefined;
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return { action: 'cancel' };
    const out = { action };
    if (action === 'accept' && isObject(value.content) && !Array.isArray(value.content)) out.content = value.content;
    return out;
  }

  // question runs the page's handler for one request frame and answers on
  // the socket that asked (a stale answer never reaches a newer socket,
  // whose ids start again). No handler, an unknown method, or a handler that
  // throws answers cancel; a withdrawn question is not answered.
  async function question(v) {
    const id = v.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return;
    const sock = ws;
    const respond = (value) => {
      if (ws !== sock || sock === null) return;
      let frame;
      try {
        frame = JSON.stringify({ type: 'response', id, ok: true, value });
      } catch {
        frame = JSON.stringify({ type: 'response', id, ok: true, value: { action: 'cancel' } });
      }
      try {
        sock.send(frame);
      } catch {
        // closing: the backend answers cancel for a closed page
      }
    };
    const ask = handler;
    if (v.method !== 'elicitation' || ask === null) {
      respond({ action: 'cancel' });
      return;
    }
    const ac = new AbortController();
    questions.set(id, ac);
    let value;
    try {
      value = await ask(v.params, { signal: ac.signal });
    } catch {
      value = { action: 'cancel' };
    }
    if (questions.get(id) === ac) questions.delete(id);
    if (ac.signal.aborted) return;
    respond(answer(value));
  }

  function withdraw(id) {
    const ac = questions.get(id);
    if (ac === undefined) return;
    questions.delete(id);
    ac.abort();
  }

  // event hands an event frame to the page: the backend tells every page
  // what changed without its asking (a server's lists it followed).
  const event =
    hooks.event ??
    ((name, data) => {
      if (typeof globalThis.dispatchEvent === 'function' && typeof CustomEvent === 'function') {
        globalThis.dispatchEvent(new CustomEvent(EVENT, { detail: { event: name, data } }));
      }
    });

  // settle hands a result to its call; status 1 ok, 0 error, -1 malformed.
  function settle(id, status, value) {
    const c = pending.get(id);
    if (c === undefined) return; // an unknown id: nothing to settle
    pending.delete(id);
    progress.delete(id);
    if (c === GO) {
      hooks.result(id, status, value);
    } else if (status === 1) {
      c.resolve(value);
    } else if (status === 0) {
      c.reject(hooks.backendError(value));
    } else {
      c.reject(hooks.malformed(c.command));
    }
  }

  // receive handles one frame of the open socket: parsed whole by the
  // page's JSON.parse, as a plain client would (the value is most of it).
  function receive(data) {
    if (typeof data !== 'string') return; // the protocol is text frames only
    let v;
    try {
      v = JSON.parse(data);
    } catch {
      malformed(data);
      return;
    }
    if (!isObject(v)) {
      malformed(data);
      return;
    }
    if (v.type === 'event') {
      if (typeof v.event === 'string') event(v.event, v.data);
      return;
    }
    if (v.type === 'request') {
      void question(v);
      return;
    }
    if (v.type === 'cancel') {
      withdraw(v.id);
      return;
    }
    if (v.type === 'progress') {
      progressed(v);
      return;
    }
    if (v.type !== 'result') return; // a frame this page does not know: ignore
    const id = v.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return;
    if (v.ok === true) {
      const c = pending.get(id);
      if (c !== undefined && c !== GO && c.onFrame !== undefined) c.onFrame(data);
      settle(id, 1, v.value);
    } else settle(id, 0, v.error);
  }

  // malformed handles a frame that is not JSON: when its head names a call
  // (the backend writes results in a fixed layout, jsapi.ResultHead), that
  // call fails instead of hanging.
  function malformed(data) {
    const id = resultHeadID(data, layout);
    if (id >= 0) {
      settle(id, -1); // an unknown id: nothing to settle
      return;
    }
    console.error('ttmcp bridge: ignoring a malformed frame from the backend');
  }

  function onmessage(ev) {
    receive(ev.data);
  }

  return {
    method,
    safeInvoke,
    testCall,
    open(socket) {
      ws = socket;
      ws.onmessage = onmessage;
      if (handler !== null || apps) sendHandlers();
    },
    send(command, args, onProgress) {
      const id = ++nextID;
      ws.send(frame(id, command, args, onProgress));
      pending.set(id, GO);
      listen(id, onProgress);
      return id;
    },
    drop() {
      ws = null;
      progress.clear();
      for (const id of [...questions.keys()]) withdraw(id);
      const lost = [];
      for (const c of pending.values()) if (c !== GO) lost.push(c.command, c.lost ?? c.reject);
      pending.clear();
      return lost;
    },
    inflight() {
      return pending.size;
    },
    setElicitationHandler,
    setAppsRenderer,
  };
}

// resultHeadID returns the id of a result frame that starts in the fixed layout
// of jsapi.ResultHead, {"type":"result","id":N,"ok":true,"value":… or
// {"type":"result","id":N,"ok":false,"error":…, and -1 for any other
// frame. It is read only from frames that are not JSON (the shim used to
// cut the value out of the frame there, to keep it out of Go's memory; in
// JavaScript, JSON.parse of the whole frame costs the same).
export function resultHeadID(data, { resultHead, resultOK, resultError, maxIDDigits }) {
  if (!data.startsWith(resultHead)) return -1;
  const i = resultHead.length;
  let j = i;
  let id = 0;
  for (; j < data.length && j - i <= maxIDDigits; j++) {
    const c = data.charCodeAt(j);
    if (c < 48 || c > 57) break;
    id = id * 10 + (c - 48);
  }
  if (j === i || j - i > maxIDDigits || (data.charCodeAt(i) === 48 && j - i > 1)) return -1;
  if (!data.startsWith(resultOK, j) && !data.startsWith(resultError, j)) return -1;
  return id;
}
