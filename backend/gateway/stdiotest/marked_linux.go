//go:build linux

package stdiotest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// MarkerEnv is the environment variable by which a test finds every
// process of a server it started, however deep (npx → npm exec → node),
// not only the one the backend started.
const MarkerEnv = "TTMCP_PEER_MARKER"

// Marked returns the live processes whose environment holds MarkerEnv set
// to marker (read from /proc/<pid>/environ).
func Marked(marker string) []int {
	want := []byte(MarkerEnv + "=" + marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) && Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// WaitUnmarked fails unless every process marked with marker is gone
// within d.
func WaitUnmarked(t testing.TB, marker string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(Marked(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes survived: %v", Marked(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
