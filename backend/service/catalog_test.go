package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// mcpServer is a real go-sdk server (legacy, stateful) with the named
// tools. It counts tools/list requests and keeps the headers it saw.
type mcpServer struct {
	URL     string
	lists   atomic.Int32
	mu      sync.Mutex
	headers []http.Header
	tools   atomic.Pointer[[]string] // names served; changeable between discoveries
	down    atomic.Bool              // answer 503 to everything
	// listing, when set, is told of each tools/list and holds it until
	// the test sends on the channel it was given.
	listing chan chan struct{}
}

func newMCPServer(t *testing.T, tools ...string) *mcpServer {
	t.Helper()
	m := &mcpServer{}
	m.tools.Store(&tools)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
		for _, name := range *m.tools.Load() {
			s.AddTool(&mcp.Tool{Name: name, Description: "does " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			m.lists.Add(1)
			if m.listing != nil {
				release := make(chan struct{})
				m.listing <- release
				<-release
			}
		}
		m.mu.Lock()
		m.headers = append(m.headers, r.Header.Clone())
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m.URL = ts.URL + "/mcp"
	return m
}

// faultyCatalogs is the real store whose saves can be made to fail, as a
// full or read-only disk would.
type faultyCatalogs struct {
	*storage.Store
	failSave atomic.Bool
}

func (f *faultyCatalogs) SaveCatalog(id domain.RegistrationID, ep domain.Endpoint, c domain.Catalog) error {
	if f.failSave.Load() {
		return errors.New("storage is read-only")
	}
	return f.Store.SaveCatalog(id, ep, c)
}

type world struct {
	t     *testing.T
	root  string
	store *faultyCatalogs
	audit *storage.AuditLog
	svc   *Service
	calls atomic.Int32 // call ids made by readableCall
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, root: t.TempDir()}
	w.restart()
	return w
}

// restart is a fresh process over the same data root: memory is empty.
func (w *world) restart() {
	w.store = &faultyCatalogs{Store: storage.Open(w.root)}
	w.audit = storage.OpenAuditLog(w.root, storage.AuditOptions{})
	w.svc = New(Config{Registrations: w.store.Store, Catalogs: w.store, Gateway: gateway.New(gateway.Config{}), Audit: w.audit, ToolSets: w.store.Store,
		Results: storage.OpenResultStore(w.root, storage.ResultOptions{})})
}

func (w *world) register(endpoint string, active bool) string {
	w.t.Helper()
	ctx := context.Background()
	srv, err := w.svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "fixture", Endpoint: endpoint})
	if err != nil {
		w.t.Fatal(err)
	}
	if active {
		if _, err := w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive}); err != nil {
			w.t.Fatal(err)
		}
	}
	return srv.ID
}

func (w *world) discover(id string) (jsapi.McpDiscoveryResult, error) {
	return w.svc.Discover(context.Background(), jsapi.McpRegistrationIdDto{RegistrationID: id})
}

func (w *world) refresh(id string) (jsapi.McpDiscoveryResult, error) {
	return w.svc.Refresh(context.Background(), jsapi.McpRegistrationIdDto{RegistrationID: id})
}

func toolNames(r jsapi.McpDiscoveryResult) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.NativeName)
	}
	return out
}

func TestDiscoveryKeepsAuthorityOffAndReportsStaleSettings(t *testing.T) {
	srv := newMCPServer(t, "search")
	w := newWorld(t)
	id := w.register(srv.URL, false)
	if _, err := w.discover(id); domain.CodeOf(err) != CodeServerPaused {
		t.Fatalf("paused discover: %v", err)
	}
	if srv.lists.Load() != 0 {
		t.Fatal("a paused registration reached its server")
	}
	ctx := context.Background()
	w.svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: "missing", Permission: jsapi.PermissionAllow})
	w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StateActive})
	res, err := w.discover(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].ID != "mcp/"+id+":search" || res.Tools[0].Permission != jsapi.PermissionOff {
		t.Fatalf("tools %+v", res.Tools)
	}
	if len(res.StaleTools) != 1 || res.StaleTools[0] != (jsapi.McpStaleTool{NativeName: "missing", Permission: "allow"}) {
		t.Fatalf("stale %+v", res.StaleTools)
	}
}

func TestDiscoverCachesAndRefreshGoesToTheNetwork(t *testing.T) {
	srv := newMCPServer(t, "a", "b")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	for range 3 {
		if res, err := w.discover(id); err != nil || !slices.Equal(toolNames(res), []string{"a", "b"}) {
			t.Fatalf("discover %v %v", toolNames(res), err)
		}
	}
	if n := srv.lists.Load(); n != 1 {
		t.Fatalf("%d tools/list for 3 discovers, want 1", n)
	}
	w.restart()
	if _, err := w.discover(id); err != nil || srv.lists.Load() != 1 {
		t.Fatalf("disk hit: %v, %d lists", err, srv.lists.Load())
	}
	srv.tools.Store(&[]string{"c"})
	res, err := w.refresh(id)
	if err != nil || !slices.Equal(toolNames(res), []string{"c"}) || srv.lists.Load() != 2 {
		t.Fatalf("refresh %v %v %d", toolNames(res), err, srv.lists.Load())
	}
	w.restart()
	if res, _ := w.discover(id); !slices.Equal(toolNames(res), []string{"c"}) {
		t.Fatalf("refresh was not persisted: %v", toolNames(res))
	}
}

