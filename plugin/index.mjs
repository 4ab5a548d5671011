// @ts-check
// The ttmcp SillyTavern server plugin (issue 28; the plugin contract §1,
// docs/ARCHITECTURE.md "The SillyTavern plugin"). SillyTavern mounts its
// router at /api/plugins/ttmcp behind its own gate (basic auth, whitelist,
// session, CSRF, requireLogin), so every request that reaches it has passed
// SillyTavern's authentication. It does two things:
//
//   - forwards everything under /api/plugins/ttmcp/ to the ttmcp backend on
//     loopback, stateless: SillyTavern's credentials are stripped, the user
//     SillyTavern authenticated and the plugin's secret are added;
//   - starts `ttmcp serve` when no backend answers, restarts it when it dies
//     and stops it when SillyTavern exits (supervision).
//
// Only Node's standard library, nothing SillyTavern's minimum Node (20) lacks:
// the plugin is copied into SillyTavern's plugins/ folder on its own, with no
// node_modules beside it.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The plugin's id: its routes are under /api/plugins/<id>/. */
export const PLUGIN_ID = 'ttmcp';
/** X-Ttmcp-Prefix: where the page reaches the backend on SillyTavern's origin. */
export const PREFIX = `/api/plugins/${PLUGIN_ID}`;
/**
 * The backend route the plugin asks to learn whether ttmcp answers: cheap,
 * answered without a token or an Origin on the direct path, and only ttmcp
 * answers it with `{"extensions":[…]}` (a plain TCP connect would take any
 * program on the port for ttmcp).
 */
export const PROBE_PATH = '/playground.json';
/** The backend's default address (`ttmcp serve` without --listen). */
export const DEFAULT_BACKEND = 'http://127.0.0.1:7878';

export const info = {
    id: PLUGIN_ID,
    name: 'ttmcp',
    description: 'MCP for SillyTavern: carries the mcp-manager extension\'s traffic to the ttmcp backend on loopback, behind SillyTavern\'s login, per SillyTavern user; starts ttmcp when it is not running.',
};

/**
 * config.json, written by `ttmcp install-extension`.
 * @typedef {object} PluginConfig
 * @property {string} backendUrl  http://<loopback>:<port>
 * @property {string} [binary]    absolute path of the ttmcp that installed the plugin
 * @property {string} [dataRoot]  absent: the backend's own default
 * @property {boolean} autostart  false: never start ttmcp
 */

/**
 * How long supervision waits; the defaults are for people, tests pass short ones.
 * @typedef {object} Timings
 * @property {number} probeTimeoutMs   one probe of the backend
 * @property {number} readyPollMs      between probes while a started ttmcp comes up
 * @property {number} backoffMs        first restart delay, doubled per fast crash
 * @property {number} backoffCapMs     the longest restart delay
 * @property {number} fastCrashMs      a run shorter than this is a fast crash
 * @property {number} maxFastCrashes   this many fast crashes in a row: give up
 * @property {number} killAfterMs      SIGTERM, then SIGKILL after this long
 */

/** @type {Timings} */
export const DEFAULT_TIMINGS = {
    probeTimeoutMs: 1500,
    readyPollMs: 200,
    backoffMs: 500,
    backoffCapMs: 30_000,
    fastCrashMs: 10_000,
    maxFastCrashes: 5,
    killAfterMs: 5000,
};

/**
 * The parts of SillyTavern's request the plugin reads (an Express request
 * after setUserDataMiddleware). Declared here so that the plugin needs no
 * Express types.
 * @typedef {http.IncomingMessage & {
 *   user?: { profile?: { handle?: unknown, admin?: unknown } },
 *   body?: unknown,
 *   _body?: boolean,
 *   protocol?: string,
 * }} STRequest
 */

/**
 * @typedef {http.ServerResponse & { flush?: () => void }} STResponse
 * `flush` is compression()'s: it pushes what zlib holds to the page.
 */

