package service

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

func (w *world) legacyTools() jsapi.LegacyMcpToolList {
	w.t.Helper()
	l, err := w.svc.ListLegacyTools(context.Background(), jsapi.ListLegacyMcpToolsDto{})
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

func (w *world) permit(id, name, p string) {
	w.t.Helper()
	if _, err := w.svc.SetPermission(context.Background(), jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: name, Permission: p}); err != nil {
		w.t.Fatal(err)
	}
}

func diagCodes(l jsapi.LegacyMcpToolList) []string {
	var out []string
	for _, d := range l.Diagnostics {
		out = append(out, d.Code)
	}
	slices.Sort(out)
	return out
}

// Registrations with nothing permitted, or paused, are never looked at:
// no catalog is needed and nothing reaches a server.
func TestModelToolsSkipUnpermittedRegistrations(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	w.register(srv.URL, true) // active, nothing permitted
	p := w.register(srv.URL, false)
	w.permit(p, "a", jsapi.PermissionAllow) // permitted, paused
	if l := w.legacyTools(); len(l.Tools) != 0 || len(l.Diagnostics) != 0 {
		t.Fatalf("%+v", l)
	}
	if srv.lists.Load() != 0 {
		t.Fatal("the model tool list reached a server")
	}
}

// Only cached catalogs are used, and one registration's problem never
// hides another's tools (reference §9.2 model_catalog_*).
func TestModelToolsAreCachedOnlyAndLocalizeFailures(t *testing.T) {
	srv := newMCPServer(t, "search")
	w := newWorld(t)
	ctx := context.Background()

	healthy := w.register(srv.URL, true)
	w.permit(healthy, "search", jsapi.PermissionAsk)
	w.permit(healthy, "scalar", jsapi.PermissionAllow)
	w.permit(healthy, "removed", jsapi.PermissionAllow)
	w.permit(healthy, "off_tool", jsapi.PermissionAllow)
	w.permit(healthy, "off_tool", jsapi.PermissionOff)
	text := "  Search\tverbatim "
	w.svc.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: healthy, NativeName: "search",
		Override: &jsapi.ToolDescriptionOverride{Description: &text, Properties: map[string]string{"q": "the query"}}})
	// The healthy registration's catalog, as discovery would have saved it.
	r, _, _ := w.store.Load(domain.RegistrationID(healthy))
	desc := "raw"
	err := w.store.SaveCatalog(r.ID, r.Endpoint, domain.Catalog{ProtocolVersion: "2025-11-25", Tools: []domain.Tool{
		{NativeName: "off_tool", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{}`)},
		{NativeName: "scalar", InputSchema: json.RawMessage(`{"properties":{}}`), Annotations: json.RawMessage(`{}`)},
		{NativeName: "search", Description: &desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Annotations: json.RawMessage(`{}`)},
	}, Diagnostics: []domain.Diagnostic{{Code: domain.CodeToolDuplicateName, NativeName: ptr("twin"), Message: "twins"}}})
	if err != nil {
		t.Fatal(err)
	}

	corrupt := w.register(srv.URL, true)
	w.permit(corrupt, "x", jsapi.PermissionAllow)
	os.MkdirAll(strings.TrimSuffix(w.store.CatalogPath(domain.RegistrationID(corrupt)), corrupt+".json"), 0o755)
	os.WriteFile(w.store.CatalogPath(domain.RegistrationID(corrupt)), []byte(`{"schemaVersion":2}`), 0o600)
	uncached := w.register(srv.URL, true)
	w.permit(uncached, "x", jsapi.PermissionAllow)
	os.WriteFile(w.store.RegistrationPath(domain.NewRegistrationID()), []byte("{"), 0o600)

	l := w.legacyTools()
	if len(l.Tools) != 1 {
		t.Fatalf("tools %+v", l.Tools)
	}
	got := l.Tools[0]
	if got.ToolID != "mcp/"+healthy+":search" || got.NativeName != "search" || got.ServerDisplayName != "fixture" ||
		*got.Description != text || string(got.InputSchema) != `{"properties":{"q":{"description":"the query","type":"string"}},"type":"object"}` {
		t.Fatalf("tool %+v %s", got, got.InputSchema)
	}
	want := []string{CodeCatalogNotCached, CodeCatalogSnapshotInvalid, CodeModelInputSchemaUnsupported, CodeRegistrationStorageIssue,
		domain.CodeToolDuplicateName, CodeToolNotInCachedCatalog}
	slices.Sort(want)
	if !slices.Equal(diagCodes(l), want) {
		t.Fatalf("diagnostics %+v", l.Diagnostics)
	}
	for _, d := range l.Diagnostics {
		if d.Code == domain.CodeToolDuplicateName && (d.ToolID == nil || *d.ToolID != "mcp/"+healthy+":twin") {
			t.Errorf("discovery diagnostic without its tool id: %+v", d)
		}
	}
	if srv.lists.Load() != 0 {
		t.Fatal("the model tool list reached a server")
	}
	// The catalog itself is not changed by the override.
	res, _ := w.discover(healthy)
	for _, tool := range res.Tools {
		if tool.NativeName == "search" && (*tool.Description != "raw" || strings.Contains(string(tool.InputSchema), "the query")) {
			t.Fatalf("the Manager sees the override: %+v", tool)
		}
	}
}

func ptr(s string) *string { return &s }

func (w *world) legacyCall(callID, toolID, args string) jsapi.McpCallOutcome {
	w.t.Helper()
	o, err := w.svc.CallLegacyTool(context.Background(), jsapi.CallLegacyMcpToolDto{ExecutionCallID: callID, ToolID: toolID, ArgumentsJSON: args})
	if err != nil {
		w.t.Fatal(err)
	}
	return o
}

// Model calls re-check the permission and keep the arguments exact
// (reference §9.2 legacy_call_*).
func TestLegacyCallGateAndArguments(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	tool := "mcp/" + id + ":echo"
	start := func(callID string) {
		if _, err := w.svc.StartLegacyCall(context.Background(), jsapi.McpExecutionCallIdDto{ExecutionCallID: callID}); err != nil {
			t.Fatal(err)
		}
	}
	if o := w.legacyCall("unstarted", tool, "{}"); o.Code != CodeCallNotStarted {
		t.Fatalf("unstarted: %+v", o)
	}
	start("off")
	if o := w.legacyCall("off", tool, "{}"); o.Outcome != jsapi.OutcomeNotSent || o.Code != CodeCallPermissionOff {
		t.Fatalf("off: %+v", o)
	}
	w.permit(id, "echo", jsapi.PermissionAsk)
	for _, tt := range []struct{ args, code string }{
		{"{", CodeCallArgumentsInvalidJSON},
		{"[]", CodeCallArgumentsNotObject},
		{`{"a":"` + strings.Repeat("x", domain.MaxArgumentsBytes) + `"}`, CodeCallArgumentsSizeLimit},
	} {
		start("bad")
		if o := w.legacyCall("bad", tool, tt.args); o.Code != tt.code {
			t.Fatalf("%.20s: %+v", tt.args, o)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("a refused call reached the server")
	}
	start("empty")
	o := w.legacyCall("empty", tool, "")
	if r, ok := o.Response.(*jsapi.McpToolResult); !ok || r.TextBlocks[0].Text != "{}" {
		t.Fatalf("empty arguments: %+v", o)
	}
	start("big")
	o = w.legacyCall("big", tool, `{"n":9007199254740993}`)
	if r, ok := o.Response.(*jsapi.McpToolResult); !ok || !strings.Contains(r.TextBlocks[0].Text, "9007199254740993") {
		t.Fatalf("big integer: %+v", o)
	}
	w.svc.SetState(context.Background(), jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StatePaused})
	start("paused")
	if o := w.legacyCall("paused", tool, "{}"); o.Code != CodeCallServerPaused || !strings.Contains(o.Message, "fixture") {
		t.Fatalf("paused: %+v", o)
	}
	os.WriteFile(w.store.RegistrationPath(domain.RegistrationID(id)), []byte("{"), 0o600)
	start("broken")
	if o := w.legacyCall("broken", tool, "{}"); o.Code != CodeCallRegistrationUnavailable {
		t.Fatalf("unreadable registration: %+v", o)
	}
	start("badid")
	if _, err := w.svc.CallLegacyTool(context.Background(), jsapi.CallLegacyMcpToolDto{ExecutionCallID: "badid", ToolID: "nope", ArgumentsJSON: "{}"}); domain.KindOf(err) != domain.KindBadRequest {
		t.Fatalf("bad tool id: %v", err)
	}
	// Upstream order: not-JSON arguments before the tool id, the tool id
	// before a non-object.
	start("order1")
	if o := w.legacyCall("order1", "nope", "{"); o.Code != CodeCallArgumentsInvalidJSON {
		t.Fatalf("invalid JSON with a bad tool id: %+v", o)
	}
	start("order2")
	if _, err := w.svc.CallLegacyTool(context.Background(), jsapi.CallLegacyMcpToolDto{ExecutionCallID: "order2", ToolID: "nope", ArgumentsJSON: "[]"}); domain.KindOf(err) != domain.KindBadRequest {
		t.Fatalf("an array with a bad tool id: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d calls reached the server, want 2", calls.Load())
	}
}

func TestRootIsObject(t *testing.T) {
	for _, tt := range []struct {
		schema string
		want   bool
	}{
		{`{"type":"object"}`, true},
		{` { "properties" : {"type":{"type":"string"}} , "type" : "object" , "x": [1, {"type":"array"}] } `, true},
		{`{"type":"obj\u0065ct"}`, true},
		{`{}`, false},
		{`{"type":"Object"}`, false},
		{`{"type":["object"]}`, false},
		{`{"type":{"const":"object"}}`, false},
		{`{"properties":{"type":"object"}}`, false},
		{`{"type":"object","type":"object"}`, false},
		{`[]`, false},
		{`"object"`, false},
		{`{"type":"object"`, false},
		{``, false},
	} {
		if got := rootIsObject(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("rootIsObject(%s) = %v; want %v", tt.schema, got, tt.want)
		}
	}
}

// A denial names the tool as the model knows it: its title in the
// published catalog, else its native name (no catalog, a registration
// that cannot be read), never the ToolId.
func TestLegacyDenialNamesTheTool(t *testing.T) {
	w := newWorld(t)
	id := w.register(readableServer(t), true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	w.permit(id, "page", jsapi.PermissionAsk)
	w.restart() // the catalog is read from its file, not a warm cache
	denied := "denied"
	deny := func(toolID string) jsapi.McpCallOutcome {
		t.Helper()
		callID := "c-" + strconv.Itoa(int(w.calls.Add(1)))
		w.svc.StartLegacyCall(context.Background(), jsapi.McpExecutionCallIdDto{ExecutionCallID: callID})
		o, err := w.svc.CallLegacyTool(context.Background(), jsapi.CallLegacyMcpToolDto{ExecutionCallID: callID, ToolID: toolID, ArgumentsJSON: "{}", Approval: &denied})
		if err != nil {
			t.Fatal(err)
		}
		if o.Outcome != jsapi.OutcomeNotSent || o.Code != CodeCallDeniedByUser {
			t.Fatalf("%s: %+v", toolID, o)
		}
		return o
	}
	for _, tt := range []struct{ toolID, want string }{
		{"mcp/" + id + ":page", "The user denied the call to MCP tool `Fetch page`; it was not sent"},
		{"mcp/" + id + ":issue", "The user denied the call to MCP tool `issue`; it was not sent"},
		{"mcp/" + string(domain.NewRegistrationID()) + ":gone", "The user denied the call to MCP tool `gone`; it was not sent"},
	} {
		if o := deny(tt.toolID); o.Message != tt.want {
			t.Errorf("%s: %q, want %q", tt.toolID, o.Message, tt.want)
		}
	}
}
