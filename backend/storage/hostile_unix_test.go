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
	"github.com/ttmcp/ttmcp/internal/hostile"
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
		"device":    "a symbolic link leads out of the data root " + s.data.dir + " (to /dev/zero)",
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
			if err == nil || !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "a symbolic link") {
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

// The hostile data-root suite (issue 27): every kind of file ttmcp keeps in
// a data root, each planted with every kind of damage. Nothing may hang,
// sink the process, or be read from outside the data root; damage is
// refused (an error or a storage issue), a link inside the root is
// followed, and no write through a link reaches outside the root.

// fileKindCase is one kind of file: save writes a healthy one into the
// data root and returns its path relative to the root (and the store's
// error); load reads the file
// at that path back through the stores, true when it read the healthy
// value.
type fileKindCase struct {
	name string
	// noLinks: a link is never followed, even inside the root (the audit
	// log's files are the log's own: it lists regular files only).
	noLinks bool
	save    func(t *testing.T, root string) (string, error)
	load    func(t *testing.T, root, rel string) (bool, error)
}

// rel returns path relative to root.
func rel(t *testing.T, root, path string) string {
	t.Helper()
	r, err := filepath.Rel(root, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var fileKindCases = []fileKindCase{
	{"registration", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).RegistrationPath(id1)), Open(root).Save(fixture(t, id1))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := Open(root).Load(id1)
			return ok, err
		}},
	{"catalog", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).CatalogPath(id1)), Open(root).SaveCatalog(id1, endpoint(t, "https://example.com/mcp"), catalogFixture())
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := Open(root).LoadCatalog(id1, endpoint(t, "https://example.com/mcp"))
			return ok, err
		}},
	{"stdio", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).StdioPath(id2)), Open(root).SaveStdio(stdioFixture(t, id2))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := Open(root).LoadStdio(id2)
			return ok, err
		}},
	{"auth", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).AuthPath(id1)), Open(root).SaveAuth(authFixture(t))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := Open(root).LoadAuth(id1, authFixture(t).Endpoint)
			return ok, err
		}},
	{"tool set", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).ToolSetPath(toolSetFixture(t).ID)), Open(root).SaveToolSet(toolSetFixture(t))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := Open(root).LoadToolSet(toolSetFixture(t).ID)
			return ok, err
		}},
	{"capabilities", false,
		func(t *testing.T, root string) (string, error) {
			return rel(t, root, Open(root).CapabilitiesPath(id1)), Open(root).SaveCapabilities(id1, domain.Allowlist{Resources: true})
		},
		func(t *testing.T, root, _ string) (bool, error) {
			a, ok, err := Open(root).LoadCapabilities(id1)
			return ok && a.Resources, err
		}},
	{"result", false,
		func(t *testing.T, root string) (string, error) {
			s := OpenResultStore(root, ResultOptions{})
			kept, err := s.Put(regA, "the kept text")
			return rel(t, root, s.path(regA, kept.ID)), err
		},
		func(t *testing.T, root, rel string) (bool, error) {
			id := domain.ResultID(strings.TrimSuffix(filepath.Base(rel), ".txt"))
			r, ok, err := OpenResultStore(root, ResultOptions{}).Get(id)
			return ok && r.Text == "the kept text", err
		}},
	{"extension store entry", false,
		func(t *testing.T, root string) (string, error) {
			s := OpenExtensionStore(root)
			p, _ := s.entryPath("ns", kvFolder, "main", "k")
			return rel(t, root, p), s.WriteJSON("ns", "main", "k", []byte(`{"a":1}`))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			_, ok, err := OpenExtensionStore(root).ReadJSON("ns", "main", "k")
			return ok, err
		}},
	{"extension store blob", false,
		func(t *testing.T, root string) (string, error) {
			s := OpenExtensionStore(root)
			p, _ := s.entryPath("ns", blobFolder, "main", "icon.png")
			return rel(t, root, p), s.WriteBlob("ns", "main", "icon.png", []byte("PNG"))
		},
		func(t *testing.T, root, _ string) (bool, error) {
			b, err := OpenExtensionStore(root).ReadBlob("ns", "main", "icon.png")
			return string(b) == "PNG", err
		}},
	{"audit", true,
		func(t *testing.T, root string) (string, error) {
			l := auditAt(root)
			_, err := l.Append(record("call-1", regA))
			return rel(t, root, filepath.Join(l.Dir(), "2026-05.jsonl")), err
		},
		func(t *testing.T, root, _ string) (bool, error) {
			recs, _, err := auditAt(root).List(domain.AuditQuery{Limit: 10})
			return len(recs) == 1 && recs[0].CallID == "call-1", err
		}},
}

// damage is one way the entry at rel in the data root in can be hostile.
// out is a second data root holding a healthy file of the kind at rel.
type damage struct {
	name  string
	plant func(t *testing.T, in, out, rel string)
	// loads: the healthy value must still be read (a link inside the root).
	loads bool
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(link), 0o755))
	os.RemoveAll(link)
	must(t, os.Symlink(target, link))
}

// top returns rel's first folder under _tauritavern ("mcp",
// "extension-store").
func top(rel string) string {
	parts := strings.Split(rel, string(filepath.Separator))
	return filepath.Join(parts[0], parts[1])
}