/**
 * @typedef {(req: STRequest, res: STResponse, next: (err?: unknown) => void) => void} Handler
 * @typedef {{ get: (path: string, h: Handler) => unknown, use: (h: Handler) => unknown }} Router
 * The parts of express.Router() the plugin uses.
 */

/**
 * @typedef {'up'|'down'|'starting'|'untrusted'} BackendState
 */

// Request headers the backend never sees: SillyTavern's credentials, the
// Host the page used, and the hop-by-hop headers (RFC 9110 §7.6.1).
const DROP_REQUEST = new Set([
    'cookie', 'authorization', 'x-csrf-token', 'host',
    'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
    'te', 'trailer', 'transfer-encoding', 'upgrade',
]);
// Response headers that belong to the backend's connection, not the page's.
// set-cookie too: a cookie of the backend's would land on SillyTavern's
// origin, beside SillyTavern's own session.
const DROP_RESPONSE = new Set([
    'set-cookie', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
    'te', 'trailer', 'transfer-encoding', 'upgrade',
]);
const SECRET_RE = /^[0-9a-f]{64}$/;
const UNTRUSTED_CODE = 'mcp.plugin_untrusted';
const UNAVAILABLE_CODE = 'mcp.host_unavailable';
/** The most of a 401 answer the plugin reads to see whether it is mcp.plugin_untrusted. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * Reads and checks config.json; a missing file gives the defaults with
 * autostart off (no binary is known), a broken one throws.
 * @param {string} file
 * @returns {PluginConfig}
 */
export function readConfig(file) {
    let raw;
    try {
        raw = fs.readFileSync(file, 'utf8');
    } catch (err) {
        if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') {
            return { backendUrl: DEFAULT_BACKEND, autostart: false };
        }
        throw err;
    }
    /** @type {unknown} */
    const parsed = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new Error(`${file}: not a JSON object`);
    }
    const c = /** @type {Record<string, unknown>} */ (parsed);
    const backendUrl = c.backendUrl ?? DEFAULT_BACKEND;
    if (typeof backendUrl !== 'string') throw new Error(`${file}: backendUrl is not a string`);
    backendAddress(backendUrl); // throws when it is not a loopback http URL
    for (const key of ['binary', 'dataRoot']) {
        if (c[key] !== undefined && (typeof c[key] !== 'string' || !path.isAbsolute(/** @type {string} */ (c[key])))) {
            throw new Error(`${file}: ${key} is not an absolute path`);
        }
    }
    if (c.autostart !== undefined && typeof c.autostart !== 'boolean') {
        throw new Error(`${file}: autostart is not true or false`);
    }
    return {
        backendUrl,
        binary: /** @type {string|undefined} */ (c.binary),
        dataRoot: /** @type {string|undefined} */ (c.dataRoot),
        autostart: c.autostart !== false,
    };
}

/**
 * The backend's address: only http on a loopback address, because the
 * backend listens on loopback only and the secret must not leave the machine.
 * @param {string} backendUrl
 * @returns {{ hostname: string, port: number, listen: string }}
 */
export function backendAddress(backendUrl) {
    const u = new URL(backendUrl);
    const hostname = u.hostname.replace(/^\[(.*)\]$/, '$1');
    const loopback = hostname === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '::1';
    if (u.protocol !== 'http:' || !loopback || (u.pathname !== '/' && u.pathname !== '') || u.search || u.username) {
        throw new Error(`backendUrl ${backendUrl} is not http://<loopback address>:<port> (ttmcp listens on loopback only)`);
    }
    const port = Number(u.port || 80);
    return { hostname, port, listen: `${u.hostname}:${port}` };
}

/**
 * The data root `ttmcp serve` uses without --data-root (backend/cmd/ttmcp/dataroot.go):
 * TTMCP_DATA_ROOT, else the platform's per-user data folder + "ttmcp".
 * @param {NodeJS.ProcessEnv} env
 * @param {string} platform
 * @param {string} home
 * @returns {string}
 */
