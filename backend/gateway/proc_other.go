//go:build !unix && !windows

package gateway

import (
	"errors"
	"os"
	"os/exec"
)

// tree: this platform has no way to end a process tree that ttmcp knows,
// so stdio servers are not started here.
type tree struct{}

func startTree(*exec.Cmd) (*tree, error) {
	return nil, errors.New(CodeStdioUnsupported + ": stdio servers are not supported on this platform")
}

func (*tree) terminate()                               {}
func (*tree) kill()                                    {}
func (*tree) release()                                 {}
func (*tree) wait(*exec.Cmd) (*os.ProcessState, error) { return nil, nil }
