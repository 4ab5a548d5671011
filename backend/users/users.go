// Package users gives every SillyTavern user their own ttmcp: a data root
// per user, and over it a stack of its own — storage, gateway, service and
// the server's Commands — opened on the user's first request, closed when
// idle, reopened on demand (issue 28, item 6).
//
// It is presentation-level wiring, as `ttmcp serve`'s was for its one
// root: it composes the adapters, the service and the server's commands,
// and holds no use case. Nothing below it knows there are users: each
// user's Service is an ordinary Service over an ordinary TauriTavern-shaped
// data root, so one user's registrations, catalogs, tool sets, sign-ins,
// results, extension store, audit log, events and stdio processes cannot
// reach another's — there is no shared id space to leak from.
//
// The default user (SillyTavern's `default-user`, the only one when user
// accounts are off) and the direct path keep the data root itself,
// exactly as before; another user's root is
// <dataRoot>/_ttmcp/users/<handle>/ (docs/FILES.md).
package users

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// DefaultUser is SillyTavern's user when user accounts are off (and its
// first user when they are on): served from the data root itself. The
// name is jsapi's, which the server's trust check uses too.
const DefaultUser = jsapi.DefaultUser

// UsersDir is where the other users' data roots live, inside the data
// root: a folder of ttmcp's own, beside TauriTavern's `_tauritavern`.
const UsersDir = "_ttmcp/users"

// Codes of the users component's refusals.
const (
	// CodeUserInvalid: the handle is not one SillyTavern can make.
	CodeUserInvalid = "mcp.user_invalid"
	// CodeUsersBusy: as many users' stacks are open as allowed, and every
	// one is in use.
	CodeUsersBusy = "mcp.users_busy"
	// CodeUserUnavailable: the user's data root cannot be created.
	CodeUserUnavailable = "mcp.user_root_unavailable"
	// CodeUsersClosed: the backend is shutting down.
	CodeUsersClosed = "mcp.users_closed"
)

// handleRule is SillyTavern 1.18.0's rule for a user handle: what its
// slugify (src/endpoints/users-admin.js, the only way a handle is made)
// can return — lower case ASCII letters and digits, every run of anything
// else one hyphen, none leading or trailing. SillyTavern sets no length;
// the handle names a folder (data/<handle>/ there, users/<handle>/ here),
// so a file name's 255 bytes bound it.
var handleRule = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

const maxHandle = 255

// CheckHandle refuses anything that is not a SillyTavern user handle,
// before it becomes a path.
func CheckHandle(handle string) error {
	if len(handle) > maxHandle || !handleRule.MatchString(handle) {
		return domain.Errorf(domain.KindBadRequest, CodeUserInvalid,
			"%q is not a SillyTavern user handle (lower case letters, digits and single inner hyphens, at most %d characters)", clip(handle), maxHandle)
	}
	return nil
}

// clip keeps an error message short when a handle is long.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Root returns handle's data root: dataRoot itself for DefaultUser, else
// <dataRoot>/_ttmcp/users/<handle>. A handle CheckHandle refuses is an
// error.
func Root(dataRoot, handle string) (string, error) {
	if err := CheckHandle(handle); err != nil {
		return "", err
	}
	if handle == DefaultUser {
		return dataRoot, nil
	}
	return filepath.Join(dataRoot, filepath.FromSlash(UsersDir), handle), nil
}

// MakeRoot returns handle's data root (Root), creating it when it is
// another user's and absent; the default user's is the data root itself,
// which is never created here (a missing one holds nothing yet, as
// before).
func MakeRoot(dataRoot, handle string) (string, error) {
	root, err := Root(dataRoot, handle)
	if err != nil {
		return "", err
	}
	return root, makeRoot(handle, root)
}

func makeRoot(handle, root string) error {
	if handle == DefaultUser {
		return nil
	}
	// ttmcp's own folders: owner-only, as the data they hold.
	if err := os.MkdirAll(root, 0o700); err != nil {
		return domain.Errorf(domain.KindUnavailable, CodeUserUnavailable, "cannot create the data root of SillyTavern user %s: %v", handle, err)
	}
	return nil
}

