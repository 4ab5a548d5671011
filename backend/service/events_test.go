package service

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Issue 21's acceptance, below the page: a server that adds a tool and
// announces it has the new tool in its catalog — Off, with the old tools'
// permissions as they were — and the pages are told, without a refresh; a
// stored permission whose tool the server dropped is reported stale.
func TestAnnouncedChangeRefreshesTheCatalog(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		s := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
		noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}
		s.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, noop)
		s.AddTool(&mcp.Tool{Name: "gone", InputSchema: map[string]any{"type": "object"}}, noop)
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
		t.Cleanup(ts.Close)

		root := t.TempDir()
		store := storage.Open(root)
		var svc *Service
		gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CloseTimeout: time.Second,
			Changed: func(c domain.ListChange) { svc.ListChanged(c) }})
		t.Cleanup(func() { gw.Close() })
		svc = New(Config{Registrations: store, Catalogs: store, Gateway: gw})
		events := make(chan jsapi.Event, 8)
		defer svc.Watch(func(ev jsapi.Event) {
			if ch, _ := ev.Data.(jsapi.McpServerChange); !slices.Equal(ch.Lists, []string{jsapi.ListRegistration}) {
				events <- ev // the registration's own changes are TestRegistrationChangesAreTold's
			}
		})()

		ctx := context.Background()
		srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "changing", Endpoint: ts.URL})
		if err != nil {
			t.Fatal(err)
		}
		svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
		id := jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}
		if _, err := svc.Discover(ctx, id); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "gone"} {
			if _, err := svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: name, Permission: jsapi.PermissionAllow}); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for st, _ := svc.ConnectionStatus(ctx, id); !st.Following; st, _ = svc.ConnectionStatus(ctx, id) {
			if time.Now().After(deadline) {
				t.Fatalf("stateless=%v: the connection does not follow: %+v", stateless, st)
			}
			time.Sleep(5 * time.Millisecond)
		}

		s.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}}, noop)
		s.RemoveTools("gone")
		// Two changes, two notifications: the refresh that follows the
		// first may run before the second; the last one sees both.
		for done := false; !done; {
			var ev jsapi.Event
			select {
			case ev = <-events:
			case <-time.After(10 * time.Second):
				t.Fatalf("stateless=%v: no event with both changes", stateless)
			}
			if ch, ok := ev.Data.(jsapi.McpServerChange); ev.Event != jsapi.EventServersChanged || !ok || ch.RegistrationID != srv.ID || !slices.Contains(ch.Lists, "tools") {
				t.Fatalf("event %+v", ev)
			}
			res, err := svc.Discover(ctx, id) // from memory: what the refresh published
			if err != nil {
				t.Fatal(err)
			}
			perms := map[string]string{}
			for _, tool := range res.Tools {
				perms[tool.NativeName] = tool.Permission
			}
			if perms["a"] != "allow" || len(perms) > 3 {
				t.Fatalf("stateless=%v: after a change: %+v", stateless, perms)
			}
			done = perms["b"] == "off" && len(perms) == 2 && len(res.StaleTools) == 1 && res.StaleTools[0].NativeName == "gone"
		}
	}
}

// Every page is told when a registration is created, changed or removed —
// by any page, another tab, or a script calling api.mcp — so no Manager
// shows what it last read; a change that was refused tells nothing.
func TestRegistrationChangesAreTold(t *testing.T) {
	store := storage.Open(t.TempDir())
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{})})
	var told []jsapi.McpServerChange
	defer svc.Watch(func(ev jsapi.Event) {
		if ch, ok := ev.Data.(jsapi.McpServerChange); ok && ev.Event == jsapi.EventServersChanged {
			told = append(told, ch)
		}
	})()
	ctx := context.Background()
	srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "told", Endpoint: "http://127.0.0.1:9/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	id := jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}
	steps := []struct {
		name string
		do   func() error
	}{
		{"a permission", func() error {
			_, err := svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "a", Permission: jsapi.PermissionAllow})
			return err
		}},
		{"a description override", func() error {
			mine := "mine"
			_, err := svc.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: srv.ID, NativeName: "a", Override: &jsapi.ToolDescriptionOverride{Description: &mine}})
			return err
		}},
		{"a new name", func() error {
			_, err := svc.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: srv.ID, DisplayName: "renamed", Endpoint: srv.Endpoint, Headers: map[string]string{}, ProtocolVersion: jsapi.ProtocolAuto})
			return err
		}},
		{"the removal", func() error { return svc.Remove(ctx, id) }},
	}
	want := []jsapi.McpServerChange{{RegistrationID: srv.ID, Lists: []string{jsapi.ListRegistration}}}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		want = append(want, want[0])
		if !slices.EqualFunc(told, want, func(a, b jsapi.McpServerChange) bool {
			return a.RegistrationID == b.RegistrationID && slices.Equal(a.Lists, b.Lists)
		}) {
			t.Fatalf("after %s: told %+v", step.name, told)
		}
	}
	if _, err := svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "a", Permission: jsapi.PermissionAllow}); err == nil || len(told) != len(want) {
		t.Fatalf("a refused change: %v, told %+v", err, told)
	}
}

// A published discovery tells every page that the server's tools changed
// (another tab's Manager reads them again); one answered from what is kept
// tells nothing.
func TestPublishedDiscoveriesAreTold(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "told", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	store := storage.Open(t.TempDir())
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CloseTimeout: time.Second})
	t.Cleanup(func() { gw.Close() })
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gw})
	ctx := context.Background()
	srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "told", Endpoint: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive}); err != nil {
		t.Fatal(err)
	}
	var tools int
	defer svc.Watch(func(ev jsapi.Event) {
		if ch, _ := ev.Data.(jsapi.McpServerChange); ch.RegistrationID == srv.ID && slices.Equal(ch.Lists, []string{"tools"}) {
			tools++
		}
	})()
	id := jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}
	for _, step := range []struct {
		name string
		do   func(context.Context, jsapi.McpRegistrationIdDto) (jsapi.McpDiscoveryResult, error)
		want int
	}{
		{"the first discovery", svc.Discover, 1},
		{"a discovery from what is kept", svc.Discover, 1},
		{"a refresh", svc.Refresh, 2},
	} {
		if _, err := step.do(ctx, id); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if tools != step.want {
			t.Fatalf("after %s: told %d times, want %d", step.name, tools, step.want)
		}
	}
}

// Watching counts the watchers still registered.
func TestWatching(t *testing.T) {
	s, _ := newService(t)
	if s.Watching() != 0 {
		t.Fatal(s.Watching())
	}
	stop1 := s.Watch(func(jsapi.Event) {})
	stop2 := s.Watch(func(jsapi.Event) {})
	if s.Watching() != 2 {
		t.Fatal(s.Watching())
	}
	stop1()
	if s.Watching() != 1 {
		t.Fatal(s.Watching())
	}
	stop2()
	if s.Watching() != 0 {
		t.Fatal(s.Watching())
	}
}
