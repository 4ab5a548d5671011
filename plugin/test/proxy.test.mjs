// The plugin's forwarding proxy behind the stand-in of SillyTavern's gate,
// against a fake backend that records what reaches it (contract §1).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { createSillyTavern } from './sillytavern.mjs';
import { browser, fakeBackend, installPlugin, listen, tempDir, writeSecret } from './helpers.mjs';

const basic = (user, pass) => 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64');
const ACCOUNTS = {
    alice: { name: 'Alice', password: 'a-pass', admin: true },
    bob: { name: 'Bob', password: 'b-pass', admin: false },
};

/**
 * A stand-in SillyTavern with the plugin installed, a fake backend and its secret.
 * @param {import('node:test').TestContext} t
 * @param {object} o  stand-in options (sillytavern.mjs) and routes of the fake backend
 */
async function setup(t, o = {}) {
    const backend = await fakeBackend(o.routes);
    const st = tempDir();
    const dataRoot = path.join(st, 'ttmcp-data');
    const secret = o.noSecret ? '' : writeSecret(dataRoot);
    const pluginsDir = installPlugin(st, { backendUrl: o.backendUrl ?? backend.url, dataRoot, autostart: false });
    const { app, exit } = await createSillyTavern({ pluginsDir, ...o });
    const server = await listen(app);
    t.after(async () => {
        await server.close();
        await exit();
        await backend.close();
        fs.rmSync(st, { recursive: true, force: true });
    });
    return { base: server.base, backend, secret, dataRoot };
}

test('without SillyTavern\'s credentials: 401/403 and nothing reaches the backend', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, { basicAuth: { username: 'u', password: 'p' }, whitelist: ['127.0.0.1'], hostWhitelist: ['127.0.0.1'] });
    const cases = [
        ['no basic auth', browser(s.base), {}, 401],
        ['wrong password', browser(s.base, { authorization: basic('u', 'nope') }), {}, 401],
        ['address not on the whitelist', browser(s.base, { authorization: basic('u', 'p'), localAddress: '127.0.0.2' }), {}, 403],
        ['host not on the host whitelist', browser(s.base, { authorization: basic('u', 'p') }), { host: 'evil.example' }, 403],
    ];
    for (const [what, b, headers, want] of cases) {
        for (const p of ['/api/plugins/ttmcp/jsapi/session', '/api/plugins/ttmcp/_plugin/status']) {
            const r = await b.request(p, { headers });
            assert.equal(r.status, want, `${what}: ${p}`);
        }
        const r = await b.request('/api/plugins/ttmcp/transport', { method: 'POST', headers: { ...headers, 'x-csrf-token': 'x' } });
        assert.equal(r.status, want, `${what}: POST`);
    }
    assert.deepEqual(s.backend.received, []);
    // The same requests with the credentials pass (so the refusals above were the gate's).
    const ok = await browser(s.base, { authorization: basic('u', 'p') }).request('/api/plugins/ttmcp/jsapi/session');
    assert.equal(ok.status, 200);
    assert.equal(s.backend.received.length, 1);
    assert.equal(s.backend.received[0].headers['x-ttmcp-user'], 'default-user');
});

