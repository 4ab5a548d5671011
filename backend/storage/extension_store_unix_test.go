//go:build unix

package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

const hasSpecialFiles = true

// plantSpecialFiles puts a FIFO (fifo.json) and a link to /dev/zero
// (zero.json) in dir.
func plantSpecialFiles(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
}
