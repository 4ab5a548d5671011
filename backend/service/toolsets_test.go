package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

func (w *world) saveSet(dto jsapi.SaveMcpToolSetDto) jsapi.McpToolSet {
	w.t.Helper()
	ts, err := w.svc.SaveToolSet(context.Background(), dto)
	if err != nil {
		w.t.Fatal(err)
	}
	return ts
}

func (w *world) setTools(id string) jsapi.LegacyMcpToolList {
	w.t.Helper()
	l, err := w.svc.ListLegacyTools(context.Background(), jsapi.ListLegacyMcpToolsDto{ToolSetID: &id})
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

// named registers an active server called name whose cached catalog holds
// tools (each an object schema with a property q), as discovery saves it.
func (w *world) named(name string, tools ...string) string {
	w.t.Helper()
	ctx := context.Background()
	srv, err := w.svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: name, Endpoint: "http://127.0.0.1:9/" + name})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive}); err != nil {
		w.t.Fatal(err)
	}
	cat := domain.Catalog{ProtocolVersion: "2025-11-25"}
	for _, t := range tools {
		d := "raw " + t
		cat.Tools = append(cat.Tools, domain.Tool{NativeName: t, Description: &d, Annotations: json.RawMessage(`{}`),
			InputSchema: json.RawMessage(`{"properties":{"q":{"description":"raw q","type":"string"}},"type":"object"}`)})
	}
	r, _, _ := w.store.Load(domain.RegistrationID(srv.ID))
	if err := w.store.SaveCatalog(r.ID, r.Endpoint, cat); err != nil {
		w.t.Fatal(err)
	}
	return srv.ID
}

func toolIDs(l jsapi.LegacyMcpToolList) []string {
	out := []string{}
	for _, t := range l.Tools {
		out = append(out, t.ToolID)
	}
	return out
}

func diagsOf(l jsapi.LegacyMcpToolList) []string {
	out := []string{}
	for _, d := range l.Diagnostics {
		at := ""
		if d.ToolID != nil {
			at = *d.ToolID
		}
		out = append(out, d.Code+" "+at)
	}
	return out
}

