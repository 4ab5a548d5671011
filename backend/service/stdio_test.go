package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// stopRecorder is a Processes that records the stops it is asked for.
type stopRecorder struct {
	mu    sync.Mutex
	stops []string
}

func (p *stopRecorder) StdioStatus(id domain.RegistrationID) domain.ProcessStatus {
	return domain.ProcessStatus{State: domain.ProcessRunning, LastExit: &domain.ProcessExit{Code: "mcp.stdio_process_exited", Message: "m", Stderr: []string{"oops"}}}
}

func (p *stopRecorder) StopStdio(id domain.RegistrationID, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stops = append(p.stops, string(id)+" "+why)
}

func (p *stopRecorder) RunningStdio() []domain.RegistrationID { return nil }

func (p *stopRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.stops)
}

func stdioService(t *testing.T) (*Service, *storage.Store, *stopRecorder) {
	t.Helper()
	store := storage.Open(t.TempDir())
	procs := &stopRecorder{}
	return New(Config{Registrations: store.Registry(), Catalogs: store, Processes: procs}), store, procs
}

var everything = domain.Stdio{
	Command: "npx",
	Args:    []string{"-y", "@modelcontextprotocol/server-everything"},
	Env:     map[string]string{"API_KEY": "very-secret-value"},
}

// A stdio server added by the CLI is paused, kept in its own file, and
// listed with its command line and the names (never the values) of its
// environment.
func TestAddStdioAndList(t *testing.T) {
	s, store, _ := stdioService(t)
	ctx := context.Background()
	added, err := s.AddStdio(ctx, " everything ", everything)
	if err != nil {
		t.Fatal(err)
	}
	if added.DisplayName != "everything" || added.State != domain.StatePaused {
		t.Fatalf("%+v", added)
	}
	if _, err := os.Stat(store.StdioPath(added.ID)); err != nil {
		t.Fatal("not in a stdio file:", err)
	}
	if _, err := os.Stat(store.RegistrationPath(added.ID)); !os.IsNotExist(err) {
		t.Fatal("written as a TauriTavern registration file")
	}
	if _, err := s.AddStdio(ctx, "everything", domain.Stdio{Command: "other"}); domain.CodeOf(err) != CodeStdioNameTaken {
		t.Fatalf("same name: %v", err)
	}
	remote := create(t, s)
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Servers) != 2 {
		t.Fatalf("%+v", list)
	}
	var got jsapi.McpServer
	for _, srv := range list.Servers {
		if srv.ID == string(added.ID) {
			got = srv
		} else if srv.Transport != "" || srv.Stdio != nil {
			t.Fatalf("remote server with stdio members: %+v", srv)
		}
	}
	want := jsapi.McpServer{
		ID: string(added.ID), DisplayName: "everything", Endpoint: "stdio:npx -y @modelcontextprotocol/server-everything",
		Headers: map[string]string{}, ProtocolVersion: "auto", State: "paused",
		ToolPermissions: map[string]string{}, ToolDescriptionOverrides: map[string]jsapi.ToolDescriptionOverride{},
		Transport: "stdio",
		Stdio: &jsapi.McpStdioConfig{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, EnvNames: []string{"API_KEY"},
			CommandLine: "npx -y @modelcontextprotocol/server-everything"},
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Fatalf("listed\n%s\nwant\n%s", a, b)
	}
	if strings.Contains(string(a), "very-secret-value") {
		t.Fatal("an environment value reached the page")
	}
	// The remote server's JSON is exactly upstream's: no new members.
	r, _ := json.Marshal(remote)
	if strings.Contains(string(r), "transport") || strings.Contains(string(r), "stdio") {
		t.Fatalf("remote server: %s", r)
	}
	servers, issues, err := s.ListStdio(ctx)
	if err != nil || len(servers) != 1 || servers[0].ID != added.ID || len(issues) != 0 {
		t.Fatalf("ListStdio: %+v %+v %v", servers, issues, err)
	}
}

