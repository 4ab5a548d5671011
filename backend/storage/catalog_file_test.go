package storage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func endpoint(t *testing.T, raw string) domain.Endpoint {
	t.Helper()
	e, err := domain.ParseEndpoint(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// catalogFixture has every kind of content: a tool with an output schema
// and annotations, one without; schemas with unsorted members, nested
// objects and arrays, and numbers float64 cannot hold; diagnostics with
// and without a native name.
func catalogFixture() domain.Catalog {
	return domain.Catalog{
		ProtocolVersion: "2025-06-18",
		ServerName:      ptr("Local <MCP>"),
		Tools: []domain.Tool{
			{
				NativeName:  "fetch",
				Description: ptr("Fetch a URL\n\"quoted\" \u2028"),
				InputSchema: json.RawMessage(`{"type":"object","required":["url"],"properties":{"url":{"type":"string","format":"uri"},` +
					`"limit":{"type":"integer","maximum":9007199254740993,"minimum":1e2,"multipleOf":1.50}},"additionalProperties":false}`),
				Annotations: json.RawMessage(`{}`),
			},
			{
				NativeName:   "search:exact",
				Title:        ptr("Search"),
				Description:  ptr("Exact search"),
				InputSchema:  json.RawMessage(` { "type" : "object", "$defs": {"q": {"type": "string"}}, "properties": {"query": {"$ref": "#/$defs/q", "x-extra": [3, {"b": null, "a": true}]}} } `),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string"}}}}`),
				Annotations:  json.RawMessage(`{"title":"S","readOnlyHint":true,"openWorldHint":false,"\u00e9":"é","Z":"z"}`),
			},
		},
		Diagnostics: []domain.Diagnostic{
			{Code: "mcp.tool_duplicate_name", NativeName: ptr("dup"), Message: "Server returned 2 tools named `dup`; the whole name group was isolated"},
			{Code: "mcp.tool_header_annotation_invalid", Message: "catalog-wide \x01"},
		},
	}
}

// catalogFixtureFile is the file of catalogFixture for id1 at
// http://127.0.0.1:3333/mcp: upstream's member order, Options as null,
// server JSON sorted by name and indented with the rest, numbers as given.
const catalogFixtureFile = `{
  "schemaVersion": 1,
  "kind": "tauritavern.mcpCatalogSnapshot",
  "registrationId": "550e8400-e29b-41d4-a716-446655440000",
  "endpoint": "http://127.0.0.1:3333/mcp",
  "catalog": {
    "protocolVersion": "2025-06-18",
    "serverName": "Local <MCP>",
    "serverVersion": null,
    "tools": [
      {
        "nativeName": "fetch",
        "title": null,
        "description": "Fetch a URL\n\"quoted\" ` + "\u2028" + `",
        "inputSchema": {
          "additionalProperties": false,
          "properties": {
            "limit": {
              "maximum": 9007199254740993,
              "minimum": 1e2,
              "multipleOf": 1.50,
              "type": "integer"
            },
            "url": {
              "format": "uri",
              "type": "string"
            }
          },
          "required": [
            "url"
          ],
          "type": "object"
        },
        "outputSchema": null,
        "annotations": {}
      },
      {
        "nativeName": "search:exact",
        "title": "Search",
        "description": "Exact search",
        "inputSchema": {
          "$defs": {
            "q": {
              "type": "string"
            }
          },
          "properties": {
            "query": {
              "$ref": "#/$defs/q",
              "x-extra": [
                3,
                {
                  "a": true,
                  "b": null
                }
              ]
            }
          },
          "type": "object"
        },
        "outputSchema": {
          "properties": {
            "hits": {
              "items": {
                "type": "string"
              },
              "type": "array"
            }
          },
          "type": "object"
        },
        "annotations": {
          "Z": "z",
          "openWorldHint": false,
          "readOnlyHint": true,
          "title": "S",
          "é": "é"
        }
      }
    ],
    "diagnostics": [
      {
        "code": "mcp.tool_duplicate_name",
        "nativeName": "dup",
        "message": "Server returned 2 tools named ` + "`dup`" + `; the whole name group was isolated"
      },
      {
        "code": "mcp.tool_header_annotation_invalid",
        "nativeName": null,
        "message": "catalog-wide \u0001"
      }
    ]
  }
}`

// emptyCatalogFile is a catalog without tools: the lists are still written.
const emptyCatalogFile = `{
  "schemaVersion": 1,
  "kind": "tauritavern.mcpCatalogSnapshot",
  "registrationId": "550e8400-e29b-41d4-a716-446655440001",
  "endpoint": "https://example.com/mcp",
  "catalog": {
    "protocolVersion": "2026-07-28",
    "serverName": null,
    "serverVersion": "1.0",
    "tools": [],
    "diagnostics": []
  }
}`

// loadedFixture is catalogFixture as LoadCatalog returns it: the server's
// JSON compact, with sorted members and numbers as given.
func loadedFixture() domain.Catalog {
	c := catalogFixture()
	c.Tools[0].InputSchema = json.RawMessage(`{"additionalProperties":false,"properties":{"limit":{"maximum":9007199254740993,` +
		`"minimum":1e2,"multipleOf":1.50,"type":"integer"},"url":{"format":"uri","type":"string"}},"required":["url"],"type":"object"}`)
	c.Tools[1].InputSchema = json.RawMessage(`{"$defs":{"q":{"type":"string"}},"properties":{"query":{"$ref":"#/$defs/q","x-extra":[3,{"a":true,"b":null}]}},"type":"object"}`)
	c.Tools[1].OutputSchema = json.RawMessage(`{"properties":{"hits":{"items":{"type":"string"},"type":"array"}},"type":"object"}`)
	c.Tools[1].Annotations = json.RawMessage(`{"Z":"z","openWorldHint":false,"readOnlyHint":true,"title":"S","é":"é"}`)
	return c
}

func TestSaveCatalogWritesUpstreamBytes(t *testing.T) {
	tests := []struct {
		name     string
		id       domain.RegistrationID
		endpoint string
		catalog  domain.Catalog
		want     string
	}{
		{"full", id1, "http://127.0.0.1:3333/mcp", catalogFixture(), catalogFixtureFile},
		{"empty", id2, "https://example.com/mcp", domain.Catalog{ProtocolVersion: "2026-07-28", ServerVersion: ptr("1.0")}, emptyCatalogFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			s := Open(root)
			if err := s.SaveCatalog(tt.id, endpoint(t, tt.endpoint), tt.catalog); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, "_tauritavern", "mcp", "catalogs", string(tt.id)+".json")
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file =\n%s\nwant\n%s", got, tt.want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("file mode = %v, %v; want 0600", fi.Mode(), err)
			}
			if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

func TestCatalogRoundTrip(t *testing.T) {
	root := t.TempDir()
	e := endpoint(t, "http://127.0.0.1:3333/mcp")
	s := Open(root)
	c := catalogFixture()
	if err := s.SaveCatalog(id1, e, c); err != nil {
		t.Fatal(err)
	}
	// A fresh Store reads what another wrote: the same catalog, its JSON
	// compact and sorted, its numbers exact.
	got, ok, err := Open(root).LoadCatalog(id1, e)
	if err != nil || !ok {
		t.Fatalf("LoadCatalog = %v, %v", ok, err)
	}
	if want := loadedFixture(); !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadCatalog =\n%+v\nwant\n%+v", got, want)
	}
	if !strings.Contains(string(got.Tools[0].InputSchema), `"maximum":9007199254740993,"minimum":1e2,"multipleOf":1.50`) {
		t.Errorf("numbers changed: %s", got.Tools[0].InputSchema)
	}
	if got.Tools[0].OutputSchema != nil || got.ServerVersion != nil || got.Tools[0].Title != nil || got.Diagnostics[1].NativeName != nil {
		t.Errorf("null read as a value: %+v", got)
	}
	// Saving what was loaded writes the same bytes.
	if err := s.SaveCatalog(id1, e, got); err != nil {
		t.Fatal(err)
	}
	if after := readFile(t, s.CatalogPath(id1)); after != catalogFixtureFile {
		t.Errorf("re-save changed the file:\n%s", after)
	}

	// Lists come back empty, not nil.
	if err := s.SaveCatalog(id2, e, domain.Catalog{ProtocolVersion: "2025-03-26"}); err != nil {
		t.Fatal(err)
	}
	got, ok, err = s.LoadCatalog(id2, e)
	if err != nil || !ok || got.Tools == nil || got.Diagnostics == nil || len(got.Tools)+len(got.Diagnostics) != 0 {
		t.Fatalf("LoadCatalog(empty) = %+v, %v, %v", got, ok, err)
	}

	// A tool without annotations is written with {}.
	c = domain.Catalog{ProtocolVersion: "2025-03-26", Tools: []domain.Tool{{NativeName: "a", InputSchema: json.RawMessage(`{}`)}}}
	if err := s.SaveCatalog(id2, e, c); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.LoadCatalog(id2, e)
	if err != nil || string(got.Tools[0].Annotations) != "{}" {
		t.Fatalf("LoadCatalog(no annotations) = %+v, %v", got, err)
	}
}

// TestLoadUpstreamCatalog: a file as a person or an older writer may have
// left it (members in another order, unsorted and indented server JSON,
// absent Options, CRLF) loads.
func TestLoadUpstreamCatalog(t *testing.T) {
	s := Open(t.TempDir())
	writeFile(t, s.CatalogPath(id1), strings.ReplaceAll(`{
  "catalog": {
    "tools": [
      {
        "annotations": {"z": 1, "a": [ {"y": 2, "x": 1} ]},
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "unknownKeyword": {"nested": true}}}},
        "nativeName": "search"
      }
    ],
    "diagnostics": [{"message": "m", "code": "c"}],
    "protocolVersion": "2025-11-25"
  },
  "endpoint": "https://example.com/mcp",
  "registrationId": "550e8400-e29b-41d4-a716-446655440000",
  "kind": "tauritavern.mcpCatalogSnapshot",
  "schemaVersion": 1
}`, "\n", "\r\n"))
	got, ok, err := s.LoadCatalog(id1, endpoint(t, "https://example.com/mcp"))
	if err != nil || !ok {
		t.Fatalf("LoadCatalog = %v, %v", ok, err)
	}
	want := domain.Catalog{
		ProtocolVersion: "2025-11-25",
		Tools: []domain.Tool{{
			NativeName:  "search",
			InputSchema: json.RawMessage(`{"properties":{"q":{"type":"string","unknownKeyword":{"nested":true}}},"type":"object"}`),
			Annotations: json.RawMessage(`{"a":[{"x":1,"y":2}],"z":1}`),
		}},
		Diagnostics: []domain.Diagnostic{{Code: "c", Message: "m"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadCatalog =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLoadCatalogAbsent(t *testing.T) {
	s := Open(t.TempDir())
	c, ok, err := s.LoadCatalog(id1, endpoint(t, "https://example.com/mcp"))
	if ok || err != nil || !reflect.DeepEqual(c, domain.Catalog{}) {
		t.Fatalf("LoadCatalog(absent) = %+v, %v, %v", c, ok, err)
	}
	for _, id := range []domain.RegistrationID{"../../etc/passwd", "", domain.RegistrationID(strings.ToUpper(id1))} {
		if _, ok, err := s.LoadCatalog(id, endpoint(t, "https://example.com/mcp")); ok || domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("LoadCatalog(%q) = %v, %v; want BadRequest", id, ok, err)
		}
		if err := s.SaveCatalog(id, endpoint(t, "https://example.com/mcp"), domain.Catalog{}); domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("SaveCatalog(%q) = %v; want BadRequest", id, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(s.CatalogPath(id1))); !os.IsNotExist(err) {
		t.Errorf("catalogs directory created: %v", err)
	}
}

// validCatalog is a valid catalog file of id2 at https://example.com/mcp,
// with the replacements applied.
func validCatalog(oldnew ...string) string {
	return strings.NewReplacer(oldnew...).Replace(`{
  "schemaVersion": 1,
  "kind": "tauritavern.mcpCatalogSnapshot",
  "registrationId": "550e8400-e29b-41d4-a716-446655440001",
  "endpoint": "https://example.com/mcp",
  "catalog": {
    "protocolVersion": "2025-06-18",
    "serverName": "s",
    "serverVersion": null,
    "tools": [
      {
        "nativeName": "search",
        "title": null,
        "description": null,
        "inputSchema": {"type": "object"},
        "outputSchema": null,
        "annotations": {}
      }
    ],
    "diagnostics": [
      {
        "code": "mcp.tool_duplicate_name",
        "nativeName": null,
        "message": "m"
      }
    ]
  }
}`)
}

func TestLoadCatalogStrict(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	path := s.CatalogPath(id2)
	e := endpoint(t, "https://example.com/mcp")
	tool := func(old, new string) string { return validCatalog(old, new) }
	secondTool := `"annotations": {}
      },
      {"nativeName": "search", "inputSchema": {}, "annotations": {}}`
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", "not json", "Invalid JSON in <path>: invalid character 'o' …"},
		{"nul", "nul", "Invalid JSON in <path>: unexpected EOF…"},
		{"empty", "", "Invalid JSON in <path>: …"},
		{"0xff", "\xff\xfe{}", "Invalid UTF-8 in <path>: invalid UTF-8 sequence at byte offset 0"},
		{"0xff in a string", validCatalog(`"s"`, "\"s\xff\""), "Invalid UTF-8 in <path>: invalid UTF-8 sequence at byte offset …"},
		{"trailing data", validCatalog() + " {}", "Invalid JSON in <path>: …"},
		{"null", "null", "Invalid JSON in <path>: invalid type: null"},

		// Unknown members at every level of the file.
		{"extra at top level", validCatalog(`"schemaVersion": 1,`, `"schemaVersion": 1, "extra": 1,`),
			"Invalid JSON in <path>: unknown field `extra` at /extra"},
		{"extra in catalog", validCatalog(`"serverName": "s",`, `"serverName": "s", "staleTools": [],`),
			"Invalid JSON in <path>: unknown field `staleTools` at /catalog/staleTools"},
		{"extra in a tool", tool(`"title": null,`, `"title": null, "permission": "allow",`),
			"Invalid JSON in <path>: unknown field `permission` at /catalog/tools/0/permission"},
		{"extra in a diagnostic", validCatalog(`"message": "m"`, `"message": "m", "severity": "warn"`),
			"Invalid JSON in <path>: unknown field `severity` at /catalog/diagnostics/0/severity"},
		{"wrong case", validCatalog(`"serverName"`, `"ServerName"`),
			"Invalid JSON in <path>: unknown field `ServerName` at /catalog/ServerName"},

		// Repeated members, in the file and in the server's JSON.
		{"duplicate at top level", validCatalog(`"schemaVersion": 1,`, `"schemaVersion": 1, "schemaVersion": 1,`),
			"Invalid JSON in <path>: …duplicate…schemaVersion…"},
		{"duplicate in a tool", tool(`"title": null,`, `"title": null, "title": null,`),
			"Invalid JSON in <path>: …duplicate…title…"},
		{"duplicate in a schema", tool(`{"type": "object"}`, `{"type": "object", "type": "object"}`),
			"Invalid JSON in <path>: …duplicate…type…/catalog/tools/0/inputSchema…"},

		// Types.
		{"schemaVersion string", validCatalog(`"schemaVersion": 1`, `"schemaVersion": "1"`), "Invalid JSON in <path>: …/schemaVersion…"},
		{"kind null", validCatalog(`"kind": "tauritavern.mcpCatalogSnapshot"`, `"kind": null`), "Invalid JSON in <path>: invalid type: null at /kind"},
		{"tools null", validCatalog(`"tools": [`, `"tools": null, "x": [`), "Invalid JSON in <path>: invalid type: null at /catalog/tools"},
		{"nativeName null", tool(`"nativeName": "search"`, `"nativeName": null`), "Invalid JSON in <path>: invalid type: null at /catalog/tools/0/nativeName"},
		{"inputSchema array", tool(`{"type": "object"}`, `[]`),
			"Invalid JSON in <path>: invalid type: array, expected a JSON object at /catalog/tools/0/inputSchema"},
		{"inputSchema true", tool(`{"type": "object"}`, `true`),
			"Invalid JSON in <path>: invalid type: boolean, expected a JSON object at /catalog/tools/0/inputSchema"},
		{"inputSchema string", tool(`{"type": "object"}`, `"{}"`),
			"Invalid JSON in <path>: invalid type: string, expected a JSON object at /catalog/tools/0/inputSchema"},
		{"inputSchema null", tool(`{"type": "object"}`, `null`),
			"Invalid JSON in <path>: invalid type: null at /catalog/tools/0/inputSchema"},
		{"outputSchema number", tool(`"outputSchema": null`, `"outputSchema": 1`),
			"Invalid JSON in <path>: invalid type: number, expected a JSON object at /catalog/tools/0/outputSchema"},
		{"annotations null", tool(`"annotations": {}`, `"annotations": null`),
			"Invalid JSON in <path>: invalid type: null at /catalog/tools/0/annotations"},
		{"annotations array", tool(`"annotations": {}`, `"annotations": []`),
			"Invalid JSON in <path>: invalid type: array, expected a JSON object at /catalog/tools/0/annotations"},
		{"broken schema JSON", tool(`{"type": "object"}`, `{"type": }`), "Invalid JSON in <path>: …"},

		// Members without a default.
		{"missing catalog", `{"schemaVersion": 1, "kind": "k", "registrationId": "r", "endpoint": "e"}`, "Invalid JSON in <path>: missing field `catalog`"},
		{"missing kind", validCatalog(`"kind": "tauritavern.mcpCatalogSnapshot",`, ``), "Invalid JSON in <path>: missing field `kind`"},
		{"missing tools", `{"schemaVersion": 1, "kind": "k", "registrationId": "r", "endpoint": "e", "catalog": {"protocolVersion": "p", "diagnostics": []}}`,
			"Invalid JSON in <path>: missing field `tools` at /catalog"},
		{"missing diagnostics", `{"schemaVersion": 1, "kind": "k", "registrationId": "r", "endpoint": "e", "catalog": {"protocolVersion": "p", "tools": []}}`,
			"Invalid JSON in <path>: missing field `diagnostics` at /catalog"},
		{"missing code", `{"schemaVersion": 1, "kind": "k", "registrationId": "r", "endpoint": "e", "catalog": {"protocolVersion": "p", "tools": [], "diagnostics": [{"message": "m"}]}}`,
			"Invalid JSON in <path>: missing field `code` at /catalog/diagnostics/0"},
		{"missing protocolVersion", validCatalog(`"protocolVersion": "2025-06-18",`, ``), "Invalid JSON in <path>: missing field `protocolVersion` at /catalog"},
		{"missing inputSchema", tool(`"inputSchema": {"type": "object"},`, ``), "Invalid JSON in <path>: missing field `inputSchema` at /catalog/tools/0"},
		{"missing annotations", tool(`,
        "annotations": {}`, ``), "Invalid JSON in <path>: missing field `annotations` at /catalog/tools/0"},
		{"missing nativeName in the second tool", tool(`"annotations": {}
      }`, `"annotations": {}
      }, {}`), "Invalid JSON in <path>: missing field `nativeName` at /catalog/tools/1"},
		{"missing message", validCatalog(`,
        "message": "m"`, ``), "Invalid JSON in <path>: missing field `message` at /catalog/diagnostics/0"},

		// Then the rules, in upstream's order.
		{"schemaVersion 2", validCatalog(`"schemaVersion": 1`, `"schemaVersion": 2`, `"tauritavern.mcpCatalogSnapshot"`, `"x"`),
			"mcp.catalog_schema_unsupported: schemaVersion 2 in <path>"},
		{"schemaVersion 0", validCatalog(`"schemaVersion": 1`, `"schemaVersion": 0`), "mcp.catalog_schema_unsupported: schemaVersion 0 in <path>"},
		{"wrong kind", validCatalog(`"tauritavern.mcpCatalogSnapshot"`, `"tauritavern.mcpServerRegistration"`, `"https://example.com/mcp"`, `"https://other.example/mcp"`),
			"mcp.catalog_kind_invalid: kind `tauritavern.mcpServerRegistration` in <path>"},
		{"other registration", validCatalog(id2, id1, `"https://example.com/mcp"`, `"https://other.example/mcp"`),
			"mcp.catalog_registration_mismatch: id `" + id1 + "` does not match registration `" + id2 + "` in <path>"},
		{"uppercase registration", validCatalog(id2, strings.ToUpper(id2)),
			"mcp.catalog_registration_mismatch: id `" + strings.ToUpper(id2) + "` does not match registration `" + id2 + "` in <path>"},
		{"other endpoint", validCatalog(`"https://example.com/mcp"`, `"https://other.example/mcp"`, `"search"`, `""`),
			"mcp.catalog_endpoint_mismatch: endpoint `https://other.example/mcp` does not match registration endpoint `https://example.com/mcp` in <path>"},
		{"endpoint not normalised", validCatalog(`"https://example.com/mcp"`, `"HTTPS://example.com:443/mcp"`),
			"mcp.catalog_endpoint_mismatch: endpoint `HTTPS://example.com:443/mcp` does not match registration endpoint `https://example.com/mcp` in <path>"},
		{"empty name", tool(`"nativeName": "search"`, `"nativeName": ""`), "mcp.tool_name_empty: native tool name cannot be empty"},
		{"long name", tool(`"nativeName": "search"`, `"nativeName": "`+strings.Repeat("n", 257)+`"`),
			"mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
		{"duplicate tool names", tool(`"annotations": {}
      }`, secondTool), "tool.catalog_duplicate_id: duplicate tool id `mcp/" + id2 + ":search`"},
		{"input schema does not compile", tool(`{"type": "object"}`, `{"type": 1}`),
			"mcp.tool_input_schema_invalid: Tool `search` input schema is invalid: …"},
		{"input schema with a remote $ref", tool(`{"type": "object"}`, `{"$ref": "https://example.com/schema.json"}`),
			"mcp.tool_input_schema_invalid: Tool `search` input schema is invalid: …https://example.com/schema.json…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, path, tt.in)
			c, ok, err := s.LoadCatalog(id2, e)
			want := strings.ReplaceAll(tt.want, "<path>", path)
			if ok || err == nil || domain.KindOf(err) != domain.KindBadRequest || !matches(err.Error(), want) {
				t.Fatalf("LoadCatalog = %v, %v\nwant %q", ok, err, want)
			}
			if !reflect.DeepEqual(c, domain.Catalog{}) {
				t.Errorf("half-loaded catalog %+v", c)
			}
		})
	}

	// The base file is valid; unknown members inside the server's JSON are
	// its own business.
	writeFile(t, path, tool(`{"type": "object"}`, `{"type": "object", "x-unknown": {"deep": [{"any": "thing"}]}, "properties": {}}`))
	c, ok, err := s.LoadCatalog(id2, e)
	if err != nil || !ok || string(c.Tools[0].InputSchema) != `{"properties":{},"type":"object","x-unknown":{"deep":[{"any":"thing"}]}}` {
		t.Fatalf("LoadCatalog(valid) = %+v, %v, %v", c, ok, err)
	}
	if c.ServerName == nil || *c.ServerName != "s" || c.Diagnostics[0].NativeName != nil {
		t.Errorf("LoadCatalog(valid) = %+v", c)
	}
}

func TestLoadCatalogReadFailure(t *testing.T) {
	s := Open(t.TempDir())
	path := s.CatalogPath(id1)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	_, ok, err := s.LoadCatalog(id1, endpoint(t, "https://example.com/mcp"))
	if ok || domain.KindOf(err) != domain.KindInternal || !strings.HasPrefix(errText(err), "Failed to read "+path+": ") {
		t.Fatalf("LoadCatalog(directory) = %v, %v", ok, err)
	}
}

// TestSaveCatalogRefusesInvalid: what LoadCatalog would refuse is not
// written, and the file already there stays.
func TestSaveCatalogRefusesInvalid(t *testing.T) {
	e := endpoint(t, "https://example.com/mcp")
	good := json.RawMessage(`{}`)
	tools := func(ts ...domain.Tool) domain.Catalog {
		return domain.Catalog{ProtocolVersion: "2025-06-18", Tools: ts}
	}
	tests := []struct {
		name     string
		endpoint domain.Endpoint
		catalog  domain.Catalog
		kind     domain.Kind
		want     string
	}{
		{"no endpoint", domain.Endpoint{}, tools(), domain.KindInternal, "catalog of registration `" + id1 + "` has no endpoint"},
		{"empty name", e, tools(domain.Tool{InputSchema: good, Annotations: good}), domain.KindBadRequest, "mcp.tool_name_empty: …"},
		{"duplicate names", e, tools(domain.Tool{NativeName: "a", InputSchema: good}, domain.Tool{NativeName: "a", InputSchema: good}),
			domain.KindBadRequest, "tool.catalog_duplicate_id: duplicate tool id `mcp/" + id1 + ":a`"},
		{"no input schema", e, tools(domain.Tool{NativeName: "a"}), domain.KindBadRequest,
			"mcp.tool_input_schema_invalid: Tool `a` input schema is invalid: schema must be a JSON object"},
		{"output schema not an object", e, tools(domain.Tool{NativeName: "a", InputSchema: good, OutputSchema: json.RawMessage(`[1]`)}),
			domain.KindBadRequest, "Failed to serialize JSON for <path>: …invalid type: array, expected a JSON object…"},
		{"annotations not JSON", e, tools(domain.Tool{NativeName: "a", InputSchema: good, Annotations: json.RawMessage(`{"a":`)}),
			domain.KindBadRequest, "Failed to serialize JSON for <path>: …invalid JSON…"},
		{"annotations with data after", e, tools(domain.Tool{NativeName: "a", InputSchema: good, Annotations: json.RawMessage(`{} {}`)}),
			domain.KindBadRequest, "Failed to serialize JSON for <path>: …data after the object…"},
		{"annotations with a repeated name", e, tools(domain.Tool{NativeName: "a", InputSchema: good, Annotations: json.RawMessage(`{"a":1,"a":2}`)}),
			domain.KindBadRequest, "Failed to serialize JSON for <path>: …duplicate…"},
		{"invalid UTF-8", e, domain.Catalog{ProtocolVersion: "x", ServerName: ptr("\xff")}, domain.KindBadRequest, "Failed to serialize JSON for <path>: …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Open(t.TempDir())
			path := s.CatalogPath(id1)
			writeFile(t, path, "old")
			err := s.SaveCatalog(id1, tt.endpoint, tt.catalog)
			want := strings.ReplaceAll(tt.want, "<path>", path)
			if err == nil || domain.KindOf(err) != tt.kind || !matches(err.Error(), want) {
				t.Fatalf("SaveCatalog = %v\nwant %v %q", err, tt.kind, want)
			}
			if got := readFile(t, path); got != "old" {
				t.Errorf("file = %q", got)
			}
			if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

// TestCatalogIsEndpointBoundAndRemovedWithRegistration is upstream's
// catalog_snapshot_is_strict_endpoint_bound_and_removed_with_registration.
func TestCatalogIsEndpointBoundAndRemovedWithRegistration(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	reg := fixture(t, id1)
	if err := s.Save(reg); err != nil {
		t.Fatal(err)
	}
	c := loadedFixture()
	if err := s.SaveCatalog(reg.ID, reg.Endpoint, c); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.LoadCatalog(reg.ID, reg.Endpoint); err != nil || !ok || !reflect.DeepEqual(got, c) {
		t.Fatalf("LoadCatalog = %+v, %v, %v", got, ok, err)
	}

	// Another endpoint, another registration: the file is not theirs.
	other := endpoint(t, "http://127.0.0.1:3334/mcp")
	_, ok, err := s.LoadCatalog(reg.ID, other)
	if ok || domain.CodeOf(err) != "mcp.catalog_endpoint_mismatch" || domain.KindOf(err) != domain.KindBadRequest {
		t.Fatalf("LoadCatalog(other endpoint) = %v, %v", ok, err)
	}
	if err := os.Rename(s.CatalogPath(id1), s.CatalogPath(id2)); err != nil {
		t.Fatal(err)
	}
	_, ok, err = s.LoadCatalog(id2, reg.Endpoint)
	if ok || domain.CodeOf(err) != "mcp.catalog_registration_mismatch" {
		t.Fatalf("LoadCatalog(other registration) = %v, %v", ok, err)
	}
	if err := os.Rename(s.CatalogPath(id2), s.CatalogPath(id1)); err != nil {
		t.Fatal(err)
	}

	// An extra member anywhere: "unknown field".
	data := readFile(t, s.CatalogPath(id1))
	writeFile(t, s.CatalogPath(id1), strings.Replace(data, `"nativeName": "fetch",`, `"nativeName": "fetch", "permission": "allow",`, 1))
	if _, ok, err := s.LoadCatalog(reg.ID, reg.Endpoint); ok || !strings.Contains(errText(err), "unknown field") {
		t.Fatalf("LoadCatalog(extra field) = %v, %v", ok, err)
	}
	writeFile(t, s.CatalogPath(id1), data)

	// Removing the catalog keeps the registration.
	if err := s.DeleteCatalog(reg.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadCatalog(reg.ID, reg.Endpoint); ok || err != nil {
		t.Fatalf("LoadCatalog after DeleteCatalog = %v, %v", ok, err)
	}
	if got, ok, err := s.Load(reg.ID); err != nil || !ok || !reflect.DeepEqual(got, reg) {
		t.Fatalf("registration after DeleteCatalog = %v, %v", ok, err)
	}

	// Removing a registration and its catalog removes both.
	if err := s.SaveCatalog(reg.ID, reg.Endpoint, c); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(reg.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCatalog(reg.ID); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.RegistrationPath(reg.ID), s.CatalogPath(reg.ID)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
}
