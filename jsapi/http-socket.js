// A WebSocket-shaped object over ttmcp's HTTP transport (PROTOCOL.md "The
// HTTP transport"), for a page that reaches the backend through
// SillyTavern's server plugin: a plugin sees plain HTTP requests only, so
// there is no socket to upgrade to. The shim (wasm/conn.go) drives it
// exactly as it drives the browser's WebSocket; everything after the hello
// is the same protocol as /ws.
//
//   new HttpSocket(base, { csrf })
//     base: '<SillyTavern origin>/api/plugins/ttmcp' (the loader's own base)
//     csrf: the path of SillyTavern's CSRF token on the page's origin
//           ('/csrf-token', from the session answer)
//
// - open: POST <base>/transport → {id}; then GET <base>/transport/<id>,
//   read as a stream with fetch (not EventSource: fetch sends SillyTavern's
//   credentials the same way as every other request and lets us read the
//   close event); readyState OPEN and onopen once its headers arrived.
// - frames down: each event's data lines, joined by '\n', are one frame
//   (onmessage({data})); an 'event: close' event is the close
//   (onclose({code, reason, wasClean:true})); a stream that ends without
//   one closes with 1006, as a dropped socket.
// - frames up: send() queues; one POST <base>/transport/<id> at a time
//   carries what queued meanwhile, one frame per line, in order, at most
//   maxBatch bytes (a frame alone may be as large as the backend reads).
//   The first POST waits for the current task to end, so the frames sent
//   in one task go together (tools.testCall's start and call: one POST).
//   A POST that fails closes the transport (1006): its frames are lost, as
//   on a socket that dropped.
// - every POST and DELETE carries X-CSRF-Token, read once from
//   GET <csrf> and read again (once) when SillyTavern answers 403.
// - close(): DELETE <base>/transport/<id>, stream aborted, onclose.
//
// No token and no secret ever appears in a URL: the session token is in
// the hello frame, as on /ws, and the plugin secret never reaches the page.
// Credentials are 'same-origin': the page's cookies and basic auth go to
// SillyTavern's own origin only.

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

// The backend reads frames up to 4 MiB (jsapi.MaxInboundFrame) and a POST
// body up to that and one byte; a batch stays within it.
const MAX_BATCH = 4 << 20;

// csrfTokens caches SillyTavern's CSRF token per URL (one per page).
const csrfTokens = new Map();

