package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// newStoreFixture is a backend whose service has the extension store of
// its data root.
func newStoreFixture(t *testing.T) *fixture {
	t.Helper()
	var root string
	f := newFixture(t, func(cfg *Config) {
		root = t.TempDir()
		store := storage.Open(root)
		cfg.Commands = NewCommands(service.New(service.Config{
			Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{}),
			ExtensionStore: storage.OpenExtensionStore(root),
		}), nil)
	})
	f.root = root
	return f
}

// Every store command over the socket, with upstream's flat arguments and
// result shapes: values keep their numbers, unit results are null,
// try_get distinguishes {found:false} from a stored null, blobs travel as
// {content_base64, mime_type}.
func TestExtensionStoreCommands(t *testing.T) {
	f := newStoreFixture(t)
	c := f.connect(t)
	ns := map[string]any{"namespace": "my-ext"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"namespace": "my-ext"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	steps := []struct {
		command string
		args    any
		want    string
	}{
		{jsapi.CmdTryGetExtensionStoreJSON, with("key", "settings"), `{"found":false}`},
		{jsapi.CmdSetExtensionStoreJSON, with("key", "settings", "value", jsontext.Value(`{"b":9007199254740993,"a":[1,"é"]}`)), `null`},
		{jsapi.CmdGetExtensionStoreJSON, with("key", "settings"), `{"a":[1,"é"],"b":9007199254740993}`},
		{jsapi.CmdTryGetExtensionStoreJSON, with("key", "settings", "table", nil), `{"found":true,"value":{"a":[1,"é"],"b":9007199254740993}}`},
		{jsapi.CmdUpdateExtensionStoreJSON, with("key", "settings", "value", map[string]any{"c": true}, "table", "main"), `null`},
		{jsapi.CmdGetExtensionStoreJSON, with("key", "settings", "table", ""), `{"a":[1,"é"],"b":9007199254740993,"c":true}`},
		{jsapi.CmdSetExtensionStoreJSON, with("key", "nothing", "value", nil), `null`},
		{jsapi.CmdTryGetExtensionStoreJSON, with("key", "nothing"), `{"found":true,"value":null}`},
		{jsapi.CmdRenameExtensionStoreKey, with("key", "nothing", "newKey", "still-nothing"), `null`},
		{jsapi.CmdListExtensionStoreKeys, ns, `["settings","still-nothing"]`},
		{jsapi.CmdDeleteExtensionStoreJSON, with("key", "still-nothing"), `null`},
		{jsapi.CmdSetExtensionStoreBlob, with("key", "icon.png", "dataBase64", "iVBORw==", "table", "assets"), `null`},
		{jsapi.CmdGetExtensionStoreBlob, with("key", "icon.png", "table", "assets"), `{"content_base64":"iVBORw==","mime_type":"image/png"}`},
		{jsapi.CmdListExtensionStoreBlobKeys, with("table", "assets"), `["icon.png"]`},
		{jsapi.CmdListExtensionStoreTables, ns, `["assets","main"]`},
		{jsapi.CmdDeleteExtensionStoreBlob, with("key", "icon.png", "table", "assets"), `null`},
		{jsapi.CmdDeleteExtensionStoreTable, with("table", "assets"), `null`},
		{jsapi.CmdListExtensionStoreTables, ns, `["main"]`},
		{jsapi.CmdListExtensionStoreKeys, with("table", "absent"), `[]`},
	}
	for _, s := range steps {
		r := c.call(s.command, s.args)
		if !r.OK {
			t.Fatalf("%s: %+v", s.command, r.Error)
		}
		if string(r.Value) != s.want {
			t.Fatalf("%s = %s, want %s", s.command, r.Value, s.want)
		}
	}
	data, err := os.ReadFile(filepath.Join(f.root, "_tauritavern", "extension-store", "my-ext", "kv", "main", "settings.json"))
	if err != nil || !strings.Contains(string(data), "\n  \"b\": 9007199254740993,\n  \"c\": true\n}") {
		t.Fatalf("file %s %v", data, err)
	}
}

func TestExtensionStoreCommandErrors(t *testing.T) {
	f := newStoreFixture(t)
	c := f.connect(t)
	tests := []struct {
		name, command string
		args          any
		kind, code    string
		contains      string
	}{
		{"escaping key", jsapi.CmdSetExtensionStoreJSON, map[string]any{"namespace": "ns", "key": "../../x", "value": 1}, "BadRequest", "mcp.extension_store_name_invalid", "key"},
		{"escaping namespace", jsapi.CmdListExtensionStoreTables, map[string]any{"namespace": ".."}, "BadRequest", "mcp.extension_store_name_invalid", "namespace"},
		{"escaping table", jsapi.CmdListExtensionStoreKeys, map[string]any{"namespace": "ns", "table": "a/b"}, "BadRequest", "mcp.extension_store_name_invalid", "table"},
		{"missing namespace", jsapi.CmdGetExtensionStoreJSON, map[string]any{"key": "k"}, "BadRequest", "mcp.extension_store_name_invalid", "namespace cannot be empty"},
		{"missing value", jsapi.CmdSetExtensionStoreJSON, map[string]any{"namespace": "ns", "key": "k"}, "BadRequest", jsapi.CodeArgsInvalid, "value"},
		{"wrapped in dto", jsapi.CmdGetExtensionStoreJSON, dto(map[string]any{"namespace": "ns", "key": "k"}), "BadRequest", jsapi.CodeArgsInvalid, "dto"},
		{"unknown member", jsapi.CmdGetExtensionStoreJSON, map[string]any{"namespace": "ns", "key": "k", "tabel": "x"}, "BadRequest", jsapi.CodeArgsInvalid, "tabel"},
		{"snake_case member", jsapi.CmdRenameExtensionStoreKey, map[string]any{"namespace": "ns", "key": "k", "new_key": "x"}, "BadRequest", jsapi.CodeArgsInvalid, "new_key"},
		{"no args", jsapi.CmdListExtensionStoreTables, nil, "BadRequest", jsapi.CodeArgsInvalid, "object"},
		{"table not a string", jsapi.CmdListExtensionStoreKeys, map[string]any{"namespace": "ns", "table": 5}, "BadRequest", jsapi.CodeArgsInvalid, "table"},
		{"absent entry", jsapi.CmdGetExtensionStoreJSON, map[string]any{"namespace": "ns", "key": "k"}, "NotFound", "mcp.extension_store_not_found", "ns:main/k"},
		{"absent blob", jsapi.CmdGetExtensionStoreBlob, map[string]any{"namespace": "ns", "key": "k"}, "NotFound", "mcp.extension_store_not_found", "ns:main/k"},
		{"absent table", jsapi.CmdDeleteExtensionStoreTable, map[string]any{"namespace": "ns", "table": "t"}, "NotFound", "mcp.extension_store_not_found", "ns:t"},
		{"table required", jsapi.CmdDeleteExtensionStoreTable, map[string]any{"namespace": "ns"}, "BadRequest", "mcp.extension_store_name_invalid", "table"},
		{"bad base64", jsapi.CmdSetExtensionStoreBlob, map[string]any{"namespace": "ns", "key": "k", "dataBase64": "not base64"}, "BadRequest", "mcp.extension_store_blob_invalid", "Invalid base64"},
		{"empty blob", jsapi.CmdSetExtensionStoreBlob, map[string]any{"namespace": "ns", "key": "k", "dataBase64": " "}, "BadRequest", "mcp.extension_store_blob_invalid", "No blob data"},
		{"too deep", jsapi.CmdSetExtensionStoreJSON, map[string]any{"namespace": "ns", "key": "k", "value": jsontext.Value(strings.Repeat("[", 129) + strings.Repeat("]", 129))}, "BadRequest", "mcp.extension_store_value_invalid", "recursion limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			r := c.call(tt.command, tt.args)
			if r.OK {
				t.Fatalf("ok: %s", r.Value)
			}
			e := r.Error
			if e.Kind != tt.kind || e.Code != tt.code || !strings.Contains(e.Message, tt.contains) || !strings.HasPrefix(e.Message, e.Code+": ") {
				t.Fatalf("error %+v, want kind %s code %s containing %q", e, tt.kind, tt.code, tt.contains)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.root, "_tauritavern", "extension-store")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}
