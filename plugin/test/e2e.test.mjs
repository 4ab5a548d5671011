// The whole path of issue 28 with no stand-in but SillyTavern's: a page's
// requests through the stand-in of SillyTavern 1.18.0's gate, the real
// plugin, and the real `ttmcp serve` it starts (TTMCP_BIN, built by
// `make test-plugin`) — the session, the HTTP transport, a command and its
// answer, and nothing for a request without SillyTavern's credentials.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { browser, freePort, installPlugin, listen, tempDir, until } from './helpers.mjs';
import { createSillyTavern } from './sillytavern.mjs';

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = process.env.TTMCP_BIN ?? path.join(repo, 'bin', 'ttmcp');
const AUTH = { username: 'st', password: 'pw' };
const authorization = 'Basic ' + Buffer.from('st:pw').toString('base64');
const PREFIX = '/api/plugins/ttmcp';

/**
 * SillyTavern with basic auth and two user accounts, the plugin installed
 * with the real binary, a scratch data root and a free port.
 * @param {import('node:test').TestContext} t
 */
async function sillyTavern(t, accounts = undefined) {
    assert.ok(fs.existsSync(BIN), `${BIN} is missing: build it with make backend (make test-plugin does)`);
    const dir = tempDir();
    const port = await freePort();
    const dataRoot = path.join(dir, 'data');
    const pluginsDir = installPlugin(path.join(dir, 'st'), { backendUrl: `http://127.0.0.1:${port}`, binary: BIN, dataRoot, autostart: true });
    const st = await createSillyTavern({
        basicAuth: AUTH,
        pluginsDir,
        ...(accounts ? { accounts } : {}),
    });
    const server = await listen(st.app);
    t.after(async () => {
        await st.exit();
        await server.close();
        fs.rmSync(dir, { recursive: true, force: true });
    });
    return { base: server.base, dataRoot };
}

/** A page (signed in as handle, with user accounts), once the backend the plugin started is up. */
async function page(base, handle = '', password = '') {
    const b = browser(base, { authorization });
    if (handle) await b.login(handle, password);
    await until(async () => JSON.parse((await b.request(`${PREFIX}/_plugin/status`)).body).backend === 'up', 'the plugin to report the backend up', 30_000);
    return b;
}

/**
 * Opens the HTTP transport as jsapi/http-socket.js does and says hello
 * with the session's token; returns a frame reader and a sender.
 */
async function connect(b) {
    const session = JSON.parse((await b.request(`${PREFIX}/jsapi/session`)).body);
    assert.equal(session.transport, 'http');
    assert.equal(typeof session.token, 'string');
    const opened = await b.send(`${PREFIX}/transport`);
    assert.equal(opened.status, 201, opened.body);
    const { id } = JSON.parse(opened.body);
    const stream = await b.request(`${PREFIX}/transport/${id}`, { stream: true });
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    /** @type {object[]} */
    const frames = [];
    let buffered = '';
    stream.res.setEncoding('utf8');
    stream.res.on('data', (chunk) => {
        buffered += chunk;
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const data = event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
            if (data) frames.push(JSON.parse(data));
        }
    });
    const send = async (...frame) => {
        const r = await b.send(`${PREFIX}/transport/${id}`, { headers: { 'content-type': 'text/plain' }, body: frame.map((f) => JSON.stringify(f)).join('\n') });
        assert.equal(r.status, 204, r.body);
    };
    await send({ type: 'hello', token: session.token });
    await until(() => frames.some((f) => f.type === 'welcome'), 'the welcome frame');
    let next = 1;
    /** Invokes a command and waits for its result frame. */
    const invoke = async (command, args) => {
        const id = next++;
        await send({ type: 'invoke', id, command, ...(args !== undefined ? { args } : {}) });
        await until(() => frames.some((f) => f.type === 'result' && f.id === id), `the result of ${command}`);
        return frames.find((f) => f.type === 'result' && f.id === id);
    };
    return { invoke, close: () => stream.res.destroy() };
}

