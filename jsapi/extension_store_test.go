package jsapi_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// extension-store.js sends exactly the commands of StoreCommands (the Go
// side of the contract), each from its own method.
func TestExtensionStoreModuleCommands(t *testing.T) {
	src, err := os.ReadFile("extension-store.js")
	if err != nil {
		t.Fatal(err)
	}
	var used []string
	for _, m := range regexp.MustCompile(`'([a-z_]+_extension_store_[a-z_]+)'`).FindAllSubmatch(src, -1) {
		used = append(used, string(m[1]))
	}
	want := slices.Clone(jsapi.StoreCommands)
	slices.Sort(want)
	slices.Sort(used)
	if !slices.Equal(used, want) {
		t.Fatalf("extension-store.js sends %v\nwant %v", used, want)
	}
}

// JSONValue keeps a value's text: absent stays absent, null is "null", and
// it marshals back verbatim (big integers exact).
func TestJSONValue(t *testing.T) {
	var a jsapi.ExtensionStoreSetJSONArgs
	if err := json.Unmarshal([]byte(`{"namespace":"n","key":"k","value":{"n":9007199254740993}}`), &a); err != nil {
		t.Fatal(err)
	}
	if string(a.Value) != `{"n":9007199254740993}` {
		t.Fatalf("value %s", a.Value)
	}
	var absent, null jsapi.ExtensionStoreSetJSONArgs
	json.Unmarshal([]byte(`{"namespace":"n","key":"k"}`), &absent)
	json.Unmarshal([]byte(`{"namespace":"n","key":"k","value":null}`), &null)
	if absent.Value != nil || string(null.Value) != "null" {
		t.Fatalf("absent %q, null %q", absent.Value, null.Value)
	}
	for _, tt := range []struct {
		v    jsapi.ExtensionStoreJSONLookup
		want string
	}{
		{jsapi.ExtensionStoreJSONLookup{}, `{"found":false}`},
		{jsapi.ExtensionStoreJSONLookup{Found: true, Value: jsapi.JSONValue("null")}, `{"found":true,"value":null}`},
		{jsapi.ExtensionStoreJSONLookup{Found: true, Value: jsapi.JSONValue(`[18446744073709551615]`)}, `{"found":true,"value":[18446744073709551615]}`},
	} {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s (%v), want %s", b, err, tt.want)
		}
	}
}
