package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func toolSetFixture(t *testing.T) domain.ToolSet {
	t.Helper()
	tools, err := domain.ParseToolSelection([]string{"mcp/" + id1 + ":search", "mcp/" + id2 + ":*"})
	if err != nil {
		t.Fatal(err)
	}
	return domain.ToolSet{
		ID: domain.ToolSetID(id3), Name: "Coding", Tools: tools,
		Overrides: map[domain.ToolID]domain.DescriptionOverride{
			domain.ToolID("mcp/" + id1 + ":search"): {Description: ptr(" Find <code> "), Properties: map[string]string{"q": "what"}},
		},
		ResultInlineCharLimit: 20_000,
		ReaderTool:            true,
	}
}

func TestToolSetFileRoundTrip(t *testing.T) {
	store := Open(t.TempDir())
	ts := toolSetFixture(t)
	data := roundTrip(t, ts, store.SaveToolSet, store.ToolSetPath(ts.ID), func() (domain.ToolSet, bool, error) { return store.LoadToolSet(ts.ID) })
	want := "{\n" +
		"  \"schemaVersion\": 1,\n" +
		"  \"kind\": \"ttmcp.mcpToolSet\",\n" +
		"  \"id\": \"" + id3 + "\",\n" +
		"  \"name\": \"Coding\",\n" +
		"  \"tools\": [\n" +
		"    \"mcp/" + id1 + ":search\",\n" +
		"    \"mcp/" + id2 + ":*\"\n" +
		"  ],\n" +
		"  \"descriptionOverrides\": {\n" +
		"    \"mcp/" + id1 + ":search\": {\n" +
		"      \"description\": \" Find <code> \",\n" +
		"      \"properties\": {\n" +
		"        \"q\": \"what\"\n" +
		"      }\n" +
		"    }\n" +
		"  },\n" +
		"  \"resultInlineCharLimit\": 20000,\n" +
		"  \"readerTool\": true\n" +
		"}"
	if data != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	// Without overrides the member is left out; the rest is always written.
	bare := domain.ToolSet{ID: domain.ToolSetID(id1), Name: "None", Tools: []domain.ToolSelector{}, ResultInlineCharLimit: 50_000}
	if err := store.SaveToolSet(bare); err != nil {
		t.Fatal(err)
	}
	bareData, _ := os.ReadFile(store.ToolSetPath(bare.ID))
	if !strings.Contains(string(bareData), "\"tools\": [],\n  \"resultInlineCharLimit\": 50000,\n  \"readerTool\": false\n}") {
		t.Fatalf("bare file:\n%s", bareData)
	}
	// issue 31: the search members are written only when used, and read back.
	searching := ts.Clone()
	searching.Search = domain.ToolSearchSettings{Mode: domain.ToolModeAutomatic, MaxTools: 12, ContextPercent: 5,
		Pinned: []domain.ToolID{domain.ToolID("mcp/" + id2 + ":x"), domain.ToolID("mcp/" + id1 + ":search")}}
	sdata := roundTrip(t, searching, store.SaveToolSet, store.ToolSetPath(ts.ID), func() (domain.ToolSet, bool, error) { return store.LoadToolSet(ts.ID) })
	if !strings.HasSuffix(sdata, "\"readerTool\": true,\n  \"toolMode\": \"automatic\",\n  \"searchMaxTools\": 12,\n  \"searchContextPercent\": 5,\n"+
		"  \"pinnedTools\": [\n    \"mcp/"+id2+":x\",\n    \"mcp/"+id1+":search\"\n  ]\n}") {
		t.Fatalf("searching file:\n%s", sdata)
	}
	if err := store.DeleteToolSet(bare.ID); err != nil {
		t.Fatal(err)
	}
	if _, found, err := store.LoadToolSet(bare.ID); found || err != nil {
		t.Fatal(found, err)
	}
	if err := store.DeleteToolSet(bare.ID); err != nil { // absent: not an error
		t.Fatal(err)
	}
	// An invalid set is refused before anything is written.
	bad := ts.Clone()
	bad.ResultInlineCharLimit = 0
	if err := store.SaveToolSet(bad); err == nil || domain.CodeOf(err) != "mcp.tool_set_result_inline_char_limit_invalid" {
		t.Fatalf("limit 0 saved: %v", err)
	}
	if got, _, _ := store.LoadToolSet(ts.ID); got.ResultInlineCharLimit != 20_000 {
		t.Fatal("the refused set replaced the file")
	}
}

