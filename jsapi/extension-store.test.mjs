// node --test jsapi/extension-store.test.mjs (make test-js): the contract of
// api.extension.store with upstream (src/tauri/main/api/extension-store.js):
// commands, flat arguments, argument rules, blob encodings. The real page
// and backend are webtest/store_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { base64ToBytes, bytesToBase64, createExtensionStore, normalizeBinary } from './extension-store.js';

function fakeStore(answer = () => null) {
  const calls = [];
  const store = createExtensionStore(async (command, args) => {
    calls.push([command, JSON.parse(JSON.stringify(args))]);
    return answer(command, args);
  });
  return { store, calls };
}

test('every method sends its upstream command with flat arguments', async () => {
  const { store, calls } = fakeStore();
  const ns = 'my-ext';
  await store.getJson({ namespace: ns, key: 'settings' });
  await store.tryGetJson({ namespace: ` ${ns} `, table: ' state ', key: ' settings ' });
  await store.setJson({ namespace: ns, key: 'k', value: { n: 1 }, table: '   ' });
  await store.updateJson({ namespace: ns, key: 'k', value: null, table: 5 });
  await store.updateJSON({ namespace: ns, key: 'k', value: [1] });
  await store.renameKey({ namespace: ns, key: 'a', newKey: ' b ' });
  await store.updateKey({ namespace: ns, key: 'a', newKey: 'b', table: 't' });
  await store.deleteJson({ namespace: ns, key: 'k' });
  await store.listKeys({ namespace: ns });
  await store.listTables({ namespace: ns, table: 'ignored' });
  await store.deleteTable({ namespace: ns, table: ' t ' });
  await store.deleteBlob({ namespace: ns, key: 'icon.png' });
  await store.listBlobKeys({ namespace: ns, table: 'assets' });
  assert.deepEqual(calls, [
    ['get_extension_store_json', { namespace: ns, key: 'settings' }],
    ['try_get_extension_store_json', { namespace: ns, key: 'settings', table: 'state' }],
    ['set_extension_store_json', { namespace: ns, key: 'k', value: { n: 1 } }],
    ['update_extension_store_json', { namespace: ns, key: 'k', value: null }],
    ['update_extension_store_json', { namespace: ns, key: 'k', value: [1] }],
    ['rename_extension_store_key', { namespace: ns, key: 'a', newKey: 'b' }],
    ['rename_extension_store_key', { namespace: ns, key: 'a', newKey: 'b', table: 't' }],
    ['delete_extension_store_json', { namespace: ns, key: 'k' }],
    ['list_extension_store_keys', { namespace: ns }],
    ['list_extension_store_tables', { namespace: ns }],
    ['delete_extension_store_table', { namespace: ns, table: 't' }],
    ['delete_extension_store_blob', { namespace: ns, key: 'icon.png' }],
    ['list_extension_store_blob_keys', { namespace: ns, table: 'assets' }],
  ]);
  assert.equal(store.updateJSON, store.updateJson);
  assert.equal(store.updateKey, store.renameKey);
  assert.deepEqual(Object.keys(store).sort(), [
    'deleteBlob', 'deleteJson', 'deleteTable', 'getBlob', 'getJson', 'listBlobKeys', 'listKeys',
    'listTables', 'renameKey', 'setBlob', 'setJson', 'tryGetJson', 'updateJSON', 'updateJson', 'updateKey',
  ]);
});

test('results pass through as the backend answers them', async () => {
  const { store } = fakeStore((command) => (command === 'try_get_extension_store_json' ? { found: false } : ['a']));
  assert.deepEqual(await store.tryGetJson({ namespace: 'n', key: 'k' }), { found: false });
  assert.deepEqual(await store.listKeys({ namespace: 'n' }), ['a']);
});

test('missing names reject with mcp.dto_invalid before anything is sent', async () => {
  const { store, calls } = fakeStore();
  const cases = [
    [() => store.getJson(), 'namespace is required'],
    [() => store.getJson({ namespace: '  ', key: 'k' }), 'namespace is required'],
    [() => store.getJson({ namespace: 0, key: 'k' }), 'namespace is required'],
    [() => store.setJson({ namespace: 'n', value: 1 }), 'key is required'],
    [() => store.renameKey({ namespace: 'n', key: 'k' }), 'newKey is required'],
    [() => store.deleteTable({ namespace: 'n' }), 'table is required'],
    [() => store.deleteTable({ namespace: 'n', table: ' ' }), 'table is required'],
    [() => store.listTables('n'), 'namespace is required'],
    [() => store.setBlob({ namespace: 'n', key: 'k' }), 'data is required'],
    [() => store.setBlob({ namespace: 'n', key: 'k', data: null }), 'data is required'],
    [() => store.setBlob({ namespace: 'n', key: 'k', data: '  ' }), 'data must not be empty'],
    [() => store.setBlob({ namespace: 'n', key: 'k', data: new Uint8Array(0) }), 'data must not be empty'],
    [() => store.setBlob({ namespace: 'n', key: 'k', data: 42 }), 'data must not be empty'],
    [() => store.getBlob({ namespace: 'n' }), 'key is required'],
  ];
  for (const [call, message] of cases) {
    const p = call();
    assert.ok(p instanceof Promise, 'a method returns a promise even for bad input');
    await assert.rejects(p, (e) => {
      assert.ok(e instanceof Error);
      assert.equal(e.message, `mcp.dto_invalid: ${message}`);
      assert.equal(e.code, 'mcp.dto_invalid');
      assert.equal(e.kind, 'BadRequest');
      return true;
    });
  }
  // names are String()ed, as upstream does
  await store.getJson({ namespace: 7, key: { toString: () => ' obj ' } });
  assert.deepEqual(calls, [['get_extension_store_json', { namespace: '7', key: 'obj' }]]);
});

