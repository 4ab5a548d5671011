package users

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/jsapi"
)

func TestCheckHandle(t *testing.T) {
	for _, h := range []string{"default-user", "alice", "a", "0", "a1-b2-c3", "user-2", strings.Repeat("a", 255)} {
		if err := CheckHandle(h); err != nil {
			t.Errorf("%q refused: %v", h, err)
		}
	}
	// What SillyTavern's slugify can never return, and paths.
	for _, h := range []string{"", "Alice", "-a", "a-", "a--b", "a_b", "a b", "a.b", ".", "..", "../x", "a/b", `a\b`, "é", "a\x00",
		"%2e%2e", strings.Repeat("a", 256), " alice"} {
		err := CheckHandle(h)
		if domain.CodeOf(err) != CodeUserInvalid {
			t.Errorf("%q: %v, want %s", h, err, CodeUserInvalid)
		}
		if _, err := Root("/data", h); err == nil {
			t.Errorf("Root(%q) succeeded", h)
		}
	}
}

func TestRoots(t *testing.T) {
	if got, _ := Root("/data", DefaultUser); got != "/data" {
		t.Errorf("default user's root %s", got)
	}
	if got, _ := Root("/data", "alice"); got != filepath.Join("/data", "_ttmcp", "users", "alice") {
		t.Errorf("alice's root %s", got)
	}
	root := t.TempDir()
	if hs, err := Handles(root); err != nil || len(hs) != 1 || hs[0] != DefaultUser {
		t.Fatalf("no users yet: %v %v", hs, err)
	}
	for _, h := range []string{"bob", "alice"} {
		if _, err := MakeRoot(root, h); err != nil {
			t.Fatal(err)
		}
	}
	users := filepath.Join(root, "_ttmcp", "users")
	os.Mkdir(filepath.Join(users, "Not-A-Handle"), 0o700)
	os.WriteFile(filepath.Join(users, "carol"), nil, 0o600) // a file, not a user
	hs, err := Handles(root)
	if err != nil || strings.Join(hs, ",") != "default-user,alice,bob" {
		t.Fatalf("handles %v %v", hs, err)
	}
	if fi, err := os.Stat(filepath.Join(users, "alice")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("alice's root: %v %v", fi, err)
	}
}

// The default user keeps the data root exactly: its commands are the
// direct path's, and serving it writes nothing of ttmcp's per-user layout.
func TestDefaultUserKeepsTheDataRoot(t *testing.T) {
	root := t.TempDir()
	u := openTestUsers(t, Config{DataRoot: root})
	c, err := u.ForUser(DefaultUser)
	if err != nil || c != u.Default() {
		t.Fatalf("ForUser(default-user) = %p, %v; Default() = %p", c, err, u.Default())
	}
	must(t, c, jsapi.CmdCreateServer, `{"dto":{"displayName":"mine","endpoint":"http://127.0.0.1:9/mcp"}}`)
	files, _ := filepath.Glob(filepath.Join(root, "_tauritavern", "mcp", "registrations", "*.json"))
	if len(files) != 1 {
		t.Fatalf("registrations %v", files)
	}
	if _, err := os.Stat(filepath.Join(root, "_ttmcp")); !os.IsNotExist(err) {
		t.Fatalf("_ttmcp exists: %v", err)
	}
	if _, err := u.ForUser("../x"); domain.CodeOf(err) != CodeUserInvalid {
		t.Fatalf("a path as a handle: %v", err)
	}
	if len(u.OpenUsers()) != 0 {
		t.Fatal(u.OpenUsers())
	}
}

// clock is a test's clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// runStdio activates and discovers a stdio server of handle's, which
// starts its process, and returns the process's pid.
func runStdio(t *testing.T, u *Users, handle, dir string) (domain.RegistrationID, int) {
	t.Helper()
	c := forUser(t, u, handle)
	id := u.addStdio(t, handle, "srv", stdiotest.Stdio(t, "tools", dir))
	must(t, c, jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+string(id)+`","state":"active"}}`)
	must(t, c, jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+string(id)+`"}}`)
	pids := stdiotest.Pids(t, dir, "tools")
	if len(pids) != 1 || !stdiotest.Alive(pids[0]) {
		t.Fatalf("pids %v", pids)
	}
	return id, pids[0]
}

// An idle stack (no page watching, unused for IdleAfter) is closed, its
// stdio process stopped; the next request opens it again over the same
// files. One a page watches stays open however long it is unused.
func TestIdleStacksCloseAndReopen(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	u := openTestUsers(t, Config{Now: clk.Now, IdleAfter: 10 * time.Minute})
	dir := t.TempDir()
	id, pid := runStdio(t, u, "alice", dir)
	first := forUser(t, u, "alice")

	stop := u.stackOf(t, "alice").svc.Watch(func(jsapi.Event) {}) // a page
	clk.add(time.Hour)
	if closed := u.CloseIdle(); len(closed) != 0 {
		t.Fatalf("closed %v while a page watches", closed)
	}
	stop() // the page went away: its idle time starts now, not at the last request
	clk.add(9 * time.Minute)
	if closed := u.CloseIdle(); len(closed) != 0 {
		t.Fatalf("closed %v 9 minutes after the page went", closed)
	}
	forUser(t, u, "alice") // used again: the wait starts over
	clk.add(9 * time.Minute)
	if closed := u.CloseIdle(); len(closed) != 0 {
		t.Fatalf("closed %v before IdleAfter", closed)
	}
	clk.add(time.Minute)
	if closed := u.CloseIdle(); len(closed) != 1 || closed[0] != "alice" {
		t.Fatalf("closed %v", closed)
	}
	u.WaitClosed()
	stdiotest.WaitGone(t, pid)
	if len(u.OpenUsers()) != 0 {
		t.Fatal(u.OpenUsers())
	}

	again := forUser(t, u, "alice")
	if again == first {
		t.Fatal("the closed stack's commands were handed out again")
	}
	list := must(t, again, jsapi.CmdListServers, `{}`)
	if !strings.Contains(list, string(id)) || !strings.Contains(list, `"state":"active"`) {
		t.Fatalf("reopened: %s", list)
	}
	must(t, again, jsapi.CmdRefreshTools, `{"dto":{"registrationId":"`+string(id)+`"}}`) // a new process
	if pids := stdiotest.Pids(t, dir, "tools"); len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
}

