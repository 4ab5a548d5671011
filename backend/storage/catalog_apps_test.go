package storage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// TestCatalogKeepsToolUI: a tool's _meta.ui is kept in its catalog file as
// the optional member "ui", on that tool only; a server without Apps
// still gets upstream's bytes (TestSaveCatalogWritesUpstreamBytes).
func TestCatalogKeepsToolUI(t *testing.T) {
	e := endpoint(t, "http://127.0.0.1:3333/mcp")
	obj := json.RawMessage(`{"type":"object"}`)
	c := domain.Catalog{ProtocolVersion: "2026-07-28", Tools: []domain.Tool{
		{NativeName: "board", InputSchema: obj, Annotations: json.RawMessage(`{}`), UI: &domain.ToolUI{ResourceURI: "ui://chess/board.html"}},
		{NativeName: "move", InputSchema: obj, Annotations: json.RawMessage(`{}`), UI: &domain.ToolUI{ResourceURI: "ui://chess/board.html", Visibility: []string{"app"}}},
		{NativeName: "nobody", InputSchema: obj, Annotations: json.RawMessage(`{}`), UI: &domain.ToolUI{Visibility: []string{}}},
		{NativeName: "plain", InputSchema: obj, Annotations: json.RawMessage(`{}`)},
	}, Diagnostics: []domain.Diagnostic{}}
	root := t.TempDir()
	s := Open(root)
	if err := s.SaveCatalog(id1, e, c); err != nil {
		t.Fatal(err)
	}
	file := readFile(t, s.CatalogPath(id1))
	for _, want := range []string{
		"\"ui\": {\n          \"resourceUri\": \"ui://chess/board.html\"\n        }",
		"\"ui\": {\n          \"resourceUri\": \"ui://chess/board.html\",\n          \"visibility\": [\n            \"app\"\n          ]\n        }",
		"\"ui\": {\n          \"visibility\": []\n        }",
	} {
		if !strings.Contains(file, want) {
			t.Errorf("file lacks %q:\n%s", want, file)
		}
	}
	if n := strings.Count(file, `"ui"`); n != 3 {
		t.Errorf("%d ui members, want 3 (none on the plain tool):\n%s", n, file)
	}
	got, ok, err := Open(root).LoadCatalog(id1, e)
	if err != nil || !ok {
		t.Fatalf("LoadCatalog = %v, %v", ok, err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("LoadCatalog =\n%+v\nwant\n%+v", got, c)
	}
}

func TestLoadCatalogChecksToolUI(t *testing.T) {
	file := func(ui string) string {
		return `{"schemaVersion":1,"kind":"tauritavern.mcpCatalogSnapshot","registrationId":"` + string(id1) +
			`","endpoint":"https://example.com/mcp","catalog":{"protocolVersion":"2025-11-25","serverName":null,"serverVersion":null,` +
			`"tools":[{"nativeName":"t","title":null,"description":null,"inputSchema":{"type":"object"},"outputSchema":null,"annotations":{},"ui":` + ui + `}],"diagnostics":[]}}`
	}
	tests := []struct {
		name, ui, err string
	}{
		{"javascript uri", `{"resourceUri":"javascript:alert(1)"}`, "resourceUri must be a ui:// URI"},
		{"unknown member", `{"resourceUri":"ui://a/b","csp":{}}`, "unknown field"},
		{"unknown visibility", `{"visibility":["everyone"]}`, "visibility must name model and app"},
		{"empty ui", `{}`, "empty ui member"},
		{"visibility not a list", `{"visibility":"app"}`, "Invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Open(t.TempDir())
			writeFile(t, s.CatalogPath(id1), file(tt.ui))
			_, _, err := s.LoadCatalog(id1, endpoint(t, "https://example.com/mcp"))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("LoadCatalog error = %v, want one with %q", err, tt.err)
			}
		})
	}
	s := Open(t.TempDir())
	writeFile(t, s.CatalogPath(id1), file(`{"resourceUri":"ui://a/b","visibility":["model","app"]}`))
	if c, _, err := s.LoadCatalog(id1, endpoint(t, "https://example.com/mcp")); err != nil || c.Tools[0].UI == nil || c.Tools[0].UI.ResourceURI != "ui://a/b" {
		t.Errorf("a valid ui: %+v, %v", c, err)
	}
}