test('with user accounts: not logged in is 403; each session is its own user; the page names no user', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, { accounts: ACCOUNTS });
    const anon = browser(s.base);
    assert.equal((await anon.request('/api/plugins/ttmcp/jsapi/session')).status, 403);
    assert.equal((await anon.send('/api/plugins/ttmcp/transport', { body: '' })).status, 403);
    assert.deepEqual(s.backend.received, []);

    const alice = browser(s.base);
    const bob = browser(s.base);
    await alice.login('alice', 'a-pass');
    await bob.login('bob', 'b-pass');
    const forged = {
        'x-ttmcp-user': 'bob', 'X-Ttmcp-User-Admin': '1', 'x-ttmcp-plugin': 'f'.repeat(64),
        'x-ttmcp-origin': 'https://evil.example', 'x-ttmcp-prefix': '/elsewhere', 'x-ttmcp-other': 'x',
        authorization: basic('alice', 'a-pass'),
    };
    for (const [b, handle, admin] of [[alice, 'alice', '1'], [bob, 'bob', '0'], [alice, 'alice', '1']]) {
        const r = await b.request('/api/plugins/ttmcp/jsapi/session?x=1&y=%2F', { headers: { ...forged, 'x-ttmcp-user': handle === 'alice' ? 'bob' : 'alice' } });
        assert.equal(r.status, 200);
        const got = s.backend.received.at(-1);
        assert.equal(got.url, '/jsapi/session?x=1&y=%2F');
        assert.equal(got.headers['x-ttmcp-user'], handle);
        assert.equal(got.headers['x-ttmcp-user-admin'], admin);
        assert.equal(got.headers['x-ttmcp-plugin'], s.secret);
        assert.equal(got.headers['x-ttmcp-origin'], s.base);
        assert.equal(got.headers['x-ttmcp-prefix'], '/api/plugins/ttmcp');
        assert.equal(got.headers['x-ttmcp-other'], undefined);
        assert.equal(got.headers.cookie, undefined);
        assert.equal(got.headers.authorization, undefined);
        assert.equal(got.headers.host, `127.0.0.1:${s.backend.port}`);
        const ours = Object.keys(got.headers).filter((h) => h.startsWith('x-ttmcp-')).sort();
        assert.deepEqual(ours, ['x-ttmcp-origin', 'x-ttmcp-plugin', 'x-ttmcp-prefix', 'x-ttmcp-user', 'x-ttmcp-user-admin']);
    }

    // The status route is the plugin's own: it names the session's user and is not forwarded.
    const before = s.backend.received.length;
    const st = await bob.request('/api/plugins/ttmcp/_plugin/status', { headers: { 'x-ttmcp-user': 'alice' } });
    assert.equal(st.status, 200);
    const body = JSON.parse(st.body);
    assert.deepEqual({ ...body, version: typeof body.version }, { plugin: 'ttmcp', version: 'string', backend: 'up', user: 'bob' });
    assert.equal(st.headers['cache-control'], 'no-store');
    assert.equal(s.backend.received.length, before);
});

test('a state-changing request needs SillyTavern\'s CSRF token; the CSRF token never reaches the backend', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, {});
    const b = browser(s.base);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        assert.equal((await b.request('/api/plugins/ttmcp/transport', { method, body: 'x' })).status, 403, method);
        assert.equal((await b.request('/api/plugins/ttmcp/transport', { method, headers: { 'x-csrf-token': 'wrong' }, body: 'x' })).status, 403, method);
    }
    assert.deepEqual(s.backend.received, []);
    const r = await b.send('/api/plugins/ttmcp/transport/abc', { headers: { 'content-type': 'text/plain' }, body: '{"a":1}\n{"b":2}\n' });
    assert.equal(r.status, 200);
    const got = s.backend.received.at(-1);
    assert.equal(got.method, 'POST');
    assert.equal(got.body.toString(), '{"a":1}\n{"b":2}\n');
    assert.equal(got.headers['x-csrf-token'], undefined);
    assert.equal(got.headers['content-type'], 'text/plain');
});

test('a body bodyParser already read is sent again, encoded as it came', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, {});
    const b = browser(s.base);
    const json = { frames: [{ id: 1, name: 'é' }], n: 2 };
    await b.send('/api/plugins/ttmcp/echo', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
    let got = s.backend.received.at(-1);
    assert.deepEqual(JSON.parse(got.body.toString()), json);
    assert.equal(Number(got.headers['content-length']), got.body.length);
    await b.send('/api/plugins/ttmcp/echo', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=x%20y' });
    got = s.backend.received.at(-1);
    assert.equal(got.body.toString(), 'a=1&b=x+y');
    assert.equal(Number(got.headers['content-length']), got.body.length);
});

