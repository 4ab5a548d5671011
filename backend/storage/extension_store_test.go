package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func openExtensionStore(t *testing.T) (*ExtensionStore, string) {
	t.Helper()
	root := t.TempDir()
	return OpenExtensionStore(root), root
}

// wantCode fails unless err is a domain error with code and kind.
func wantCode(t *testing.T, err error, code string, kind domain.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if domain.CodeOf(err) != code || domain.KindOf(err) != kind {
		t.Fatalf("error %q: code %q kind %v, want %s %v", err, domain.CodeOf(err), domain.KindOf(err), code, kind)
	}
	if !strings.HasPrefix(err.Error(), code+": ") {
		t.Fatalf("message %q does not start with its code", err)
	}
}

func writeRaw(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The files are where TauriTavern keeps them, in the bytes
// serde_json::to_vec_pretty writes for a serde_json::Value: members sorted
// by their bytes at every level, two-space indent, no final newline;
// numbers as given (a u64 beyond 2^53 stays exact).
func TestExtensionStoreLayoutOnDisk(t *testing.T) {
	s, root := openExtensionStore(t)
	value := `{"b":1,"a":{"y":[1,2,[],{}],"x":"é\u0001\"/<"},"B":9007199254740993,"n":null,"t":true,"f":-1.5e-7}`
	if err := s.WriteJSON("my-ext", "main", "settings", []byte(value)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "_tauritavern", "extension-store", "my-ext", "kv", "main", "settings.json")
	want := `{
  "B": 9007199254740993,
  "a": {
    "x": "é\u0001\"/<",
    "y": [
      1,
      2,
      [],
      {}
    ]
  },
  "b": 1,
  "f": -1.5e-7,
  "n": null,
  "t": true
}`
	if got := readFile(t, path); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if err := s.WriteBlob("my-ext", "images", "icon.png", []byte{0, 1, 2, 0xff}); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(root, "_tauritavern", "extension-store", "my-ext", "blobs", "images", "icon.png")
	if got := readFile(t, blob); got != "\x00\x01\x02\xff" {
		t.Fatalf("blob = %q", got)
	}
	// scalars at the top level too
	for _, v := range []string{`null`, `"text"`, `0`, `[]`} {
		if err := s.WriteJSON("my-ext", "main", "scalar", []byte(v)); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(filepath.Dir(path), "scalar.json")); got != v {
			t.Errorf("%s written as %s", v, got)
		}
	}
	// no temporary file is left behind
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(blob)} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("left %s in %s", e.Name(), dir)
			}
		}
	}
}

// A data root written by TauriTavern (pretty JSON, any member order, raw
// blobs) reads back, compact.
func TestExtensionStoreReadsUpstreamFiles(t *testing.T) {
	s, root := openExtensionStore(t)
	base := filepath.Join(root, "_tauritavern", "extension-store")
	writeRaw(t, filepath.Join(base, "tauritavern.mcp-manager", "kv", "main", "exa-search-recommendation-handled.json"), "true")
	writeRaw(t, filepath.Join(base, "my-ext", "kv", "state", "index.json"), "{\n  \"z\": [\n    1\n  ],\n  \"a\": \"x\"\n}\n")
	writeRaw(t, filepath.Join(base, "my-ext", "blobs", "assets", "a.bin"), "\x00raw")

	v, found, err := s.ReadJSON("tauritavern.mcp-manager", "main", "exa-search-recommendation-handled")
	if err != nil || !found || string(v) != "true" {
		t.Fatalf("marker: %s %v %v", v, found, err)
	}
	v, found, err = s.ReadJSON("my-ext", "state", "index")
	if err != nil || !found || string(v) != `{"a":"x","z":[1]}` {
		t.Fatalf("index: %s %v %v", v, found, err)
	}
	if _, found, err := s.ReadJSON("my-ext", "state", "absent"); found || err != nil {
		t.Fatalf("absent: %v %v", found, err)
	}
	b, err := s.ReadBlob("my-ext", "assets", "a.bin")
	if err != nil || string(b) != "\x00raw" {
		t.Fatalf("blob %q %v", b, err)
	}
	tables, err := s.ListTables("my-ext")
	if err != nil || !slices.Equal(tables, []string{"assets", "state"}) {
		t.Fatalf("tables %v %v", tables, err)
	}
}

