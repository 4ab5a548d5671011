package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with
// -ldflags "-X main.version=... -X main.commit=..." (make build, make dist).
var (
	version = "dev"
	commit  = ""
)

// printVersion writes "ttmcp <version> (<commit>, <os>/<arch>)". Without a
// commit from the linker (a plain go build), it falls back to the VCS
// revision Go stamped into the binary, if any.
func printVersion(w io.Writer) {
	c := commit
	if c == "" {
		c = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	fmt.Fprintf(w, "ttmcp %s (commit %s, %s/%s)\n", version, c, runtime.GOOS, runtime.GOARCH)
}
