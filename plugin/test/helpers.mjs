// Test helpers: the plugin installed into a scratch SillyTavern's plugins/,
// a fake ttmcp backend that records what reaches it, and a browser with a
// cookie jar that speaks to the stand-in over loopback.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

const pluginDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A scratch folder, removed by the caller's cleanup. */
export function tempDir(prefix = 'ttmcp-plugin-') {
    return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Copies the plugin (package.json, index.mjs) into <st>/plugins/ttmcp/ with
 * config.json, as `ttmcp install-extension` does; a fresh folder each time,
 * so each stand-in imports its own instance of the module.
 * @param {string} st
 * @param {object} config
 */
export function installPlugin(st, config) {
    const dir = path.join(st, 'plugins', 'ttmcp');
    fs.mkdirSync(dir, { recursive: true });
    for (const f of ['package.json', 'index.mjs']) fs.copyFileSync(path.join(pluginDir, f), path.join(dir, f));
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
    return path.join(st, 'plugins');
}

/**
 * Writes <dataRoot>/_ttmcp/plugin-secret as `ttmcp serve` does.
 * @param {string} dataRoot
 * @returns {string} the secret
 */
export function writeSecret(dataRoot) {
    const secret = crypto.randomBytes(32).toString('hex');
    fs.mkdirSync(path.join(dataRoot, '_ttmcp'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dataRoot, '_ttmcp', 'plugin-secret'), secret + '\n', { mode: 0o600 });
    return secret;
}

/**
 * @typedef {{ method: string, url: string, headers: http.IncomingHttpHeaders, body: Buffer, closedEarly: boolean }} Received
 */

/**
 * A fake ttmcp backend on a free loopback port: it answers /playground.json
 * as ttmcp does (so the plugin takes it for ttmcp), records every other
 * request, and lets a test answer it (routes), else echoes what it got.
 * @param {Record<string, (req: http.IncomingMessage, res: http.ServerResponse, got: Received) => void>} [routes]
 */
export async function fakeBackend(routes = {}) {
    /** @type {Received[]} */
    const received = [];
    /** @type {Array<() => void>} */
    const waiters = [];
    const server = http.createServer((req, res) => {
        if (req.url === '/playground.json') {
            res.setHeader('Content-Type', 'application/json');
            res.end('{"extensions":[],"demo":null}');
            return;
        }
        /** @type {Buffer[]} */
        const chunks = [];
        /** @type {Received} */
        const got = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.alloc(0), closedEarly: false };
        received.push(got);
        res.on('close', () => { if (!res.writableFinished) got.closedEarly = true; waiters.splice(0).forEach((w) => w()); });
        const route = routes[(req.url ?? '').split('?')[0]];
        if (route && req.method === 'GET') { route(req, res, got); return; }
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
            got.body = Buffer.concat(chunks);
            if (route) { route(req, res, got); return; }
            res.setHeader('Content-Type', 'application/json');
            res.end(JSON.stringify({ method: got.method, url: got.url, body: got.body.toString('utf8') }));
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
    return {
        url: `http://127.0.0.1:${port}`,
        port,
        received,
        /** Resolves at the next request's close (or at once when cond holds). */
        changed() { return new Promise((resolve) => waiters.push(() => resolve(undefined))); },
        close() { server.closeAllConnections(); return new Promise((resolve) => server.close(() => resolve(undefined))); },
    };
}

/**
 * A browser: one cookie jar, requests to the stand-in over node:http.
 * @param {string} base  http://127.0.0.1:<port>
 * @param {{ authorization?: string, localAddress?: string }} [defaults]
 */
export function browser(base, defaults = {}) {
    /** @type {Map<string, string>} */
    const jar = new Map();
    let csrf = '';
    /**
     * @param {string} pathname
     * @param {{ method?: string, headers?: Record<string, string>, body?: string|Buffer, stream?: boolean }} [o]
     * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string, res: http.IncomingMessage }>}
     */
    function request(pathname, o = {}) {
        const u = new URL(pathname, base);
        /** @type {Record<string, string>} */
        const headers = { ...o.headers };
        if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        if (defaults.authorization && !('authorization' in headers)) headers.authorization = defaults.authorization;
        if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
        return new Promise((resolve, reject) => {
            const req = http.request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: o.method ?? 'GET', headers, localAddress: defaults.localAddress, agent: false }, (res) => {
                for (const c of res.headers['set-cookie'] ?? []) {
                    const [pair] = c.split(';');
                    const i = pair.indexOf('=');
                    jar.set(pair.slice(0, i), pair.slice(i + 1));
                }
                if (o.stream) { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', res }); return; }
                /** @type {Buffer[]} */
                const chunks = [];
                res.on('data', (c) => chunks.push(c));
                res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), res }));
                res.on('error', reject);
            });
            req.on('error', reject);
            req.end(o.body);
        });
    }
    return {
        request,
        jar,
        /** GET /csrf-token once, as SillyTavern's page does. */
        async csrfToken() {
            if (!csrf) csrf = JSON.parse((await request('/csrf-token')).body).token;
            return csrf;
        },
        /**
         * A state-changing request with SillyTavern's headers (getRequestHeaders()).
         * @param {string} pathname
         * @param {{ method?: string, headers?: Record<string, string>, body?: string|Buffer, stream?: boolean }} [o]
         */
        async send(pathname, o = {}) {
            return request(pathname, { method: 'POST', ...o, headers: { 'x-csrf-token': await this.csrfToken(), ...o.headers } });
        },
        /**
         * @param {string} handle
         * @param {string} password
         */
        async login(handle, password) {
            const r = await this.send('/api/users/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ handle, password }) });
            if (r.status !== 200) throw new Error(`login ${handle}: ${r.status} ${r.body}`);
            csrf = ''; // the session changed
        },
    };
}

/**
 * Listens on a free loopback port.
 * @param {http.RequestListener} app
 */
export async function listen(app) {
    const server = http.createServer(app);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
    return {
        base: `http://127.0.0.1:${port}`,
        close() { server.closeAllConnections(); return new Promise((resolve) => server.close(() => resolve(undefined))); },
    };
}

/** A loopback port nothing listens on (just freed). */
export async function freePort() {
    const s = http.createServer();
    await new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(undefined)));
    const port = /** @type {import('node:net').AddressInfo} */ (s.address()).port;
    await new Promise((resolve) => s.close(() => resolve(undefined)));
    return port;
}

/**
 * Waits until cond() holds, checking every few ms, or fails after limitMs.
 * @param {() => boolean|Promise<boolean>} cond
 * @param {string} what
 * @param {number} [limitMs]
 */
export async function until(cond, what, limitMs = 20_000) {
    const end = Date.now() + limitMs;
    while (!(await cond())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
    }
}