test('a page behind SillyTavern’s gate lists, creates and lists again over the HTTP transport, through the real plugin and the ttmcp it started', { timeout: 90_000 }, async (t) => {
    const { base, dataRoot } = await sillyTavern(t);
    const alice = await connect(await page(base));
    t.after(() => alice.close());

    const empty = await alice.invoke('list_mcp_servers');
    assert.equal(empty.ok, true, JSON.stringify(empty));
    const created = await alice.invoke('create_mcp_server', { dto: { displayName: 'Remote', endpoint: 'https://mcp.example.com/mcp' } });
    assert.equal(created.ok, true, JSON.stringify(created));
    const listed = await alice.invoke('list_mcp_servers');
    assert.deepEqual(listed.value.servers.map((/** @type {{displayName: string}} */ s) => s.displayName), ['Remote']);
    // the secret the plugin proved itself with never reached the page
    const secret = fs.readFileSync(path.join(dataRoot, '_ttmcp', 'plugin-secret'), 'utf8').trim();
    assert.doesNotMatch(JSON.stringify([empty, created, listed]), new RegExp(secret));
});

test('without SillyTavern’s credentials nothing reaches ttmcp: 401 without basic auth, 403 signed out or without CSRF', { timeout: 90_000 }, async (t) => {
    const { base } = await sillyTavern(t, { alice: { name: 'Alice', password: 'a', admin: true } });
    const stranger = browser(base);
    assert.equal((await stranger.request(`${PREFIX}/jsapi/session`)).status, 401);
    const signedOut = browser(base, { authorization });
    assert.equal((await signedOut.request(`${PREFIX}/jsapi/session`)).status, 403);
    const alice = await page(base, 'alice', 'a');
    const noCsrf = await alice.request(`${PREFIX}/transport`, { method: 'POST' });
    assert.equal(noCsrf.status, 403);
    // a page naming another user itself gains nothing: the plugin drops the header
    const forged = await alice.request(`${PREFIX}/jsapi/session`, { headers: { 'x-ttmcp-user': 'bob', 'x-ttmcp-plugin': 'guess' } });
    assert.notEqual(forged.status, 401, 'the forged headers reached ttmcp');
});

test('with user accounts, a server one SillyTavern user adds is invisible and uncallable for another', { timeout: 90_000 }, async (t) => {
    const { base, dataRoot } = await sillyTavern(t, {
        alice: { name: 'Alice', password: 'a', admin: true },
        bob: { name: 'Bob', password: 'b', admin: false },
    });
    const alice = await connect(await page(base, 'alice', 'a'));
    const bob = await connect(await page(base, 'bob', 'b'));
    t.after(() => { alice.close(); bob.close(); });

    const created = await alice.invoke('create_mcp_server', { dto: { displayName: 'Alice’s', endpoint: 'https://mcp.example.com/mcp' } });
    assert.equal(created.ok, true, JSON.stringify(created));
    const id = created.value.id;
    assert.deepEqual((await alice.invoke('list_mcp_servers')).value.servers.map((/** @type {{id: string}} */ s) => s.id), [id]);
    assert.deepEqual((await bob.invoke('list_mcp_servers')).value.servers, []);
    // bob naming alice's id is told it does not exist, as for an id nobody has
    for (const [command, args] of [
        ['set_mcp_server_state', { dto: { registrationId: id, state: 'active' } }],
        ['remove_mcp_server', { dto: { registrationId: id } }],
        ['discover_mcp_tools', { dto: { registrationId: id } }],
    ]) {
        const r = await bob.invoke(command, args);
        assert.equal(r.ok, false, `${command}: ${JSON.stringify(r)}`);
        assert.equal(r.error.kind, 'NotFound', `${command}: ${JSON.stringify(r)}`);
    }
    assert.deepEqual((await alice.invoke('list_mcp_servers')).value.servers.map((/** @type {{id: string, state: string}} */ s) => [s.id, s.state]), [[id, 'paused']]);
    // each user's files in a data root of their own
    assert.ok(fs.existsSync(path.join(dataRoot, '_ttmcp', 'users', 'alice', '_tauritavern', 'mcp', 'registrations', `${id}.json`)));
    assert.ok(!fs.existsSync(path.join(dataRoot, '_ttmcp', 'users', 'bob', '_tauritavern', 'mcp', 'registrations', `${id}.json`)));
});
