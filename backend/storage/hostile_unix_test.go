//go:build linux || darwin

package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/hang"
)

// A damaged data root (issue 9): what sits where a registration or catalog
// belongs may be anything. Nothing may hang (a FIFO waits for a writer
// when opened), sink the process (/dev/zero never ends) or be read whole
// when it is huge; each is a storage issue naming what it is.

// damagedRoot makes a registrations directory holding one healthy file and
// one of each kind of damage, named like registrations; it returns the
// store and the file names by kind.
func damagedRoot(t *testing.T) (*Store, map[string]string) {
	t.Helper()
	root := t.TempDir()
	s := Open(root)
	if err := s.Save(fixture(t, id1)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.RegistrationPath(id1))
	name := func(n int) string { return "20000000-0000-4000-8000-00000000000" + string(rune('0'+n)) + ".json" }
	files := map[string]string{
		"directory": name(1),
		"fifo":      name(2),
		"device":    name(3),
		"dangling":  name(4),
		"huge":      name(5),
		"loop":      name(6),
	}
	p := func(kind string) string { return filepath.Join(dir, files[kind]) }
	if err := os.Mkdir(p("directory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", p("device")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "missing.json"), p("dangling")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p("huge"))
	if err != nil {
		t.Fatal(err)
	}
	// 100 MB, sparse: costs no disk, but a reader that reads it whole
	// allocates it all.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Symlink(files["loop"], p("loop")); err != nil { // links to itself
		t.Fatal(err)
	}
	return s, files
}

func TestScanReportsWhatIsNotARegularFile(t *testing.T) {
	s, files := damagedRoot(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	type scan struct {
		regs   []domain.Registration
		issues map[string]string
		err    error
	}
	got := hang.Within(t, "Scan", 20*time.Second, func() scan {
		regs, issues, err := s.Scan()
		m := map[string]string{}
		for _, is := range issues {
			m[is.FileName] = is.Message
		}
		return scan{regs, m, err}
	})
	runtime.ReadMemStats(&after)
	if got.err != nil || len(got.regs) != 1 || got.regs[0].ID != id1 {
		t.Fatalf("Scan = %v, %v; want the healthy registration", got.regs, got.err)
	}
	wants := map[string]string{
		"directory": "is a directory, not a regular file",
		"fifo":      "is a FIFO (named pipe), not a regular file",
		"device":    "is a device, not a regular file",
		"dangling":  "is a symbolic link to " + filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(s.RegistrationPath(id1))))), "missing.json") + ", which does not exist",
		"huge":      "is 104857600 bytes; registration files are read up to 1048576 bytes",
		"loop":      "too many levels of symbolic links",
	}
	for kind, want := range wants {
		msg, ok := got.issues[files[kind]]
		if !ok {
			t.Errorf("%s %s: no storage issue", kind, files[kind])
			continue
		}
		if !strings.Contains(msg, want) || !strings.HasPrefix(msg, "Failed to read ") {
			t.Errorf("%s: issue %q; want it to say %q", kind, msg, want)
		}
	}
	if len(got.issues) != len(wants) {
		t.Errorf("issues %v; want one per damaged file", got.issues)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("Scan allocated %d MB: the huge file was read", grew>>20)
	}
}

// Load of each damaged file is an error (never "absent": a create must not
// go over it), returned at once.
func TestLoadNeverBlocksOrReadsTooMuch(t *testing.T) {
	s, files := damagedRoot(t)
	for kind, name := range files {
		id := domain.RegistrationID(strings.TrimSuffix(name, ".json"))
		type load struct {
			ok  bool
			err error
		}
		got := hang.Within(t, "Load of a "+kind, 20*time.Second, func() load {
			_, ok, err := s.Load(id)
			return load{ok, err}
		})
		if got.ok || got.err == nil {
			t.Errorf("Load(%s) = %v, %v; want an error", kind, got.ok, got.err)
		}
	}
}

func TestLoadCatalogNeverBlocks(t *testing.T) {
	s := Open(t.TempDir())
	ep := endpoint(t, "https://example.com/mcp")
	path := s.CatalogPath(id1)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for kind, make := range map[string]func() error{
		"fifo":   func() error { return syscall.Mkfifo(path, 0o600) },
		"device": func() error { return os.Symlink("/dev/zero", path) },
		"huge": func() error {
			f, err := os.Create(path)
			if err == nil {
				err = f.Truncate(MaxCatalogFileBytes + 1)
				f.Close()
			}
			return err
		},
	} {
		t.Run(kind, func(t *testing.T) {
			os.Remove(path)
			if err := make(); err != nil {
				t.Fatal(err)
			}
			err := hang.Within(t, "LoadCatalog of a "+kind, 20*time.Second, func() error {
				_, _, err := s.LoadCatalog(id1, ep)
				return err
			})
			if err == nil || !strings.HasPrefix(errText(err), "Failed to read "+path+": ") {
				t.Fatalf("LoadCatalog = %v", err)
			}
		})
	}
}

// The audit log's files are in the data root too: a FIFO or a device named
// like this month's file is an error for each append, at once, never a
// write that waits for a reader while the log's lock is held (a pipe's
// buffer fills after a few hundred records), nor records thrown away into
// /dev/null.
func TestAuditLogRefusesWhatIsNotARegularFile(t *testing.T) {
	for kind, plant := range map[string]func(string) error{
		"fifo":   func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"device": func(p string) error { return os.Symlink("/dev/null", p) },
	} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			l := OpenAuditLog(root, AuditOptions{Now: func() time.Time { return now }})
			if err := os.MkdirAll(l.Dir(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(filepath.Join(l.Dir(), "2026-05.jsonl")); err != nil {
				t.Fatal(err)
			}
			err := hang.Within(t, "1,000 appends", 30*time.Second, func() error {
				var last error
				for i := range 1000 {
					if _, err := l.Append(record(fmt.Sprint("call-", i), regA)); err == nil {
						return fmt.Errorf("append %d succeeded into a %s", i, kind)
					} else {
						last = err
					}
				}
				return last
			})
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("appends: %v; want each refused, the file not being a regular file", err)
			}
			err = hang.Within(t, "List", 30*time.Second, func() error {
				_, _, err := l.List(domain.AuditQuery{Limit: 10})
				return err
			})
			if err != nil {
				t.Fatalf("List beside a %s: %v", kind, err)
			}
		})
	}
}