export function defaultDataRoot(env = process.env, platform = process.platform, home = os.homedir()) {
    if (env.TTMCP_DATA_ROOT) return env.TTMCP_DATA_ROOT;
    if (platform === 'win32') return path.win32.join(env.AppData ?? env.APPDATA ?? '', 'ttmcp');
    if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', 'ttmcp');
    const xdg = env.XDG_DATA_HOME;
    if (xdg && xdg.startsWith('/')) return path.posix.join(xdg, 'ttmcp');
    return path.posix.join(home, '.local', 'share', 'ttmcp');
}

/**
 * `<dataRoot>/_ttmcp/plugin-secret`, which `ttmcp serve` creates.
 * @param {string} dataRoot
 */
export function secretFile(dataRoot) {
    return path.join(dataRoot, '_ttmcp', 'plugin-secret');
}

/**
 * The first value of a header that may be a list ("a, b").
 * @param {string|string[]|undefined} v
 */
function firstValue(v) {
    const s = Array.isArray(v) ? v[0] : v;
    return (s ?? '').split(',')[0].trim();
}

/**
 * The origin the page was opened at, as SillyTavern saw it.
 * @param {STRequest} req
 */
export function pageOrigin(req) {
    let proto = firstValue(req.headers['x-forwarded-proto']).toLowerCase();
    if (proto !== 'http' && proto !== 'https') {
        proto = req.protocol ?? (/** @type {{encrypted?: boolean}} */ (req.socket).encrypted ? 'https' : 'http');
    }
    const host = firstValue(req.headers['x-forwarded-host']) || req.headers.host || '';
    return `${proto}://${host}`;
}

/**
 * The headers sent to the backend: the page's, without any X-Ttmcp-* it
 * sent (only the plugin names the user), SillyTavern's credentials and the
 * hop-by-hop ones, plus the plugin's own.
 * @param {http.IncomingHttpHeaders} incoming
 * @param {{ secret: string, handle: string, admin: boolean, origin: string }} who
 * @returns {http.OutgoingHttpHeaders}
 */
export function forwardHeaders(incoming, who) {
    const listed = new Set(firstList(incoming.connection));
    /** @type {http.OutgoingHttpHeaders} */
    const out = {};
    for (const [name, value] of Object.entries(incoming)) {
        const key = name.toLowerCase();
        if (key.startsWith('x-ttmcp-') || DROP_REQUEST.has(key) || listed.has(key) || value === undefined) continue;
        out[key] = value;
    }
    out['x-ttmcp-plugin'] = who.secret;
    out['x-ttmcp-user'] = who.handle;
    out['x-ttmcp-user-admin'] = who.admin ? '1' : '0';
    out['x-ttmcp-origin'] = who.origin;
    out['x-ttmcp-prefix'] = PREFIX;
    return out;
}

/**
 * The names a Connection header lists (they are hop-by-hop too).
 * @param {string|string[]|undefined} v
 */
function firstList(v) {
    const s = Array.isArray(v) ? v.join(',') : (v ?? '');
    return s.split(',').map((x) => x.trim().toLowerCase()).filter(Boolean);
}

/**
 * A body SillyTavern's bodyParser already read, encoded again; undefined
 * when the request's stream is still unread (the usual case: the page sends
 * text/plain, which SillyTavern does not parse).
 * @param {STRequest} req
 * @returns {Buffer|undefined}
 */
export function consumedBody(req) {
    if (req._body !== true) return undefined;
    const body = req.body;
    if (Buffer.isBuffer(body)) return body;
    if (typeof body === 'string') return Buffer.from(body);
    const type = String(req.headers['content-type'] ?? '').toLowerCase();
    if (type.includes('application/x-www-form-urlencoded')) {
        return Buffer.from(new URLSearchParams(/** @type {Record<string, string>} */ (body ?? {})).toString());
    }
    return Buffer.from(JSON.stringify(body));
}