/**
 * A backend stream of two events, the second written only after the page
 * received the first: it arrives only if nothing between buffers it.
 */
function twoEvents(cacheControl) {
    let release = () => {};
    const second = new Promise((r) => { release = r; });
    return {
        release: () => release(),
        route: (_req, res) => {
            res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': cacheControl, 'X-Accel-Buffering': 'no' });
            res.write('data: {"first":true}\n\n');
            second.then(() => res.end('data: {"second":true}\n\n'));
        },
    };
}

/**
 * Reads the events of a streamed answer one by one.
 * @param {import('node:http').IncomingMessage} res
 */
function events(res) {
    const stream = res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res;
    let text = '';
    const queue = [];
    let wake = () => {};
    stream.on('data', (c) => {
        text += c.toString();
        let i;
        while ((i = text.indexOf('\n\n')) >= 0) { queue.push(text.slice(0, i)); text = text.slice(i + 2); }
        wake();
    });
    stream.on('end', () => { queue.push(null); wake(); });
    return async function next() {
        while (queue.length === 0) await new Promise((r) => { wake = r; });
        return queue.shift();
    };
}

test('an event stream passes compression() chunk by chunk', { timeout: 15_000 }, async (t) => {
    const plain = twoEvents('no-store, no-transform');
    const gz = twoEvents('no-store'); // no no-transform: compressed, still flushed per chunk
    const s = await setup(t, { routes: { '/transport/plain': plain.route, '/transport/gz': gz.route } });
    const b = browser(s.base);
    for (const [name, ev, encoding] of [['plain', plain, undefined], ['gz', gz, 'gzip']]) {
        const r = await b.request(`/api/plugins/ttmcp/transport/${name}`, { headers: { 'accept-encoding': 'gzip, deflate' }, stream: true });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-type'], 'text/event-stream');
        assert.equal(r.headers['content-encoding'], encoding, name);
        const next = events(r.res);
        assert.equal(await next(), 'data: {"first":true}', name); // before the backend wrote the second
        ev.release();
        assert.equal(await next(), 'data: {"second":true}', name);
        assert.equal(await next(), null);
    }
});

test('a big answer to a slow page through compression(): every byte, in order, and no drain listener left behind', { timeout: 30_000 }, async (t) => {
    // 4 MiB of incompressible bytes in 64 KiB chunks (a long result's
    // download), read by a page that stops now and then: the plugin pauses
    // the backend on backpressure and resumes on drain, through the zlib
    // stream compression() puts in between.
    const chunks = Array.from({ length: 64 }, () => crypto.randomBytes(64 * 1024));
    const s = await setup(t, { routes: { '/results/big': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        let i = 0;
        const more = () => { while (i < chunks.length) { if (!res.write(chunks[i++])) { res.once('drain', more); return; } } res.end(); };
        more();
    } } });
    const warnings = [];
    const onWarning = (w) => warnings.push(String(w));
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    const r = await browser(s.base).request('/api/plugins/ttmcp/results/big', { headers: { 'accept-encoding': 'gzip' }, stream: true });
    assert.equal(r.headers['content-encoding'], 'gzip');
    const got = [];
    const body = r.res.pipe(zlib.createGunzip());
    let n = 0;
    body.on('data', (c) => { got.push(c); if (++n % 8 === 0) { body.pause(); setTimeout(() => body.resume(), 20); } });
    await new Promise((resolve, reject) => { body.on('end', resolve); body.on('error', reject); });
    assert.ok(Buffer.concat(got).equals(Buffer.concat(chunks)), 'the page got other bytes than the backend sent');
    await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    assert.deepEqual(warnings.filter((w) => w.includes('MaxListeners')), []);
});

