//go:build unix && !linux

package gateway

import (
	"os/exec"
	"syscall"
)

// setDeathSignal: only Linux has a parent-death signal; elsewhere a server
// whose backend was killed sees its stdin end (most exit then).
func setDeathSignal(*syscall.SysProcAttr) {}

// startCommand starts cmd.
func startCommand(cmd *exec.Cmd) error { return cmd.Start() }

// waitNoReap cannot wait without reaping here: tree.wait reaps, then kills
// the group.
func waitNoReap(int) bool { return false }