func TestToolSetCommands(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gh := w.named("GitHub", "search")
	// Defaults: no overrides, 50,000 characters, the reader tool on.
	coding := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "  Coding ", Tools: []string{"mcp/" + gh + ":*"}})
	if coding.Name != "Coding" || coding.ResultInlineCharLimit != 50_000 || !coding.ReaderTool || len(coding.DescriptionOverrides) != 0 || coding.ID == "" {
		t.Fatalf("created %+v", coding)
	}
	if coding.ToolMode != "all" || coding.SearchMaxTools != 40 || coding.SearchContextPercent != 10 || len(coding.PinnedTools) != 0 || coding.PinnedTools == nil {
		t.Fatalf("search defaults %+v", coding)
	}
	// issue 31: the search settings; a default budget is kept as nothing in the file.
	mode, forty, five := "automatic", 40, 5
	pinned := []string{"mcp/" + gh + ":search"}
	auto := w.saveSet(jsapi.SaveMcpToolSetDto{ID: &coding.ID, Name: "Coding", Tools: []string{"mcp/" + gh + ":*"},
		ToolMode: &mode, SearchMaxTools: &forty, SearchContextPercent: &five, PinnedTools: &pinned})
	if auto.ToolMode != "automatic" || auto.SearchMaxTools != 40 || auto.SearchContextPercent != 5 || !reflect.DeepEqual(auto.PinnedTools, pinned) {
		t.Fatalf("automatic %+v", auto)
	}
	if data, _ := os.ReadFile(w.store.ToolSetPath(domain.ToolSetID(coding.ID))); strings.Contains(string(data), "searchMaxTools") || !strings.Contains(string(data), `"searchContextPercent": 5`) {
		t.Fatalf("file %s", data)
	}
	for _, bad := range []jsapi.SaveMcpToolSetDto{
		{Name: "y", Tools: []string{}, ToolMode: ptrTo("all tools")},
		{Name: "y", Tools: []string{}, SearchMaxTools: ptrTo(0)},
		{Name: "y", Tools: []string{}, SearchContextPercent: ptrTo(101)},
		{Name: "y", Tools: []string{}, PinnedTools: &pinned},
	} {
		if _, err := w.svc.SaveToolSet(ctx, bad); domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("%+v saved: %v", bad, err)
		}
	}
	limit, off := 10, false
	w.saveSet(jsapi.SaveMcpToolSetDto{Name: "archive", Tools: []string{}, ResultInlineCharLimit: &limit, ReaderTool: &off})
	list, err := w.svc.ListToolSets(ctx)
	if err != nil || len(list.ToolSets) != 2 || list.ToolSets[0].Name != "archive" || list.ToolSets[1].ID != coding.ID || len(list.StorageIssues) != 0 {
		t.Fatalf("list (by name, case-insensitive): %+v %v", list, err)
	}
	// Replacing keeps the id; a name is unique whatever its case.
	renamed := w.saveSet(jsapi.SaveMcpToolSetDto{ID: &coding.ID, Name: "Code", Tools: []string{}})
	if renamed.ID != coding.ID || renamed.Name != "Code" {
		t.Fatalf("replaced %+v", renamed)
	}
	if _, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "ARCHIVE", Tools: []string{}}); domain.CodeOf(err) != CodeToolSetNameTaken || domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("a second ARCHIVE: %v", err)
	}
	if _, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{ID: &coding.ID, Name: "code", Tools: []string{}}); err != nil {
		t.Fatalf("a set renamed to its own name in another case: %v", err)
	}
	missing := string(domain.NewToolSetID())
	if _, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{ID: &missing, Name: "x", Tools: []string{}}); domain.CodeOf(err) != CodeToolSetNotFound {
		t.Fatalf("save of an unknown id: %v", err)
	}
	zero := 0
	if _, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "x", Tools: []string{}, ResultInlineCharLimit: &zero}); domain.CodeOf(err) != "mcp.tool_set_result_inline_char_limit_invalid" {
		t.Fatalf("limit 0: %v", err)
	}
	if _, err := w.svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{ToolSetID: &missing}); domain.KindOf(err) != domain.KindNotFound {
		t.Fatalf("listing with an unknown set: %v", err)
	}
	// A damaged file is a storage issue; saving over it is refused, removing it works.
	path := w.store.ToolSetPath(domain.ToolSetID(coding.ID))
	os.WriteFile(path, []byte(`{"schemaVersion":1}`), 0o600)
	if list, _ := w.svc.ListToolSets(ctx); len(list.ToolSets) != 1 || len(list.StorageIssues) != 1 || list.StorageIssues[0].FileName != "tool-sets/"+coding.ID+".json" {
		t.Fatalf("damaged: %+v", list)
	}
	if _, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{ID: &coding.ID, Name: "Code", Tools: []string{}}); domain.CodeOf(err) != CodeToolSetUnreadable {
		t.Fatalf("save over a damaged file: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"schemaVersion":1}` {
		t.Fatal("the damaged file was overwritten")
	}
	if err := w.svc.RemoveToolSet(ctx, jsapi.McpToolSetIdDto{ID: coding.ID}); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.RemoveToolSet(ctx, jsapi.McpToolSetIdDto{ID: coding.ID}); domain.CodeOf(err) != CodeToolSetNotFound {
		t.Fatalf("second removal: %v", err)
	}
	if err := w.svc.RemoveToolSet(ctx, jsapi.McpToolSetIdDto{ID: "x"}); domain.CodeOf(err) != "mcp.tool_set_id_invalid" {
		t.Fatalf("bad id: %v", err)
	}
	// Without a store the commands say so.
	bare := New(Config{Registrations: w.store.Store, Catalogs: w.store})
	if _, err := bare.ListToolSets(ctx); domain.CodeOf(err) != CodeToolSetsUnavailable {
		t.Fatalf("no store: %v", err)
	}
}

