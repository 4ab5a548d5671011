// A stand-in of SillyTavern 1.18.0's server as far as a plugin sees it
// (src/server-main.js, commit 51ad27fb8; host notes §9): the real Express and
// middleware packages at the versions SillyTavern's lock pins (tools/node),
// in SillyTavern's order, with our own small versions of SillyTavern's own
// middleware (basic auth, IP whitelist, user data, login, requireLogin) and
// of its plugin loader. Not SillyTavern's code: written from reading it.
//
// Left out, and why: responseTime (a header), CORS (off by default), the
// access log, static files, webpack, multer (it reads multipart bodies only,
// and the plugin refuses a body someone else read: index.mjs). helmet is in.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** tools/node, where `make node-tools` installed the pinned packages. */
const tools = process.env.TTMCP_NODE_TOOLS ?? path.join(here, '..', '..', 'tools', 'node');
const requireTools = createRequire(path.join(tools, 'package.json'));

/** @param {string} name */
async function dep(name) {
    const mod = await import(pathToFileURL(requireTools.resolve(name)).href);
    return mod.default ?? mod;
}

const express = await dep('express');
const compression = await dep('compression');
const helmet = await dep('helmet');
const bodyParser = await dep('body-parser');
const cookieSession = await dep('cookie-session');
const { csrfSync } = await import(pathToFileURL(requireTools.resolve('csrf-sync')).href);
const { hostValidationMiddleware } = await import(pathToFileURL(requireTools.resolve('host-validation-middleware')).href);
const ipMatching = await dep('ip-matching');
const ipaddr = await dep('ipaddr.js');

/**
 * @typedef {object} Options
 * @property {{username: string, password: string}} [basicAuth]  listen + basicAuthMode
 * @property {string[]} [whitelist]   whitelistMode with these entries (absent: off)
 * @property {string[]} [hostWhitelist]  hostWhitelist.enabled with these hosts
 * @property {Record<string, {name: string, password: string, admin: boolean}>} [accounts]  enableUserAccounts
 * @property {string} pluginsDir   SillyTavern's plugins/
 */

/**
 * Builds the app and loads the plugins, as server-main.js does.
 * @param {Options} o
 */
export async function createSillyTavern(o) {
    const app = express();
    app.use(helmet({ contentSecurityPolicy: false }));
    app.use(compression());
    app.use(bodyParser.json({ limit: '500mb' }));
    app.use(bodyParser.urlencoded({ extended: true, limit: '500mb' }));
    if (o.basicAuth) app.use(basicAuth(o.basicAuth));
    if (o.whitelist) app.use(ipWhitelist(o.whitelist));
    if (o.hostWhitelist) {
        app.use(hostValidationMiddleware({ allowedHosts: o.hostWhitelist, generateErrorMessage: () => 'host not allowed', errorResponseContentType: 'text/plain' }));
    }
    app.use(cookieSession({
        name: 'session-' + crypto.randomBytes(4).toString('hex'),
        sameSite: 'lax',
        httpOnly: true,
        maxAge: 24 * 3600 * 1000,
        secret: crypto.randomBytes(32).toString('base64'),
    }));
    app.use(userData(o.accounts));
    const csrf = csrfSync({
        getTokenFromState: (/** @type {any} */ req) => req.session?.csrfToken,
        getTokenFromRequest: (/** @type {any} */ req) => req.headers['x-csrf-token']?.toString(),
        storeTokenInState: (/** @type {any} */ req, /** @type {string} */ token) => { if (req.session) req.session.csrfToken = token; },
        size: 32,
    });
    app.get('/csrf-token', (/** @type {any} */ req, /** @type {any} */ res) => res.json({ token: csrf.generateToken(req) }));
    app.use(csrf.csrfSynchronisedProtection);
    // Public API: login (src/endpoints/users-public.js), behind CSRF as there.
    app.post('/api/users/login', (/** @type {any} */ req, /** @type {any} */ res) => {
        const user = o.accounts?.[req.body?.handle];
        if (!user || user.password !== req.body?.password) return res.status(403).json({ error: 'Incorrect credentials' });
        req.session.handle = req.body.handle;
        return res.json({ handle: req.body.handle });
    });
    // Everything below requires authentication (requireLoginMiddleware).
    app.use((/** @type {any} */ req, /** @type {any} */ res, /** @type {any} */ next) => (req.user ? next() : res.sendStatus(403)));
    app.post('/api/ping', (/** @type {any} */ _req, /** @type {any} */ res) => res.sendStatus(204));
    const exits = await loadPlugins(app, o.pluginsDir);
    return { app, exit: () => Promise.all(exits.map((fn) => fn())) };
}