// What a page may do to a stdio server: rename it (sending back what the
// list shows), activate, pause, set permissions and overrides, remove it.
// Nothing changes how it starts; pausing and removing stop its process.
func TestStdioFromThePage(t *testing.T) {
	s, store, procs := stdioService(t)
	ctx := context.Background()
	added, err := s.AddStdio(ctx, "everything", everything)
	if err != nil {
		t.Fatal(err)
	}
	id := string(added.ID)
	update := jsapi.UpdateMcpServerDto{RegistrationID: id, DisplayName: "Everything!", Endpoint: "stdio:npx -y @modelcontextprotocol/server-everything",
		Headers: map[string]string{}, ProtocolVersion: "auto"}
	renamed, err := s.Update(ctx, update)
	if err != nil || renamed.DisplayName != "Everything!" || renamed.Stdio == nil {
		t.Fatalf("rename: %+v %v", renamed, err)
	}
	refused := []func(*jsapi.UpdateMcpServerDto){
		func(d *jsapi.UpdateMcpServerDto) { d.Endpoint = "http://127.0.0.1:9/mcp" },
		func(d *jsapi.UpdateMcpServerDto) { d.Endpoint = "stdio:sh -c 'rm -rf ~'" },
		func(d *jsapi.UpdateMcpServerDto) { d.Headers = map[string]string{"x": "y"} },
		func(d *jsapi.UpdateMcpServerDto) { d.ProtocolVersion = "2025-06-18" },
	}
	for i, change := range refused {
		d := update
		change(&d)
		_, err := s.Update(ctx, d)
		if domain.CodeOf(err) != domain.CodeStdioConfigReadOnly || domain.KindOf(err) != domain.KindBadRequest || !strings.Contains(err.Error(), "ttmcp stdio add") {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	// A remote server cannot become a stdio one, nor can one be created.
	remote := create(t, s)
	if _, err := s.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: remote.ID, DisplayName: "x", Endpoint: "stdio:/bin/sh", Headers: map[string]string{}, ProtocolVersion: "auto"}); domain.CodeOf(err) != domain.CodeStdioConfigReadOnly {
		t.Fatalf("remote to stdio: %v", err)
	}
	if _, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "x", Endpoint: " stdio:/bin/sh"}); domain.CodeOf(err) != domain.CodeStdioConfigReadOnly {
		t.Fatalf("create stdio: %v", err)
	}
	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "active"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: "echo", Permission: "allow"}); err != nil {
		t.Fatal(err)
	}
	d := "Say it back"
	if _, err := s.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: id, NativeName: "echo", Override: &jsapi.ToolDescriptionOverride{Description: &d, Properties: map[string]string{}}}); err != nil {
		t.Fatal(err)
	}
	r, found, err := store.LoadStdio(added.ID)
	if err != nil || !found || !r.Stdio.Equal(everything) || r.State != domain.StateActive || r.PermissionFor("echo") != domain.PermissionAllow || r.DisplayName != "Everything!" {
		t.Fatalf("stored: %+v %v %v", r, found, err)
	}
	if len(procs.seen()) != 0 {
		t.Fatalf("stopped while active: %v", procs.seen())
	}
	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "paused"}); err != nil {
		t.Fatal(err)
	}
	if got := procs.seen(); !slices.Equal(got, []string{id + " paused"}) {
		t.Fatalf("stops after pause: %v", got)
	}
	st, err := s.StdioStatus(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
	if err != nil || st.State != "running" || st.LastExit == nil || st.LastExit.Code != "mcp.stdio_process_exited" || !slices.Equal(st.LastExit.Stderr, []string{"oops"}) {
		t.Fatalf("status: %+v %v", st, err)
	}
	if _, err := s.StdioStatus(ctx, jsapi.McpRegistrationIdDto{RegistrationID: remote.ID}); domain.CodeOf(err) != CodeNotStdio {
		t.Fatalf("status of a remote server: %v", err)
	}
	catalog := plantCatalog(t, store, id)
	if err := s.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.StdioPath(added.ID)); !os.IsNotExist(err) {
		t.Fatal("stdio file kept")
	}
	if _, err := os.Stat(catalog); !os.IsNotExist(err) {
		t.Fatal("catalog kept")
	}
	if got := procs.seen(); !slices.Equal(got, []string{id + " paused", id + " removed"}) {
		t.Fatalf("stops after removal: %v", got)
	}
}