// Handles returns the users that have a data root: DefaultUser first, then
// every folder of users/ whose name is a handle, sorted. Anything else
// there (a file, a folder with another name) is not a user and is left as
// it is.
func Handles(dataRoot string) ([]string, error) {
	out := []string{DefaultUser}
	entries, err := os.ReadDir(filepath.Join(dataRoot, filepath.FromSlash(UsersDir)))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != DefaultUser && CheckHandle(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out[1:])
	return out, nil
}

// Config configures Users.
type Config struct {
	// DataRoot is the data root: the default user's, and the parent of the
	// others'.
	DataRoot string
	// Gateway is the base of every stack's gateway configuration; its
	// Auths, Changed and Log are set per stack.
	Gateway gateway.Config
	// RedirectURL is the sign-in redirect URI each service gives
	// authorization servers.
	RedirectURL string
	// Log receives operational messages (each stack's with its user); nil
	// discards.
	Log *slog.Logger
	// MaxOpen bounds the users' stacks open at once, the default user's
	// not counted (default 32).
	MaxOpen int
	// IdleAfter is how long a stack no page watches stays open after its
	// last use (default 15 minutes: longer than a pending sign-in lives,
	// so a sign-in finished in its window after the page closed still
	// finds its flow).
	IdleAfter time.Duration
	// EvictAfter is how long after its last use a stack no page watches
	// may be closed early, to make room for another user when MaxOpen are
	// open (default 1 minute: longer than the server takes from asking
	// for a user's commands to watching them).
	EvictAfter time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// stack is one data root's storage, gateway, service and commands.
type stack struct {
	handle string
	root   string
	log    *slog.Logger
	gw     *gateway.Gateway
	svc    *service.Service
	cmds   *server.Commands
}

// openStack wires one data root, as `ttmcp serve` did for its one: the
// temporary files of interrupted writes are swept first (this is the
// root's start-up), then storage, the gateway (which tells the service of
// the list changes its live connections hear) and the service.
func openStack(cfg Config, handle, root string) (*stack, error) {
	log := cfg.Log
	if handle != DefaultUser {
		log = log.With("user", handle)
	}
	if err := makeRoot(handle, root); err != nil {
		return nil, err
	}
	RemoveLeftovers(root, log)
	store := storage.Open(root)
	var svc *service.Service
	gc := cfg.Gateway
	gc.Log, gc.Auths = log, store
	gc.Changed = func(c domain.ListChange) { svc.ListChanged(c) }
	gw := gateway.New(gc)
	svc = service.New(service.Config{
		Registrations:  store.Registry(), // registration files and stdio servers
		Catalogs:       store,
		Gateway:        gw,
		Processes:      gw,
		Audit:          storage.OpenAuditLog(root, storage.AuditOptions{}),
		ExtensionStore: storage.OpenExtensionStore(root),
		ToolSets:       store,
		Results:        storage.OpenResultStore(root, storage.ResultOptions{}),
		Capabilities:   store,
		Log:            log,
		RedirectURL:    cfg.RedirectURL,
	})
	return &stack{handle: handle, root: root, log: log, gw: gw, svc: svc, cmds: server.NewCommands(svc, log)}, nil
}

// close stops the stack: its live connections, the clean-ups of its last
// sessions, its kept connections, and every stdio server's whole process
// tree (waited for).
func (s *stack) close() {
	s.gw.Close()
	s.log.Info("stdio servers stopped")
}

// RemoveLeftovers removes the temporary files of writes a crash or a
// kill -9 interrupted under root (storage.RemoveLeftovers): ttmcp's own
// whenever no live process holds their lock, however young (a restart
// right after a kill -9 finds them), upstream's when older than
// storage.LeftoverMinAge, since those of a TauriTavern sharing the data
// root are not locked.
func RemoveLeftovers(root string, log *slog.Logger) {
	removed, err := storage.RemoveLeftovers(root, storage.LeftoverMinAge)
	for _, path := range removed {
		log.Info("removed the temporary file of an interrupted write", "path", path)
	}
	if err != nil {
		log.Warn("cannot remove the temporary files of interrupted writes", "err", err)
	}
}
