package domain

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// The library's report of {"type": 1} and {"type": 5}: the schema does
// not validate against the 2020-12 metaschema.
const badTypeReport = `"json-schema:///#" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#'
- at '': 'allOf' failed
  - at '/type': 'anyOf' failed
    - at '/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'
    - at '/type': got number, want array`

func described(name string, input string) DescribedTool {
	return DescribedTool{Tool: Tool{NativeName: name, InputSchema: json.RawMessage(input)}, Size: 100}
}

// TestValidateToolsFixture is upstream's fixture (reference §3.4): seven
// tools, of which two are kept and five reported.
func TestValidateToolsFixture(t *testing.T) {
	healthy := DescribedTool{
		Tool: Tool{
			NativeName:   "healthy",
			Title:        ptr("Healthy"),
			Description:  ptr("Works"),
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations:  json.RawMessage(`{"readOnlyHint":true}`),
		},
		Size: 200,
	}
	badOutput := described("bad_output", `{"type":"object"}`)
	badOutput.OutputSchema = json.RawMessage(`{"type":5}`)
	badOutput.Description = ptr("Kept without its output schema")
	oversized := described("oversized", `{"type":"object"}`)
	oversized.Description = ptr(strings.Repeat("x", MaxToolBytes))
	oversized.Size = MaxToolBytes + 1
	in := []DescribedTool{
		described("remote_ref", `{"type":"object","properties":{"q":{"$ref":"https://example.com/schema.json"}}}`),
		healthy,
		described("dup", `{"type":"object"}`),
		described("broken_type", `{"type":1}`),
		oversized,
		described("dup", `{"type":"object"}`),
		badOutput,
	}
	tools, diags := ValidateTools(in, nil)

	wantBadOutput := badOutput.Tool
	wantBadOutput.OutputSchema = nil
	wantBadOutput.Annotations = json.RawMessage(`{}`)
	if want := []Tool{wantBadOutput, healthy.Tool}; !reflect.DeepEqual(tools, want) {
		t.Errorf("tools =\n%+v\nwant\n%+v", tools, want)
	}
	want := []Diagnostic{
		{CodeToolOutputSchemaInvalid, ptr("bad_output"), "Tool `bad_output` output schema is invalid: " + badTypeReport},
		{CodeToolInputSchemaInvalid, ptr("broken_type"), "Tool `broken_type` input schema is invalid: " + badTypeReport},
		{CodeToolDuplicateName, ptr("dup"), "Server returned 2 tools named `dup`; the whole name group was isolated"},
		{CodeToolSizeLimit, ptr("oversized"), "Tool `oversized` exceeds 262144 bytes"},
		{CodeToolInputSchemaInvalid, ptr("remote_ref"), "Tool `remote_ref` input schema is invalid: failing loading \"https://example.com/schema.json\": external $ref https://example.com/schema.json is not loaded"},
	}
	checkDiags(t, diags, want)
}

func checkDiags(t *testing.T, got, want []Diagnostic) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d diagnostics, want %d: %+v", len(got), len(want), got)
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.Code != w.Code || (g.NativeName == nil) != (w.NativeName == nil) ||
			(g.NativeName != nil && *g.NativeName != *w.NativeName) || g.Message != w.Message {
			t.Errorf("diagnostic %d =\n%s %v %q\nwant\n%s %v %q", i, g.Code, deref(g.NativeName), g.Message, w.Code, deref(w.NativeName), w.Message)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return "`" + *s + "`"
}