// Names that would leave the namespace's folder, or that upstream refuses,
// are BadRequest with mcp.extension_store_name_invalid, and nothing is
// written anywhere.
func TestExtensionStoreRefusesNames(t *testing.T) {
	bad := []string{"", "  ", ".", "..", ".hidden", "../x", "a/b", `a\b`, "/abs", "a b", "é", "a\x00b", "a:b", "~", strings.Repeat("k", 251)}
	for _, name := range bad {
		s, root := openExtensionStore(t)
		ops := map[string]func() error{
			"namespace": func() error { return s.WriteJSON(name, "main", "k", []byte("1")) },
			"table":     func() error { return s.WriteJSON("ns", name, "k", []byte("1")) },
			"key":       func() error { return s.WriteJSON("ns", "main", name, []byte("1")) },
			"blob key":  func() error { return s.WriteBlob("ns", "main", name, []byte("1")) },
			"newKey":    func() error { return s.RenameJSON("ns", "main", "k", name) },
			"list":      func() error { _, err := s.ListTables(name); return err },
			"delete":    func() error { return s.DeleteTable("ns", name) },
		}
		for what, op := range ops {
			t.Run(what+" "+strconv.Quote(name), func(t *testing.T) {
				wantCode(t, op(), domain.CodeExtensionStoreNameInvalid, domain.KindBadRequest)
			})
		}
		entries, _ := os.ReadDir(root)
		if len(entries) != 0 {
			t.Errorf("%q: wrote %v", name, entries)
		}
	}
	// surrounding whitespace is trimmed, as upstream does
	s, root := openExtensionStore(t)
	if err := s.WriteJSON(" ns ", "\tmain ", " k.v-1_x ", []byte("1")); err != nil {
		t.Fatal(err)
	}
	readFile(t, filepath.Join(root, "_tauritavern", "extension-store", "ns", "kv", "main", "k.v-1_x.json"))
	// the longest name that fits
	long := strings.Repeat("k", domain.MaxExtensionStoreName)
	if err := s.WriteJSON("ns", "main", long, []byte("1")); err != nil {
		t.Fatal(err)
	}
}