test('the page going away aborts the backend request', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, { routes: { '/transport/open': (_req, res) => { res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store, no-transform' }); res.write(': ping\n\n'); } } });
    const b = browser(s.base);
    const r = await b.request('/api/plugins/ttmcp/transport/open', { stream: true });
    await new Promise((resolve) => r.res.once('data', resolve));
    const closed = s.backend.changed();
    r.res.destroy();
    await closed;
    assert.equal(s.backend.received.at(-1).closedEarly, true);
});

test('backend down: 503 mcp.host_unavailable', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, {});
    await s.backend.close();
    const b = browser(s.base);
    const r = await b.request('/api/plugins/ttmcp/jsapi/session');
    assert.equal(r.status, 503);
    const body = JSON.parse(r.body);
    assert.equal(body.error.kind, 'Unavailable');
    assert.match(body.error.message, /^mcp\.host_unavailable: /);
    const st = JSON.parse((await b.request('/api/plugins/ttmcp/_plugin/status')).body);
    assert.equal(st.backend, 'down');
});

test('the page\'s origin as SillyTavern saw it: Host, or the first X-Forwarded-Proto/Host', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, {});
    const b = browser(s.base);
    await b.request('/api/plugins/ttmcp/x', { headers: { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'st.example, inner:8000' } });
    assert.equal(s.backend.received.at(-1).headers['x-ttmcp-origin'], 'https://st.example');
    await b.request('/api/plugins/ttmcp/x', { headers: { host: 'phone.lan:8000' } });
    assert.equal(s.backend.received.at(-1).headers['x-ttmcp-origin'], 'http://phone.lan:8000');
});

test('a 401 mcp.plugin_untrusted makes the plugin read the secret again (once) ', { timeout: 15_000 }, async (t) => {
    let current = '';
    const s = await setup(t, {
        routes: {
            '/check': (req, res) => {
                const ok = req.headers['x-ttmcp-plugin'] === current;
                res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
                res.end(ok ? '{"ok":true}' : '{"error":{"kind":"BadRequest","message":"mcp.plugin_untrusted: wrong secret"}}');
            },
        },
    });
    current = s.secret;
    const b = browser(s.base);
    assert.equal((await b.request('/api/plugins/ttmcp/check')).status, 200);
    // The backend restarted with a new secret: the next request is sent once
    // more with it, and the page sees only the success.
    current = writeSecret(s.dataRoot);
    const n = s.backend.received.length;
    const r = await b.request('/api/plugins/ttmcp/check');
    assert.equal(r.status, 200);
    assert.deepEqual(s.backend.received.slice(n).map((g) => g.headers['x-ttmcp-plugin']), [s.secret, current]);
    // A secret the backend does not take: the 401 reaches the page, the status says untrusted.
    current = 'other';
    const refused = await b.request('/api/plugins/ttmcp/check');
    assert.equal(refused.status, 401);
    assert.match(refused.body, /mcp\.plugin_untrusted/);
    assert.equal(JSON.parse((await b.request('/api/plugins/ttmcp/_plugin/status')).body).backend, 'untrusted');
});

test('no secret file (a backend that writes none, or another data root): 503 naming the file, status untrusted, nothing forwarded', { timeout: 15_000 }, async (t) => {
    const s = await setup(t, { noSecret: true });
    const b = browser(s.base);
    const st = JSON.parse((await b.request('/api/plugins/ttmcp/_plugin/status')).body);
    assert.equal(st.backend, 'untrusted');
    const r = await b.request('/api/plugins/ttmcp/jsapi/session');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body).error.message, /^mcp\.host_unavailable: .*_ttmcp[/\\]plugin-secret/);
    assert.deepEqual(s.backend.received, []);
    // ttmcp serve writes it: the next request reads it and passes
    const secret = writeSecret(s.dataRoot);
    assert.equal((await b.request('/api/plugins/ttmcp/jsapi/session')).status, 200);
    assert.equal(s.backend.received.at(-1).headers['x-ttmcp-plugin'], secret);
    assert.equal(JSON.parse((await b.request('/api/plugins/ttmcp/_plugin/status')).body).backend, 'up');
});