/**
 * @param {STResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function sendJSON(res, status, body) {
    const data = JSON.stringify(body);
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Length', Buffer.byteLength(data));
    res.end(data);
}

/**
 * @param {STResponse} res
 * @param {string} message
 */
function unavailable(res, message) {
    sendJSON(res, 503, { error: { kind: 'Unavailable', message: `${UNAVAILABLE_CODE}: ${message}` } });
}

/**
 * Whether something at the backend address answers as ttmcp does.
 * @param {{hostname: string, port: number}} addr
 * @param {number} timeoutMs
 * @returns {Promise<'ttmcp'|'other'|'none'>}
 */
export function probe(addr, timeoutMs) {
    return new Promise((resolve) => {
        const req = http.request({
            hostname: addr.hostname, port: addr.port, path: PROBE_PATH, method: 'GET',
            headers: { accept: 'application/json' }, agent: false, timeout: timeoutMs,
        }, (res) => {
            /** @type {Buffer[]} */
            const chunks = [];
            let size = 0;
            res.on('data', (/** @type {Buffer} */ c) => {
                size += c.length;
                if (size > MAX_REFUSAL_BYTES) { res.destroy(); resolve('other'); return; }
                chunks.push(c);
            });
            res.on('end', () => {
                try {
                    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
                    resolve(res.statusCode === 200 && Array.isArray(body?.extensions) ? 'ttmcp' : 'other');
                } catch {
                    resolve('other');
                }
            });
            res.on('error', () => resolve('other'));
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
            // Refused or unreachable: nothing listens. A timeout: something
            // holds the port without answering, which is not ttmcp either.
            resolve(err.message === 'timeout' ? 'other' : 'none');
        });
        req.end();
    });
}

/**
 * @param {number} ms
 * @param {(t: NodeJS.Timeout) => void} [keep]
 */
function sleep(ms, keep) {
    return new Promise((resolve) => { const t = setTimeout(resolve, ms); keep?.(t); });
}

/**
 * Splits a stream into lines and hands each to log with the prefix; a last
 * line without a newline is given when the stream ends.
 * @param {NodeJS.ReadableStream} stream
 * @param {(line: string) => void} log
 */
function prefixLines(stream, log) {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (/** @type {string} */ chunk) => {
        pending += chunk;
        let i;
        while ((i = pending.indexOf('\n')) >= 0) {
            log(`[ttmcp] ${pending.slice(0, i).replace(/\r$/, '')}`);
            pending = pending.slice(i + 1);
        }
    });
    stream.on('end', () => { if (pending) log(`[ttmcp] ${pending}`); pending = ''; });
}

/**
 * Starts, restarts and stops `ttmcp serve`. Its states:
 *   idle → (a backend answers) external | (nothing answers) starting → running
 *   running → (it dies) waiting → starting …; after maxFastCrashes fast
 *   crashes in a row: gave-up; exit(): stopped.
 */
class Supervisor {
    /**
     * @param {PluginConfig} config
     * @param {Timings} timings
     * @param {{ log: (line: string) => void, error: (line: string) => void }} out
     * @param {() => void} onReady called each time a started ttmcp answers
     */
    constructor(config, timings, out, onReady) {
        this.config = config;
        this.addr = backendAddress(config.backendUrl);
        this.t = timings;
        this.out = out;
        this.onReady = onReady;
        /** @type {'idle'|'disabled'|'external'|'other'|'starting'|'running'|'waiting'|'gave-up'|'stopped'} */
        this.state = 'idle';
        /** @type {import('node:child_process').ChildProcess|null} */
        this.child = null;
        this.fastCrashes = 0;
        /** @type {Set<NodeJS.Timeout>} */
        this.timers = new Set();
        /** @type {Promise<void>|null} */
        this.exited = null;
        // SillyTavern exiting without exit() (process.exit elsewhere): ttmcp
        // is told to stop, and stops its own stdio servers.
        this.killOnExit = () => { this.child?.kill('SIGTERM'); };
    }