// A stored entry that cannot be served is an error naming the file
// (mcp.extension_store_entry_unreadable), never a hang, a crash or a
// silent null; a FIFO is refused without waiting for a writer, and a link
// to /dev/zero without reading it.
func TestExtensionStoreDamagedEntries(t *testing.T) {
	s, root := openExtensionStore(t)
	dir := filepath.Join(root, "_tauritavern", "extension-store", "ns", "kv", "main")
	files := map[string]string{
		"syntax":    "{",
		"empty":     "",
		"trailing":  "1 2",
		"utf8":      "\"\xff\"",
		"surrogate": `"\ud800"`,
		"duplicate": `{"a":1,"a":2}`,
		"deep":      strings.Repeat("[", MaxExtensionStoreDepth+1) + strings.Repeat("]", MaxExtensionStoreDepth+1),
	}
	for name, data := range files {
		writeRaw(t, filepath.Join(dir, name+".json"), data)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	plantSpecialFiles(t, dir) // fifo.json, zero.json where the system has them
	big, err := os.Create(filepath.Join(dir, "big.json"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(MaxExtensionStoreEntry + 1) // sparse: refused by its size, never read
	big.Close()
	keys := []string{"syntax", "empty", "trailing", "utf8", "surrogate", "duplicate", "deep", "folder", "big"}
	if hasSpecialFiles {
		keys = append(keys, "fifo", "zero")
	}
	for _, key := range keys {
		_, found, err := s.ReadJSON("ns", "main", key)
		if found {
			t.Errorf("%s: found", key)
			continue
		}
		wantCode(t, err, domain.CodeExtensionStoreEntryUnreadable, domain.KindInternal)
		if !strings.Contains(err.Error(), filepath.Join(dir, key+".json")) {
			t.Errorf("%s: %q does not name the file", key, err)
		}
	}
	// 128 levels read back
	writeRaw(t, filepath.Join(dir, "deepest.json"), strings.Repeat("[", MaxExtensionStoreDepth)+strings.Repeat("]", MaxExtensionStoreDepth))
	if _, found, err := s.ReadJSON("ns", "main", "deepest"); !found || err != nil {
		t.Errorf("128 levels: %v %v", found, err)
	}
	// a blob that is a folder, or too large, is refused the same way
	bdir := filepath.Join(root, "_tauritavern", "extension-store", "ns", "blobs", "main")
	os.MkdirAll(filepath.Join(bdir, "folder"), 0o755)
	f, _ := os.Create(filepath.Join(bdir, "huge"))
	f.Truncate(MaxExtensionStoreBlob + 1)
	f.Close()
	for _, key := range []string{"folder", "huge"} {
		_, err := s.ReadBlob("ns", "main", key)
		wantCode(t, err, domain.CodeExtensionStoreEntryUnreadable, domain.KindInternal)
	}
	// deleting or renaming a folder where an entry belongs is refused
	wantCode(t, s.DeleteJSON("ns", "main", "folder"), domain.CodeExtensionStoreEntryUnreadable, domain.KindInternal)
	wantCode(t, s.RenameJSON("ns", "main", "folder", "moved"), domain.CodeExtensionStoreEntryUnreadable, domain.KindInternal)
	if _, err := os.Stat(filepath.Join(dir, "folder.json")); err != nil {
		t.Errorf("the folder is gone: %v", err)
	}
}

// Values the store will not write: nested deeper than serde_json reads,
// or larger than MaxExtensionStoreEntry once pretty-printed (which a 4 MiB
// request can reach with deep indentation). Nothing is written.
func TestExtensionStoreRefusesValues(t *testing.T) {
	s, root := openExtensionStore(t)
	deep := strings.Repeat("[", MaxExtensionStoreDepth+1) + strings.Repeat("]", MaxExtensionStoreDepth+1)
	wantCode(t, s.WriteJSON("ns", "main", "deep", []byte(deep)), domain.CodeExtensionStoreValueInvalid, domain.KindBadRequest)
	// 100 levels of indentation in front of each of 50,000 small numbers:
	// 250 KB of request, 10 MB of file
	wide := strings.Repeat("[", 100) + strings.TrimSuffix(strings.Repeat("0,", 50000), ",") + strings.Repeat("]", 100)
	err := s.WriteJSON("ns", "main", "wide", []byte(wide))
	wantCode(t, err, domain.CodeExtensionStoreValueInvalid, domain.KindBadRequest)
	if !strings.Contains(err.Error(), "larger than") {
		t.Errorf("message %q", err)
	}
	if _, err := os.Stat(filepath.Join(root, "_tauritavern")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something was written: %v", err)
	}
	ok := strings.Repeat("[", MaxExtensionStoreDepth) + strings.Repeat("]", MaxExtensionStoreDepth)
	if err := s.WriteJSON("ns", "main", "deep", []byte(ok)); err != nil {
		t.Errorf("128 levels: %v", err)
	}
}

func TestExtensionStoreRenameAndDelete(t *testing.T) {
	s, root := openExtensionStore(t)
	dir := filepath.Join(root, "_tauritavern", "extension-store", "ns", "kv", "main")
	s.WriteJSON("ns", "main", "k1", []byte(`{"ok":true}`))
	s.WriteJSON("ns", "main", "k2", []byte(`2`))

	wantCode(t, s.RenameJSON("ns", "main", "k1", "k2"), domain.CodeExtensionStoreKeyExists, domain.KindConflict)
	wantCode(t, s.RenameJSON("ns", "main", "absent", "k3"), domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	if err := s.RenameJSON("ns", "main", "k1", " k1 "); err != nil {
		t.Errorf("rename to itself: %v", err)
	}
	if err := s.RenameJSON("ns", "main", "k1", "k3"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "k3.json")); got != "{\n  \"ok\": true\n}" {
		t.Errorf("k3 = %q", got)
	}
	keys, _ := s.ListJSONKeys("ns", "main")
	if !slices.Equal(keys, []string{"k2", "k3"}) {
		t.Errorf("keys %v", keys)
	}
	if err := s.DeleteJSON("ns", "main", "k2"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteJSON("ns", "main", "k2"), domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	wantCode(t, s.DeleteBlob("ns", "main", "k2"), domain.CodeExtensionStoreNotFound, domain.KindNotFound)
	_, err := s.ReadBlob("ns", "main", "k2")
	wantCode(t, err, domain.CodeExtensionStoreNotFound, domain.KindNotFound)
}

// Listings hold only what the store can serve: regular files (or links to
// them) with valid names; never temporary files, folders or stray names.
func TestExtensionStoreListings(t *testing.T) {
	s, root := openExtensionStore(t)
	base := filepath.Join(root, "_tauritavern", "extension-store", "ns")
	for _, p := range []string{
		"kv/main/a.json", "kv/main/b.json", "kv/main/.tauritavern-0123.tmp", "kv/main/notes.txt",
		"kv/main/bad name.json", "kv/main/.json", "kv/main/c.json.5f2a.tmp",
		"blobs/main/icon.png", "blobs/main/.tauritavern-0123.tmp", "blobs/main/x y",
		"blobs/media/clip.mp3", "kv/.hidden/k.json",
	} {
		writeRaw(t, filepath.Join(base, p), "1")
	}
	os.MkdirAll(filepath.Join(base, "kv", "main", "dir.json"), 0o755)
	os.MkdirAll(filepath.Join(base, "kv", "empty"), 0o755)
	os.Symlink(filepath.Join(base, "kv", "main", "a.json"), filepath.Join(base, "kv", "main", "link.json"))
	os.Symlink("/nonexistent", filepath.Join(base, "kv", "main", "dangling.json"))
	writeRaw(t, filepath.Join(base, "kv", "file-not-table"), "1")

	keys, err := s.ListJSONKeys("ns", "main")
	if err != nil || !slices.Equal(keys, []string{"a", "b", "link"}) {
		t.Errorf("keys %v %v", keys, err)
	}
	blobs, err := s.ListBlobKeys("ns", "main")
	if err != nil || !slices.Equal(blobs, []string{"icon.png"}) {
		t.Errorf("blob keys %v %v", blobs, err)
	}
	tables, err := s.ListTables("ns")
	if err != nil || !slices.Equal(tables, []string{"empty", "main", "media"}) {
		t.Errorf("tables %v %v", tables, err)
	}
	for _, list := range []func() ([]string, error){
		func() ([]string, error) { return s.ListJSONKeys("other", "main") },
		func() ([]string, error) { return s.ListBlobKeys("ns", "absent") },
		func() ([]string, error) { return s.ListTables("other") },
	} {
		if got, err := list(); err != nil || got == nil || len(got) != 0 {
			t.Errorf("empty listing %#v %v", got, err)
		}
	}
}

// DeleteTable removes the table's entries and blobs, and only them: a link
// inside the table to a folder elsewhere is removed, not followed.
func TestExtensionStoreDeleteTable(t *testing.T) {
	s, root := openExtensionStore(t)
	s.WriteJSON("ns", "extra", "k", []byte("1"))
	s.WriteBlob("ns", "extra", "b.bin", []byte{1})
	s.WriteJSON("ns", "main", "k", []byte("1"))
	outside := filepath.Join(t.TempDir(), "precious")
	writeRaw(t, filepath.Join(outside, "keep.json"), "1")
	os.Symlink(outside, filepath.Join(root, "_tauritavern", "extension-store", "ns", "kv", "extra", "link"))

	if err := s.DeleteTable("ns", " extra "); err != nil {
		t.Fatal(err)
	}
	if tables, _ := s.ListTables("ns"); !slices.Equal(tables, []string{"main"}) {
		t.Errorf("tables %v", tables)
	}
	readFile(t, filepath.Join(outside, "keep.json"))
	wantCode(t, s.DeleteTable("ns", "extra"), domain.CodeExtensionStoreNotFound, domain.KindNotFound)

	// a table with blobs only
	s.WriteBlob("ns", "blobs-only", "b", []byte{1})
	if err := s.DeleteTable("ns", "blobs-only"); err != nil {
		t.Fatal(err)
	}
	if tables, _ := s.ListTables("ns"); !slices.Equal(tables, []string{"main"}) {
		t.Errorf("tables %v", tables)
	}
}
