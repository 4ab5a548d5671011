package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/hang"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// countingStore counts what the service asks of the registrations folder,
// and can hold the next directory listing.
type countingStore struct {
	*storage.Store
	lists, loads atomic.Int64

	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
	// afterList, when set, runs once the next listing is made, before it
	// is returned (a write racing the list).
	afterList func()
}

func (s *countingStore) ListRegistrationFiles() ([]domain.StoredFile, error) {
	s.lists.Add(1)
	s.mu.Lock()
	gate, entered := s.gate, s.entered
	s.gate, s.entered = nil, nil
	s.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	files, err := s.Store.ListRegistrationFiles()
	s.mu.Lock()
	after := s.afterList
	s.afterList = nil
	s.mu.Unlock()
	if after != nil {
		after()
	}
	return files, err
}

func (s *countingStore) LoadRegistrationFile(name string) (domain.Registration, *jsapi.StorageIssue, domain.FileStamp, bool) {
	s.loads.Add(1)
	return s.Store.LoadRegistrationFile(name)
}

// holdNextList makes the next ListRegistrationFiles wait for release.
func (s *countingStore) holdNextList() (entered <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate, in := make(chan struct{}), make(chan struct{})
	s.gate, s.entered = gate, in
	return in, sync.OnceFunc(func() { close(gate) })
}

// clock is the view's clock in these tests: an hour ahead of the files'
// time stamps, so every stamp is settled (see racyWindow) unless a test
// says otherwise.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

func newCountingService(t *testing.T) (*Service, *countingStore, *clock) {
	t.Helper()
	store := &countingStore{Store: storage.Open(t.TempDir())}
	s := New(Config{Registrations: store, Catalogs: store})
	c := &clock{offset: time.Hour}
	s.view.now = c.now
	return s, store, c
}

func list(t *testing.T, s *Service) jsapi.McpServerList {
	t.Helper()
	l, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func names(l jsapi.McpServerList) string {
	var n []string
	for _, s := range l.Servers {
		n = append(n, s.DisplayName)
	}
	slices.Sort(n)
	for _, is := range l.StorageIssues {
		n = append(n, "issue:"+is.FileName)
	}
	return strings.Join(n, ",")
}

// A list reads only the files that changed since the last one.
func TestListReadsOnlyWhatChanged(t *testing.T) {
	s, store, clk := newCountingService(t)
	ctx := context.Background()
	var ids []string
	for i := range 20 {
		srv, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: fmt.Sprint("s", i), Endpoint: "http://127.0.0.1:9/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, srv.ID)
	}
	if l := list(t, s); len(l.Servers) != 20 {
		t.Fatalf("list = %d servers", len(l.Servers))
	}
	store.loads.Store(0)
	store.lists.Store(0)
	if l := list(t, s); len(l.Servers) != 20 {
		t.Fatalf("list = %d servers", len(l.Servers))
	}
	if n, l := store.loads.Load(), store.lists.Load(); n != 0 || l != 0 {
		t.Errorf("an unchanged folder: listed %d times, %d files read; want one Stat of the folder", l, n)
	}
	clk.advance(fullEvery) // a full revalidation is due: it reads nothing either
	if l := list(t, s); len(l.Servers) != 20 {
		t.Fatalf("list = %d servers", len(l.Servers))
	}
	if n, l := store.loads.Load(), store.lists.Load(); n != 0 || l != 1 {
		t.Errorf("a full revalidation of an unchanged folder: listed %d times, %d files read; want 1 and 0", l, n)
	}
	if _, err := s.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: ids[3], State: jsapi.StateActive}); err != nil {
		t.Fatal(err)
	}
	store.loads.Store(0)
	l := list(t, s)
	if n := store.loads.Load(); n != 1 {
		t.Errorf("after one write: %d files read; want 1", n)
	}
	for _, srv := range l.Servers {
		if (srv.ID == ids[3]) != (srv.State == jsapi.StateActive) {
			t.Errorf("listed %s as %s", srv.DisplayName, srv.State)
		}
	}
}