// A set offers exactly what it selects, in its order, with Off tools and
// paused, removed or unreadable servers left out and diagnosed; overrides
// take the set's text over the registration's over the server's (reference
// §5.2, field by field).
func TestToolSetResolution(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gh := w.named("GitHub", "search", "issue", "pr", "secret")
	web := w.named("web", "fetch", "bad_schema")
	paused := w.named("paused", "x")
	for _, n := range []string{"search", "issue", "pr", "gone"} { // gone: allowed, not in the catalog
		w.permit(gh, n, jsapi.PermissionAllow)
	}
	w.permit(web, "fetch", jsapi.PermissionAsk)
	w.permit(paused, "x", jsapi.PermissionAllow)
	w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: paused, State: jsapi.StatePaused})
	regDesc, setDesc := "registration's search", "the set's search"
	w.svc.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: gh, NativeName: "search",
		Override: &jsapi.ToolDescriptionOverride{Description: &regDesc, Properties: map[string]string{"q": "registration's q"}}})
	w.svc.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: gh, NativeName: "issue",
		Override: &jsapi.ToolDescriptionOverride{Properties: map[string]string{"q": "registration's issue q"}}})
	removed := domain.NewRegistrationID().String()
	badSchema := "mcp/" + web + ":bad_schema"
	w.permit(web, "bad_schema", jsapi.PermissionAllow)
	r, _, _ := w.store.Load(domain.RegistrationID(web))
	d := "raw fetch"
	w.store.SaveCatalog(r.ID, r.Endpoint, domain.Catalog{ProtocolVersion: "2025-11-25", Tools: []domain.Tool{
		{NativeName: "fetch", Description: &d, InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{}`)},
		{NativeName: "bad_schema", InputSchema: json.RawMessage(`{"properties":{}}`), Annotations: json.RawMessage(`{}`)},
	}})
	issueID := "mcp/" + gh + ":issue"
	set := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "Coding", Tools: []string{
		"mcp/" + web + ":fetch",
		"mcp/" + gh + ":search",
		"mcp/" + gh + ":secret", // Off
		"mcp/" + gh + ":*",      // the rest of GitHub's allowed tools, in ToolId order; search only once
		"mcp/" + paused + ":x",
		"mcp/" + removed + ":*",
		"mcp/" + gh + ":gone", // not in the catalog (its server's * said so first)
		badSchema,
	}, DescriptionOverrides: &map[string]jsapi.ToolDescriptionOverride{
		"mcp/" + gh + ":search": {Description: &setDesc}, // the set's description, the registration's property
		issueID:                 {Properties: map[string]string{"q": "the set's issue q"}},
	}})
	l := w.setTools(set.ID)
	want := []string{"mcp/" + web + ":fetch", "mcp/" + gh + ":search", issueID, "mcp/" + gh + ":pr"}
	if !slices.Equal(toolIDs(l), want) {
		t.Fatalf("tools %v\nwant %v", toolIDs(l), want)
	}
	search, issue := l.Tools[1], l.Tools[2]
	if *search.Description != setDesc || !strings.Contains(string(search.InputSchema), `"registration's q"`) {
		t.Fatalf("search: set over registration: %s %s", *search.Description, search.InputSchema)
	}
	if *issue.Description != "raw issue" || !strings.Contains(string(issue.InputSchema), `"the set's issue q"`) {
		t.Fatalf("issue: raw description, the set's property: %s %s", *issue.Description, issue.InputSchema)
	}
	if pr := l.Tools[3]; *pr.Description != "raw pr" || !strings.Contains(string(pr.InputSchema), `"raw q"`) {
		t.Fatalf("pr raw: %+v", pr)
	}
	wantDiags := []string{
		CodeToolPermissionOff + " mcp/" + gh + ":secret",
		CodeToolNotInCachedCatalog + " mcp/" + gh + ":gone", // from GitHub's *, once
		CodeServerPaused + " mcp/" + paused + ":x",
		CodeRegistrationNotFound + " mcp/" + removed + ":*",
		CodeModelInputSchemaUnsupported + " " + badSchema,
	}
	if !slices.Equal(diagsOf(l), wantDiags) {
		t.Fatalf("diagnostics %v\nwant %v", diagsOf(l), wantDiags)
	}
	// The listing without a set is upstream's, unchanged: every permitted
	// tool with the registration's overrides, by server name.
	all := w.legacyTools()
	if got := toolIDs(all); len(got) != 4 || got[2] != "mcp/"+gh+":search" || *all.Tools[2].Description != regDesc {
		t.Fatalf("no set: %v", got)
	}
	// A tool allowed later joins the set through its server's "*"; one set
	// Off leaves it, and so does the pause of its server.
	w.permit(gh, "secret", jsapi.PermissionAsk)
	if l := w.setTools(set.ID); !slices.Contains(toolIDs(l), "mcp/"+gh+":secret") || slices.Contains(diagsOf(l), CodeToolPermissionOff+" mcp/"+gh+":secret") {
		t.Fatalf("secret allowed: %v %v", toolIDs(l), diagsOf(l))
	}
	w.permit(gh, "pr", jsapi.PermissionOff)
	if l := w.setTools(set.ID); slices.Contains(toolIDs(l), "mcp/"+gh+":pr") {
		t.Fatalf("pr Off is offered: %v", toolIDs(l))
	}
	w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: gh, State: jsapi.StatePaused})
	if l := w.setTools(set.ID); !slices.Equal(toolIDs(l), []string{"mcp/" + web + ":fetch"}) {
		t.Fatalf("GitHub paused: %v %v", toolIDs(l), diagsOf(l))
	}
	// A set override that does not fit the tool drops it with a diagnostic.
	bogus := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "bogus", Tools: []string{"mcp/" + web + ":fetch"},
		DescriptionOverrides: &map[string]jsapi.ToolDescriptionOverride{"mcp/" + web + ":fetch": {Properties: map[string]string{"nope": "x"}}}})
	if l := w.setTools(bogus.ID); len(l.Tools) != 0 || !slices.Equal(diagsOf(l), []string{CodeToolSetOverrideBad + " mcp/" + web + ":fetch"}) {
		t.Fatalf("bogus override: %v %v", toolIDs(l), diagsOf(l))
	}
}

// Removing a server leaves the sets that name it alone (they get a
// diagnostic), and nothing of a set reaches TauriTavern's files.
func TestToolSetsLeaveUpstreamFilesAlone(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gh := w.named("GitHub", "search")
	w.permit(gh, "search", jsapi.PermissionAllow)
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, dir := range []string{"registrations", "catalogs"} {
			entries, _ := os.ReadDir(filepath.Join(w.root, "_tauritavern", "mcp", dir))
			for _, e := range entries {
				data, _ := os.ReadFile(filepath.Join(w.root, "_tauritavern", "mcp", dir, e.Name()))
				out[dir+"/"+e.Name()] = string(data)
			}
		}
		return out
	}
	before := snapshot()
	set := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "Coding", Tools: []string{"mcp/" + gh + ":search"},
		DescriptionOverrides: &map[string]jsapi.ToolDescriptionOverride{"mcp/" + gh + ":search": {Description: new(string)}}})
	w.setTools(set.ID)
	w.saveSet(jsapi.SaveMcpToolSetDto{ID: &set.ID, Name: "Coding", Tools: []string{"mcp/" + gh + ":*"}})
	after := snapshot()
	if len(before) != 2 || len(after) != len(before) {
		t.Fatalf("files %v → %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed:\n%s\n→\n%s", k, v, after[k])
		}
	}
	if err := w.svc.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: gh}); err != nil {
		t.Fatal(err)
	}
	l := w.setTools(set.ID)
	if len(l.Tools) != 0 || !slices.Equal(diagsOf(l), []string{CodeRegistrationNotFound + " mcp/" + gh + ":*"}) {
		t.Fatalf("after removal: %v %v", toolIDs(l), diagsOf(l))
	}
	if list, _ := w.svc.ListToolSets(ctx); len(list.ToolSets) != 1 || list.ToolSets[0].Tools[0] != "mcp/"+gh+":*" {
		t.Fatalf("the set changed with the removal: %+v", list)
	}
}

func ptrTo[T any](v T) *T { return &v }
