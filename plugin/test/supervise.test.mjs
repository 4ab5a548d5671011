// Supervision (issue 28 item 4) against the real `ttmcp serve` (TTMCP_BIN,
// built by `make test-plugin`): a scratch data root, a free loopback port.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { createPlugin, probe } from '../index.mjs';
import { freePort, tempDir, until } from './helpers.mjs';

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = process.env.TTMCP_BIN ?? path.join(repo, 'bin', 'ttmcp');
const FAST = { probeTimeoutMs: 500, readyPollMs: 50, backoffMs: 50, backoffCapMs: 200, fastCrashMs: 2000, maxFastCrashes: 3, killAfterMs: 3000 };

/** The routes init registers, without Express (supervision needs none). */
const router = () => ({ get() {}, use() {} });

/** @param {number} pid */
function alive(pid) {
    try { process.kill(pid, 0); return true; } catch { return false; }
}

/**
 * A plugin whose config.json names the real binary, a scratch data root
 * and a free port; its console lines are collected.
 * @param {import('node:test').TestContext} t
 * @param {object} [extra] more config.json members
 */
async function supervised(t, extra = {}) {
    assert.ok(fs.existsSync(BIN), `${BIN} is missing: build it with make backend (make test-plugin does)`);
    const dir = tempDir();
    const port = await freePort();
    const config = { backendUrl: `http://127.0.0.1:${port}`, binary: BIN, dataRoot: path.join(dir, 'data'), autostart: true, ...extra };
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
    const lines = [];
    const plugin = createPlugin({ configFile: path.join(dir, 'config.json'), timings: FAST, log: (l) => lines.push(l), error: (l) => lines.push(l), version: 'test' });
    t.after(async () => { await plugin.exit(); fs.rmSync(dir, { recursive: true, force: true }); });
    const addr = { hostname: '127.0.0.1', port };
    return { plugin, lines, addr, config, dir };
}

test('starts ttmcp serve when none answers, with its log lines prefixed; restarts it after kill -9; exit() stops it', { timeout: 60_000 }, async (t) => {
    const { plugin, lines, addr, config } = await supervised(t);
    await plugin.init(router());
    await until(() => plugin.state === 'running', 'ttmcp to answer');
    assert.equal(await probe(addr, 1000), 'ttmcp');
    const first = plugin.child?.pid;
    assert.ok(first && alive(first));
    assert.ok(lines.includes(`[ttmcp] starting ${BIN} serve --listen 127.0.0.1:${addr.port} --data-root ${config.dataRoot}`), lines.join('\n'));
    // serve's own first line, from its stderr, prefixed in SillyTavern's console
    const serving = (l) => l.startsWith('[ttmcp] time=') && l.includes('msg="ttmcp serving"') && l.includes(`dataRoot=${config.dataRoot}`);
    await until(() => lines.some(serving), 'serve\'s "ttmcp serving" line');
    assert.ok(lines.every((l) => l.startsWith('[ttmcp] ')), lines.join('\n'));

    process.kill(first, 'SIGKILL');
    await until(() => plugin.child?.pid !== undefined && plugin.child.pid !== first && plugin.state === 'running', 'a new ttmcp');
    assert.ok(lines.some((l) => /^\[ttmcp\] ttmcp serve was killed by SIGKILL; starting it again in \d+ ms$/.test(l)), lines.join('\n'));
    assert.equal(await probe(addr, 1000), 'ttmcp');

    const second = /** @type {number} */ (plugin.child?.pid);
    await plugin.exit();
    assert.equal(plugin.state, 'stopped');
    assert.equal(plugin.child, null);
    assert.equal(alive(first), false);
    assert.equal(alive(second), false);
    assert.equal(await probe(addr, 1000), 'none');
});

test('a backend the user started is used as it is: nothing started, nothing stopped', { timeout: 60_000 }, async (t) => {
    const { plugin, lines, addr, config } = await supervised(t);
    const own = spawn(BIN, ['serve', '--listen', `127.0.0.1:${addr.port}`, '--data-root', config.dataRoot], { stdio: 'ignore' });
    t.after(() => { own.kill('SIGKILL'); });
    await until(async () => (await probe(addr, 500)) === 'ttmcp', 'the user\'s ttmcp');
    await plugin.init(router());
    assert.equal(plugin.state, 'external');
    assert.equal(plugin.child, null);
    assert.ok(lines.some((l) => l.includes('already running')), lines.join('\n'));
    await plugin.exit();
    assert.ok(alive(/** @type {number} */ (own.pid)));
    assert.equal(await probe(addr, 1000), 'ttmcp');
});