    /** The command line, for the log and for a user who runs it by hand. */
    args() {
        const args = ['serve', '--listen', this.addr.listen];
        if (this.config.dataRoot) args.push('--data-root', this.config.dataRoot);
        return args;
    }

    /** At init: use a backend that answers, else start one. */
    async begin() {
        const found = await probe(this.addr, this.t.probeTimeoutMs);
        if (found === 'ttmcp') {
            this.state = 'external';
            this.out.log(`[ttmcp] using the ttmcp backend already running at ${this.config.backendUrl} (SillyTavern did not start it and will not stop it)`);
            return;
        }
        if (found === 'other') {
            this.state = 'other';
            this.out.error(`[ttmcp] something that is not ttmcp answers at ${this.config.backendUrl}; not starting ttmcp there. Free the port, or install again with another --backend.`);
            return;
        }
        if (!this.config.autostart) {
            this.state = 'disabled';
            this.out.log(`[ttmcp] no backend answers at ${this.config.backendUrl}, and autostart is off in the plugin's config.json: start it yourself with: ttmcp ${this.args().join(' ')}`);
            return;
        }
        if (!this.config.binary) {
            this.state = 'disabled';
            this.out.error(`[ttmcp] no backend answers at ${this.config.backendUrl}, and the plugin's config.json names no ttmcp binary; run ttmcp install-extension again, or start it yourself with: ttmcp ${this.args().join(' ')}`);
            return;
        }
        this.spawn();
    }

    spawn() {
        const binary = /** @type {string} */ (this.config.binary);
        this.state = 'starting';
        this.out.log(`[ttmcp] starting ${binary} ${this.args().join(' ')}`);
        const started = Date.now();
        const windows = process.platform === 'win32';
        const child = spawn(binary, this.args(), {
            stdio: ['ignore', 'pipe', 'pipe'],
            windowsHide: true,
            // Its own process group: Ctrl-C in SillyTavern's terminal reaches
            // SillyTavern alone, which stops ttmcp through exit() — ttmcp
            // stopping by itself at the same moment would look like a crash.
            detached: !windows,
        });
        this.child = child;
        process.on('exit', this.killOnExit);
        prefixLines(/** @type {NodeJS.ReadableStream} */ (child.stdout), this.out.log);
        prefixLines(/** @type {NodeJS.ReadableStream} */ (child.stderr), this.out.log);
        this.exited = new Promise((resolve) => {
            let done = false;
            /** @param {string} why */
            const finish = (why) => {
                if (done) return;
                done = true;
                process.off('exit', this.killOnExit);
                if (this.child === child) this.child = null;
                resolve();
                this.died(why, Date.now() - started);
            };
            child.on('error', (err) => finish(`could not be started: ${err.message}`));
            child.on('exit', (code, signal) => finish(signal ? `was killed by ${signal}` : `exited with status ${code}`));
        });
        void this.waitReady(child);
    }

    /**
     * Probes until the started ttmcp answers (or dies).
     * @param {import('node:child_process').ChildProcess} child
     */
    async waitReady(child) {
        while (this.child === child && this.state === 'starting') {
            if (await probe(this.addr, this.t.probeTimeoutMs) === 'ttmcp') {
                if (this.child === child && this.state === 'starting') {
                    this.state = 'running';
                    this.out.log(`[ttmcp] the backend answers at ${this.config.backendUrl}`);
                    this.onReady();
                }
                return;
            }
            await sleep(this.t.readyPollMs, (t) => this.timers.add(t));
        }
    }

