package webtest

// api.extension.store from a real page: every method against the real
// backend and files, a data root written the way TauriTavern writes it,
// refused names, concurrent writers in two tabs, a 1 MiB blob round trip,
// and the Manager's Exa marker across a backend restart.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

// storePath is a file of the extension store under the backend's root.
func (b *backend) storePath(parts ...string) string {
	return filepath.Join(append([]string{b.root, "_tauritavern", "extension-store"}, parts...)...)
}

func plant(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExtensionStoreFromThePage(t *testing.T) {
	b := newBackend(t)
	// Files as TauriTavern leaves them: serde_json pretty JSON and raw blobs.
	plant(t, b.storePath("my-ext", "kv", "main", "index.json"), "{\n  \"count\": 2,\n  \"nested\": {\n    \"x\": 1\n  }\n}")
	plant(t, b.storePath("my-ext", "kv", "state", "flag.json"), "true")
	plant(t, b.storePath("my-ext", "blobs", "assets", "logo.png"), "\x89PNG\r\n\x1a\n")

	p := b.openHost(t)
	p.run(`tt.store = window.__TAURITAVERN__.api.extension.store;`)
	methods := evalJS[[]string](p, `return Object.keys(tt.store).sort();`)
	want := []string{"deleteBlob", "deleteJson", "deleteTable", "getBlob", "getJson", "listBlobKeys", "listKeys",
		"listTables", "renameKey", "setBlob", "setJson", "tryGetJson", "updateJSON", "updateJson", "updateKey"}
	if !slices.Equal(methods, want) {
		t.Fatalf("api.extension.store has %v", methods)
	}

	got := evalJS[map[string]any](p, `
		const s = tt.store, ns = 'my-ext', out = {};
		out.index = await s.getJson({ namespace: ns, key: 'index' });
		out.flag = await s.tryGetJson({ namespace: ns, key: 'flag', table: 'state' });
		out.missing = await s.tryGetJson({ namespace: ns, key: 'missing' });
		out.tables = await s.listTables({ namespace: ns });
		const logo = await s.getBlob({ namespace: ns, key: 'logo.png', table: 'assets' });
		out.logo = [logo.type, [...new Uint8Array(await logo.arrayBuffer())]];
		out.set = await s.setJson({ namespace: ns, key: 'settings', value: { b: [1, 'é'], a: null } });
		out.update = await s.updateJson({ namespace: ns, key: 'index', value: { nested: { y: 2 }, added: true } });
		out.updateAlias = await s.updateJSON({ namespace: ns, key: 'index', value: { count: 3 } });
		out.merged = await s.getJson({ namespace: ns, key: 'index' });
		out.rename = await s.renameKey({ namespace: ns, key: 'settings', newKey: 'prefs' });
		out.renameAlias = await s.updateKey({ namespace: ns, key: 'prefs', newKey: 'settings2' });
		out.keys = await s.listKeys({ namespace: ns });
		out.deleted = await s.deleteJson({ namespace: ns, key: 'settings2' });
		out.afterDelete = await tt.err(s.getJson({ namespace: ns, key: 'settings2' }));
		out.setBlob = await s.setBlob({ namespace: ns, key: 'icon.svg', data: new Blob(['<svg/>']), table: 'assets' });
		out.blobKeys = await s.listBlobKeys({ namespace: ns, table: 'assets' });
		const svg = await s.getBlob({ namespace: ns, key: 'icon.svg', table: 'assets' });
		out.svg = [svg.type, await svg.text()];
		out.deleteBlob = await s.deleteBlob({ namespace: ns, key: 'logo.png', table: 'assets' });
		out.deleteTable = await s.deleteTable({ namespace: ns, table: 'state' });
		out.tablesAfter = await s.listTables({ namespace: ns });
		out.safeInvoke = await window.__TAURITAVERN__.invoke.safeInvoke('list_extension_store_blob_keys', { namespace: ns, table: 'assets' });
		return out;`)
	wantJSON := map[string]string{
		"index":       `{"count":2,"nested":{"x":1}}`,
		"flag":        `{"found":true,"value":true}`,
		"missing":     `{"found":false}`,
		"tables":      `["assets","main","state"]`,
		"logo":        `["image/png",[137,80,78,71,13,10,26,10]]`,
		"set":         `null`,
		"update":      `null`,
		"updateAlias": `null`,
		"merged":      `{"added":true,"count":3,"nested":{"x":1,"y":2}}`,
		"rename":      `null`,
		"renameAlias": `null`,
		"keys":        `["index","settings2"]`,
		"deleted":     `null`,
		"afterDelete": `{"code":"mcp.extension_store_not_found","isError":true,"kind":"NotFound","message":"mcp.extension_store_not_found: Extension store JSON entry not found: my-ext:main/settings2","name":"Error"}`,
		"setBlob":     `null`,
		"blobKeys":    `["icon.svg","logo.png"]`,
		"svg":         `["image/svg+xml","<svg/>"]`,
		"deleteBlob":  `null`,
		"deleteTable": `null`,
		"tablesAfter": `["assets","main"]`,
		"safeInvoke":  `["icon.svg"]`,
	}
	for k, w := range wantJSON {
		if g := marshal(t, got[k]); g != w {
			t.Errorf("%s = %s\nwant %s", k, g, w)
		}
	}
	// on disk, as TauriTavern writes: pretty, members sorted
	if data := readString(t, b.storePath("my-ext", "kv", "main", "index.json")); data != "{\n  \"added\": true,\n  \"count\": 3,\n  \"nested\": {\n    \"x\": 1,\n    \"y\": 2\n  }\n}" {
		t.Errorf("index.json:\n%s", data)
	}
	if data := readString(t, b.storePath("my-ext", "blobs", "assets", "icon.svg")); data != "<svg/>" {
		t.Errorf("icon.svg = %q", data)
	}
	if _, err := os.Stat(b.storePath("my-ext", "kv", "state")); !os.IsNotExist(err) {
		t.Errorf("the deleted table is still there: %v", err)
	}
}

// marshal is v's JSON, compact, with map keys sorted and nothing escaped
// for HTML.
func marshal(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Names that would escape the store, and missing arguments, reject with
// their codes, and nothing is written anywhere under the data root.
func TestExtensionStoreRefusals(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type refusal struct {
		Call string
		Err  *jsError
	}
	got := evalJS[[]refusal](p, `
		const s = window.__TAURITAVERN__.api.extension.store;
		const calls = {
			'key ../x': () => s.setJson({ namespace: 'n', key: '../x', value: 1 }),
			'namespace ..': () => s.setJson({ namespace: '..', key: 'k', value: 1 }),
			'table a/b': () => s.setBlob({ namespace: 'n', key: 'k', table: 'a/b', data: 'AAAA' }),
			'newKey /etc/passwd': () => s.renameKey({ namespace: 'n', key: 'k', newKey: '/etc/passwd' }),
			'key .hidden': () => s.getJson({ namespace: 'n', key: '.hidden' }),
			'namespace with a space': () => s.listTables({ namespace: 'my ext' }),
			'no namespace': () => s.getJson({ key: 'k' }),
			'no value': () => s.setJson({ namespace: 'n', key: 'k' }),
			'bad base64': () => s.setBlob({ namespace: 'n', key: 'k', data: 'not base64!' }),
			'absent table': () => s.deleteTable({ namespace: 'n', table: 't' }),
		};
		const out = [];
		for (const [call, f] of Object.entries(calls)) out.push({ call, err: await tt.err(f()) });
		return out;`)
	want := map[string][2]string{
		"key ../x":               {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"namespace ..":           {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"table a/b":              {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"newKey /etc/passwd":     {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"key .hidden":            {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"namespace with a space": {"mcp.extension_store_name_invalid", jsapi.KindBadRequest},
		"no namespace":           {jsapi.CodeArgsInvalid, jsapi.KindBadRequest},
		"no value":               {jsapi.CodeArgsInvalid, jsapi.KindBadRequest},
		"bad base64":             {"mcp.extension_store_blob_invalid", jsapi.KindBadRequest},
		"absent table":           {"mcp.extension_store_not_found", jsapi.KindNotFound},
	}
	if len(got) != len(want) {
		t.Fatalf("%d results", len(got))
	}
	for _, r := range got {
		w := want[r.Call]
		wantRejection(t, r.Call, r.Err, w[0], w[1])
	}
	if _, err := os.Stat(b.storePath()); !os.IsNotExist(err) {
		t.Errorf("the store folder exists after refusals only: %v", err)
	}
}

// Two tabs update one key at once, 40 times each: every update lands.
func TestExtensionStoreConcurrentTabs(t *testing.T) {
	b := newBackend(t)
	tabs := []*page{b.openHost(t), b.openHost(t)}
	done := make(chan struct{}, len(tabs))
	for i, p := range tabs {
		go func() {
			defer func() { done <- struct{}{} }()
			p.run(`
				const s = window.__TAURITAVERN__.api.extension.store;
				await Promise.all(Array.from({ length: 40 }, (_, j) =>
					s.updateJson({ namespace: 'n', key: 'shared', value: { ['t' + %s + '-' + j]: j } })));`, i)
		}()
	}
	for range tabs {
		<-done
	}
	n := evalJS[int](tabs[0], `return Object.keys(await window.__TAURITAVERN__.api.extension.store.getJson({ namespace: 'n', key: 'shared' })).length;`)
	if n != 80 {
		t.Errorf("%d members after 80 concurrent updates", n)
	}
}

// A 1 MiB blob from a Uint8Array and back: the same bytes, the file holds
// them raw. The time of the round trip is logged (make bench compares it
// with a plain-JavaScript client: BenchmarkBlobRoundTrip).
func TestExtensionStoreBlobRoundTrip(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	r := evalJS[struct {
		Same   bool
		Size   int
		Set    float64
		Get    float64
		Native bool
	}](p, `
		const s = window.__TAURITAVERN__.api.extension.store;
		const bytes = new Uint8Array(1 << 20);
		for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
		const t0 = performance.now();
		await s.setBlob({ namespace: 'n', key: 'big.bin', data: bytes });
		const t1 = performance.now();
		const blob = await s.getBlob({ namespace: 'n', key: 'big.bin' });
		const back = new Uint8Array(await blob.arrayBuffer());
		const t2 = performance.now();
		return { same: back.length === bytes.length && back.every((x, i) => x === bytes[i]), size: blob.size,
			set: t1 - t0, get: t2 - t1, native: typeof Uint8Array.prototype.toBase64 === 'function' };`)
	if !r.Same || r.Size != 1<<20 {
		t.Fatalf("round trip: %+v", r)
	}
	t.Logf("1 MiB blob: setBlob %.1f ms, getBlob %.1f ms (native base64: %v)", r.Set, r.Get, r.Native)
	if data, err := os.ReadFile(b.storePath("n", "blobs", "main", "big.bin")); err != nil || len(data) != 1<<20 {
		t.Errorf("big.bin: %d bytes, %v", len(data), err)
	}
	// 3 MiB of base64 is above the 4 MiB frame limit once encoded: refused
	// in the page before anything is sent.
	e := evalJS[*jsError](p, `return await tt.err(window.__TAURITAVERN__.api.extension.store.setBlob({ namespace: 'n', key: 'huge.bin', data: new Uint8Array(3 << 20) }));`)
	wantRejection(t, "a 3 MiB setBlob", e, jsapi.CodeRequestTooLarge, jsapi.KindBadRequest)
}

// The MCP Manager's Exa marker survives a backend restart, and a store
// call made while the backend is down rejects with mcp.host_unavailable or
// waits for the reconnect; it never hangs.
func TestExtensionStoreMarkerSurvivesRestart(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	p.run(`tt.marker = { namespace: 'tauritavern.mcp-manager', key: 'exa-search-recommendation-handled' };
		await window.__TAURITAVERN__.api.extension.store.setJson({ ...tt.marker, value: true });`)
	b.stop()
	evalJS[string](p, `return await tt.until((s) => s !== 'open', 'the bridge to leave open');`)
	if e := evalJS[*jsError](p, `return await tt.err(window.__TAURITAVERN__.api.extension.store.tryGetJson(tt.marker));`); e != nil {
		wantRejection(t, "tryGetJson while the backend is down", e, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	}
	b.start()
	evalJS[string](p, `return await tt.until((s) => s === 'open', 'the bridge to reopen');`)
	found := evalJS[map[string]any](p, `return await window.__TAURITAVERN__.api.extension.store.tryGetJson(tt.marker);`)
	if marshal(t, found) != `{"found":true,"value":true}` {
		t.Errorf("marker after the restart: %v", found)
	}
	if data := readString(t, b.storePath("tauritavern.mcp-manager", "kv", "main", "exa-search-recommendation-handled.json")); strings.TrimSpace(data) != "true" {
		t.Errorf("marker file %q", data)
	}
}