test('autostart:false starts nothing', { timeout: 30_000 }, async (t) => {
    const { plugin, lines, addr } = await supervised(t, { autostart: false });
    await plugin.init(router());
    assert.equal(plugin.state, 'disabled');
    assert.equal(plugin.child, null);
    assert.ok(lines.some((l) => l.includes('autostart is off')), lines.join('\n'));
    assert.equal(await probe(addr, 500), 'none');
});

test('something else on the port: ttmcp is not started there', { timeout: 30_000 }, async (t) => {
    const http = await import('node:http');
    const { plugin, lines, addr } = await supervised(t);
    const other = http.createServer((_req, res) => res.end('hello'));
    await new Promise((r) => other.listen(addr.port, '127.0.0.1', () => r(undefined)));
    t.after(() => new Promise((r) => other.close(() => r(undefined))));
    await plugin.init(router());
    assert.equal(plugin.state, 'other');
    assert.equal(plugin.child, null);
    assert.ok(lines.some((l) => l.includes('not ttmcp')), lines.join('\n'));
});

test('repeated fast crashes: it gives up loudly', { timeout: 30_000 }, async (t) => {
    const dir = tempDir();
    const crashing = path.join(dir, 'crash.sh');
    fs.writeFileSync(crashing, '#!/bin/sh\necho "failing on purpose" >&2\nexit 3\n', { mode: 0o755 });
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ backendUrl: `http://127.0.0.1:${port}`, binary: crashing, autostart: true }));
    const lines = [];
    const p = createPlugin({ configFile: path.join(dir, 'config.json'), timings: FAST, log: (l) => lines.push(l), error: (l) => lines.push(l) });
    t.after(async () => { await p.exit(); fs.rmSync(dir, { recursive: true, force: true }); });
    await p.init(router());
    await until(() => p.state === 'gave-up', 'supervision to give up');
    assert.equal(lines.filter((l) => l === '[ttmcp] failing on purpose').length, FAST.maxFastCrashes);
    assert.equal(lines.filter((l) => l.includes('exited with status 3; starting it again')).length, FAST.maxFastCrashes - 1);
    assert.ok(lines.some((l) => l.includes(`stopped ${FAST.maxFastCrashes} times in a row`) && l.includes('not started again')), lines.join('\n'));
    assert.equal(p.child, null);
});

test('exit(): a ttmcp that ignores SIGTERM is killed after killAfterMs, with what it started', { timeout: 30_000 }, async (t) => {
    const dir = tempDir();
    const stubborn = path.join(dir, 'stubborn.sh');
    const pidFile = path.join(dir, 'grandchild.pid');
    // Ignores SIGTERM and starts a child of its own (as ttmcp starts stdio servers).
    fs.writeFileSync(stubborn, `#!/bin/sh\ntrap '' TERM\nsleep 600 &\necho $! > ${pidFile}\necho ready\nwhile :; do sleep 1; done\n`, { mode: 0o755 });
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ backendUrl: `http://127.0.0.1:${port}`, binary: stubborn, autostart: true }));
    const lines = [];
    const p = createPlugin({ configFile: path.join(dir, 'config.json'), timings: { ...FAST, killAfterMs: 300 }, log: (l) => lines.push(l), error: (l) => lines.push(l) });
    t.after(async () => { await p.exit(); fs.rmSync(dir, { recursive: true, force: true }); });
    await p.init(router());
    await until(() => lines.includes('[ttmcp] ready') && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the stubborn child');
    const pid = /** @type {number} */ (p.child?.pid);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    await p.exit();
    assert.equal(alive(pid), false);
    await until(() => !alive(grandchild), 'the grandchild to go', 5000);
    assert.ok(lines.some((l) => l.includes('did not stop within 300 ms of SIGTERM; killing it')), lines.join('\n'));
});
