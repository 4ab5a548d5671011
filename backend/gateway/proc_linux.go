package gateway

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeathSignal has the kernel kill the process when the backend dies,
// however it dies (even by SIGKILL, when no clean-up of its own can run).
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// The death signal is tied to the thread that started the process, not to
// the backend's process: if that thread ended (the Go runtime ends threads
// whose goroutine exits while locked to them), the server would be killed
// with it. So every process is started from one thread that lives as long
// as the backend: a goroutine locked to it, forever.
var (
	forkerOnce sync.Once
	forker     chan func()
)

// startCommand starts cmd from the forker thread.
func startCommand(cmd *exec.Cmd) error {
	forkerOnce.Do(func() {
		forker = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives on
			for f := range forker {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	forker <- func() { done <- cmd.Start() }
	return <-done
}

// waitNoReap waits until the process pid has exited, leaving it a zombie
// (WNOWAIT): its id stays taken until cmd.Wait reaps it. It reports false
// when it could not wait.
func waitNoReap(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
