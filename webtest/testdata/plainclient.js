// A plain-JavaScript client of the backend's command socket: the baseline
// the benchmarks measure the wasm bridge against. It speaks the same
// protocol (SPEC §5) with the same frames: fetch the session, open the
// socket, hello, then invoke frames built with JSON.stringify and results
// decoded with JSON.parse.

export async function connect(backend = location.origin) {
  const r = await fetch(backend + '/jsapi/session', { credentials: 'omit', cache: 'no-store' });
  if (!r.ok) throw new Error(`GET /jsapi/session answered HTTP ${r.status}`);
  const session = await r.json();
  const ws = new WebSocket(session.ws);
  await new Promise((resolve, reject) => {
    ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', token: session.token }));
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.type === 'welcome') resolve();
      else reject(new Error('expected a welcome, got ' + m.type));
    };
    ws.onclose = (e) => reject(new Error(`socket closed ${e.code} ${e.reason}`));
  });

  const pending = new Map();
  let nextID = 0;
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(Object.assign(new Error(m.error.message), { code: m.error.code, kind: m.error.kind }));
  };
  ws.onclose = () => {
    for (const p of pending.values()) p.reject(new Error('connection lost'));
    pending.clear();
  };

  return {
    invoke(command, args = {}) {
      const id = ++nextID;
      const { promise, resolve, reject } = Promise.withResolvers();
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ type: 'invoke', id, command, args }));
      return promise;
    },
    close() {
      ws.close();
    },
  };
}
