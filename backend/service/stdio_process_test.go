//go:build unix

package service

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

func TestMain(m *testing.M) {
	stdiotest.RunIfChild()
	os.Exit(m.Run())
}

// A stdio server goes through the same use cases as a remote one: it is
// discovered (the catalog file bound to its stdio: endpoint), test-called,
// offered to the model once allowed and called by it, every call in the
// audit log; pausing it stops its process.
func TestStdioUsedLikeARemoteServer(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 10 * time.Second, CallWait: 5 * time.Second, StdioStopGrace: 200 * time.Millisecond})
	t.Cleanup(func() { gw.Close() })
	audit := storage.OpenAuditLog(root, storage.AuditOptions{})
	s := New(Config{Registrations: store.Registry(), Catalogs: store, Gateway: gw, Processes: gw, Audit: audit})
	ctx := context.Background()

	added, err := s.AddStdio(ctx, "local tools", stdiotest.Stdio(t, "tools", dir))
	if err != nil {
		t.Fatal(err)
	}
	id := string(added.ID)
	if _, err := s.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); domain.CodeOf(err) != CodeServerPaused {
		t.Fatalf("discovery of a paused stdio server: %v", err)
	}
	if n := len(stdiotest.Pids(t, dir, "tools")); n != 0 {
		t.Fatal("a paused server was started")
	}
	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "active"}); err != nil {
		t.Fatal(err)
	}
	disc, err := s.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.Tools) != 9 || disc.Tools[0].ID != "mcp/"+id+":big" {
		t.Fatalf("%+v", disc.Tools)
	}
	r, _, _ := store.LoadStdio(added.ID)
	if _, found, err := store.LoadCatalog(added.ID, r.Endpoint); err != nil || !found {
		t.Fatalf("catalog file: %v %v", found, err)
	}
	if st, _ := s.StdioStatus(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); st.State != "running" {
		t.Fatalf("status: %+v", st)
	}

	if _, err := s.StartTestCall(ctx, jsapi.McpTestCallIdDto{CallID: "t1"}); err != nil {
		t.Fatal(err)
	}
	o, err := s.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "t1", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{"n":9007199254740993}`})
	if r, ok := o.Response.(*jsapi.McpToolResult); err != nil || !ok || r.TextBlocks[0].Text != `{"n":9007199254740993}` {
		t.Fatalf("test call: %+v %v", o, err)
	}

	if _, err := s.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: "echo", Permission: "allow"}); err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{})
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].ToolID != "mcp/"+id+":echo" || tools.Tools[0].ServerDisplayName != "local tools" {
		t.Fatalf("model tools: %+v %v", tools, err)
	}
	if _, err := s.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: "m1"}); err != nil {
		t.Fatal(err)
	}
	o, err = s.CallLegacyTool(ctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m1", ToolID: "mcp/" + id + ":echo", ArgumentsJSON: `{"q":"hi"}`})
	if r, ok := o.Response.(*jsapi.McpToolResult); err != nil || !ok || r.TextBlocks[0].Text != `{"q":"hi"}` {
		t.Fatalf("model call: %+v %v", o, err)
	}
	entries, err := s.ListAudit(ctx, jsapi.McpAuditListDto{RegistrationID: &id})
	if err != nil || len(entries.Entries) != 2 || entries.Entries[0].Source != "model" || entries.Entries[1].Source != "test" ||
		entries.Entries[0].ServerDisplayName != "local tools" {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	pids := stdiotest.Pids(t, dir, "tools")
	if len(pids) != 1 {
		t.Fatalf("%d processes for one server", len(pids))
	}

	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "paused"}); err != nil {
		t.Fatal(err)
	}
	stdiotest.WaitGone(t, pids...)
	if _, err := s.StartTestCall(ctx, jsapi.McpTestCallIdDto{CallID: "t2"}); err != nil {
		t.Fatal(err)
	}
	if o, _ := s.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "t2", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{}`}); o.Code != CodeCallServerPaused {
		t.Fatalf("test call while paused: %+v", o)
	}
	if n := len(stdiotest.Pids(t, dir, "tools")); n != 1 {
		t.Fatal("a paused server was started again")
	}

	// Removed while running: the process goes with it.
	s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "active"})
	if _, err := s.Refresh(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	pids = stdiotest.Pids(t, dir, "tools")
	if err := s.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	stdiotest.WaitGone(t, pids...)
}

// A start failure reaches the page as the discovery error and the test
// call's not_sent outcome, with the process's stderr, and stays in the
// status until a start succeeds.
func TestStdioFailureReachesThePage(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 10 * time.Second})
	t.Cleanup(func() { gw.Close() })
	s := New(Config{Registrations: store.Registry(), Catalogs: store, Gateway: gw, Processes: gw})
	ctx := context.Background()
	added, err := s.AddStdio(ctx, "broken", stdiotest.Stdio(t, "exit", dir))
	if err != nil {
		t.Fatal(err)
	}
	id := string(added.ID)
	s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "active"})
	_, err = s.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
	if domain.CodeOf(err) != gateway.CodeStdioExitedAtStart || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("discover: %v", err)
	}
	st, err := s.StdioStatus(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id})
	if err != nil || st.State != "stopped" || st.LastExit == nil || st.LastExit.Code != gateway.CodeStdioExitedAtStart ||
		len(st.LastExit.Stderr) != 1 || !strings.HasPrefix(st.LastExit.Stderr[0], "boom") || st.LastExit.Time == "" {
		t.Fatalf("status: %+v %v", st, err)
	}
	s.StartTestCall(ctx, jsapi.McpTestCallIdDto{CallID: "c"})
	o, _ := s.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "c", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{}`})
	if o.Outcome != jsapi.OutcomeNotSent || o.Code != gateway.CodeStdioExitedAtStart {
		t.Fatalf("test call: %+v", o)
	}
}

// `ttmcp stdio remove` while the backend runs the server: the backend's
// next list stops the process (it would stop when idle anyway).
func TestStdioRemovedByTheCLIWhileRunning(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 10 * time.Second, StdioStopGrace: 200 * time.Millisecond})
	t.Cleanup(func() { gw.Close() })
	backend := New(Config{Registrations: store.Registry(), Catalogs: store, Gateway: gw, Processes: gw})
	cli := New(Config{Registrations: store.Registry(), Catalogs: store})
	ctx := context.Background()
	added, err := cli.AddStdio(ctx, "local", stdiotest.Stdio(t, "tools", dir))
	if err != nil {
		t.Fatal(err)
	}
	backend.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: string(added.ID), State: "active"})
	if _, err := backend.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: string(added.ID)}); err != nil {
		t.Fatal(err)
	}
	pids := stdiotest.Pids(t, dir, "tools")
	if _, err := cli.RemoveStdio(ctx, "local"); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.List(ctx); err != nil {
		t.Fatal(err)
	}
	stdiotest.WaitGone(t, pids...)
}
