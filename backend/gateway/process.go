package gateway

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// A process is one started stdio server and everything it started in
// turn: npx starts npm, which starts node; a shell script starts its
// commands. The operating system's grouping of processes (a process group
// on Unix, a job object on Windows: see tree) is what lets the backend end
// all of them, not only the one it started, so none is ever left behind.
//
// The three standard streams are pipes the backend created itself (not
// exec.Cmd's StdinPipe/StdoutPipe): the process's stdout can then be read
// to its end after it exited (the answer it wrote last is not lost), and
// waiting for the process never waits for its streams.
type process struct {
	cmd    *exec.Cmd
	tree   *tree
	stdin  *os.File // the backend's end of the process's stdin
	stdout *os.File // the backend's end of its stdout
	stderr *stderrTail
	// done is closed once the process exited, what it started was ended,
	// and it was reaped; state and waitErr are set then.
	done    chan struct{}
	state   *os.ProcessState
	waitErr error
}

// Codes of starting and running a stdio server's process.
const (
	CodeStdioCommandNotFound = "mcp.stdio_command_not_found"
	CodeStdioStartFailed     = "mcp.stdio_start_failed"
	CodeStdioExitedAtStart   = "mcp.stdio_exited_at_start"
	CodeStdioProcessExited   = "mcp.stdio_process_exited"
	CodeStdioProcessStopped  = "mcp.stdio_process_stopped"
	CodeStdioStdoutInvalid   = "mcp.stdio_stdout_invalid"
	CodeStdioLineTooLong     = "mcp.stdio_line_too_long"
	CodeStdioUnsupported     = "mcp.stdio_unsupported"
	CodeStdioBackendStopping = "mcp.stdio_backend_stopping"
)

// startProcess starts the command of s with its arguments, environment
// (the backend's, with s.Env added over it) and working directory, in a
// tree of its own, and keeps the last stderrLines lines it writes to
// stderr. The command is found in the backend's PATH when it has no path
// separator; nothing goes through a shell.
func startProcess(s domain.Stdio, stderrLines int) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	if errors.Is(cmd.Err, exec.ErrNotFound) || errors.Is(cmd.Err, exec.ErrDot) {
		return nil, domain.Errorf(domain.KindUnavailable, CodeStdioCommandNotFound, "`%s` was not found in the backend's PATH (%v)", s.Command, cmd.Err)
	}
	if s.Cwd != "" {
		// Checked first: the system reports a missing directory as a
		// missing command.
		if fi, err := os.Stat(s.Cwd); err != nil || !fi.IsDir() {
			why := "is not a directory"
			if err != nil {
				why = "cannot be used: " + err.Error()
			}
			return nil, domain.Errorf(domain.KindUnavailable, CodeStdioStartFailed, "the working directory `%s` %s", s.Cwd, why)
		}
	}
	cmd.Dir = s.Cwd
	cmd.Env = os.Environ()
	for _, name := range s.EnvNames() {
		cmd.Env = append(cmd.Env, name+"="+s.Env[name]) // the last of a name wins
	}
	var opened []*os.File
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			opened = append(opened, r, w)
		}
		return r, w, err
	}
	closeAll := func() {
		for _, f := range opened {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, domain.Errorf(domain.KindUnavailable, CodeStdioStartFailed, "cannot create the pipes of `%s`: %v", s.Command, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	t, err := startTree(cmd)
	if err != nil {
		closeAll()
		code := CodeStdioStartFailed
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = CodeStdioCommandNotFound
		}
		return nil, domain.Errorf(domain.KindUnavailable, code, "cannot start `%s`: %v", s.Command, err)
	}
	// The child has its ends; the backend keeps only its own.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, tree: t, stdin: inW, stdout: outR, stderr: newStderrTail(stderrLines), done: make(chan struct{})}
	go p.stderr.readFrom(errR)
	go p.watch()
	return p, nil
}

// watch waits for the process to exit, ends what it left running (a child
// that outlived it), reaps it, and closes done.
func (p *process) watch() {
	p.state, p.waitErr = p.tree.wait(p.cmd)
	p.tree.release()
	close(p.done)
}

// exited reports whether the process has exited and was reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process tree the way the MCP specification asks a client
// to: close its stdin and give it grace to exit; then ask the whole tree
// to terminate (SIGTERM to the process group; on Windows a Ctrl+Break) and
// give it grace again; then kill the whole tree. It returns once the
// process was reaped, or after a last grace when even a kill did not end
// it (a process stuck in the kernel).
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	steps := []func(){p.tree.terminate, p.tree.kill, func() {}}
	for _, next := range steps {
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		next()
	}
}

// describeExit words how the process ended: "exit status 3", "signal:
// killed".
func (p *process) describeExit() string {
	if p.state != nil {
		return p.state.String()
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exited"
}

// stderrTail keeps the last lines a process wrote to stderr, each cut to
// maxStderrLineBytes: enough to show why it failed, bounded whatever it
// writes.
type stderrTail struct {
	mu      sync.Mutex
	lines   []string // a ring of at most max complete lines
	next    int      // where the next line goes once the ring is full
	partial []byte   // the line being written
	max     int
	cut     bool // the partial line was cut
	// drained is closed once the process's stderr ended (every process
	// that had it exited).
	drained chan struct{}
}

const maxStderrLineBytes = 512

func newStderrTail(lines int) *stderrTail {
	return &stderrTail{max: lines, drained: make(chan struct{})}
}

// readFrom copies r into the tail until r ends, then closes r.
func (t *stderrTail) readFrom(r io.ReadCloser) {
	defer close(t.drained)
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		t.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// Write adds p to the tail; it never fails.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := maxStderrLineBytes - len(t.partial); len(chunk) > room {
			t.partial = append(t.partial, chunk[:max(room, 0)]...)
			t.cut = true
		} else {
			t.partial = append(t.partial, chunk...)
		}
		if i < 0 {
			break
		}
		t.push()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// push ends the partial line.
func (t *stderrTail) push() {
	line := strings.ToValidUTF8(strings.TrimRight(string(t.partial), "\r"), "\uFFFD")
	if t.cut {
		line += " …"
	}
	t.partial, t.cut = t.partial[:0], false
	if t.max <= 0 {
		return
	}
	if len(t.lines) < t.max {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % t.max
}

// Lines returns the kept lines, oldest first, with the unfinished last
// line if any.
func (t *stderrTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.lines)+1)
	out = append(out, t.lines[t.next:]...)
	out = append(out, t.lines[:t.next]...)
	if len(t.partial) > 0 {
		out = append(out, strings.ToValidUTF8(string(t.partial), "\uFFFD"))
	}
	return out
}

// withStderr appends the last stderr lines to a message, for people: what
// a failing server said is usually why it failed.
func withStderr(msg string, lines []string) string {
	if len(lines) == 0 {
		return msg + noStderr
	}
	const shown = 5
	if len(lines) > shown {
		lines = lines[len(lines)-shown:]
	}
	return msg + lastStderr + strings.Join(lines, " ⏎ ")
}

const (
	noStderr   = " (it wrote nothing to stderr)"
	lastStderr = "; last stderr: "
)

// withoutStderr is msg without what withStderr appended (the status keeps
// the lines apart).
func withoutStderr(msg string) string {
	if i := strings.Index(msg, lastStderr); i >= 0 {
		return msg[:i]
	}
	return strings.TrimSuffix(msg, noStderr)
}