/**
 * The plugin loader (src/plugin-loader.js): each folder of pluginsDir with
 * a package.json "main" is imported; its init gets an express.Router, which
 * is mounted at /api/plugins/<id> only if it registered a route.
 * @param {any} app
 * @param {string} pluginsDir
 * @returns {Promise<Array<() => unknown>>}
 */
async function loadPlugins(app, pluginsDir) {
    /** @type {Array<() => unknown>} */
    const exits = [];
    for (const name of fs.readdirSync(pluginsDir)) {
        const dir = path.join(pluginsDir, name);
        const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
        const plugin = await import(pathToFileURL(path.join(dir, pkg.main)).href);
        const info = plugin.info ?? plugin.default?.info;
        const init = plugin.init ?? plugin.default?.init;
        if (typeof info?.id !== 'string' || !/^[a-z0-9_-]+$/.test(info.id) || typeof info.name !== 'string' || typeof info.description !== 'string' || typeof init !== 'function') {
            throw new Error(`${dir}: not a SillyTavern plugin`);
        }
        const router = express.Router();
        await init(router);
        if (router.stack.length > 0) app.use(`/api/plugins/${info.id}`, router);
        const exit = plugin.exit ?? plugin.default?.exit;
        if (typeof exit === 'function') exits.push(exit);
    }
    return exits;
}

/**
 * basicAuthMiddleware (src/middleware/basicAuth.js), one shared account.
 * @param {{username: string, password: string}} account
 */
function basicAuth(account) {
    return (/** @type {any} */ req, /** @type {any} */ res, /** @type {any} */ next) => {
        const [scheme, credentials] = String(req.headers.authorization ?? '').split(' ');
        if (scheme === 'Basic' && credentials) {
            const [username, ...rest] = Buffer.from(credentials, 'base64').toString('utf8').split(':');
            if (username === account.username && rest.join(':') === account.password) return next();
        }
        res.set('WWW-Authenticate', 'Basic realm="SillyTavern", charset="UTF-8"');
        return res.status(401).send('Unauthorized');
    };
}

/**
 * The IP whitelist (src/middleware/whitelist.js): the socket's address,
 * IPv4-mapped IPv6 as IPv4, matched with ip-matching.
 * @param {string[]} entries
 */
function ipWhitelist(entries) {
    return (/** @type {any} */ req, /** @type {any} */ res, /** @type {any} */ next) => {
        let ip = ipaddr.parse(req.socket.remoteAddress);
        if (ip.kind() === 'ipv6' && ip.isIPv4MappedAddress()) ip = ip.toIPv4Address();
        const client = ip.toString();
        if (entries.some((e) => ipMatching.matches(client, ipMatching.getMatch(e)))) return next();
        return res.status(403).send('Forbidden by whitelist');
    };
}

/**
 * setUserDataMiddleware (src/users.js): without accounts every request is
 * the default user; with them, the session's user, if any.
 * @param {Options['accounts']} accounts
 */
function userData(accounts) {
    return (/** @type {any} */ req, /** @type {any} */ _res, /** @type {any} */ next) => {
        if (!accounts) {
            req.user = { profile: { handle: 'default-user', name: 'User', admin: true, enabled: true }, directories: {} };
            return next();
        }
        const handle = req.session?.handle;
        const user = handle ? accounts[handle] : undefined;
        if (user) req.user = { profile: { handle, name: user.name, admin: user.admin, enabled: true }, directories: {} };
        return next();
    };
}
