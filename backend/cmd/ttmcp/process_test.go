package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// TestMain lets a test start this test binary as the real ttmcp process:
// with TTMCP_TEST_MAIN=1 it runs main() instead of the tests, so signals,
// exit codes and the OS's view of the process are the real ones.
func TestMain(m *testing.M) {
	// First: a stdio server started by a ttmcp child inherits its
	// TTMCP_TEST_MAIN=1.
	stdiotest.RunIfChild()
	if os.Getenv("TTMCP_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is a ttmcp process started by a test.
type process struct {
	cmd    *exec.Cmd
	url    string        // the base URL it announced
	stderr *lockedBuffer // everything it logged
	done   chan error    // its Wait result
}

// startProcess runs `ttmcp args...` as a child process and waits for the
// URL it announces.
func startProcess(t testing.TB, args ...string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TTMCP_TEST_MAIN=1")
	r, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(r)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		for sc.Scan() {
			p.stderr.WriteLine(sc.Text())
			if m := re.FindString(sc.Text()); m != "" {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	go func() { <-copied; p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("ttmcp %v exited before serving: %v\n%s", args, err, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("ttmcp %v announced no URL\n%s", args, p.stderr)
	}
	return p
}

// wait waits for the process to exit and returns its error.
func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("ttmcp did not exit\n%s", p.stderr)
		return nil
	}
}

// logged waits until the process has logged a line containing want (its
// stderr is read as it comes: a line written just after the one the test
// waited for may not be in yet), and returns the log so far; it fails the
// test after 10 s.
func (p *process) logged(t *testing.T, want string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s := p.stderr.String(); strings.Contains(s, want) || time.Now().After(deadline) {
			return s
		}
	}
}

// socket is one page connection to a ttmcp process: commands on it share
// it (a test call's start and call must).
type socket struct {
	t    *testing.T
	conn *websocket.Conn
	id   int
}

func dial(t *testing.T, base string) *socket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.Get(base + jsapi.PathSession)
	if err != nil {
		t.Fatal(err)
	}
	var s jsapi.Session
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.Dial(ctx, s.WS, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 24)
	t.Cleanup(func() { c.CloseNow() })
	hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: s.Token})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	return &socket{t: t, conn: c}
}

// do runs one command and returns its result frame.
func (s *socket) do(command, args string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.id++
	frame := `{"type":"invoke","id":` + strconv.Itoa(s.id) + `,"command":"` + command + `","args":` + args + `}`
	if err := s.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		s.t.Fatal(err)
	}
	for {
		_, b, err := s.conn.Read(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		if strings.Contains(string(b), `"id":`+strconv.Itoa(s.id)+`,`) || strings.Contains(string(b), `"id":`+strconv.Itoa(s.id)+`}`) {
			return string(b)
		}
	}
}

// invoke opens a socket the way a page does (session token, hello) and
// runs one command.
func invoke(t *testing.T, base, command, args string) string {
	t.Helper()
	s := dial(t, base)
	defer s.conn.CloseNow()
	return s.do(command, args)
}

// lockedBuffer collects a child's log lines for failure messages.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// A data root whose path has spaces and non-ASCII letters works end to
// end: the registration is written under it, and listed back.
func TestServeDataRootWithSpacesAndNonASCII(t *testing.T) {
	root := filepath.Join(t.TempDir(), "My Data", "数据 Ünïcode")
	p := startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	created := invoke(t, p.url, jsapi.CmdCreateServer, `{"dto":{"displayName":"Spaces","endpoint":"http://127.0.0.1:9/mcp"}}`)
	id := regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindStringSubmatch(created)
	if id == nil {
		t.Fatalf("create: %s", created)
	}
	if _, err := os.Stat(filepath.Join(root, "_tauritavern", "mcp", "registrations", id[1]+".json")); err != nil {
		t.Fatalf("registration file: %v", err)
	}
	if list := invoke(t, p.url, jsapi.CmdListServers, `{}`); !strings.Contains(list, id[1]) {
		t.Fatalf("list: %s", list)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		p.cmd.Process.Kill() // Windows cannot send it; the path is what this tests
		p.wait(t)
		return
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
}