// `ttmcp stdio remove` by name or id.
func TestRemoveStdio(t *testing.T) {
	s, _, _ := stdioService(t)
	ctx := context.Background()
	a, _ := s.AddStdio(ctx, "a", domain.Stdio{Command: "a"})
	b, _ := s.AddStdio(ctx, "b", domain.Stdio{Command: "b"})
	create(t, s) // a remote server is never removed by these
	if got, err := s.RemoveStdio(ctx, "a"); err != nil || got.ID != a.ID {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := s.RemoveStdio(ctx, string(b.ID)); err != nil || got.ID != b.ID {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := s.RemoveStdio(ctx, "a"); domain.CodeOf(err) != CodeStdioNotFound {
		t.Fatalf("%v", err)
	}
	if _, err := s.RemoveStdio(ctx, "Search"); domain.CodeOf(err) != CodeStdioNotFound {
		t.Fatalf("removed a remote server by name: %v", err)
	}
	if list, _ := s.List(ctx); len(list.Servers) != 1 {
		t.Fatalf("%+v", list)
	}
}

func TestParseStdioImport(t *testing.T) {
	base := filepath.Join(string(filepath.Separator), "home", "me")
	data := `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
    "memory": {"type": "stdio", "command": "uvx", "args": ["mcp-memory"], "env": {"TOKEN": "t"}, "cwd": "work", "disabled": false, "autoApprove": []},
    "exa": {"url": "https://mcp.exa.ai/mcp", "headers": {"x": "y"}},
    "legacy-sse": {"type": "sse", "command": "x"}
  },
  "globalShortcut": "Ctrl+Space"
}`
	im, err := ParseStdioImport([]byte(data), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Servers) != 2 || im.Servers[0].Name != "filesystem" || im.Servers[1].Name != "memory" {
		t.Fatalf("%+v", im.Servers)
	}
	if !im.Servers[0].Stdio.Equal(domain.Stdio{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}) {
		t.Fatalf("%+v", im.Servers[0].Stdio)
	}
	if m := im.Servers[1].Stdio; m.Cwd != filepath.Join(base, "work") || m.Env["TOKEN"] != "t" {
		t.Fatalf("%+v", m)
	}
	wantNotes := []string{
		"skipped `exa`: it is a remote server (url); add it in the Manager",
		"skipped `legacy-sse`: its type `sse` is not stdio",
		"`memory`: ignored `autoApprove`, `disabled`",
	}
	if !slices.Equal(im.Notes, wantNotes) {
		t.Fatalf("notes\n%q\nwant\n%q", im.Notes, wantNotes)
	}
	// VS Code's "servers".
	if im, err := ParseStdioImport([]byte(`{"servers":{"x":{"type":"stdio","command":"srv"}}}`), base); err != nil || len(im.Servers) != 1 {
		t.Fatalf("%+v %v", im, err)
	}
	bad := []string{
		`[]`,
		`{"mcpServers": []}`,
		`{"other": {}}`,
		`{"mcpServers": {"x": "npx"}}`,
		`{"mcpServers": {"x": {"command": ""}}}`,
		`{"mcpServers": {"x": {"command": "a", "args": "-y"}}}`,
		`{"mcpServers": {"x": {"command": "a", "env": {"A=B": "c"}}}}`,
		`{"mcpServers": {" ": {"command": "a"}}}`,
		`{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}`,
	}
	for _, b := range bad {
		if _, err := ParseStdioImport([]byte(b), base); domain.CodeOf(err) != CodeStdioImportInvalid {
			t.Errorf("%s: %v", b, err)
		}
	}
}

func TestImportStdio(t *testing.T) {
	s, _, _ := stdioService(t)
	ctx := context.Background()
	if _, err := s.AddStdio(ctx, "memory", domain.Stdio{Command: "old"}); err != nil {
		t.Fatal(err)
	}
	im, err := ParseStdioImport([]byte(`{"mcpServers":{"memory":{"command":"new"},"fs":{"command":"fs"}}}`), "/")
	if err != nil {
		t.Fatal(err)
	}
	added, notes, err := s.ImportStdio(ctx, im)
	if err != nil || len(added) != 1 || added[0].DisplayName != "fs" || added[0].State != domain.StatePaused {
		t.Fatalf("%+v %v", added, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "skipped `memory`") {
		t.Fatalf("%q", notes)
	}
	servers, _, _ := s.ListStdio(ctx)
	if len(servers) != 2 || servers[1].DisplayName != "memory" || servers[1].Stdio.Command != "old" {
		t.Fatalf("%+v", servers)
	}
}

// `ttmcp stdio add` and `remove`, run while the backend runs (another
// process over the same data root), are seen by the backend's next list;
// so is a damaged stdio file.
func TestCLIChangesSeenByTheRunningBackend(t *testing.T) {
	store := storage.Open(t.TempDir())
	backend := New(Config{Registrations: store.Registry(), Catalogs: store})
	cli := New(Config{Registrations: store.Registry(), Catalogs: store})
	ctx := context.Background()
	list := func() jsapi.McpServerList {
		t.Helper()
		l, err := backend.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	create(t, backend)
	if l := list(); len(l.Servers) != 1 {
		t.Fatalf("%+v", l)
	}
	added, err := cli.AddStdio(ctx, "everything", everything)
	if err != nil {
		t.Fatal(err)
	}
	if l := list(); len(l.Servers) != 2 || l.Servers[1].ID != string(added.ID) || l.Servers[1].Stdio == nil {
		t.Fatalf("after add: %+v", l)
	}
	os.WriteFile(store.StdioPath(domain.RegistrationID("550e8400-e29b-41d4-a716-446655440000")), []byte("{}"), 0o600)
	if l := list(); len(l.StorageIssues) != 1 || l.StorageIssues[0].FileName != "stdio/550e8400-e29b-41d4-a716-446655440000.json" {
		t.Fatalf("damaged file: %+v", l.StorageIssues)
	}
	if _, err := cli.RemoveStdio(ctx, "everything"); err != nil {
		t.Fatal(err)
	}
	if l := list(); len(l.Servers) != 1 {
		t.Fatalf("after remove: %+v", l)
	}
}

// AddStdioAs keeps the id it is given (the CLI's copy for another
// SillyTavern user) and refuses one the data root already uses, for a
// stdio server or a remote registration.
func TestAddStdioAs(t *testing.T) {
	s, store, _ := stdioService(t)
	ctx := context.Background()
	id := domain.NewRegistrationID()
	got, err := s.AddStdioAs(ctx, id, "shared", everything)
	if err != nil || got.ID != id {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := os.Stat(store.StdioPath(id)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddStdioAs(ctx, id, "other name", everything); domain.CodeOf(err) != CodeStdioIDTaken {
		t.Fatalf("the same id again: %v", err)
	}
	remote := create(t, s)
	if _, err := s.AddStdioAs(ctx, domain.RegistrationID(remote.ID), "third", everything); domain.CodeOf(err) != CodeStdioIDTaken {
		t.Fatalf("a remote registration's id: %v", err)
	}
	if _, err := s.AddStdioAs(ctx, "../x", "fourth", everything); err == nil {
		t.Fatal("a path as an id")
	}
}
