// node --test jsapi/http-socket.test.mjs (make test-js): the HTTP transport's
// page side against a real HTTP server (node:http) that speaks the
// backend's side of PROTOCOL.md "The HTTP transport" and SillyTavern's
// CSRF check. The real backend is tested with it in Go (backend/server
// transport_test.go) and in Chromium (webtest/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { HttpSocket } from './http-socket.js';

// fakeBackend serves /csrf-token and /api/plugins/ttmcp/transport…; it
// records every request, holds POSTs of frames while hold is set, and
// answers 403 to a stale CSRF token.
async function fakeBackend() {
  const st = {
    requests: [], // [method, url, csrf header, body]
    posts: [], // bodies of frame POSTs
    csrfIssued: 0,
    csrf: 'tok-1',
    streams: new Map(), // id → response
    hold: null, // a Promise frame POSTs wait for
    inFlight: 0,
    maxInFlight: 0,
    deleted: [],
    nextId: 1,
  };
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    st.requests.push([req.method, req.url, req.headers['x-csrf-token'], body]);
    const csrfOK = () => {
      if (req.headers['x-csrf-token'] === st.csrf) return true;
      res.writeHead(403).end('Invalid CSRF token');
      return false;
    };
    if (req.url === '/csrf-token') {
      st.csrfIssued++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token: st.csrf }));
      return;
    }
    const m = /^\/api\/plugins\/ttmcp\/transport(?:\/([0-9a-f]{32}))?$/.exec(req.url);
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const id = m[1];
    if (req.method === 'POST' && !id) {
      if (!csrfOK()) return;
      const nid = String(st.nextId++).padStart(32, '0');
      res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: nid }));
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store, no-transform' });
      res.write(': ping\n\n');
      st.streams.set(id, res);
      st.onStream?.(id, res);
      return;
    }
    if (req.method === 'POST') {
      if (!csrfOK()) return;
      st.inFlight++;
      st.maxInFlight = Math.max(st.maxInFlight, st.inFlight);
      st.posts.push(body);
      st.onPost?.(body);
      if (st.hold) await st.hold;
      st.inFlight--;
      res.writeHead(st.postStatus ?? 204).end();
      return;
    }
    if (req.method === 'DELETE') {
      if (!csrfOK()) return;
      st.deleted.push(id);
      st.streams.get(id)?.end();
      res.writeHead(204).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  st.origin = `http://127.0.0.1:${server.address().port}`;
  st.base = `${st.origin}/api/plugins/ttmcp`;
  st.close = () => {
    for (const r of st.streams.values()) r.destroy();
    server.closeAllConnections();
    server.close();
  };
  return st;
}

// opened returns a socket once it is open, with what it hears recorded.
async function opened(st, opts) {
  const s = new HttpSocket(st.base, { csrf: '/csrf-token', ...opts });
  s.heard = [];
  s.closedWith = new Promise((resolve) => {
    s.onclose = (ev) => resolve(ev);
  });
  s.onmessage = (ev) => s.heard.push(ev.data);
  s.errors = [];
  s.onerror = (ev) => s.errors.push(ev.error);
  await new Promise((resolve, reject) => {
    s.onopen = resolve;
    s.closedWith.then((ev) => reject(new Error(`closed ${ev.code}`)));
  });
  return s;
}

function until(cond, what) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const tick = () => {
      if (cond()) resolve();
      else if (Date.now() - start > 5000) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(tick, 2);
    };
    tick();
  });
}

function streamOf(st, s) {
  return st.streams.get(s._id);
}

test('frames both ways, in order; events are one frame each, data lines joined', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st);
  assert.equal(s.readyState, HttpSocket.OPEN);
  s.send('{"type":"hello","token":"secret-token"}');
  await until(() => st.posts.length === 1, 'the hello');
  assert.equal(st.posts[0], '{"type":"hello","token":"secret-token"}\n');
  const res = streamOf(st, s);
  res.write('data: {"type":"welcome"}\n\n');
  res.write(': ping\n\ndata: {"a":\ndata: 1}\n\n');
  res.write('data: {"split"'); // a frame across chunks
  res.write(':"yes"}\n\n');
  await until(() => s.heard.length === 3, 'three frames');
  assert.deepEqual(s.heard, ['{"type":"welcome"}', '{"a":\n1}', '{"split":"yes"}']);
  // no token and no secret in any URL
  for (const [, url] of st.requests) assert.ok(!url.includes('secret-token'), url);
  s.close();
});

test('POSTs are serialised, and what queued meanwhile goes in one batch, in order', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st);
  let release;
  st.hold = new Promise((resolve) => {
    release = resolve;
  });
  s.send('1');
  await until(() => st.posts.length === 1, 'the first POST');
  s.send('2');
  s.send('3\nwith a line break');
  s.send('4');
  assert.ok(s.bufferedAmount > 0);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(st.posts.length, 1, 'a second POST while the first is in flight');
  st.hold = null;
  release();
  await until(() => st.posts.length === 2 && st.inFlight === 0, 'the batch');
  assert.deepEqual(st.posts, ['1\n', '2\n3 with a line break\n4\n']);
  assert.equal(st.maxInFlight, 1);
  await until(() => s.bufferedAmount === 0, 'bufferedAmount back to 0');
  s.close();
});

