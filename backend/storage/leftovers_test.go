package storage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Temporary files of writes interrupted by a crash are removed at
// start-up (RemoveLeftovers), in every folder of the data root's
// _tauritavern tree; a fresh one (a write of another program sharing the
// data root, in progress) and anything not exactly a leftover stay.
func TestRemoveLeftovers(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	if err := s.Save(fixture(t, id1)); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "_tauritavern")
	regs := filepath.Dir(s.RegistrationPath(id1))
	old := time.Now().Add(-time.Hour)
	leftover := func(path string, mtime time.Time) string {
		t.Helper()
		writeFile(t, path, "torn")
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const name = ".tauritavern-0123456789abcdef0123456789abcdef.tmp"
	const own = ".ttmcp-0123456789abcdef0123456789abcdef.tmp"
	gone := []string{
		leftover(filepath.Join(regs, name), old),
		leftover(filepath.Join(base, "mcp", "catalogs", name), old),
		leftover(filepath.Join(base, "extension-store", "ns", "kv", "table", name), old),
		// ttmcp's own, unlocked: a kill -9 a moment ago, whatever its age
		// (issue 27: a restart within the minute left them).
		leftover(filepath.Join(base, "mcp", "capabilities", own), time.Now()),
		leftover(filepath.Join(base, "mcp", "results", string(regA), own), time.Now()),
	}
	// ttmcp's own, locked: a write in progress in a live process.
	live := leftover(filepath.Join(base, "mcp", "tool-sets", own), old)
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if free, err := tryLockTemp(lf); locksTemps && (!free || err != nil) {
		t.Fatalf("lock: %v %v", free, err)
	}
	kept := []string{
		leftover(filepath.Join(regs, ".tauritavern-fedcba9876543210fedcba9876543210.tmp"), time.Now()), // in progress
		leftover(filepath.Join(regs, ".tauritavern-notes.tmp"), old),                                   // not ours
		leftover(filepath.Join(regs, "x"+name), old),
		leftover(filepath.Join(root, name), old), // outside _tauritavern
		s.RegistrationPath(id1),
	}
	if locksTemps {
		kept = append(kept, live)
	} else { // not locked where files are not: old, so gone
		gone = append(gone, live)
	}
	dirLeftover := filepath.Join(regs, ".tauritavern-00000000000000000000000000000001.tmp")
	if err := os.Mkdir(dirLeftover, 0o755); err != nil { // not a file: left alone
		t.Fatal(err)
	}
	kept = append(kept, dirLeftover)
	outside := filepath.Join(root, "elsewhere")
	leftover(filepath.Join(outside, name), old)
	if err := os.Symlink(outside, filepath.Join(base, "link")); err != nil { // not followed
		t.Fatal(err)
	}
	kept = append(kept, filepath.Join(outside, name))

	removed, err := RemoveLeftovers(root, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	slices.Sort(gone)
	if !slices.Equal(removed, gone) {
		t.Errorf("removed %q, want %q", removed, gone)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed (%v)", p, err)
		}
	}

	// Nothing to do, or no data root yet: no error.
	if removed, err := RemoveLeftovers(filepath.Join(root, "missing"), time.Minute); err != nil || len(removed) != 0 {
		t.Errorf("RemoveLeftovers(missing root) = %v, %v", removed, err)
	}
}

// Leftovers never get in the way: the store lists, loads and saves
// around them, in both folders.
func TestLeftoversAreHarmless(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	if err := s.Save(fixture(t, id1)); err != nil {
		t.Fatal(err)
	}
	ep := endpoint(t, "http://127.0.0.1:3333/mcp")
	if err := s.SaveCatalog(id1, ep, catalogFixture()); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Dir(s.RegistrationPath(id1)), filepath.Dir(s.CatalogPath(id1))} {
		writeFile(t, filepath.Join(dir, ".tauritavern-0123456789abcdef0123456789abcdef.tmp"), "{\"schemaVersion\": 1, torn")
		if err := os.Mkdir(filepath.Join(dir, ".tauritavern-00000000000000000000000000000001.tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	regs, issues, err := s.Scan()
	if err != nil || len(regs) != 1 || len(issues) != 0 {
		t.Fatalf("Scan = %v, %v, %v", regs, issues, err)
	}
	if err := s.Save(fixture(t, id1)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadCatalog(id1, ep); !ok || err != nil {
		t.Fatalf("LoadCatalog = %v, %v", ok, err)
	}
}
