package service

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// countingCatalogs counts the catalog files read.
type countingCatalogs struct {
	*storage.Store
	loads atomic.Int32
}

func (c *countingCatalogs) LoadCatalog(id domain.RegistrationID, ep domain.Endpoint) (domain.Catalog, bool, error) {
	c.loads.Add(1)
	return c.Store.LoadCatalog(id, ep)
}

func encodeJSON(v any) ([]byte, error) { return json.Marshal(v) }

// A root's listing is served from what the backend holds: after a restart
// each catalog file is read once (and published, as discovery's disk hit
// does), and while nothing changes every root gets the same encoded
// answer. Each kind of change is seen by the next root.
func TestModelToolListingIsKept(t *testing.T) {
	srv := newMCPServer(t, "search", "fetch")
	w := newWorld(t)
	ctx := context.Background()
	a := w.register(srv.URL, true)
	b := w.register(srv.URL, true)
	for _, id := range []string{a, b} {
		if _, err := w.discover(id); err != nil {
			t.Fatal(err)
		}
		w.permit(id, "search", jsapi.PermissionAllow)
	}
	// A fresh process over the same files.
	counting := &countingCatalogs{Store: storage.Open(w.root)}
	svc := New(Config{Registrations: counting.Store, Catalogs: counting, Gateway: gateway.New(gateway.Config{}), ToolSets: counting.Store})
	// Files written in the last 3 s are read again by every list (the
	// view's "racy" rule); this clock is past that.
	svc.view.now = func() time.Time { return time.Now().Add(time.Minute) }
	list := func() []byte {
		t.Helper()
		enc, err := svc.ListLegacyToolsEncoded(ctx, jsapi.ListLegacyMcpToolsDto{}, encodeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	first := list()
	if n := counting.loads.Load(); n != 2 {
		t.Fatalf("%d catalog files read by the first root, want 2", n)
	}
	second := list()
	if counting.loads.Load() != 2 || &first[0] != &second[0] {
		t.Fatalf("the second root read %d files again, or encoded anew", counting.loads.Load()-2)
	}
	var l jsapi.LegacyMcpToolList
	json.Unmarshal(second, &l)
	if len(l.Tools) != 2 {
		t.Fatalf("tools %s", second)
	}
	// A set's listing comes from the same kept resolutions.
	set, err := svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "one", Tools: []string{"mcp/" + a + ":search"}})
	if err != nil {
		t.Fatal(err)
	}
	if sl, err := svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{ToolSetID: &set.ID}); err != nil || len(sl.Tools) != 1 || counting.loads.Load() != 2 {
		t.Fatalf("set: %+v %v, %d loads", sl, err, counting.loads.Load())
	}

	// A permission change (the registration file) is seen by the next root.
	if _, err := svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: a, NativeName: "fetch", Permission: jsapi.PermissionAsk}); err != nil {
		t.Fatal(err)
	}
	third := list()
	json.Unmarshal(third, &l)
	if len(l.Tools) != 3 || counting.loads.Load() != 2 {
		t.Fatalf("after the permission: %d tools, %d loads", len(l.Tools), counting.loads.Load())
	}
	// A refresh that publishes another catalog is seen too.
	srv.tools.Store(&[]string{"search", "fetch", "new"})
	if _, err := svc.Refresh(ctx, jsapi.McpRegistrationIdDto{RegistrationID: a}); err != nil {
		t.Fatal(err)
	}
	svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: b, NativeName: "new", Permission: jsapi.PermissionAllow})
	json.Unmarshal(list(), &l)
	if len(l.Tools) != 3 || !slices.ContainsFunc(l.Diagnostics, func(d jsapi.LegacyMcpDiagnostic) bool { return d.Code == CodeToolNotInCachedCatalog }) {
		t.Fatalf("after b's new permission (b not refreshed): %+v", l)
	}
	svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: a, NativeName: "new", Permission: jsapi.PermissionAllow})
	json.Unmarshal(list(), &l)
	if !slices.ContainsFunc(l.Tools, func(t jsapi.LegacyMcpTool) bool { return t.ToolID == "mcp/"+a+":new" }) {
		t.Fatalf("a's refreshed tool is not offered: %+v", l.Tools)
	}
	// Pausing and removing.
	svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: b, State: jsapi.StatePaused})
	svc.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: a})
	json.Unmarshal(list(), &l)
	if len(l.Tools) != 0 || len(l.Diagnostics) != 0 {
		t.Fatalf("after pause and removal: %+v", l)
	}
	svc.models.mu.Lock()
	_, kept := svc.models.servers[domain.RegistrationID(a)]
	svc.models.mu.Unlock()
	if kept {
		t.Fatal("the removed server's resolution is still kept")
	}
}

// While a discovery holds a registration's lock, a root reads its file
// without publishing it (and keeps nothing of it); the next root, with the
// lock free, publishes.
func TestModelToolListingDuringADiscovery(t *testing.T) {
	srv := newMCPServer(t, "search")
	w := newWorld(t)
	ctx := context.Background()
	a := w.register(srv.URL, true)
	w.discover(a)
	w.permit(a, "search", jsapi.PermissionAllow)
	w.restart()
	lock := w.svc.cache.entry(domain.RegistrationID(a)).lock
	lock <- struct{}{} // a discovery runs
	l, err := w.svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{})
	if err != nil || len(l.Tools) != 1 {
		t.Fatalf("%+v %v", l, err)
	}
	if w.svc.cache.published(mustLoad(t, w, a)) != nil || len(w.svc.models.servers) != 0 {
		t.Fatal("published or kept while a discovery held the lock")
	}
	<-lock
	w.legacyTools()
	if w.svc.cache.published(mustLoad(t, w, a)) == nil {
		t.Fatal("not published with the lock free")
	}
}

func mustLoad(t *testing.T, w *world, id string) domain.Registration {
	t.Helper()
	r, ok, err := w.store.Load(domain.RegistrationID(id))
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	return r
}
