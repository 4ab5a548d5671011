// Package hostile holds what the hostile-input suite's fuzzers share: the
// seed and time budget of a run, and the check that nothing outside the
// data root changed.
package hostile

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Run returns a fuzz run's seed and time budget: TTMCP_FUZZ_SEED replays a
// run (a fresh seed otherwise), TTMCP_FUZZ_TIME changes the budget.
func Run(tb testing.TB, budget time.Duration) (seed uint64, _ time.Duration) {
	tb.Helper()
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("TTMCP_FUZZ_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			tb.Fatalf("TTMCP_FUZZ_SEED=%q: %v", s, err)
		}
		seed = n
	}
	if s := os.Getenv("TTMCP_FUZZ_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			tb.Fatalf("TTMCP_FUZZ_TIME=%q: %v", s, err)
		}
		budget = d
	}
	return seed, budget
}

// Plant writes files into dir that the backend must never touch, some
// named like the data root's own.
func Plant(tb testing.TB, dir string) {
	tb.Helper()
	for _, p := range []string{"a.json", "sub/b.json", "_tauritavern/mcp/registrations/x.json"} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"kept":true}`), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// Digest hashes every entry under dir but those under skip (the data
// root): names, modes, sizes and the bytes of regular files.
func Digest(tb testing.TB, dir, skip string) string {
	tb.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == skip {
			return fs.SkipDir
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", path, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
