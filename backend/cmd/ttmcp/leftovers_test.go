package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// serve removes the temporary files of interrupted writes before it
// answers anything.
func TestServeRemovesLeftovers(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "_tauritavern", "mcp", "registrations")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, ".tauritavern-0123456789abcdef0123456789abcdef.tmp")
	if err := os.WriteFile(leftover, []byte(`{"schemaVersion": 1, "ki`), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(leftover, old, old); err != nil {
		t.Fatal(err)
	}
	// One of ttmcp's own from a kill -9 a moment ago: no process holds its
	// lock, so it goes too, young as it is (issue 27).
	young := filepath.Join(root, "_tauritavern", "mcp", "capabilities", ".ttmcp-0123456789abcdef0123456789abcdef.tmp")
	if err := os.MkdirAll(filepath.Dir(young), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(young, []byte(`{"schemaVersion": 1, "ki`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stop := start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	defer stop()
	for _, p := range []string{leftover, young} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("the leftover %s is still there (%v)", p, err)
		}
	}
}