// What another program does to the folder is seen by the next list: a new
// file, a file renamed over (atomic write), a file rewritten in place, a
// broken file, a removed file.
func TestListSeesOtherProgramsChanges(t *testing.T) {
	s, store, clk := newCountingService(t)
	ctx := context.Background()
	a, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "a", Endpoint: "http://127.0.0.1:9/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, s)); got != "a" {
		t.Fatalf("list = %s", got)
	}
	path := store.RegistrationPath(domain.RegistrationID(a.ID))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other := func(from, to string) []byte { return []byte(strings.Replace(string(data), from, to, 1)) }

	// A new registration (TauriTavern created it).
	const idB = "40000000-0000-4000-8000-00000000000b"
	bPath := filepath.Join(filepath.Dir(path), idB+".json")
	if err := os.WriteFile(bPath, []byte(strings.ReplaceAll(string(other(`"displayName": "a"`, `"displayName": "b"`)), a.ID, idB)), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, s)); got != "a,b" {
		t.Fatalf("after another program created b: %s", got)
	}
	// a renamed over, as an atomic write does.
	tmp := filepath.Join(filepath.Dir(path), "staged")
	if err := os.WriteFile(tmp, other(`"displayName": "a"`, `"displayName": "a2"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, s)); got != "a2,b" {
		t.Fatalf("after a rename over a: %s", got)
	}
	// a rewritten in place, same size, same modification time: the change
	// time (which nothing can set back) still tells.
	fi, _ := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(other(`"displayName": "a"`, `"displayName": "a3"`)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	clk.advance(fullEvery) // an in-place rewrite is seen by the next full revalidation
	if got := names(list(t, s)); got != "a3,b" {
		t.Fatalf("after an in-place rewrite of a: %s", got)
	}
	// b broken, then repaired.
	if err := os.WriteFile(bPath, []byte("{"), 0o600); err != nil { // in place too
		t.Fatal(err)
	}
	clk.advance(fullEvery)
	if got := names(list(t, s)); got != "a3,issue:"+idB+".json" {
		t.Fatalf("after b broke: %s", got)
	}
	if err := os.Remove(bPath); err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, s)); got != "a3" {
		t.Fatalf("after b was removed: %s", got)
	}
}

// Lists that arrive together share revalidations: one runs, and all that
// arrive meanwhile share the next, which still sees what changed before
// they asked.
func TestConcurrentListsShareRevalidations(t *testing.T) {
	s, store, _ := newCountingService(t)
	ctx := context.Background()
	if _, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "a", Endpoint: "http://127.0.0.1:9/mcp"}); err != nil {
		t.Fatal(err)
	}
	entered, release := store.holdNextList()
	defer release()
	first := make(chan jsapi.McpServerList, 1)
	go func() { first <- list(t, s) }()
	<-entered
	// Changed after the first list began: it may miss it, the later ones
	// may not.
	if _, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "b", Endpoint: "http://127.0.0.1:9/mcp"}); err != nil {
		t.Fatal(err)
	}
	store.lists.Store(0)
	const n = 50
	results := make(chan jsapi.McpServerList, n)
	for range n {
		go func() { results <- list(t, s) }()
	}
	hang.Within(t, "the lists to queue", 20*time.Second, func() bool {
		for {
			s.view.mu.Lock()
			queued := s.view.next != nil && s.view.next.lists == n
			s.view.mu.Unlock()
			if queued {
				return true
			}
			time.Sleep(time.Millisecond)
		}
	})
	release()
	hang.Within(t, "the first list", 20*time.Second, func() jsapi.McpServerList { return <-first })
	for range n {
		l := hang.Within(t, "a later list", 20*time.Second, func() jsapi.McpServerList { return <-results })
		if got := names(l); got != "a,b" {
			t.Fatalf("a list asked after b was created: %s", got)
		}
	}
	if got := store.lists.Load(); got != 1 {
		t.Errorf("%d lists arriving together listed the folder %d times; want them to share one", n, got)
	}
}

// A file removed between the folder's listing and its read (a removal
// racing the list) is left out of that list, not reported as a storage
// issue: it is not there. TestListsDuringWrites met it by chance.
func TestListLeavesOutAFileRemovedWhileListing(t *testing.T) {
	s, store, _ := newCountingService(t)
	ctx := context.Background()
	var ids []string
	for i := range 2 {
		srv, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: fmt.Sprint("s", i), Endpoint: "http://127.0.0.1:9/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, srv.ID)
	}
	id, _ := domain.ParseRegistrationID(ids[0])
	store.mu.Lock()
	store.afterList = func() {
		if err := os.Remove(store.RegistrationPath(id)); err != nil {
			t.Error(err)
		}
	}
	store.mu.Unlock()
	for range 2 { // the racing list, and the next
		l := list(t, s)
		if len(l.StorageIssues) != 0 || len(l.Servers) != 1 || l.Servers[0].ID != ids[1] {
			t.Fatalf("list: %+v", l)
		}
	}
}

// Lists and writes at once (run with -race): every list is whole, and the
// last one matches the folder.
func TestListsDuringWrites(t *testing.T) {
	s, store, _ := newCountingService(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				srv, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: fmt.Sprint("w", w, "-", i), Endpoint: "http://127.0.0.1:9/mcp"})
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					if err := s.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: srv.ID}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 20 {
				l, err := s.List(ctx)
				if err != nil || len(l.StorageIssues) != 0 {
					t.Errorf("list during writes: %+v, %v", l.StorageIssues, err)
					return
				}
			}
		})
	}
	wg.Wait()
	regs, issues, err := store.Scan()
	if err != nil {
		t.Fatal(err)
	}
	l := list(t, s)
	if len(l.Servers) != len(regs) || len(regs) != 20 || len(issues) != 0 {
		t.Fatalf("list has %d servers, the folder %d (%d issues); want 20", len(l.Servers), len(regs), len(issues))
	}
}

// A stamp taken in the same time-stamp tick as a change cannot tell the
// change apart: files and a folder changed within racyWindow are read
// again, until their stamps are old enough to be trusted.
func TestRacyStampsAreNotTrusted(t *testing.T) {
	s, store, clk := newCountingService(t)
	clk.offset = 0 // the files were written just now
	ctx := context.Background()
	for i := range 5 {
		if _, err := s.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: fmt.Sprint("s", i), Endpoint: "http://127.0.0.1:9/mcp"}); err != nil {
			t.Fatal(err)
		}
	}
	list(t, s)
	store.loads.Store(0)
	store.lists.Store(0)
	list(t, s)
	if n, l := store.loads.Load(), store.lists.Load(); n != 5 || l != 1 {
		t.Errorf("files written within the racy window: listed %d times, %d read; want every file read again", l, n)
	}
	clk.advance(racyWindow + time.Second)
	list(t, s) // reads them once more, now with settled stamps
	store.loads.Store(0)
	store.lists.Store(0)
	list(t, s)
	if n, l := store.loads.Load(), store.lists.Load(); n != 0 || l != 0 {
		t.Errorf("settled stamps: listed %d times, %d files read; want the folder's Stat only", l, n)
	}
}