function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export class HttpSocket {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;

  constructor(base, { csrf = '/csrf-token', fetch: fetchFn, maxBatch = MAX_BATCH } = {}) {
    this.url = String(base).replace(/\/+$/, '');
    this.readyState = CONNECTING;
    this.binaryType = 'blob'; // ignored: every frame is text
    this.bufferedAmount = 0;
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.onerror = null;
    // the page's fetch is called as a function, never as our method (a
    // browser's fetch throws 'Illegal invocation' with another this)
    this._fetch = fetchFn ?? ((url, init) => globalThis.fetch(url, init));
    this._csrfURL = new URL(csrf, this.url).href;
    this._maxBatch = maxBatch;
    this._abort = typeof AbortController === 'function' ? new AbortController() : null;
    this._id = null;
    this._queue = [];
    this._posting = false;
    this._start();
  }

  async _csrf(fresh) {
    let p = csrfTokens.get(this._csrfURL);
    if (fresh || !p) {
      p = this._fetch(this._csrfURL, { credentials: 'same-origin', cache: 'no-store' })
        .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`GET ${this._csrfURL} answered HTTP ${r.status}`))))
        .then((b) => (b && typeof b.token === 'string' ? b.token : ''));
      p.catch(() => csrfTokens.delete(this._csrfURL));
      csrfTokens.set(this._csrfURL, p);
    }
    return p;
  }

  // _changing sends a POST or DELETE with SillyTavern's CSRF token, asking
  // for it again once when SillyTavern refuses it (403: a new session).
  async _changing(method, url, body) {
    for (let attempt = 0; ; attempt++) {
      let token = '';
      try {
        token = await this._csrf(attempt > 0);
      } catch {
        // a SillyTavern without CSRF protection (or none at that path)
      }
      const headers = { 'X-CSRF-Token': token };
      if (body !== undefined) headers['Content-Type'] = 'text/plain;charset=UTF-8';
      const r = await this._fetch(url, { method, headers, body, credentials: 'same-origin', cache: 'no-store', keepalive: method === 'DELETE' });
      if (r.status !== 403 || attempt > 0) return r;
      await r.body?.cancel?.();
    }
  }

  async _start() {
    try {
      const r = await this._changing('POST', `${this.url}/transport`, undefined);
      if (r.status !== 201) throw new Error(`POST ${this.url}/transport answered HTTP ${r.status}`);
      const { id } = await r.json();
      if (typeof id !== 'string' || !/^[0-9a-f]{32}$/.test(id)) throw new Error('the backend gave no transport id');
      if (this.readyState !== CONNECTING) return this._delete(id); // closed meanwhile
      this._id = id;
      const init = { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/event-stream' } };
      if (this._abort) init.signal = this._abort.signal;
      const s = await this._fetch(`${this.url}/transport/${id}`, init);
      if (!s.ok || !s.body) throw new Error(`GET ${this.url}/transport/${id} answered HTTP ${s.status}`);
      if (this.readyState !== CONNECTING) return;
      this.readyState = OPEN;
      this._fire('onopen', { type: 'open' });
      this._flush();
      await this._read(s.body);
    } catch (err) {
      if (this.readyState === CLOSED) return;
      this._fire('onerror', { type: 'error', error: err });
      this._closed(1006, String(err?.message ?? err), false); // what failed, as the close's reason
    }
  }

  async _read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let data = null;
    let event = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data !== null) {
            if (event === 'close') {
              let code = 1005;
              let reason = '';
              try {
                const c = JSON.parse(data);
                if (Number.isInteger(c.code)) code = c.code;
                if (typeof c.reason === 'string') reason = c.reason;
              } catch {
                // a garbled close is still a close
              }
              reader.cancel().catch(() => {});
              this._closed(code, reason, true);
              return;
            }
            if (this.readyState === OPEN) this._fire('onmessage', { type: 'message', data });
          }
          data = null;
          event = '';
        } else if (line.startsWith(':')) {
          // a heartbeat
        } else if (line.startsWith('data:')) {
          const v = line.slice(line[5] === ' ' ? 6 : 5);
          data = data === null ? v : `${data}\n${v}`;
        } else if (line.startsWith('event:')) {
          event = line.slice(line[6] === ' ' ? 7 : 6);
        }
      }
      if (this.readyState === CLOSED) return;
    }
    this._closed(1006, '', false);
  }

  send(data) {
    if (this.readyState === CONNECTING) {
      throw new DOMException("Failed to execute 'send' on 'HttpSocket': Still in CONNECTING state.", 'InvalidStateError');
    }
    if (this.readyState !== OPEN) return;
    let frame = String(data);
    // One frame a line: a raw line break can only be whitespace between
    // JSON tokens (a JSON string holds none), so it becomes a space.
    if (frame.includes('\n')) frame = frame.replace(/\n/g, ' ');
    const size = utf8Length(frame);
    this._queue.push([frame, size]);
    this.bufferedAmount += size;
    this._flush();
  }

  // _flush sends what queued, one POST at a time, in order.
  async _flush() {
    if (this._posting || this.readyState !== OPEN || this._queue.length === 0) return;
    this._posting = true;
    try {
      await null; // what the same task sends next joins this batch
      while (this.readyState === OPEN && this._queue.length > 0) {
        const batch = [];
        let bytes = 0;
        while (this._queue.length > 0) {
          const [frame, size] = this._queue[0];
          if (batch.length > 0 && bytes + size + 1 > this._maxBatch) break;
          batch.push(frame);
          bytes += size + 1;
          this._queue.shift();
        }
        const r = await this._changing('POST', `${this.url}/transport/${this._id}`, `${batch.join('\n')}\n`);
        this.bufferedAmount -= bytes - batch.length;
        if (r.status !== 204) throw new Error(`POST ${this.url}/transport/${this._id} answered HTTP ${r.status}`);
      }
    } catch (err) {
      if (this.readyState === OPEN) {
        this._fire('onerror', { type: 'error', error: err });
        this._closed(1006, '', false);
      }
    } finally {
      this._posting = false;
    }
  }

  close(code, reason) {
    if (this.readyState === CLOSING || this.readyState === CLOSED) return;
    const id = this._id;
    this._closed(code ?? 1005, reason ?? '', true);
    if (id) this._delete(id);
  }

  _delete(id) {
    this._changing('DELETE', `${this.url}/transport/${id}`, undefined).catch(() => {});
  }

  _closed(code, reason, wasClean) {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this._queue = [];
    this.bufferedAmount = 0;
    this._abort?.abort();
    this._fire('onclose', { type: 'close', code, reason, wasClean });
  }

  _fire(name, ev) {
    const fn = this[name];
    if (typeof fn === 'function') fn.call(this, ev);
  }
}

export default HttpSocket;
