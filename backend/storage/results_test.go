package storage

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func TestResultStore(t *testing.T) {
	root := t.TempDir()
	clock := time.Now()
	s := OpenResultStore(root, ResultOptions{Now: func() time.Time { return clock }})
	text := "Line one\n" + strings.Repeat("語", 10)
	kept, err := s.Put(id1, text)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "_tauritavern", "mcp", "results", id1, string(kept.ID)+".txt")
	if data, err := os.ReadFile(path); err != nil || string(data) != text {
		t.Fatalf("file %q %v", data, err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700} {
			if fi, _ := os.Stat(p); fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
			}
		}
	}
	got, found, err := s.Get(kept.ID)
	if err != nil || !found || got.Text != text || got.RegistrationID != id1 {
		t.Fatalf("get %+v %v %v", got, found, err)
	}
	if _, found, err := s.Get(domain.NewResultID()); found || err != nil {
		t.Fatalf("unknown id: %v %v", found, err)
	}
	for _, bad := range []string{"../../registrations/" + id1, strings.ToUpper(string(kept.ID)), ""} {
		if _, _, err := s.Get(domain.ResultID(bad)); domain.CodeOf(err) != "mcp.result_id_invalid" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Expired: not returned, and removed.
	clock = clock.Add(DefaultResultMaxAge + time.Minute)
	if _, found, _ := s.Get(kept.ID); found {
		t.Fatal("an expired result was returned")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("the expired result was not removed")
	}
	// A server's results go with it.
	a, _ := s.Put(id2, "a")
	s.Put(id1, "b")
	if err := s.DeleteRegistration(id2); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.Get(a.ID); found {
		t.Fatal("a removed server's result is still there")
	}
	if err := s.DeleteRegistration(id3); err != nil { // none: not an error
		t.Fatal(err)
	}
	if _, err := s.Put(id1, strings.Repeat("x", MaxResultBytes+1)); domain.CodeOf(err) != "mcp.result_too_large" {
		t.Fatalf("too large: %v", err)
	}
}

// Retention: the oldest results go first once the total size or the count
// is passed, and expired ones at the next Put; the newest always stays.
func TestResultStoreRetention(t *testing.T) {
	root := t.TempDir()
	clock := time.Now()
	s := OpenResultStore(root, ResultOptions{MaxTotalBytes: 250, MaxFiles: 3, MaxAge: time.Hour, Now: func() time.Time { return clock }})
	var ids []domain.ResultID
	put := func(reg, text string) {
		t.Helper()
		r, err := s.Put(domain.RegistrationID(reg), text)
		if err != nil {
			t.Fatal(err)
		}
		// Distinct, increasing modification times, as the clock says.
		os.Chtimes(filepath.Join(s.Dir(), reg, string(r.ID)+".txt"), clock, clock)
		clock = clock.Add(time.Second)
		ids = append(ids, r.ID)
	}
	have := func() []bool {
		out := []bool{}
		for _, id := range ids {
			_, found, _ := s.Get(id)
			out = append(out, found)
		}
		return out
	}
	hundred := strings.Repeat("x", 100)
	put(id1, hundred)
	put(id2, hundred)
	put(id1, hundred) // 300 bytes: the oldest goes
	if h := have(); h[0] || !h[1] || !h[2] {
		t.Fatalf("by size: %v", h)
	}
	put(id1, "a")
	put(id2, "b") // 5 files once, 4 kept: the count is 3
	if h := have(); h[1] || !h[2] || !h[3] || !h[4] {
		t.Fatalf("by count: %v", h)
	}
	clock = clock.Add(2 * time.Hour)
	put(id1, "new") // the others expired
	if h := have(); h[2] || h[3] || h[4] || !h[5] {
		t.Fatalf("by age: %v", h)
	}
	// A result larger than the whole budget is still kept (until the next).
	put(id1, strings.Repeat("y", 400))
	if h := have(); !h[6] || h[5] {
		t.Fatalf("large: %v", h)
	}
}