    /**
     * @param {string} why
     * @param {number} ranMs
     */
    died(why, ranMs) {
        if (this.state === 'stopped') return;
        this.fastCrashes = ranMs < this.t.fastCrashMs ? this.fastCrashes + 1 : 1;
        if (this.fastCrashes >= this.t.maxFastCrashes) {
            this.state = 'gave-up';
            this.out.error(`[ttmcp] ttmcp serve ${why}; it stopped ${this.fastCrashes} times in a row within ${Math.round(this.t.fastCrashMs / 1000)}s of starting, so it is not started again. Its log lines above say why; run it by hand to see: ${this.config.binary} ${this.args().join(' ')}`);
            return;
        }
        const delay = Math.min(this.t.backoffMs * 2 ** (this.fastCrashes - 1), this.t.backoffCapMs);
        this.state = 'waiting';
        this.out.error(`[ttmcp] ttmcp serve ${why}; starting it again in ${delay} ms`);
        const timer = setTimeout(async () => {
            this.timers.delete(timer);
            if (this.state !== 'waiting') return;
            // Someone may have started a backend meanwhile: use it as it is.
            const found = await probe(this.addr, this.t.probeTimeoutMs);
            if (this.state !== 'waiting') return;
            if (found === 'ttmcp') {
                this.state = 'external';
                this.out.log(`[ttmcp] a ttmcp backend answers at ${this.config.backendUrl} again; using it as it is`);
                return;
            }
            this.spawn();
        }, delay);
        this.timers.add(timer);
    }

    /** exit(): stop what we started (SIGTERM, then SIGKILL), nothing else. */
    async stop() {
        const prev = this.state;
        this.state = 'stopped';
        for (const t of this.timers) clearTimeout(t);
        this.timers.clear();
        const child = this.child;
        if (!child || prev === 'external') return;
        if (process.platform === 'win32') {
            child.kill();
        } else {
            child.kill('SIGTERM');
        }
        /** @type {NodeJS.Timeout|undefined} */
        let killer;
        const killed = new Promise((resolve) => {
            killer = setTimeout(() => {
                this.out.error(`[ttmcp] ttmcp serve did not stop within ${this.t.killAfterMs} ms of SIGTERM; killing it`);
                // The whole group: what it started (stdio servers) goes too.
                try { process.kill(-(/** @type {number} */ (child.pid)), 'SIGKILL'); } catch { child.kill('SIGKILL'); }
                resolve(undefined);
            }, this.t.killAfterMs);
        });
        await Promise.race([this.exited, killed]);
        await this.exited;
        clearTimeout(killer);
    }

    /** @returns {BackendState|null} what supervision knows without asking; null: ask. */
    known() {
        if (this.state === 'starting' || this.state === 'waiting') return 'starting';
        return null;
    }
}

/**
 * The plugin, with its config and timings injectable (tests); the module's
 * own exports use config.json beside this file.
 * @param {{ configFile?: string, timings?: Partial<Timings>, log?: (line: string) => void, error?: (line: string) => void, version?: string }} [options]
 */