var damages = []damage{
	{name: "link out of the root", plant: func(t *testing.T, in, out, rel string) {
		symlink(t, filepath.Join(out, rel), filepath.Join(in, rel))
	}},
	{name: "relative link out of the root", plant: func(t *testing.T, in, out, rel string) {
		target, err := filepath.Rel(filepath.Dir(filepath.Join(in, rel)), filepath.Join(out, rel))
		must(t, err)
		symlink(t, target, filepath.Join(in, rel))
	}},
	{name: "link to /etc/passwd", plant: func(t *testing.T, in, _, rel string) {
		symlink(t, "/etc/passwd", filepath.Join(in, rel))
	}},
	{name: "linked folder", plant: func(t *testing.T, in, out, rel string) {
		symlink(t, filepath.Join(out, filepath.Dir(rel)), filepath.Join(in, filepath.Dir(rel)))
	}},
	{name: "linked parent folder", plant: func(t *testing.T, in, out, rel string) { // results/, kv/, blobs/, mcp/
		up := filepath.Dir(filepath.Dir(rel))
		symlink(t, filepath.Join(out, up), filepath.Join(in, up))
	}},
	{name: "linked _tauritavern", plant: func(t *testing.T, in, out, _ string) {
		symlink(t, filepath.Join(out, "_tauritavern"), filepath.Join(in, "_tauritavern"))
	}},
	{name: "linked mcp or extension-store", plant: func(t *testing.T, in, out, rel string) {
		symlink(t, filepath.Join(out, top(rel)), filepath.Join(in, top(rel)))
	}},
	{name: "fifo", plant: func(t *testing.T, in, _, rel string) {
		p := filepath.Join(in, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, syscall.Mkfifo(p, 0o600))
	}},
	{name: "device", plant: func(t *testing.T, in, _, rel string) {
		symlink(t, "/dev/zero", filepath.Join(in, rel))
	}},
	{name: "dangling link", plant: func(t *testing.T, in, _, rel string) {
		symlink(t, filepath.Join(in, "missing"), filepath.Join(in, rel))
	}},
	{name: "link loop", plant: func(t *testing.T, in, _, rel string) {
		symlink(t, filepath.Base(rel), filepath.Join(in, rel))
	}},
	{name: "directory", plant: func(t *testing.T, in, _, rel string) {
		must(t, os.MkdirAll(filepath.Join(in, rel, "inside"), 0o755))
	}},
	{name: "huge", plant: func(t *testing.T, in, _, rel string) {
		p := filepath.Join(in, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		f, err := os.Create(p)
		must(t, err)
		must(t, f.Truncate(1<<30)) // sparse: no disk, but a whole read would take 1 GiB
		f.Close()
	}},
	{name: "absolute link inside the root", loads: true, plant: func(t *testing.T, in, _, rel string) {
		moved := filepath.Join(in, "elsewhere", filepath.Base(rel))
		must(t, os.MkdirAll(filepath.Dir(moved), 0o755))
		must(t, os.Rename(filepath.Join(in, rel), moved))
		symlink(t, moved, filepath.Join(in, rel))
	}},
	{name: "relative link inside the root", loads: true, plant: func(t *testing.T, in, _, rel string) {
		moved := filepath.Join(in, "elsewhere", filepath.Base(rel))
		must(t, os.MkdirAll(filepath.Dir(moved), 0o755))
		must(t, os.Rename(filepath.Join(in, rel), moved))
		target, err := filepath.Rel(filepath.Dir(filepath.Join(in, rel)), moved)
		must(t, err)
		symlink(t, target, filepath.Join(in, rel))
	}},
}

func TestEveryFileKindUnderHostileEntries(t *testing.T) {
	for _, k := range fileKindCases {
		for _, d := range damages {
			t.Run(k.name+"/"+d.name, func(t *testing.T) {
				in, out := t.TempDir(), t.TempDir()
				relPath, err := k.save(t, out)
				must(t, err)
				if ok, err := k.load(t, out, relPath); !ok || err != nil {
					t.Fatalf("the healthy file does not load: %v %v", ok, err)
				}
				wantLoaded := d.loads && !k.noLinks
				if d.loads {
					// The healthy file is the root's own (a result's id is new).
					relPath, err = k.save(t, in)
					must(t, err)
				}
				d.plant(t, in, out, relPath)
				outBefore := hostile.Digest(t, out, "")
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				type result struct {
					ok  bool
					err error
				}
				got := hang.Within(t, k.name+" load", 20*time.Second, func() result {
					ok, err := k.load(t, in, relPath)
					return result{ok, err}
				})
				runtime.ReadMemStats(&after)
				if got.ok != wantLoaded {
					t.Fatalf("loaded = %v (err %v); want %v", got.ok, got.err, wantLoaded)
				}
				if wantLoaded && got.err != nil {
					t.Fatalf("load: %v", got.err)
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
					t.Errorf("load allocated %d MB", grew>>20)
				}
				// A write beside the damage does not reach out of the root:
				// it fails or lands inside.
				hang.Within(t, k.name+" save", 20*time.Second, func() error {
					_, err := k.save(t, in)
					return err
				})
				if hostile.Digest(t, out, "") != outBefore {
					t.Errorf("a %s written through a %s changed the other folder", k.name, d.name)
				}
			})
		}
	}
}