func TestPausedRegistrationCannotReuseACachedCatalog(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	w.svc.SetState(context.Background(), jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StatePaused})
	for _, f := range []func(string) (jsapi.McpDiscoveryResult, error){w.discover, w.refresh} {
		if _, err := f(id); domain.CodeOf(err) != CodeServerPaused || domain.KindOf(err) != domain.KindConflict {
			t.Fatalf("paused: %v", err)
		}
	}
}

func TestConnectionUpdateInvalidatesTheCatalog(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	_, err := w.svc.Update(context.Background(), jsapi.UpdateMcpServerDto{RegistrationID: id, DisplayName: "x", Endpoint: srv.URL,
		Headers: map[string]string{"X-Key": "new"}, ProtocolVersion: jsapi.Protocol20250618})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.discover(id)
	if err != nil || srv.lists.Load() != 2 || res.ProtocolVersion != jsapi.Protocol20250618 {
		t.Fatalf("after update: %+v %v, %d lists", res, err, srv.lists.Load())
	}
	srv.mu.Lock()
	last := srv.headers[len(srv.headers)-1]
	srv.mu.Unlock()
	if last.Get("X-Key") != "new" {
		t.Fatalf("headers %v", last)
	}
}

func TestRefreshKeepsTheLiveCatalogWhenPersistenceFails(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	srv.tools.Store(&[]string{"b"})
	w.store.failSave.Store(true)
	res, err := w.refresh(id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(toolNames(res), []string{"b"}) || len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != CodeCatalogPersistenceFailed ||
		!strings.Contains(res.Diagnostics[0].Message, "storage is read-only") {
		t.Fatalf("memory-only refresh %+v", res)
	}
	if res, _ := w.discover(id); !slices.Equal(toolNames(res), []string{"b"}) || len(res.Diagnostics) != 1 {
		t.Fatalf("memory snapshot not kept: %+v", res)
	}
	w.restart() // memory gone: the old file is still there
	if res, err := w.discover(id); err != nil || !slices.Equal(toolNames(res), []string{"a"}) || len(res.Diagnostics) != 0 {
		t.Fatalf("disk after failed save: %+v %v", res, err)
	}
}

func TestFailedRefreshLeavesTheSnapshot(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	srv.down.Store(true)
	// The live connection's session is open: its tools/list fails.
	if _, err := w.refresh(id); domain.CodeOf(err) != gateway.CodeListFailed {
		t.Fatalf("refresh of a down server: %v", err)
	}
	if res, err := w.discover(id); err != nil || !slices.Equal(toolNames(res), []string{"a"}) {
		t.Fatalf("memory after a failed refresh: %+v %v", res, err)
	}
	w.restart()
	if res, err := w.discover(id); err != nil || !slices.Equal(toolNames(res), []string{"a"}) {
		t.Fatalf("disk after a failed refresh: %+v %v", res, err)
	}
}

func TestCorruptCatalogIsReportedAndRepairedByRefresh(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	path := w.store.CatalogPath(domain.RegistrationID(id))
	if err := os.WriteFile(path, []byte(`{"schemaVersion":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w.restart()
	if _, err := w.discover(id); err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Fatalf("corrupt file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"schemaVersion":2}` {
		t.Fatal("discover replaced a corrupt file")
	}
	if _, err := w.refresh(id); err != nil {
		t.Fatal(err)
	}
	w.restart()
	if res, err := w.discover(id); err != nil || !slices.Equal(toolNames(res), []string{"a"}) {
		t.Fatalf("after repair: %+v %v", res, err)
	}
}

// Concurrent discovers of one registration run one at a time: one network
// discovery, the others served from memory.
func TestConcurrentDiscoveriesDoNotRace(t *testing.T) {
	srv := newMCPServer(t, "a")
	w := newWorld(t)
	id := w.register(srv.URL, true)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := w.discover(id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := srv.lists.Load(); n != 1 {
		t.Fatalf("%d network discoveries, want 1", n)
	}
}

// A connection change during discovery makes the result stale: it is
// refused, and nothing is published or saved.
func TestUpdateDuringDiscoveryIsNotOverwritten(t *testing.T) {
	srv := newMCPServer(t, "a")
	srv.listing = make(chan chan struct{})
	w := newWorld(t)
	id := w.register(srv.URL, true)
	done := make(chan error, 1)
	go func() {
		_, err := w.discover(id)
		done <- err
	}()
	release := <-srv.listing // discovery is in tools/list
	_, err := w.svc.Update(context.Background(), jsapi.UpdateMcpServerDto{RegistrationID: id, DisplayName: "x", Endpoint: srv.URL,
		Headers: map[string]string{"X-Tenant": "two"}, ProtocolVersion: jsapi.ProtocolAuto})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; domain.CodeOf(err) != CodeRegistrationChanged {
		t.Fatalf("stale discovery: %v", err)
	}
	if _, err := os.Stat(w.store.CatalogPath(domain.RegistrationID(id))); !os.IsNotExist(err) {
		t.Fatalf("a stale catalog was saved (%v)", err)
	}
	go func() { close(<-srv.listing) }()
	if _, err := w.discover(id); err != nil || srv.lists.Load() != 2 {
		t.Fatalf("rediscovery: %v, %d lists", err, srv.lists.Load())
	}
}