export function createPlugin(options = {}) {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const configFile = options.configFile ?? path.join(here, 'config.json');
    const timings = { ...DEFAULT_TIMINGS, ...options.timings };
    const out = {
        log: options.log ?? ((/** @type {string} */ l) => console.log(l)),
        error: options.error ?? ((/** @type {string} */ l) => console.error(l)),
    };
    const version = options.version ?? pluginVersion(here);
    /** @type {PluginConfig} */
    let config = { backendUrl: DEFAULT_BACKEND, autostart: false };
    /** @type {ReturnType<typeof backendAddress>} */
    let addr = backendAddress(DEFAULT_BACKEND);
    /** @type {Supervisor|null} */
    let supervisor = null;
    const agent = new http.Agent({ keepAlive: true });
    /** @type {string|null} */
    let secret = null;
    let untrusted = false;

    /** Reads the secret file again; reports whether it changed. */
    function readSecret() {
        const file = secretFile(config.dataRoot ?? defaultDataRoot());
        let next = null;
        try {
            const text = fs.readFileSync(file, 'utf8').trim();
            if (SECRET_RE.test(text)) next = text;
            else out.error(`[ttmcp] ${file} does not hold a ttmcp plugin secret (64 hex characters)`);
        } catch (err) {
            if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') out.error(`[ttmcp] cannot read ${file}: ${/** @type {Error} */ (err).message}`);
        }
        const changed = next !== secret;
        secret = next;
        return changed;
    }

    /**
     * @param {STRequest} req
     * @param {STResponse} res
     */
    async function status(req, res) {
        /** @type {BackendState} */
        let backend = supervisor?.known() ?? 'down';
        if (backend !== 'starting') {
            const found = await probe(addr, timings.probeTimeoutMs);
            if (found === 'ttmcp') {
                if (secret === null) readSecret();
                backend = secret === null || untrusted ? 'untrusted' : 'up';
            }
        }
        sendJSON(res, 200, { plugin: PLUGIN_ID, version, backend, user: userOf(req)?.handle ?? '' });
    }

    /**
     * @param {STRequest} req
     * @param {STResponse} res
     */
    function forward(req, res) {
        const who = userOf(req);
        if (!who) {
            // requireLoginMiddleware stands before every plugin; without a
            // user the gate is not what we think it is, so nothing passes.
            sendJSON(res, 403, { error: { kind: 'BadRequest', message: 'mcp.plugin_untrusted: SillyTavern named no user for this request' } });
            return;
        }
        if (secret === null) readSecret();
        if (secret === null) {
            unavailable(res, `the ttmcp backend's plugin secret (${secretFile(config.dataRoot ?? defaultDataRoot())}) is not there; is ttmcp serve running with this data root?`);
            return;
        }
        let body = consumedBody(req);
        if (body === undefined && req.readableEnded) {
            // Something before the plugin (multer) read a body it cannot give back.
            sendJSON(res, 415, { error: { kind: 'BadRequest', message: 'mcp.bad_request: SillyTavern consumed this request\'s body; send it as text/plain' } });
            return;
        }
        // A request without a streamed body can be sent once more when the
        // backend refused it for its secret alone (it did nothing then).
        const replayable = body !== undefined || !hasBody(req);
        send(req, res, who, body, replayable);
    }

    /**
     * @param {STRequest} req
     * @param {STResponse} res
     * @param {{handle: string, admin: boolean}} who
     * @param {Buffer|undefined} body
     * @param {boolean} replayable
     */
    function send(req, res, who, body, replayable) {
        const headers = forwardHeaders(req.headers, { secret: /** @type {string} */ (secret), ...who, origin: pageOrigin(req) });
        if (body !== undefined) {
            delete headers['content-length'];
            headers['content-length'] = body.length;
        }
        let upstream;
        try {
            upstream = http.request({
                hostname: addr.hostname, port: addr.port, method: req.method, path: req.url, headers, agent,
            });
        } catch (err) { // an unescaped character in the path
            sendJSON(res, 400, { error: { kind: 'BadRequest', message: `mcp.bad_request: ${/** @type {Error} */ (err).message}` } });
            return;
        }
        const gone = () => { if (!res.writableFinished) upstream.destroy(); };
        res.on('close', gone);
        upstream.on('error', (err) => {
            if (res.destroyed || res.writableFinished) return;
            if (!res.headersSent) unavailable(res, `the ttmcp backend at ${config.backendUrl} cannot be reached (${err.message})`);
            else res.destroy(err);
        });
        upstream.on('response', (answer) => {
            if (answer.statusCode === 401 && String(answer.headers['content-type'] ?? '').includes('json')) {
                readRefusal(answer).then((refusal) => {
                    if (refusal.toString('utf8').includes(UNTRUSTED_CODE)) {
                        if (readSecret() && secret !== null && replayable && !res.destroyed) {
                            res.off('close', gone);
                            send(req, res, who, body, false);
                            return;
                        }
                        untrusted = true;
                    }
                    relayHead(res, answer);
                    res.end(refusal);
                }, () => res.destroy());
                return;
            }
            untrusted = false;
            relayHead(res, answer);
            relayBody(answer, res);
        });
        if (body !== undefined) upstream.end(body);
        else req.pipe(upstream);
    }

    /** @type {Handler} */
    const forwardHandler = (req, res) => forward(req, res);

    return {
        info,
        /** @param {Router} router */
        async init(router) {
            config = readConfig(configFile);
            addr = backendAddress(config.backendUrl);
            router.get('/_plugin/status', (req, res, next) => { status(req, res).catch(next); });
            router.use(forwardHandler);
            supervisor = new Supervisor(config, timings, out, () => { readSecret(); untrusted = false; });
            await supervisor.begin();
            if (supervisor.state === 'external') readSecret();
        },
        async exit() {
            await supervisor?.stop();
            agent.destroy();
        },
        /** For tests: the process supervision started, if any. */
        get child() { return supervisor?.child ?? null; },
        /** For tests: supervision's state. */
        get state() { return supervisor?.state ?? 'idle'; },
    };
}