// A tool set file is read as strictly as a registration file: unknown,
// repeated and mis-cased members, wrong types, trailing data and broken
// rules are refused.
func TestToolSetFileStrict(t *testing.T) {
	store := Open(t.TempDir())
	good := `{"schemaVersion":1,"kind":"ttmcp.mcpToolSet","id":"` + id3 + `","name":"x","tools":["mcp/` + id1 + `:*"],"resultInlineCharLimit":5,"readerTool":false}`
	tests := []strictCase{
		{"minimal", good, ""},
		{"unknown member", strings.Replace(good, `"name"`, `"shell":true,"name"`, 1), "unknown field `shell`"},
		{"wrong case", strings.Replace(good, `"name"`, `"Name"`, 1), "unknown field `Name`"},
		{"duplicate member", strings.Replace(good, `"name":"x"`, `"name":"x","name":"y"`, 1), "duplicate"},
		{"null tools", strings.Replace(good, `"tools":["mcp/`+id1+`:*"]`, `"tools":null`, 1), "invalid type: null at /tools"},
		{"missing limit", strings.Replace(good, `"resultInlineCharLimit":5,`, "", 1), "missing field `resultInlineCharLimit`"},
		{"missing reader", strings.Replace(good, `,"readerTool":false`, "", 1), "missing field `readerTool`"},
		{"string limit", strings.Replace(good, `:5,`, `:"5",`, 1), "Invalid JSON"},
		{"zero limit", strings.Replace(good, `:5,`, `:0,`, 1), "mcp.tool_set_result_inline_char_limit_invalid"},
		{"registration kind", strings.Replace(good, "ttmcp.mcpToolSet", "tauritavern.mcpServerRegistration", 1), CodeToolSetKindInvalid},
		{"schema 2", strings.Replace(good, `"schemaVersion":1`, `"schemaVersion":2`, 1), CodeToolSetSchemaUnsupported},
		{"other id", strings.Replace(good, `"id":"`+id3, `"id":"`+id2, 1), CodeToolSetIDMismatch},
		{"bad selector", strings.Replace(good, `"mcp/`+id1+`:*"`, `"github:*"`, 1), "mcp.provider_id_invalid"},
		{"twice", strings.Replace(good, `"mcp/`+id1+`:*"`, `"mcp/`+id1+`:*","mcp/`+id1+`:*"`, 1), "mcp.tool_set_tool_duplicate"},
		{"untrimmed name", strings.Replace(good, `"name":"x"`, `"name":" x"`, 1), "mcp.tool_set_name_untrimmed"},
		{"override unselected", strings.Replace(good, `"resultInlineCharLimit"`,
			`"descriptionOverrides":{"mcp/`+id2+`:t":{"description":"d"}},"resultInlineCharLimit"`, 1), "mcp.tool_set_override_unselected"},
		{"empty override", strings.Replace(good, `"resultInlineCharLimit"`,
			`"descriptionOverrides":{"mcp/`+id1+`:t":{"properties":{}}},"resultInlineCharLimit"`, 1), "mcp.description_override_empty"},
		{"trailing data", good + "{}", "Invalid JSON"},
		{"search mode", strings.Replace(good, `"readerTool":false`, `"readerTool":false,"toolMode":"search","pinnedTools":["mcp/`+id1+`:a"]`, 1), ""},
		{"mode spelled all", strings.Replace(good, `"readerTool":false`, `"readerTool":false,"toolMode":"all"`, 1), "mcp.tool_set_mode_invalid"},
		{"unknown mode", strings.Replace(good, `"readerTool":false`, `"readerTool":false,"toolMode":"lazy"`, 1), "mcp.tool_set_mode_invalid"},
		{"pin not selected", strings.Replace(good, `"readerTool":false`, `"readerTool":false,"pinnedTools":["mcp/`+id2+`:a"]`, 1), "mcp.tool_set_pinned_invalid"},
	}
	checkStrict(t, store.ToolSetPath(id3), tests, func() (domain.ToolSet, bool, error) { return store.LoadToolSet(id3) },
		func(ts domain.ToolSet) bool { return ts.Name == "x" && len(ts.Tools) == 1 && ts.Tools[0].All })
}

// ScanToolSets reports damaged files by their folder and still loads the
// others; TauriTavern's registration and catalog folders are not touched.
func TestScanToolSets(t *testing.T) {
	root := t.TempDir()
	store := Open(root)
	if sets, issues, err := store.ScanToolSets(); err != nil || len(sets) != 0 || len(issues) != 0 {
		t.Fatalf("no folder: %v %v %v", sets, issues, err)
	}
	if err := store.SaveToolSet(toolSetFixture(t)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_tauritavern", "mcp", ToolSetsDirName)
	os.WriteFile(filepath.Join(dir, id1+".json"), []byte("{"), 0o600)
	os.WriteFile(filepath.Join(dir, "not-a-uuid.json"), []byte("{}"), 0o600)
	os.Mkdir(filepath.Join(dir, id2+".json"), 0o755)
	sets, issues, err := store.ScanToolSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "Coding" {
		t.Fatalf("sets %+v", sets)
	}
	names := []string{}
	for _, is := range issues {
		names = append(names, is.FileName)
	}
	if !reflect.DeepEqual(names, []string{"tool-sets/" + id1 + ".json", "tool-sets/" + id2 + ".json", "tool-sets/not-a-uuid.json"}) {
		t.Fatalf("issues %+v", issues)
	}
	if !strings.Contains(issues[2].Message, "mcp.tool_set_id_invalid") || !strings.Contains(issues[1].Message, "directory") {
		t.Fatalf("issues %+v", issues)
	}
	for _, d := range []string{"registrations", "catalogs"} {
		if _, err := os.Stat(filepath.Join(root, "_tauritavern", "mcp", d)); !os.IsNotExist(err) {
			t.Fatalf("%s was created", d)
		}
	}
}
