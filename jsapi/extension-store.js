// window.__TAURITAVERN__.api.extension.store: TauriTavern's key–value
// store for extensions, with upstream's methods and argument rules
// (src/tauri/main/api/extension-store.js), over the backend commands of the
// same names. The loader (tauritavern-mcp.js) publishes it; its commands go
// through the shim's safeInvoke, so they share its connection, its errors
// (mcp.host_unavailable, mcp.origin_not_allowed, ...) and its refusals.
//
// Arguments travel flat ({namespace, key, table, ...}), as upstream's Tauri
// commands take them. It is plain JavaScript on purpose: JSON values are
// serialised by the page's engine, and blob bytes become base64 (and back)
// with Uint8Array's own toBase64/fromBase64 where the browser has them,
// never crossing into the wasm (docs/DECISIONS.md).
//
// The command names are jsapi's StoreCommands (extension_store.go); a Go
// test keeps them in step with this file.

const CODE_ARGS_INVALID = 'mcp.dto_invalid';

function argsError(message) {
  return Object.assign(new Error(`${CODE_ARGS_INVALID}: ${message}`), {
    code: CODE_ARGS_INVALID,
    kind: 'BadRequest',
  });
}

// upstream: String(value || '').trim(), which must not be empty
function requireName(value, label) {
  const name = String(value || '').trim();
  if (!name) throw argsError(`${label} is required`);
  return name;
}

// upstream: a string that is not blank, else absent (the backend's "main")
function optionalName(value) {
  const name = typeof value === 'string' ? value.trim() : '';
  return name || undefined;
}

// ------------------------------------------------------------------ bytes

const CHUNK = 0x8000;

export function bytesToBase64(bytes) {
  if (typeof bytes.toBase64 === 'function') return bytes.toBase64();
  const parts = [];
  for (let i = 0; i < bytes.length; i += CHUNK) {
    parts.push(String.fromCharCode.apply(null, bytes.subarray(i, i + CHUNK)));
  }
  return btoa(parts.join(''));
}

// As upstream's decodeBase64ToBytes: whitespace is ignored, '' is no bytes.
export function base64ToBytes(text) {
  const clean = String(text || '').replace(/\s+/g, '');
  if (!clean) return new Uint8Array(0);
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(clean);
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// upstream's clampByte: Number(x), 0 unless finite, truncated, 0..255
function clampByte(value) {
  const n = Number(value);
  return Number.isFinite(n) ? Math.max(0, Math.min(255, Math.trunc(n))) : 0;
}

// upstream's normalizeBinaryPayload, for what setBlob takes that is neither
// a string nor a Blob: typed arrays, ArrayBuffer, DataView, arrays and
// {data: [...]} of byte numbers, numeric-keyed objects (a Uint8Array after
// JSON); anything else is no bytes.
export function normalizeBinary(value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return Uint8Array.from(value, clampByte);
  if (value && typeof value === 'object') {
    if (Array.isArray(value.data)) return Uint8Array.from(value.data, clampByte);
    const keys = Object.keys(value)
      .filter((k) => /^\d+$/.test(k))
      .sort((a, b) => Number(a) - Number(b));
    if (keys.length) return Uint8Array.from(keys, (k) => clampByte(value[k]));
  }
  return new Uint8Array(0);
}

// ------------------------------------------------------------------ the API

/**
 * createExtensionStore returns the api.extension.store object over invoke,
 * a (command, args) => Promise that sends one backend command.
 */
export function createExtensionStore(invoke) {
  const entry = (o) => ({
    namespace: requireName(o?.namespace, 'namespace'),
    key: requireName(o?.key, 'key'),
    table: optionalName(o?.table),
  });
  const table = (o) => ({
    namespace: requireName(o?.namespace, 'namespace'),
    table: optionalName(o?.table),
  });

  async function updateJson(o) {
    return invoke('update_extension_store_json', { ...entry(o), value: o?.value });
  }
  async function renameKey(o) {
    const { namespace, key, table: t } = entry(o);
    return invoke('rename_extension_store_key', { namespace, key, newKey: requireName(o?.newKey, 'newKey'), table: t });
  }

  return {
    async getJson(o) {
      return invoke('get_extension_store_json', entry(o));
    },
    async tryGetJson(o) {
      return invoke('try_get_extension_store_json', entry(o));
    },
    async setJson(o) {
      return invoke('set_extension_store_json', { ...entry(o), value: o?.value });
    },
    updateJson,
    updateJSON: updateJson,
    renameKey,
    updateKey: renameKey,
    async deleteJson(o) {
      return invoke('delete_extension_store_json', entry(o));
    },
    async listKeys(o) {
      return invoke('list_extension_store_keys', table(o));
    },
    async listTables(o) {
      return invoke('list_extension_store_tables', { namespace: requireName(o?.namespace, 'namespace') });
    },
    async deleteTable(o) {
      return invoke('delete_extension_store_table', {
        namespace: requireName(o?.namespace, 'namespace'),
        table: requireName(o?.table, 'table'),
      });
    },
    // Resolves a Blob typed with the MIME type the backend guessed from the
    // key (application/octet-stream when it has none).
    async getBlob(o) {
      const payload = await invoke('get_extension_store_blob', entry(o));
      const type = String(payload?.mime_type || 'application/octet-stream').trim();
      return new Blob([base64ToBytes(payload?.content_base64)], { type });
    },
    // data: a string is base64 already (as upstream); a Blob is read; see
    // normalizeBinary for the rest.
    async setBlob(o) {
      const args = entry(o);
      const data = o?.data;
      if (data === null || data === undefined) throw argsError('data is required');
      let dataBase64;
      if (typeof data === 'string') dataBase64 = data.trim();
      else if (typeof Blob === 'function' && data instanceof Blob) dataBase64 = bytesToBase64(new Uint8Array(await data.arrayBuffer()));
      else dataBase64 = bytesToBase64(normalizeBinary(data));
      if (!dataBase64) throw argsError('data must not be empty');
      return invoke('set_extension_store_blob', { ...args, dataBase64 });
    },
    async deleteBlob(o) {
      return invoke('delete_extension_store_blob', entry(o));
    },
    async listBlobKeys(o) {
      return invoke('list_extension_store_blob_keys', table(o));
    },
  };
}