test('frames sent in one task go in one POST', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st);
  s.send('start');
  s.send('call');
  await until(() => st.posts.length === 1 && st.inFlight === 0, 'the POST');
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(st.posts, ['start\ncall\n']);
  s.close();
});

test('a batch stays within maxBatch; a frame alone may fill it', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st, { maxBatch: 10 });
  let release;
  st.hold = new Promise((resolve) => {
    release = resolve;
  });
  s.send('a');
  await until(() => st.posts.length === 1, 'the first POST');
  s.send('bbbb');
  s.send('cccc');
  s.send('dddddddddddd'); // alone: above maxBatch
  st.hold = null;
  release();
  await until(() => st.posts.length === 3 && st.inFlight === 0, 'two more POSTs');
  assert.deepEqual(st.posts, ['a\n', 'bbbb\ncccc\n', 'dddddddddddd\n']);
  s.close();
});

test('the CSRF token is read once, again after a 403, and sent on every POST and DELETE', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const a = await opened(st);
  const b = await opened(st);
  assert.equal(st.csrfIssued, 1, 'read once for two transports');
  st.csrf = 'tok-2'; // SillyTavern's session changed
  a.send('x');
  await until(() => st.posts.length === 1, 'the POST after the refusal');
  assert.equal(st.csrfIssued, 2);
  const frames = st.requests.filter(([m, url]) => m === 'POST' && url.includes('/transport/'));
  assert.deepEqual(frames.map(([, , csrf]) => csrf), ['tok-1', 'tok-2']);
  b.close();
  await until(() => st.deleted.length === 1, 'the DELETE');
  const del = st.requests.find(([m]) => m === 'DELETE');
  assert.equal(del[2], 'tok-2');
  a.close();
});

test('a close event closes with its code and reason; a stream that just ends is 1006', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st);
  streamOf(st, s).end('event: close\ndata: {"code":1008,"reason":"ttmcp: invalid session token"}\n\n');
  const ev = await s.closedWith;
  assert.deepEqual([ev.code, ev.reason, ev.wasClean], [1008, 'ttmcp: invalid session token', true]);
  assert.equal(s.readyState, HttpSocket.CLOSED);
  s.send('ignored after close'); // as a closed WebSocket: no throw, nothing sent
  assert.equal(st.posts.length, 0);

  const d = await opened(st);
  streamOf(st, d).end();
  const dropped = await d.closedWith;
  assert.deepEqual([dropped.code, dropped.wasClean], [1006, false]);
});

test('close() deletes the transport and reports the close; send before open throws', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const early = new HttpSocket(st.base, { csrf: '/csrf-token' });
  assert.throws(() => early.send('x'), { name: 'InvalidStateError' });
  early.close();
  assert.equal(early.readyState, HttpSocket.CLOSED);
  const s = await opened(st);
  const id = s._id;
  s.close(1000, 'bye');
  const ev = await s.closedWith;
  assert.deepEqual([ev.code, ev.reason], [1000, 'bye']);
  await until(() => st.deleted.includes(id), 'the DELETE');
});

test('a refused POST of frames closes the transport with 1006 and an error', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = await opened(st);
  st.postStatus = 404; // mcp.transport_not_found: the backend dropped it
  s.send('x');
  const ev = await s.closedWith;
  assert.equal(ev.code, 1006);
  assert.equal(s.errors.length, 1);
});

test('a transport the backend will not open closes with 1006, its reason saying what was refused', async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const s = new HttpSocket(`${st.origin}/nowhere`, { csrf: '/csrf-token' });
  const ev = await new Promise((resolve) => {
    s.onclose = resolve;
  });
  assert.equal(ev.code, 1006);
  assert.equal(ev.wasClean, false);
  assert.equal(ev.reason, `POST ${st.origin}/nowhere/transport answered HTTP 404`);
});

test("the page's fetch is called as a function, as a browser's must be", async (t) => {
  const st = await fakeBackend();
  t.after(st.close);
  const real = globalThis.fetch;
  // A browser's fetch throws 'Illegal invocation' when called with another this.
  globalThis.fetch = function (url, init) {
    if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
    return real(url, init);
  };
  t.after(() => {
    globalThis.fetch = real;
  });
  const s = new HttpSocket(st.base, { csrf: '/csrf-token' });
  await new Promise((resolve, reject) => {
    s.onopen = resolve;
    s.onclose = (ev) => reject(new Error(`closed ${ev.code}`));
  });
  s.onclose = null;
  s.close();
});
