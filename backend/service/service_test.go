package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

func newService(t *testing.T) (*Service, *storage.Store) {
	t.Helper()
	store := storage.Open(t.TempDir())
	return New(Config{Registrations: store, Catalogs: store}), store
}

func create(t *testing.T, s *Service) jsapi.McpServer {
	t.Helper()
	srv, err := s.Create(context.Background(), jsapi.CreateMcpServerDto{DisplayName: "Search", Endpoint: "http://127.0.0.1:9/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// plantCatalog puts a file where the registration's catalog lives, so the
// test can see whether the service deleted it.
func plantCatalog(t *testing.T, store *storage.Store, id string) string {
	t.Helper()
	path := store.CatalogPath(domain.RegistrationID(id))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUpdateInvalidatesTheCatalogOnlyWhenTheConnectionChanges(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*jsapi.UpdateMcpServerDto)
		invalidates bool
	}{
		{"name only", func(d *jsapi.UpdateMcpServerDto) { d.DisplayName = "Renamed" }, false},
		{"same endpoint spelled differently", func(d *jsapi.UpdateMcpServerDto) { d.Endpoint = " HTTP://127.0.0.1:9/mcp " }, false},
		{"endpoint", func(d *jsapi.UpdateMcpServerDto) { d.Endpoint = "http://127.0.0.1:10/mcp" }, true},
		{"headers", func(d *jsapi.UpdateMcpServerDto) { d.Headers = map[string]string{"X-Key": "1"} }, true},
		{"protocol", func(d *jsapi.UpdateMcpServerDto) { d.ProtocolVersion = jsapi.Protocol20250618 }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, store := newService(t)
			srv := create(t, s)
			catalog := plantCatalog(t, store, srv.ID)
			dto := jsapi.UpdateMcpServerDto{RegistrationID: srv.ID, DisplayName: srv.DisplayName, Endpoint: srv.Endpoint, Headers: map[string]string{}, ProtocolVersion: srv.ProtocolVersion}
			tt.edit(&dto)
			if _, err := s.Update(context.Background(), dto); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(catalog)
			if gone := os.IsNotExist(err); gone != tt.invalidates {
				t.Fatalf("catalog deleted = %v, want %v", gone, tt.invalidates)
			}
		})
	}
}

func TestUpdateKeepsIdentityStateAndSettings(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	srv := create(t, s)
	s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
	s.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "search", Permission: jsapi.PermissionAsk})
	got, err := s.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: srv.ID, DisplayName: " New ", Endpoint: "https://user:pw@example.com/mcp?tenant=one",
		Headers: map[string]string{"X-Key": " v "}, ProtocolVersion: jsapi.Protocol20251125})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != srv.ID || got.State != jsapi.StateActive || got.ToolPermissions["search"] != jsapi.PermissionAsk ||
		got.DisplayName != "New" || got.Endpoint != "https://user:pw@example.com/mcp?tenant=one" || got.Headers["X-Key"] != " v " {
		t.Fatalf("updated = %+v", got)
	}
}

func TestRemoveDeletesRegistrationAndCatalog(t *testing.T) {
	s, store := newService(t)
	srv := create(t, s)
	catalog := plantCatalog(t, store, srv.ID)
	if err := s.Remove(context.Background(), jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{catalog, store.RegistrationPath(domain.RegistrationID(srv.ID))} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still there (%v)", p, err)
		}
	}
	err := s.Remove(context.Background(), jsapi.McpRegistrationIdDto{RegistrationID: srv.ID})
	if domain.KindOf(err) != domain.KindNotFound || domain.CodeOf(err) != CodeRegistrationNotFound {
		t.Fatalf("second remove: %v", err)
	}
}

func TestRemoveSucceedsWhenTheCatalogCannotBeDeleted(t *testing.T) {
	s, store := newService(t)
	srv := create(t, s)
	// A non-empty directory where the catalog file should be cannot be removed.
	dir := store.CatalogPath(domain.RegistrationID(srv.ID))
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(context.Background(), jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(context.Background())
	if err != nil || len(list.Servers) != 0 {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

// Concurrent read-modify-writes of one registration must not lose updates.
func TestMutationsAreSerialised(t *testing.T) {
	s, _ := newService(t)
	srv := create(t, s)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.SetPermission(context.Background(), jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: fmt.Sprint("tool", i), Permission: jsapi.PermissionAllow})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(list.Servers[0].ToolPermissions); got != n {
		t.Fatalf("%d permissions survived, want %d", got, n)
	}
}

func TestCancelledCallerDoesNotWaitForTheLock(t *testing.T) {
	s, _ := newService(t)
	srv := create(t, s)
	unlock, err := s.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
	if domain.CodeOf(err) != jsapi.CodeRequestCancelled {
		t.Fatalf("err = %v", err)
	}
}
