// config.json, the backend address and the default data root (the same
// rules as backend/cmd/ttmcp/dataroot.go).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { backendAddress, defaultDataRoot, readConfig } from '../index.mjs';
import { tempDir } from './helpers.mjs';

test('readConfig: defaults, and refusals with the member named', () => {
    const dir = tempDir();
    const file = path.join(dir, 'config.json');
    assert.deepEqual(readConfig(file), { backendUrl: 'http://127.0.0.1:7878', autostart: false }); // no file: nothing to start
    const write = (c) => fs.writeFileSync(file, JSON.stringify(c));
    write({ backendUrl: 'http://localhost:7880', binary: '/opt/ttmcp' });
    assert.deepEqual(readConfig(file), { backendUrl: 'http://localhost:7880', binary: '/opt/ttmcp', dataRoot: undefined, autostart: true });
    for (const [c, want] of [
        [{ backendUrl: 'http://192.168.1.5:7878' }, /loopback/],
        [{ backendUrl: 'https://127.0.0.1:7878' }, /loopback/],
        [{ backendUrl: 'http://127.0.0.1:7878/jsapi' }, /loopback/],
        [{ binary: 'ttmcp' }, /binary is not an absolute path/],
        [{ dataRoot: './data' }, /dataRoot is not an absolute path/],
        [{ autostart: 'no' }, /autostart is not true or false/],
        [[], /not a JSON object/],
    ]) {
        write(c);
        assert.throws(() => readConfig(file), want, JSON.stringify(c));
    }
    fs.rmSync(dir, { recursive: true, force: true });
});

test('backendAddress: what --listen and the requests use', () => {
    assert.deepEqual(backendAddress('http://127.0.0.1:7878'), { hostname: '127.0.0.1', port: 7878, listen: '127.0.0.1:7878' });
    assert.deepEqual(backendAddress('http://[::1]:7880/'), { hostname: '::1', port: 7880, listen: '[::1]:7880' });
    assert.deepEqual(backendAddress('http://localhost'), { hostname: 'localhost', port: 80, listen: 'localhost:80' });
});

test('defaultDataRoot: as ttmcp serve resolves it without --data-root', () => {
    const home = '/home/u';
    assert.equal(defaultDataRoot({ TTMCP_DATA_ROOT: '/env/root' }, 'linux', home), '/env/root');
    assert.equal(defaultDataRoot({}, 'linux', home), '/home/u/.local/share/ttmcp');
    assert.equal(defaultDataRoot({}, 'android', home), '/home/u/.local/share/ttmcp');
    assert.equal(defaultDataRoot({ XDG_DATA_HOME: '/xdg' }, 'linux', home), '/xdg/ttmcp');
    assert.equal(defaultDataRoot({ XDG_DATA_HOME: 'relative' }, 'linux', home), '/home/u/.local/share/ttmcp');
    assert.equal(defaultDataRoot({}, 'darwin', home), '/home/u/Library/Application Support/ttmcp');
    assert.equal(defaultDataRoot({ AppData: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32', home), 'C:\\Users\\u\\AppData\\Roaming\\ttmcp');
});
