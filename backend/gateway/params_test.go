package gateway

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// The headers a call sends, from its tool's schema and its arguments; the
// plan a schema decodes to is kept, so the same schema with other
// arguments gives their headers.
func TestParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"plain":{"type":"string"},
		"bad":{"type":"string","x-mcp-header":7},
		"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"},"note":{"type":"string"}}},
		"flat":{"type":"object","properties":{"note":{"type":"string"}}}}}`
	for _, tt := range []struct {
		name, schema, args string
		want               http.Header
	}{
		{"no schema", "", `{"region":"eu"}`, nil},
		{"no headers in the schema", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{"q":"x"}`, nil},
		{"not an object", `[1,"x-mcp-header"]`, `{}`, nil},
		{"top level and nested", schema, `{"region":"eu","count":3,"plain":"p","bad":"b","opts":{"tenant":"acme","note":"n"},"flat":{"note":"n"}}`,
			http.Header{"Mcp-Param-Region": {"eu"}, "Mcp-Param-Count": {"3"}, "Mcp-Param-Tenant": {"acme"}}},
		{"the same schema, other arguments", schema, `{"region":"us west "}`, http.Header{"Mcp-Param-Region": {"=?base64?dXMgd2VzdCA=?="}}},
		{"absent, null and fractions send none", schema, `{"region":null,"count":1.5}`, nil},
		{"arguments that are not an object", schema, `[]`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := paramHeaders(json.RawMessage(tt.schema), json.RawMessage(tt.args)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// The kept plans are bounded by the schema bytes they are keyed by.
func TestPlanCacheIsBounded(t *testing.T) {
	var c planCache
	schema := func(i int) []byte {
		pad := strings.Repeat("x", 64<<10)
		return []byte(`{"properties":{"a":{"x-mcp-header":"A","description":"` + pad + `"}},"n":` + strings.Repeat("1", i+1) + `}`)
	}
	for i := range 200 {
		if p := c.of(schema(i)); p == nil || p.props["a"].header != "A" {
			t.Fatalf("schema %d: plan %+v", i, p)
		}
		if c.bytes > maxPlanBytes {
			t.Fatalf("after %d schemas the cache holds %d bytes", i+1, c.bytes)
		}
	}
	if len(c.m) == 0 || len(c.m) >= 200 {
		t.Fatalf("%d plans kept", len(c.m))
	}
}