// MaxOpen bounds the users' stacks: a new user gets a stack no page
// watches and unused for EvictAfter closed for them, or is refused with
// mcp.users_busy when every open one is in use.
func TestMaxOpenUsers(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	u := openTestUsers(t, Config{Now: clk.Now, MaxOpen: 1, EvictAfter: time.Minute})
	_, pid := runStdio(t, u, "alice", t.TempDir())
	stop := u.stackOf(t, "alice").svc.Watch(func(jsapi.Event) {})
	clk.add(time.Hour)
	if _, err := u.ForUser("bob"); domain.CodeOf(err) != CodeUsersBusy || domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("bob while alice's page is open: %v", err)
	}
	stop()
	forUser(t, u, "alice") // just used
	if _, err := u.ForUser("bob"); domain.CodeOf(err) != CodeUsersBusy {
		t.Fatalf("bob while alice's stack was just used: %v", err)
	}
	clk.add(time.Minute)
	bob := forUser(t, u, "bob")
	must(t, bob, jsapi.CmdListServers, `{}`)
	u.WaitClosed()
	stdiotest.WaitGone(t, pid)
	if open := u.OpenUsers(); len(open) != 1 || open[0] != "bob" {
		t.Fatalf("open %v", open)
	}
	// the default user is never counted nor closed
	must(t, forUser(t, u, DefaultUser), jsapi.CmdListServers, `{}`)
}

// Close stops every user's stack and every stdio process tree, the
// default user's included, and refuses from then on.
func TestCloseStopsEveryUser(t *testing.T) {
	u, err := Open(Config{DataRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, h := range []string{DefaultUser, "alice", "bob"} {
		_, pid := runStdio(t, u, h, t.TempDir())
		pids = append(pids, pid)
	}
	u.stackOf(t, "alice").svc.Watch(func(jsapi.Event) {}) // a page still open
	u.Close()
	for _, pid := range pids {
		if stdiotest.Alive(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	if _, err := u.ForUser("carol"); domain.CodeOf(err) != CodeUsersClosed {
		t.Fatalf("after Close: %v", err)
	}
}

// Requests of one new user that arrive together share one stack.
func TestConcurrentFirstRequestsShareOneStack(t *testing.T) {
	u := openTestUsers(t, Config{})
	var wg sync.WaitGroup
	got := make([]*server.Commands, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := u.ForUser("alice")
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	for _, c := range got[1:] {
		if c != got[0] {
			t.Fatal("two stacks for one user")
		}
	}
}

// Each stack's opening sweeps its root's leftovers.
func TestOpeningSweepsTheUsersLeftovers(t *testing.T) {
	root := t.TempDir()
	alice, _ := MakeRoot(root, "alice")
	dir := filepath.Join(alice, "_tauritavern", "mcp", "registrations")
	os.MkdirAll(dir, 0o700)
	leftover := filepath.Join(dir, ".tauritavern-0123456789abcdef0123456789abcdef.tmp")
	os.WriteFile(leftover, []byte("{"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(leftover, old, old)
	u := openTestUsers(t, Config{DataRoot: root})
	if _, err := os.Stat(leftover); err != nil {
		t.Fatalf("swept before alice's first request: %v", err)
	}
	forUser(t, u, "alice")
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("alice's leftover: %v", err)
	}
}

// No user's page can create a stdio server or give one a command: every
// stack's commands are the server's, with refuseStdioMembers.
func TestNoUsersPageCreatesAStdioServer(t *testing.T) {
	u := openTestUsers(t, Config{})
	for _, h := range []string{DefaultUser, "alice"} {
		c := forUser(t, u, h)
		for _, args := range []string{
			`{"dto":{"displayName":"x","endpoint":"stdio:/bin/sh"}}`,
			`{"dto":{"displayName":"x","endpoint":"http://127.0.0.1:9/mcp","stdio":{"command":"/bin/sh"}}}`,
		} {
			if got := answer(t, c, jsapi.CmdCreateServer, args); !strings.HasPrefix(got, "error ") {
				t.Errorf("%s: %s created %s", h, args, got)
			}
		}
		if got := must(t, c, jsapi.CmdListServers, `{}`); strings.Contains(got, `"id"`) {
			t.Errorf("%s: %s", h, got)
		}
	}
}

// A request right after its user's stack began closing gets a new stack
// only once the old one is closed: its stdio process is gone by then, so
// two processes of one server never run for one root.
func TestReopenWaitsForTheClose(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	u := openTestUsers(t, Config{Now: clk.Now})
	_, pid := runStdio(t, u, "alice", t.TempDir())
	clk.add(time.Hour)
	if closed := u.CloseIdle(); len(closed) != 1 {
		t.Fatalf("closed %v", closed)
	}
	forUser(t, u, "alice") // no WaitClosed: ForUser waits itself
	if stdiotest.Alive(pid) {
		t.Fatalf("the old stack's process %d runs beside the new stack", pid)
	}
}