test('setBlob takes every form upstream takes', async () => {
  const { store, calls } = fakeStore();
  const sent = async (data) => {
    calls.length = 0;
    await store.setBlob({ namespace: 'n', key: 'b.bin', data });
    assert.equal(calls.length, 1);
    assert.equal(calls[0][0], 'set_extension_store_blob');
    return calls[0][1].dataBase64;
  };
  const b64 = (bytes) => Buffer.from(bytes).toString('base64');
  assert.equal(await sent('  AAEC/w==\n'), 'AAEC/w==', 'a string is base64 already');
  assert.equal(await sent(new Uint8Array([0, 1, 2, 255])), 'AAEC/w==');
  assert.equal(await sent(new Uint8Array([0, 1, 2, 255]).buffer), 'AAEC/w==');
  const big = new Uint16Array([0x0100, 0x0302, 0x0504]);
  assert.equal(await sent(new DataView(big.buffer, 1, 4)), b64([1, 2, 3, 4]), 'a view is its own window');
  assert.equal(await sent(new Uint8Array(big.buffer, 2, 2)), b64([2, 3]));
  assert.equal(await sent([300, -1, 1.7, '12', null, NaN, Infinity, true]), b64([255, 0, 1, 12, 0, 0, 0, 1]), 'numbers are clamped');
  assert.equal(await sent({ data: [1, 2, 3] }), b64([1, 2, 3]));
  assert.equal(await sent({ 10: 3, 1: 2, 0: 1, x: 9 }), b64([1, 2, 3]), 'numeric keys in numeric order');
  assert.equal(await sent(new Blob([new Uint8Array([9, 8, 7])])), b64([9, 8, 7]));
  assert.deepEqual(Object.keys(calls[0][1]), ['namespace', 'key', 'dataBase64']);
});

test('getBlob resolves a typed Blob', async () => {
  const answers = [
    { content_base64: 'AAEC/w==', mime_type: 'image/png' },
    { content_base64: ' AA EC\n/w== ', mime_type: '' },
    {},
  ];
  const { store, calls } = fakeStore(() => answers.shift());
  const a = await store.getBlob({ namespace: 'n', key: 'icon.png', table: 'assets' });
  assert.ok(a instanceof Blob);
  assert.equal(a.type, 'image/png');
  assert.deepEqual([...new Uint8Array(await a.arrayBuffer())], [0, 1, 2, 255]);
  const b = await store.getBlob({ namespace: 'n', key: 'x' });
  assert.equal(b.type, 'application/octet-stream');
  assert.deepEqual([...new Uint8Array(await b.arrayBuffer())], [0, 1, 2, 255]);
  const c = await store.getBlob({ namespace: 'n', key: 'x' });
  assert.equal(c.size, 0);
  assert.deepEqual(calls[0], ['get_extension_store_blob', { namespace: 'n', key: 'icon.png', table: 'assets' }]);
});

test('base64 both ways, with and without the native Uint8Array methods', () => {
  const bytes = new Uint8Array(randomBytes((1 << 20) + 1));
  const want = Buffer.from(bytes).toString('base64');
  const native = typeof Uint8Array.prototype.toBase64 === 'function';
  const check = () => {
    assert.equal(bytesToBase64(bytes), want);
    assert.deepEqual(base64ToBytes(want), bytes);
    assert.deepEqual(base64ToBytes(''), new Uint8Array(0));
  };
  check();
  // the other path: add (or hide) the native methods
  const proto = Object.getOwnPropertyDescriptor(Uint8Array.prototype, 'toBase64');
  const from = Object.getOwnPropertyDescriptor(Uint8Array, 'fromBase64');
  let used = 0;
  try {
    if (native) {
      delete Uint8Array.prototype.toBase64;
      delete Uint8Array.fromBase64;
    } else {
      Uint8Array.prototype.toBase64 = function toBase64() {
        used++;
        return Buffer.from(this.buffer, this.byteOffset, this.byteLength).toString('base64');
      };
      Uint8Array.fromBase64 = (s) => {
        used++;
        return new Uint8Array(Buffer.from(s, 'base64'));
      };
    }
    check();
    if (!native) assert.equal(used, 3 - 1, 'the native methods were used'); // '' never reaches fromBase64
  } finally {
    if (proto) Object.defineProperty(Uint8Array.prototype, 'toBase64', proto);
    else delete Uint8Array.prototype.toBase64;
    if (from) Object.defineProperty(Uint8Array, 'fromBase64', from);
    else delete Uint8Array.fromBase64;
  }
  assert.deepEqual(normalizeBinary('x'), new Uint8Array(0));
});