func TestValidateTools(t *testing.T) {
	withAnnotations := func(name, annotations string) DescribedTool {
		d := described(name, `{"type":"object"}`)
		if annotations != "<nil>" {
			d.Annotations = json.RawMessage(annotations)
		}
		return d
	}
	withSize := func(name string, size int) DescribedTool {
		d := described(name, `{}`)
		d.Size = size
		return d
	}
	tests := []struct {
		name  string
		in    []DescribedTool
		kept  []string // native names of the tools kept, in order
		diags []Diagnostic
	}{
		{name: "nothing", in: nil},
		{
			name: "name empty",
			in:   []DescribedTool{described("", `{}`)},
			diags: []Diagnostic{{CodeToolNameInvalid, ptr(""),
				"mcp.tool_name_empty: native tool name cannot be empty"}},
		},
		{
			name: "name of 257 bytes",
			in:   []DescribedTool{described(strings.Repeat("n", 257), `{}`), described(strings.Repeat("é", 129), `{}`)},
			diags: []Diagnostic{
				{CodeToolNameInvalid, ptr(strings.Repeat("n", 257)), "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
				{CodeToolNameInvalid, ptr(strings.Repeat("é", 129)), "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
			},
		},
		{
			name: "names of 256 bytes, colons and spaces are valid",
			in:   []DescribedTool{described(strings.Repeat("n", 256), `{}`), described(strings.Repeat("é", 128), `{}`), described("search:exact", `{}`), described(" a b ", `{}`)},
			kept: []string{" a b ", strings.Repeat("n", 256), "search:exact", strings.Repeat("é", 128)},
		},
		{
			name: "the name is checked first",
			in:   []DescribedTool{withSize("", MaxToolBytes+1)},
			diags: []Diagnostic{{CodeToolNameInvalid, ptr(""),
				"mcp.tool_name_empty: native tool name cannot be empty"}},
		},
		{
			name: "duplicates are isolated whatever their content",
			in:   []DescribedTool{described("x", `{}`), described("x", `[]`), described("x", `{}`), described("", `{}`), described("", `{}`)},
			diags: []Diagnostic{
				{CodeToolDuplicateName, ptr(""), "Server returned 2 tools named ``; the whole name group was isolated"},
				{CodeToolDuplicateName, ptr("x"), "Server returned 3 tools named `x`; the whole name group was isolated"},
			},
		},
		{
			name: "size limit is inclusive",
			in:   []DescribedTool{withSize("at", MaxToolBytes), withSize("over", MaxToolBytes+1)},
			kept: []string{"at"},
			diags: []Diagnostic{{CodeToolSizeLimit, ptr("over"),
				"Tool `over` exceeds 262144 bytes"}},
		},
		{
			name: "input schema missing or not an object",
			in: []DescribedTool{
				described("absent", ``), described("array", `[]`), described("boolean", `true`),
				described("null", `null`), described("broken", `{"type":`),
			},
			diags: []Diagnostic{
				{CodeToolInputSchemaInvalid, ptr("absent"), "Tool `absent` input schema is invalid: schema must be a JSON object"},
				{CodeToolInputSchemaInvalid, ptr("array"), "Tool `array` input schema is invalid: schema must be a JSON object"},
				{CodeToolInputSchemaInvalid, ptr("boolean"), "Tool `boolean` input schema is invalid: schema must be a JSON object"},
				{CodeToolInputSchemaInvalid, ptr("broken"), "Tool `broken` input schema is invalid: schema must be a JSON object"},
				{CodeToolInputSchemaInvalid, ptr("null"), "Tool `null` input schema is invalid: schema must be a JSON object"},
			},
		},
		{
			name: "annotations must be an object",
			in: []DescribedTool{
				withAnnotations("array", `[]`), withAnnotations("string", `"x"`), withAnnotations("null", `null`),
				withAnnotations("object", `{"destructiveHint":true}`),
			},
			kept: []string{"object"},
			diags: []Diagnostic{
				{CodeToolAnnotationsInvalid, ptr("array"), "Tool `array` annotations are not a JSON object"},
				{CodeToolAnnotationsInvalid, ptr("null"), "Tool `null` annotations are not a JSON object"},
				{CodeToolAnnotationsInvalid, ptr("string"), "Tool `string` annotations are not a JSON object"},
			},
		},
		{
			name: "invalid output schemas are removed, the tool kept",
			in: []DescribedTool{
				func() DescribedTool {
					d := described("array", `{}`)
					d.OutputSchema = json.RawMessage(`[]`)
					return d
				}(),
				func() DescribedTool {
					d := described("remote", `{}`)
					d.OutputSchema = json.RawMessage(`{"$ref":"http://example.com/out.json"}`)
					return d
				}(),
			},
			kept: []string{"array", "remote"},
			diags: []Diagnostic{
				{CodeToolOutputSchemaInvalid, ptr("array"), "Tool `array` output schema is invalid: schema must be a JSON object"},
				{CodeToolOutputSchemaInvalid, ptr("remote"), "Tool `remote` output schema is invalid: failing loading \"http://example.com/out.json\": external $ref http://example.com/out.json is not loaded"},
			},
		},
		{
			name: "schemas nested too deep: the input's refuses the tool, the output's is removed",
			in: []DescribedTool{
				described("deep", nests(MaxSchemaDepth+1)),
				described("at the limit", nests(MaxSchemaDepth)),
				func() DescribedTool {
					d := described("deep output", `{}`)
					d.OutputSchema = json.RawMessage(nests(1000))
					return d
				}(),
			},
			kept: []string{"at the limit", "deep output"},
			diags: []Diagnostic{
				{CodeToolInputSchemaInvalid, ptr("deep"), "Tool `deep` input schema is invalid: schema nests objects and arrays more than 64 deep"},
				{CodeToolOutputSchemaInvalid, ptr("deep output"), "Tool `deep output` output schema is invalid: schema nests objects and arrays more than 64 deep"},
			},
		},
		{
			name: "output in native name order (bytes)",
			in: []DescribedTool{
				described("é", `{}`), described("b", `{}`), described("B", `{}`), described("a:2", `{}`),
				described("a", `{}`), described("a:10", `{}`), described("_", `{}`),
			},
			kept: []string{"B", "_", "a", "a:10", "a:2", "b", "é"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, diags := ValidateTools(tt.in, nil)
			var names []string
			for _, tool := range tools {
				names = append(names, tool.NativeName)
				if !isObject(tool.Annotations) || !isObject(tool.InputSchema) {
					t.Errorf("tool %q kept with %s / %s", tool.NativeName, tool.InputSchema, tool.Annotations)
				}
				if tool.OutputSchema != nil {
					t.Errorf("tool %q kept its output schema %s", tool.NativeName, tool.OutputSchema)
				}
			}
			if !reflect.DeepEqual(names, tt.kept) {
				t.Errorf("kept %q, want %q", names, tt.kept)
			}
			checkDiags(t, diags, tt.diags)
		})
	}
}

func TestValidateToolsAnnotations(t *testing.T) {
	in := []DescribedTool{described("nil", `{}`), described("empty", `{}`), described("kept", `{}`)}
	in[1].Annotations = json.RawMessage{}
	in[2].Annotations = json.RawMessage(` {"title": "T", "readOnlyHint": true} `)
	tools, diags := ValidateTools(in, nil)
	if len(diags) != 0 || len(tools) != 3 {
		t.Fatalf("ValidateTools = %+v, %+v", tools, diags)
	}
	want := map[string]string{"nil": `{}`, "empty": `{}`, "kept": ` {"title": "T", "readOnlyHint": true} `}
	for _, tool := range tools {
		if string(tool.Annotations) != want[tool.NativeName] {
			t.Errorf("annotations of %q = %s, want %s", tool.NativeName, tool.Annotations, want[tool.NativeName])
		}
	}
	// The input is not modified.
	if in[0].Annotations != nil {
		t.Errorf("input changed: %s", in[0].Annotations)
	}
}

// TestValidateToolsReadsNoFile: a schema's file: reference is refused; the
// file holds a valid schema, so compiling would succeed if it were read.
func TestValidateToolsReadsNoFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(file, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.ToSlash(file)
	tools, diags := ValidateTools([]DescribedTool{
		described("absolute", `{"$ref":"`+url+`"}`),
		described("relative", `{"$id":"file://`+filepath.ToSlash(dir)+`/","$ref":"schema.json"}`),
		described("path", `{"$ref":"`+filepath.ToSlash(file)+`"}`),
		described("name", `{"$ref":"schema.json"}`),
	}, nil)
	if len(tools) != 0 {
		t.Errorf("tools kept: %+v", tools)
	}
	refused := func(url string) string {
		return "failing loading \"" + url + "\": external $ref " + url + " is not loaded"
	}
	checkDiags(t, diags, []Diagnostic{
		{CodeToolInputSchemaInvalid, ptr("absolute"), "Tool `absolute` input schema is invalid: " + refused(url)},
		{CodeToolInputSchemaInvalid, ptr("name"), "Tool `name` input schema is invalid: " + refused("json-schema:///schema.json")},
		{CodeToolInputSchemaInvalid, ptr("path"), "Tool `path` input schema is invalid: " + refused("json-schema://"+filepath.ToSlash(file))},
		{CodeToolInputSchemaInvalid, ptr("relative"), "Tool `relative` input schema is invalid: " + refused(url)},
	})
}

func TestCompileSchema(t *testing.T) {
	tests := []struct {
		name, schema, err string // err "" for success
	}{
		{"empty object", `{}`, ""},
		{"local $defs reference", `{"type":"object","$defs":{"q":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/q"}}}`, ""},
		{"reference to the root", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, ""},
		{"$id and a reference within it", `{"$id":"https://example.com/a.json","$defs":{"q":{"type":"string"}},"properties":{"q":{"$ref":"https://example.com/a.json#/$defs/q"}}}`, ""},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"q":{"type":"string"}},"properties":{"q":{"$ref":"#/definitions/q"}}}`, ""},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, ""},
		{"2020-12 named", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, ""},
		{"big numbers", `{"type":"integer","maximum":9007199254740993,"minimum":-1e400}`, ""},
		{"unknown keywords", `{"type":"object","x-anything":{"$ref":"not a reference here"}}`, ""},
		{"unknown $schema", `{"$schema":"https://example.com/meta","type":"object"}`,
			`failing loading "https://example.com/meta": external $ref https://example.com/meta is not loaded`},
		{"remote $ref", `{"$ref":"https://example.com/schema.json"}`,
			`failing loading "https://example.com/schema.json": external $ref https://example.com/schema.json is not loaded`},
		{"relative $ref", `{"properties":{"q":{"$ref":"other.json#/q"}}}`,
			`failing loading "json-schema:///other.json": external $ref json-schema:///other.json is not loaded`},
		{"missing local target", `{"$ref":"#/$defs/missing"}`, `json-pointer in "json-schema:///#/$defs/missing" not found`},
		{"wrong type", `{"type":1}`, badTypeReport},
		{"true", `true`, "schema must be a JSON object"},
		{"false", `false`, "schema must be a JSON object"},
		{"array", `[{}]`, "schema must be a JSON object"},
		{"null", `null`, "schema must be a JSON object"},
		{"nil", ``, "schema must be a JSON object"},
		{"not JSON", `{"type":`, "schema must be a JSON object"},
		{"data after", `{} {}`, "schema must be a JSON object"},
		// Nesting: every object and array counts, wherever it is; brackets in strings do not.
		{"nested at the limit", nests(MaxSchemaDepth), ""},
		{"nested past the limit", nests(MaxSchemaDepth + 1), tooDeep},
		{"nested 10,000 deep", nests(10000), tooDeep},
		{"properties at the limit, with a pattern (the library's path)",
			strings.Repeat(`{"properties":{"a":`, MaxSchemaDepth/2-1) + `{"pattern":"^a"}` + strings.Repeat(`}}`, MaxSchemaDepth/2-1), ""},
		{"properties past the limit", strings.Repeat(`{"properties":{"a":`, MaxSchemaDepth/2) + `{}` + strings.Repeat(`}}`, MaxSchemaDepth/2), tooDeep},
		{"a deep default value counts", `{"default":` + strings.Repeat(`[`, MaxSchemaDepth) + strings.Repeat(`]`, MaxSchemaDepth) + `}`, tooDeep},
		{"a deep enum value counts", `{"enum":[` + strings.Repeat(`{"a":`, MaxSchemaDepth-1) + `1` + strings.Repeat(`}`, MaxSchemaDepth-1) + `]}`, tooDeep},
		{"brackets in strings do not count", `{"description":"` + strings.Repeat(`[{`, 200) + `","title":"\\\"` + strings.Repeat(`{`, 200) + `\\"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw json.RawMessage
			if tt.schema != "" {
				raw = json.RawMessage(tt.schema)
			}
			err := CompileSchema(raw)
			if got := errString(err); got != tt.err {
				t.Errorf("CompileSchema(%s) = %q, want %q", tt.schema, got, tt.err)
			}
		})
	}
}

const tooDeep = "schema nests objects and arrays more than 64 deep"

// nests is a schema of depth levels of objects ("not" within "not").
func nests(depth int) string {
	return strings.Repeat(`{"not":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCompileSchemaStaysOffline: references and metaschemas at a live
// server are refused without a request.
func TestCompileSchemaStaysOffline(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		w.Write([]byte(`{"type":"object"}`))
	}))
	defer srv.Close()
	for _, schema := range []string{
		`{"$ref":"` + srv.URL + `/schema.json"}`,
		`{"$schema":"` + srv.URL + `/meta","type":"object"}`,
		`{"$id":"` + srv.URL + `/root.json","properties":{"q":{"$ref":"other.json"}}}`,
	} {
		if err := CompileSchema(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), "is not loaded") {
			t.Errorf("CompileSchema(%s) = %v", schema, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests to the schema server", n)
	}
}

func TestCatalogCheck(t *testing.T) {
	tool := func(name, input string) Tool {
		return Tool{NativeName: name, InputSchema: json.RawMessage(input), Annotations: json.RawMessage(`{}`)}
	}
	tests := []struct {
		name    string
		catalog Catalog
		code    string
		message string
	}{
		{name: "empty", catalog: Catalog{}},
		{name: "valid", catalog: Catalog{
			ProtocolVersion: "2025-06-18",
			Tools: []Tool{
				tool("search:exact", `{"type":"object"}`),
				tool("search", `{"type":"object","$defs":{"a":{}},"properties":{"a":{"$ref":"#/$defs/a"}}}`),
			},
			// Diagnostics are reports, not checked.
			Diagnostics: []Diagnostic{{Code: "anything", NativeName: ptr(""), Message: ""}},
		}},
		{name: "output schema and annotations are not checked", catalog: Catalog{Tools: []Tool{
			{NativeName: "a", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{"type":1}`)},
		}}},
		{name: "empty name", catalog: Catalog{Tools: []Tool{tool("", `{}`)}},
			code: "mcp.tool_name_empty", message: "mcp.tool_name_empty: native tool name cannot be empty"},
		{name: "long name", catalog: Catalog{Tools: []Tool{tool("ok", `{}`), tool(strings.Repeat("x", 257), `{}`)}},
			code: "mcp.tool_name_too_long", message: "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
		{name: "duplicate", catalog: Catalog{Tools: []Tool{tool("a", `{}`), tool("b:c", `{}`), tool("a", `{"type":"object"}`)}},
			code: "tool.catalog_duplicate_id", message: "tool.catalog_duplicate_id: duplicate tool id `mcp/" + testID + ":a`"},
		{name: "input schema not an object", catalog: Catalog{Tools: []Tool{tool("a", `[]`)}},
			code: CodeToolInputSchemaInvalid, message: "mcp.tool_input_schema_invalid: Tool `a` input schema is invalid: schema must be a JSON object"},
		{name: "no input schema", catalog: Catalog{Tools: []Tool{{NativeName: "a", Annotations: json.RawMessage(`{}`)}}},
			code: CodeToolInputSchemaInvalid, message: "mcp.tool_input_schema_invalid: Tool `a` input schema is invalid: schema must be a JSON object"},
		{name: "remote $ref", catalog: Catalog{Tools: []Tool{tool("a", `{"$ref":"https://example.com/s.json"}`)}},
			code: CodeToolInputSchemaInvalid, message: "mcp.tool_input_schema_invalid: Tool `a` input schema is invalid: failing loading \"https://example.com/s.json\": external $ref https://example.com/s.json is not loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.catalog.Check(testID)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			if CodeOf(err) != tt.code || KindOf(err) != KindBadRequest || errString(err) != tt.message {
				t.Fatalf("Check = %v (%v)\nwant %s", err, KindOf(err), tt.message)
			}
		})
	}
}
