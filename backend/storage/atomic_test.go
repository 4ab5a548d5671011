package storage

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func TestWriteFileAtomic(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "file.json")

	// Parent directories are created; the file is private.
	if err := newDataRoot(root).writeFileAtomic(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "old" {
		t.Fatalf("file = %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != fileMode {
		t.Errorf("mode = %v", fi.Mode())
	}

	// A stale temporary file from a crashed writer does not get in the way.
	stale := filepath.Join(filepath.Dir(path), ".ttmcp-00000000000000000000000000000000.tmp")
	writeFile(t, stale, "torn")
	if err := newDataRoot(root).writeFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "new" {
		t.Fatalf("file = %q", got)
	}
	if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 1 || tmp[0] != stale {
		t.Fatalf("temporary files = %v, want only the stale one", tmp)
	}
}

func TestWriteFileAtomicFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		err   *regexp.Regexp
	}{
		{
			name:  "parent is a file",
			setup: func(t *testing.T, path string) { writeFile(t, filepath.Dir(path), "x") },
			err:   regexp.MustCompile(`^Failed to create .*/dir: (not a directory|file exists)$`),
		},
		{
			name:  "target is a directory",
			setup: func(t *testing.T, path string) { writeFile(t, filepath.Join(path, "inside"), "x") },
			err:   regexp.MustCompile(`^Failed to replace .*/dir/file\.json with .*/dir/\.ttmcp-[0-9a-f]{32}\.tmp: `),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dir", "file.json")
			tt.setup(t, path)
			err := newDataRoot(filepath.Dir(filepath.Dir(path))).writeFileAtomic(path, []byte("new"))
			if err == nil || !tt.err.MatchString(err.Error()) || domain.KindOf(err) != domain.KindInternal {
				t.Fatalf("writeFileAtomic = %v", err)
			}
			if fi, statErr := os.Stat(filepath.Dir(path)); statErr == nil && fi.IsDir() {
				if tmp := tempFiles(t, filepath.Dir(path)); len(tmp) != 0 {
					t.Fatalf("temporary files left: %v", tmp)
				}
			}
		})
	}
}
