package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// agree fails when plainValid accepts a schema the library rejects (the
// one way the shortcut could change a verdict). It reports whether the
// shortcut accepted.
func agree(t testing.TB, raw []byte) bool {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil || !plainValid(doc, 0) {
		return false
	}
	if err := compileWithLibrary(doc); err != nil {
		t.Fatalf("plainValid accepts %s, the library does not: %v", raw, err)
	}
	return true
}

// Cases at the edges of the metaschema rules plainValid checks.
func TestPlainValidEdges(t *testing.T) {
	for _, tt := range []struct {
		schema string
		plain  bool // plainValid decides it (else the library does)
	}{
		{`{"type":"object","properties":{"q":{"type":"string","description":"d"},"n":{"type":["integer","null"],"minimum":1}},"required":["q"]}`, true},
		{`{"type":"object","x-mcp-header":"Region","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`, true},
		{`{"type":"object","additionalProperties":false,"properties":{"a":true,"b":{"enum":[1,"x",null]}}}`, true},
		{`{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"number","multipleOf":0.5}}]}`, true},
		{`{"type":"strin"}`, false},
		{`{"type":[]}`, false},
		{`{"type":["string","string"]}`, false},
		{`{"type":5}`, false},
		{`{"required":["a","a"]}`, false},
		{`{"required":"a"}`, false},
		{`{"minLength":-1}`, false},
		{`{"minLength":1.5}`, false},
		{`{"minLength":1.0}`, false},
		{`{"multipleOf":0}`, false},
		{`{"multipleOf":-2}`, false},
		{`{"multipleOf":1e-400}`, false},
		{`{"maximum":"5"}`, false},
		{`{"anyOf":[]}`, false},
		{`{"items":[{"type":"string"}]}`, false},
		{`{"properties":{"a":{"$ref":"#"}}}`, false},
		{`{"$defs":{"a":{}}}`, false},
		{`{"pattern":"["}`, false},
		{`{"definitions":{"a":5}}`, false},
		{`{"properties":{"a":{"type":"object","properties":{"b":{"type":"wrong"}}}}}`, false},
		{`{"x-ext":{"$id":"http://example.com/x","$ref":"nowhere"}}`, true},
		{`{"default":{"$ref":"nowhere"},"examples":[{"$id":5}],"const":{"type":5}}`, true},
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tt.schema)))
		if err != nil {
			t.Fatal(err)
		}
		if got := plainValid(doc, 0); got != tt.plain {
			t.Errorf("plainValid(%s) = %v", tt.schema, got)
		}
		agree(t, []byte(tt.schema))
	}
}

// Random schemas built from the keywords plainValid knows, with valid and
// invalid values, nested, mixed with keywords it leaves to the library:
// whatever it accepts, the library compiles. The seed is fixed, so a
// failure repeats.
func TestPlainValidAgreesWithTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	accepted, n := 0, 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		raw, err := json.Marshal(randomSchema(r, 0))
		if err != nil {
			t.Fatal(err)
		}
		if raw[0] != '{' {
			continue
		}
		if agree(t, raw) {
			accepted++
		}
	}
	t.Logf("%d of %d took the shortcut", accepted, n)
	if accepted < n/10 {
		t.Fatalf("only %d of %d random schemas took the shortcut: the test exercises too little", accepted, n)
	}
}

var randomValues = []any{
	"string", "integer", "object", "strin", "", "x", 0, 1, -1, 2.5, 1e-300, 1e300, json.Number("1e-400"), json.Number("1e400"), json.Number("1.0"), json.Number("-0"), "1", true, false, nil,
	[]any{}, []any{"a"}, []any{"a", "a"}, []any{"string", "null"}, []any{1, 2}, map[string]any{},
	map[string]any{"$id": "http://example.com/x"}, map[string]any{"$ref": "#/nowhere"},
}

var randomKeywords = []string{
	"title", "description", "$comment", "format", "contentEncoding", "contentMediaType",
	"deprecated", "readOnly", "writeOnly", "uniqueItems", "const", "default", "enum", "examples",
	"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "multipleOf",
	"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains",
	"type", "required", "properties", "dependentSchemas", "dependentRequired",
	"additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else",
	"allOf", "anyOf", "oneOf", "prefixItems",
	"pattern", "$ref", "$id", "$defs", "$anchor", "definitions", "x-mcp-header", "x-ext", "id",
}

// schemaKeywords take a schema, or a list or map of them.
var schemaKeywords = map[string]string{
	"additionalProperties": "one", "items": "one", "contains": "one", "propertyNames": "one", "not": "one",
	"if": "one", "then": "one", "else": "one", "allOf": "list", "anyOf": "list", "oneOf": "list",
	"prefixItems": "list", "properties": "map", "dependentSchemas": "map", "$defs": "map", "x-ext": "one",
}

func randomSchema(r *rand.Rand, depth int) any {
	if depth > 0 && r.IntN(8) == 0 {
		return r.IntN(2) == 0
	}
	s := map[string]any{}
	for range r.IntN(5) + 1 {
		k := randomKeywords[r.IntN(len(randomKeywords))]
		if kind, ok := schemaKeywords[k]; ok && depth < 4 && r.IntN(4) != 0 {
			switch kind {
			case "one":
				s[k] = randomSchema(r, depth+1)
			case "list":
				var list []any
				for range r.IntN(3) {
					list = append(list, randomSchema(r, depth+1))
				}
				s[k] = list
			case "map":
				m := map[string]any{}
				for i := range r.IntN(3) {
					m[fmt.Sprint("p", i)] = randomSchema(r, depth+1)
				}
				s[k] = m
			}
			continue
		}
		if good, ok := goodValues[k]; ok && r.IntN(3) != 0 {
			s[k] = good[r.IntN(len(good))]
			continue
		}
		s[k] = randomValues[r.IntN(len(randomValues))]
	}
	return s
}

// goodValues are values the metaschema allows, per keyword, so that
// random schemas are often valid.
var goodValues = func() map[string][]any {
	str := []any{"", "x", "date-time"}
	boolean := []any{true, false}
	number := []any{0, -1, 2.5, json.Number("1e-300"), json.Number("-0")}
	nonNeg := []any{0, 1, 7}
	m := map[string][]any{}
	for _, k := range []string{"title", "description", "$comment", "format", "contentEncoding", "contentMediaType", "x-mcp-header"} {
		m[k] = str
	}
	for _, k := range []string{"deprecated", "readOnly", "writeOnly", "uniqueItems"} {
		m[k] = boolean
	}
	for _, k := range []string{"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"} {
		m[k] = number
	}
	for _, k := range []string{"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains"} {
		m[k] = nonNeg
	}
	m["multipleOf"] = []any{1, 0.5, json.Number("1e-300")}
	m["type"] = []any{"string", "object", "null", []any{"integer", "null"}}
	m["required"] = []any{[]any{}, []any{"a", "b"}}
	m["enum"] = []any{[]any{}, []any{1, "a", nil}}
	m["examples"] = m["enum"]
	m["dependentRequired"] = []any{map[string]any{"a": []any{"b"}}}
	return m
}()

// The same property for arbitrary bytes.
func FuzzPlainValidAgreesWithTheLibrary(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`,
		`{"type":["string","null"],"enum":["a","b"],"minLength":1}`,
		`{"anyOf":[{"type":"string"},{"items":{"multipleOf":0.5}}]}`,
		`{"x-mcp-header":"R","additionalProperties":{"not":true}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if isObject(raw) {
			agree(t, raw)
		}
	})
}