/**
 * @param {STRequest} req
 * @returns {{handle: string, admin: boolean}|null}
 */
function userOf(req) {
    const handle = req.user?.profile?.handle;
    if (typeof handle !== 'string' || handle === '') return null;
    return { handle, admin: req.user?.profile?.admin === true };
}

/** @param {http.IncomingMessage} req */
function hasBody(req) {
    const len = req.headers['content-length'];
    return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/**
 * @param {http.IncomingMessage} answer
 * @returns {Promise<Buffer>}
 */
function readRefusal(answer) {
    return new Promise((resolve, reject) => {
        /** @type {Buffer[]} */
        const chunks = [];
        let size = 0;
        answer.on('data', (/** @type {Buffer} */ c) => {
            size += c.length;
            if (size > MAX_REFUSAL_BYTES) answer.destroy(new Error('refusal too long'));
            else chunks.push(c);
        });
        answer.on('end', () => resolve(Buffer.concat(chunks)));
        answer.on('error', reject);
    });
}

/**
 * The backend's status and headers, on the page's response.
 * @param {STResponse} res
 * @param {http.IncomingMessage} answer
 */
function relayHead(res, answer) {
    const listed = new Set(firstList(answer.headers.connection));
    for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined || DROP_RESPONSE.has(name) || listed.has(name)) continue;
        res.setHeader(name, value);
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage);
}

/**
 * The backend's body to the page, a chunk at a time: each chunk is flushed
 * through compression() at once (an event stream must not wait in zlib),
 * and the backend is read no faster than the page takes it.
 * @param {http.IncomingMessage} answer
 * @param {STResponse} res
 */
function relayBody(answer, res) {
    res.flushHeaders();
    // One listener for the whole body, not res.once per pause: compression()
    // hands res.on('drain') to its zlib stream but not res.removeListener,
    // so each once-listener would stay on the zlib stream for good.
    res.on('drain', () => answer.resume());
    answer.on('data', (/** @type {Buffer} */ chunk) => {
        const more = res.write(chunk);
        res.flush?.();
        if (!more) answer.pause();
    });
    answer.on('end', () => res.end());
    answer.on('aborted', () => res.destroy());
    answer.on('error', () => res.destroy());
}

/** @param {string} dir */
function pluginVersion(dir) {
    try {
        const v = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
        return typeof v === 'string' ? v : 'unknown';
    } catch {
        return 'unknown';
    }
}

const plugin = createPlugin();

/** @param {Router} router */
export function init(router) { return plugin.init(router); }
export function exit() { return plugin.exit(); }
