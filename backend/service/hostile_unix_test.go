//go:build linux || darwin

package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/hang"
	"github.com/ttmcp/ttmcp/jsapi"
)

// A FIFO, a device or a directory where a registration or its catalog
// belongs is an error for the command that names it, at once, and never
// stalls the others (issue 9: a FIFO used to hold the mutation lock
// forever).
func TestDamagedFilesNeverStallCommands(t *testing.T) {
	ctx := context.Background()
	// What each is refused as: /dev/zero is outside the data root, so a
	// link to it is refused before it is seen to be a device (issue 27).
	refused := map[string]string{"fifo": "not a regular file", "device": "leads out of the data root", "directory": "not a regular file"}
	for kind, plant := range map[string]func(path string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"device":    func(p string) error { return os.Symlink("/dev/zero", p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		t.Run(kind, func(t *testing.T) {
			s, store := newService(t)
			good := create(t, s)
			const id = "30000000-0000-4000-8000-000000000001"
			path := store.RegistrationPath(id)
			if err := plant(path); err != nil {
				t.Fatal(err)
			}
			err := hang.Within(t, "set_mcp_server_state on a "+kind, 20*time.Second, func() error {
				_, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: jsapi.StateActive})
				return err
			})
			if err == nil || domain.CodeOf(err) != CodeRegistrationUnavailable || !strings.Contains(err.Error(), refused[kind]) {
				t.Fatalf("SetState = %v; want %s saying it is %s", err, CodeRegistrationUnavailable, refused[kind])
			}
			hang.Within(t, "create beside it", 20*time.Second, func() error { create(t, s); return nil })
			list := hang.Within(t, "list", 20*time.Second, func() jsapi.McpServerList {
				l, err := s.List(ctx)
				if err != nil {
					t.Error(err)
				}
				return l
			})
			if len(list.Servers) != 2 || len(list.StorageIssues) != 1 || list.StorageIssues[0].FileName != id+".json" {
				t.Fatalf("list = %+v; want two servers and the %s as an issue", list, kind)
			}

			// The same at the catalog of an active registration.
			if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: good.ID, State: jsapi.StateActive}); err != nil {
				t.Fatal(err)
			}
			cpath := store.CatalogPath(domain.RegistrationID(good.ID))
			if err := os.MkdirAll(filepath.Dir(cpath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(cpath); err != nil {
				t.Fatal(err)
			}
			err = hang.Within(t, "discover over a "+kind+" catalog", 20*time.Second, func() error {
				_, err := s.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: good.ID})
				return err
			})
			if err == nil || !strings.Contains(err.Error(), refused[kind]) {
				t.Fatalf("Discover = %v; want the catalog reported", err)
			}
		})
	}
}

// A change that would make the registration file too large to read back
// is the caller's BadRequest, and nothing changes.
func TestOversizedRegistrationIsRefused(t *testing.T) {
	ctx := context.Background()
	s, store := newService(t)
	srv := create(t, s)
	before, _ := os.ReadFile(store.RegistrationPath(domain.RegistrationID(srv.ID)))
	_, err := s.SetDescriptionOverride(ctx, jsapi.SetMcpToolDescriptionOverrideDto{RegistrationID: srv.ID, NativeName: "t",
		Override: &jsapi.ToolDescriptionOverride{Description: ptr(strings.Repeat("d", 2<<20)), Properties: map[string]string{}}})
	if domain.KindOf(err) != domain.KindBadRequest || !strings.Contains(err.Error(), "mcp.registration_too_large") {
		t.Fatalf("SetDescriptionOverride(2 MiB) = %v; want a BadRequest mcp.registration_too_large", err)
	}
	if after, _ := os.ReadFile(store.RegistrationPath(domain.RegistrationID(srv.ID))); string(after) != string(before) {
		t.Fatal("the file changed")
	}
}
