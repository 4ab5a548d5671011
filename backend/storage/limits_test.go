package storage

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// What the store would not read back, it does not write: a registration
// above MaxRegistrationFileBytes is refused (BadRequest, the file as it
// was), and so is a catalog whose file would exceed MaxCatalogFileBytes.
func TestSaveRefusesWhatItWouldNotRead(t *testing.T) {
	s := Open(t.TempDir())
	r := fixture(t, id1)
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, s.RegistrationPath(id1))
	big := r.Clone()
	for i := range 9 {
		big.Overrides[fmt.Sprint("tool_", i)] = domain.DescriptionOverride{Description: ptr(strings.Repeat("d", 128<<10))}
	}
	err := s.Save(big)
	if err == nil || domain.KindOf(err) != domain.KindBadRequest || domain.CodeOf(err) != CodeRegistrationTooLarge ||
		!strings.Contains(err.Error(), fmt.Sprint(MaxRegistrationFileBytes)) {
		t.Fatalf("Save(%d KiB of overrides) = %v; want %s naming the limit", 9*128, err, CodeRegistrationTooLarge)
	}
	if after := readFile(t, s.RegistrationPath(id1)); after != before {
		t.Fatal("the refused save changed the file")
	}
	if tmp := tempFiles(t, dir(s.RegistrationPath(id1))); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}

	// A valid catalog whose pretty-printed file is far larger than its
	// tools: each element of a nested array gets a line of its own,
	// indented two spaces per level.
	schema := `{"type":"object","x-pad":[` + strings.Repeat("0,", 400_000) + `0]}`
	for range 20 {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
	}
	c := domain.Catalog{ProtocolVersion: "2025-06-18", Diagnostics: []domain.Diagnostic{},
		Tools: []domain.Tool{{NativeName: "padded", InputSchema: json.RawMessage(schema), Annotations: json.RawMessage(`{}`)}}}
	ep := endpoint(t, "https://example.com/mcp")
	err = s.SaveCatalog(id1, ep, c)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(MaxCatalogFileBytes)) {
		t.Fatalf("SaveCatalog(a %d-byte catalog) = %v; want a refusal naming the limit", len(schema), err)
	}
	if _, err := os.Stat(s.CatalogPath(id1)); !os.IsNotExist(err) {
		t.Fatalf("the refused catalog was written: %v", err)
	}
}

func dir(path string) string { return path[:strings.LastIndexByte(path, os.PathSeparator)] }

// A value of the wrong type is reported in JSON's words, as serde does
// ("invalid type: number, expected a string"), never with Go's types.
func TestWrongTypeMessages(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{`"displayName": "Minimal"`, `"displayName": 5`, "invalid type: number, expected a string at /displayName"},
		{`"schemaVersion": 1`, `"schemaVersion": "1"`, "invalid type: string, expected an unsigned integer at /schemaVersion"},
		{`"schemaVersion": 1`, `"schemaVersion": -1`, "invalid value: -1, expected an unsigned integer at /schemaVersion"},
		{`"state": "paused"`, `"state": "paused", "headers": []`, "invalid type: array, expected an object at /headers"},
		{`"state": "paused"`, `"state": "paused", "headers": {"a": true}`, "invalid type: boolean, expected a string at /headers/a"},
	}
	for _, tt := range tests {
		s := Open(t.TempDir())
		path := s.RegistrationPath(id1)
		if err := os.MkdirAll(dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, validFile(id1, tt.from, tt.to))
		_, _, err := s.Load(id1)
		if msg := errText(err); !strings.HasSuffix(msg, tt.want) || strings.Contains(msg, "Go ") {
			t.Errorf("%s: %q; want it to end with %q", tt.to, msg, tt.want)
		}
	}
}
