//go:build unix

package gateway

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// tree is a stdio server's process group on Unix (Android under Termux
// included): the process is started as the leader of a new group
// (Setpgid), which everything it starts joins unless it leaves on
// purpose, so one signal to the group reaches all of them.
type tree struct {
	pgid  int
	guard *os.File // the write end of the guard's stdin (see startGuard); nil without one
	mu    sync.Mutex
	// gone is set once the group was killed after its leader exited: from
	// then on the group id may be reused and is never signalled again.
	gone bool
}

// startTree starts cmd as the leader of a new process group.
func startTree(cmd *exec.Cmd) (*tree, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	if err := startCommand(cmd); err != nil {
		return nil, err
	}
	t := &tree{pgid: cmd.Process.Pid}
	t.guard, _ = startGuard(t.pgid) // best effort: without sh there is none
	return t, nil
}

// startGuard covers the one case the backend cannot handle itself: being
// killed outright (SIGKILL, a crash), when no clean-up of its own runs. It
// starts a guard in the server's process group: a shell that waits on a
// pipe only the backend writes to, and kills the whole group when the pipe
// ends — which happens when the backend's process ends, however it ends.
// While the backend lives the guard only waits; every normal stop kills
// the group, the guard with it, before the backend closes the pipe. (On
// Linux the death signal also ends the server itself; elsewhere the guard
// is what ends it.)
func startGuard(pgid int) (*os.File, error) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(sh, "-c", "read _; kill -s KILL -- -"+strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait() // reaps it once the group is killed
	return w, nil
}

func (t *tree) signal(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.gone {
		syscall.Kill(-t.pgid, sig)
	}
}

// terminate asks every process of the group to end (SIGTERM).
func (t *tree) terminate() { t.signal(syscall.SIGTERM) }

// kill ends every process of the group (SIGKILL).
func (t *tree) kill() { t.signal(syscall.SIGKILL) }

// wait waits for the leader to exit, kills what is left of its group and
// reaps the leader. Where the system can wait without reaping (Linux,
// Android), the group is killed while the leader is still a zombie, so its
// id cannot have been reused; elsewhere it is killed just after.
func (t *tree) wait(cmd *exec.Cmd) (*os.ProcessState, error) {
	exited := waitNoReap(cmd.Process.Pid)
	if exited {
		t.end()
	}
	err := cmd.Wait()
	if !exited {
		t.end()
	}
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		err = nil // a non-zero status is in the state
	}
	return cmd.ProcessState, err
}

func (t *tree) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	syscall.Kill(-t.pgid, syscall.SIGKILL)
	t.gone = true
}

// release closes the guard's pipe. The group was killed when the leader
// exited, the guard with it, so nothing reads the end of the pipe.
func (t *tree) release() {
	if t.guard != nil {
		t.guard.Close()
	}
}
