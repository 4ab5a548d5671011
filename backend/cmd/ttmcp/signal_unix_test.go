//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// Ctrl+C (SIGINT) and a service manager's stop (SIGTERM) end the backend
// cleanly: it logs that it stopped and exits 0.
func TestSignalsStopServeCleanly(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", t.TempDir())
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := p.wait(t); err != nil {
				t.Fatalf("exit after %v: %v\n%s", sig, err, p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "ttmcp stopped") {
				t.Fatalf("no clean stop logged:\n%s", p.stderr)
			}
		})
	}
}
