package gateway

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tree is a stdio server's job object on Windows: every process it starts
// belongs to the job (Windows puts children in their parent's job), and
// the job is created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, so when its
// last handle closes — the backend releasing it, or the backend's process
// ending however it ends, a crash included — Windows ends every process
// in it.
//
// The process is created suspended and only resumed once it is in the
// job, so nothing it starts can escape the job by starting first.
type tree struct {
	pid    int
	mu     sync.Mutex
	job    windows.Handle
	closed bool
}

func startTree(cmd *exec.Cmd) (*tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	// CREATE_NEW_PROCESS_GROUP: the console's Ctrl+C, meant for the
	// backend, does not reach the server; the backend stops it itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	t := &tree{pid: cmd.Process.Pid, job: job}
	if err := t.adopt(); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		windows.CloseHandle(job)
		return nil, err
	}
	return t, nil
}

// adopt puts the suspended process in the job, then resumes it.
func (t *tree) adopt() error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(t.pid))
	if err != nil {
		return fmt.Errorf("OpenProcess: %w", err)
	}
	err = windows.AssignProcessToJobObject(t.job, h)
	windows.CloseHandle(h)
	if err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return resumeThreads(uint32(t.pid))
}

// resumeThreads resumes the threads of process pid (a process created
// suspended has one).
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread: %w", err)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("the started process has no thread to resume")
	}
	return nil
}

// terminate asks the process to end: Ctrl+Break to its process group
// (which a console program may handle); Windows has no SIGTERM.
func (t *tree) terminate() {
	windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.pid))
}

// kill ends every process of the job.
func (t *tree) kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		windows.TerminateJobObject(t.job, 1)
	}
}

// wait waits for the process to exit, then ends what is left of its job.
func (t *tree) wait(cmd *exec.Cmd) (*os.ProcessState, error) {
	err := cmd.Wait()
	t.kill()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		err = nil
	}
	return cmd.ProcessState, err
}

// release closes the job's handle (which ends whatever might still be in
// it).
func (t *tree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		windows.CloseHandle(t.job)
	}
}
