//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// stdioGateway returns a gateway with short timeouts, closed (every
// process stopped) at the end of the test.
func stdioGateway(t *testing.T, change func(*Config)) *Gateway {
	t.Helper()
	cfg := Config{
		StartupTimeout:   10 * time.Second,
		ListTimeout:      5 * time.Second,
		CallWait:         5 * time.Second,
		CloseTimeout:     time.Second,
		StdioStopGrace:   300 * time.Millisecond,
		StdioIdleTimeout: time.Minute,
	}
	if change != nil {
		change(&cfg)
	}
	g := New(cfg)
	t.Cleanup(func() { g.Close() })
	return g
}

func TestMain(m *testing.M) {
	stdiotest.RunIfChild()
	runFakeListIfChild()
	runMemoryServersIfChild()
	os.Exit(m.Run())
}

// stdioReg returns an active stdio registration running this test binary
// as the server mode, recording its pids in dir.
func stdioReg(t *testing.T, mode, dir string) domain.Registration {
	t.Helper()
	r, err := domain.NewStdioRegistration("stdio "+mode, stdiotest.Stdio(t, mode, dir), domain.ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	r.State = domain.StateActive
	return r
}

// waitStatus waits until the status of id satisfies ok (the supervisor
// learns of an exit on its own goroutine).
func waitStatus(t *testing.T, g *Gateway, id domain.RegistrationID, ok func(domain.ProcessStatus) bool) domain.ProcessStatus {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := g.StdioStatus(id)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status stays %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A stdio server is started on first use and shared by the requests of
// its registration: discovery and calls, one after the other and at once,
// reach the same process over one session.
func TestStdioDiscoverAndCall(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "tools", dir)
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessStopped || st.LastExit != nil {
		t.Fatalf("status before use: %+v", st)
	}
	cat, err := g.Discover(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range cat.Tools {
		names = append(names, tool.NativeName)
	}
	if want := []string{"big", "chatter", "crash", "echo", "greet", "pid", "sleep", "spawn", "steps"}; !slices.Equal(names, want) || len(cat.Diagnostics) != 0 {
		t.Fatalf("tools %v, diagnostics %+v", names, cat.Diagnostics)
	}
	if cat.ServerName == nil || *cat.ServerName != "stdio-test" || !slices.Contains(Versions, cat.ProtocolVersion) {
		t.Fatalf("catalog head %+v", cat)
	}
	t.Logf("negotiated %s", cat.ProtocolVersion)
	if got := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"n":9007199254740993}`)})); got != `{"n":9007199254740993}` {
		t.Fatalf("echo: %s", got)
	}
	var wg sync.WaitGroup
	seen := make([]string, 8)
	for i := range seen {
		wg.Go(func() {
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "pid", Arguments: json.RawMessage(`{}`)})
			if out.Outcome == domain.OutcomeKnownResponse && len(out.Result.TextBlocks) == 1 {
				seen[i] = out.Result.TextBlocks[0].Text
			}
		})
	}
	wg.Wait()
	started := stdiotest.Pids(t, dir, "tools")
	if len(started) != 1 {
		t.Fatalf("%d processes started, want 1", len(started))
	}
	for _, s := range seen {
		if s != strconv.Itoa(started[0]) {
			t.Fatalf("calls answered by %v, the process is %d", seen, started[0])
		}
	}
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessRunning {
		t.Fatalf("status: %+v", st)
	}
	g.Close()
	stdiotest.WaitGone(t, started...)
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessStopped || st.LastExit != nil {
		t.Fatalf("status after close: %+v", st)
	}
	if _, err := g.Discover(context.Background(), r); domain.CodeOf(err) != CodeStdioBackendStopping {
		t.Fatalf("discover after close: %v", err)
	}
}

// A process that exits at once is reported with its code, exit status and
// stderr; each use tries once, nothing retries on its own.
func TestStdioExitAtOnce(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "exit", dir)
	_, err := g.Discover(context.Background(), r)
	if domain.CodeOf(err) != CodeStdioExitedAtStart || !strings.Contains(err.Error(), "exit status 2") ||
		!strings.Contains(err.Error(), "boom: the configuration file /etc/nowhere.json is missing") {
		t.Fatalf("discover: %v", err)
	}
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)})
	if out.Outcome != domain.OutcomeNotSent || out.Code != CodeStdioExitedAtStart || !strings.Contains(out.Message, "boom") {
		t.Fatalf("call: %+v", out)
	}
	st := g.StdioStatus(r.ID)
	if st.State != domain.ProcessStopped || st.LastExit == nil || st.LastExit.Code != CodeStdioExitedAtStart ||
		!slices.Contains(st.LastExit.Stderr, "boom: the configuration file /etc/nowhere.json is missing") {
		t.Fatalf("status: %+v", st)
	}
	time.Sleep(200 * time.Millisecond) // nothing starts it again on its own
	if n := len(stdiotest.Pids(t, dir, "exit")); n != 2 {
		t.Fatalf("%d starts for two uses", n)
	}
}

// A missing command is not_sent with its own code, and never started.
func TestStdioCommandNotFound(t *testing.T) {
	g := stdioGateway(t, nil)
	for _, cmd := range []string{"ttmcp-no-such-command", "/nonexistent/ttmcp-server"} {
		r, err := domain.NewStdioRegistration("missing", domain.Stdio{Command: cmd}, domain.ProtocolAuto)
		if err != nil {
			t.Fatal(err)
		}
		out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)})
		if out.Outcome != domain.OutcomeNotSent || out.Code != CodeStdioCommandNotFound || !strings.Contains(out.Message, cmd) {
			t.Fatalf("%s: %+v", cmd, out)
		}
	}
	r := stdioReg(t, "tools", t.TempDir())
	r.Stdio.Cwd = "/nonexistent-ttmcp-dir"
	r.Endpoint = domain.StdioEndpoint(*r.Stdio)
	if _, err := g.Discover(context.Background(), r); domain.CodeOf(err) != CodeStdioStartFailed || !strings.Contains(err.Error(), "nonexistent-ttmcp-dir") {
		t.Fatalf("missing cwd: %v", err)
	}
}

// A call that was written before the process died is outcome_unknown,
// with the exit status and stderr, and is not retried; nothing restarts
// the process until the next use, which starts a new one.
func TestStdioCrashMidCall(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "tools", dir)
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "crash", Arguments: json.RawMessage(`{}`)})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeStdioProcessExited ||
		!strings.Contains(out.Message, "exit status 3") || !strings.Contains(out.Message, "panic: the tool crashed the server") {
		t.Fatalf("crash: %+v", out)
	}
	first := stdiotest.Pids(t, dir, "tools")
	if got := stdiotest.Received(t, dir, "tools", first[0]); countOf(got, "tools/call") != 1 {
		t.Fatalf("the crashed process received %v: want one tools/call", got)
	}
	stdiotest.WaitGone(t, first...)
	st := waitStatus(t, g, r.ID, func(st domain.ProcessStatus) bool { return st.LastExit != nil })
	if st.State != domain.ProcessStopped || st.LastExit.Code != CodeStdioProcessExited || !slices.Contains(st.LastExit.Stderr, "panic: the tool crashed the server") {
		t.Fatalf("status: %+v", st)
	}
	time.Sleep(200 * time.Millisecond) // nothing starts it again on its own
	if n := len(stdiotest.Pids(t, dir, "tools")); n != 1 {
		t.Fatalf("%d processes before the next use, want 1", n)
	}
	if got := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "pid", Arguments: json.RawMessage(`{}`)})); got == strconv.Itoa(first[0]) {
		t.Fatal("the dead process answered")
	}
	if n := len(stdiotest.Pids(t, dir, "tools")); n != 2 {
		t.Fatalf("%d processes, want 2", n)
	}
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessRunning || st.LastExit != nil {
		t.Fatalf("status after a good start: %+v", st)
	}
}

// A call whose process died after the handshake, before the call was
// written, is not_sent with the exit status and stderr: the call holds
// the server it acquired when the process exits on its own (the
// exit-after-list server answers a discovery, then exits). Nothing was
// written to it, nothing is retried, and nothing starts a process until
// the next use, which starts one.
func TestStdioDiedBeforeCallWritten(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "exit-after-list", dir)
	ctx := context.Background()
	srv, err := g.stdio.acquire(ctx, r) // what callStdio does first
	if err != nil {
		t.Fatal(err)
	}
	if cat, err := g.Discover(ctx, r); err != nil || len(cat.Tools) != 9 {
		t.Fatalf("discover: %d tools, %v", len(cat.Tools), err)
	}
	waitClosed(t, srv.proc.done, "the process to exit")
	// Right after the exit the write may still be tried (and fail: EPIPE,
	// see TestStdioConnWriteAfterExit); once the session ended it is not.
	ended := make(chan struct{})
	go func() { srv.cs.Wait(); close(ended) }()
	for _, when := range []string{"after the exit", "after the session ended"} {
		if when == "after the session ended" {
			waitClosed(t, ended, "the session to end")
		}
		out := g.callOnStdio(ctx, srv, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}, nil)
		if out.Outcome != domain.OutcomeNotSent || out.Code != CodeStdioProcessExited || !strings.Contains(out.Message, "exit status 4") ||
			!strings.Contains(out.Message, "bye: exiting after tools/list") || !strings.Contains(out.Message, "was not sent") {
			t.Fatalf("call %s: %+v", when, out)
		}
	}
	g.stdio.release(srv)
	pids := stdiotest.Pids(t, dir, "exit-after-list")
	if len(pids) != 1 {
		t.Fatalf("%d processes, want 1", len(pids))
	}
	if got := stdiotest.Received(t, dir, "exit-after-list", pids[0]); !slices.Contains(got, "tools/list") || countOf(got, "tools/call") != 0 {
		t.Fatalf("the process received %v", got)
	}
	st := waitStatus(t, g, r.ID, func(st domain.ProcessStatus) bool { return st.LastExit != nil })
	if st.State != domain.ProcessStopped || st.LastExit.Code != CodeStdioProcessExited || !slices.Contains(st.LastExit.Stderr, "bye: exiting after tools/list") {
		t.Fatalf("status: %+v", st)
	}
	if running := g.RunningStdio(); len(running) != 0 {
		t.Fatalf("running after the death: %v", running)
	}

	// The next use starts one process, which gets the one tools/call.
	callText(t, g.Call(ctx, r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}))
	pids = stdiotest.Pids(t, dir, "exit-after-list")
	if len(pids) != 2 {
		t.Fatalf("%d processes, want 2", len(pids))
	}
	calls := 0
	for _, pid := range pids {
		calls += countOf(stdiotest.Received(t, dir, "exit-after-list", pid), "tools/call")
	}
	if calls != 1 {
		t.Fatalf("%d tools/call received, want 1", calls)
	}
}

// Once the process is gone, a tools/call written to its stdin puts no
// byte in the pipe (EPIPE) and is not counted as written, while the
// session itself is still open; into a live process's pipe it is written
// even though the process never reads it.
func TestStdioConnWriteAfterExit(t *testing.T) {
	proc, err := startProcess(stdiotest.Stdio(t, "hang", t.TempDir()), 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.stop(100 * time.Millisecond) })
	tr := newStdioTransport(proc, 1<<20, false)
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id := func(n int64) jsonrpc.ID {
		id, err := jsonrpc.MakeID(float64(n))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	write := func(n int64) (*exchange, error) {
		ctx, ex := withExchange(context.Background(), "tools/call")
		return ex, conn.Write(ctx, &jsonrpc.Request{ID: id(n), Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)})
	}
	if track, err := write(1); err != nil || !track.written.Load() {
		t.Fatalf("to a live process: written %v, %v", track.written.Load(), err)
	}
	proc.tree.kill()
	waitClosed(t, proc.done, "the process to exit")
	track, err := write(2)
	if !errors.Is(err, syscall.EPIPE) || track.written.Load() {
		t.Fatalf("to a dead process: written %v, %v", track.written.Load(), err)
	}
	if _, tracked := tr.conn.calls[id(2)]; tracked {
		t.Fatal("a call that was not written waits for an answer")
	}
}

// waitClosed fails unless c is closed within a few seconds.
func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("waited in vain for %s", what)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// A server that never answers startup fails within the startup timeout
// and is stopped; one that stops answering a call leaves the call
// outcome_unknown and stays usable.
func TestStdioHang(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, func(c *Config) { c.StartupTimeout = 2 * time.Second })
	r := stdioReg(t, "hang", dir)
	start := time.Now()
	_, err := g.Discover(context.Background(), r)
	if domain.CodeOf(err) != CodeInitializeTimeout || !strings.Contains(err.Error(), "thinking…") {
		t.Fatalf("discover: %v", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("startup failed after %s", d)
	}
	stdiotest.WaitGone(t, stdiotest.Pids(t, dir, "hang")...)

	// Stopped on purpose while it starts: the waiting use is told so, and
	// it is not recorded as a failure.
	r = stdioReg(t, "hang", t.TempDir())
	time.AfterFunc(200*time.Millisecond, func() { g.StopStdio(r.ID, "paused") })
	if _, err := g.Discover(context.Background(), r); domain.CodeOf(err) != CodeStdioProcessStopped {
		t.Fatalf("discover stopped while starting: %v", err)
	}
	if st := g.StdioStatus(r.ID); st.LastExit != nil {
		t.Fatalf("a stop on purpose recorded as a failure: %+v", st.LastExit)
	}

	g = stdioGateway(t, func(c *Config) { c.CallWait = 300 * time.Millisecond })
	r = stdioReg(t, "tools", dir)
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "sleep", Arguments: json.RawMessage(`{"ms":5000}`)})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeCallTimeout {
		t.Fatalf("slow call: %+v", out)
	}
	callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}))
	if n := len(stdiotest.Pids(t, dir, "tools")); n != 1 {
		t.Fatalf("%d processes", n)
	}
	// A caller that gives up first: outcome_unknown, cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if out := g.Call(ctx, r, domain.ToolCall{NativeName: "sleep", Arguments: json.RawMessage(`{"ms":5000}`)}); out.Outcome != domain.OutcomeUnknown || out.Code != CodeCallCancelled {
		t.Fatalf("cancelled call: %+v", out)
	}
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if out := g.Call(cancelled, r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}); out.Outcome != domain.OutcomeNotSent || out.Code != CodeCallCancelledBeforeSend {
		t.Fatalf("call cancelled before: %+v", out)
	}
}

// Text that is not JSON-RPC on stdout gets its own code, with the text:
// before startup (the start fails) and during a call (outcome_unknown;
// the process is stopped and the next use starts another).
func TestStdioStdoutNotProtocol(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	_, err := g.Discover(context.Background(), stdioReg(t, "spam", dir))
	if domain.CodeOf(err) != CodeStdioStdoutInvalid || !strings.Contains(err.Error(), `"Server started! Listening on stdio"`) {
		t.Fatalf("discover: %v", err)
	}
	stdiotest.WaitGone(t, stdiotest.Pids(t, dir, "spam")...)

	r := stdioReg(t, "tools", dir)
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "chatter", Arguments: json.RawMessage(`{}`)})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeStdioStdoutInvalid || !strings.Contains(out.Message, "DEBUG: chatter called") {
		t.Fatalf("chatter: %+v", out)
	}
	stdiotest.WaitGone(t, stdiotest.Pids(t, dir, "tools")...)
	callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}))
}

// A line over the limit (the larger of the call's and the read's) is
// outcome_unknown with its own code. A call's answer within the line
// limit but over the call's is outcome_unknown too, and the process stays.
func TestStdioLineTooLong(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, func(c *Config) { c.MaxResponseBytes = 32 << 10; c.MaxReadBytes = 64 << 10 })
	r := stdioReg(t, "tools", dir)
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "big", Arguments: json.RawMessage(`{"bytes":40000}`)})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeCallResponseFailed || !strings.Contains(out.Message, "32768 bytes") {
		t.Fatalf("over the call's limit: %+v", out)
	}
	pids := stdiotest.Pids(t, dir, "tools")
	if got := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "big", Arguments: json.RawMessage(`{"bytes":1000}`)})); len(got) != 1000 {
		t.Fatalf("%d bytes", len(got))
	}
	if again := stdiotest.Pids(t, dir, "tools"); !slices.Equal(again, pids) {
		t.Fatalf("the process changed: %v, then %v", pids, again)
	}
	g = stdioGateway(t, func(c *Config) { c.MaxResponseBytes = 64 << 10; c.MaxReadBytes = 64 << 10 })
	r = stdioReg(t, "tools", t.TempDir())
	if got := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "big", Arguments: json.RawMessage(`{"bytes":1000}`)})); len(got) != 1000 {
		t.Fatalf("%d bytes", len(got))
	}
	out = g.Call(context.Background(), r, domain.ToolCall{NativeName: "big", Arguments: json.RawMessage(`{"bytes":100000}`)})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeStdioLineTooLong || !strings.Contains(out.Message, "65536 bytes") {
		t.Fatalf("big: %+v", out)
	}
}

// Stopping a server ends its whole process tree, a grandchild that ignores
// SIGTERM included; so does the death of the process it started.
func TestStdioProcessTree(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "tools", dir)
	grandchild, _ := strconv.Atoi(callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "spawn", Arguments: json.RawMessage(`{}`)})))
	server := stdiotest.Pids(t, dir, "tools")
	if !stdiotest.Alive(grandchild) || len(server) != 1 {
		t.Fatal("no grandchild")
	}
	g.StopStdio(r.ID, "paused")
	stdiotest.WaitGone(t, append(server, grandchild)...)
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessStopped || st.LastExit != nil {
		t.Fatalf("a stop on purpose is no failure: %+v", st)
	}

	// The server crashes and leaves its grandchild behind: the group goes.
	grandchild, _ = strconv.Atoi(callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "spawn", Arguments: json.RawMessage(`{}`)})))
	if out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "crash", Arguments: json.RawMessage(`{}`)}); out.Code != CodeStdioProcessExited {
		t.Fatalf("crash: %+v", out)
	}
	stdiotest.WaitGone(t, append(stdiotest.Pids(t, dir, "tools"), grandchild)...)
}

// A server that ignores SIGTERM and the end of its stdin is killed after
// the grace periods.
func TestStdioIgnoresSigterm(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "ignore-term", dir)
	callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}))
	start := time.Now()
	g.Close()
	if d := time.Since(start); d < 2*300*time.Millisecond {
		t.Fatalf("stopped after %s: it should have taken both grace periods", d)
	}
	stdiotest.WaitGone(t, stdiotest.Pids(t, dir, "ignore-term")...)
}

// A server unused for StdioIdleTimeout is stopped; a server whose
// configuration changed is replaced.
func TestStdioIdleAndReconfigured(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, func(c *Config) { c.StdioIdleTimeout = 200 * time.Millisecond })
	r := stdioReg(t, "tools", dir)
	callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}))
	stdiotest.WaitGone(t, stdiotest.Pids(t, dir, "tools")...)
	if st := g.StdioStatus(r.ID); st.State != domain.ProcessStopped || st.LastExit != nil {
		t.Fatalf("status after idle: %+v", st)
	}

	g = stdioGateway(t, nil)
	first := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "pid", Arguments: json.RawMessage(`{}`)}))
	r.Stdio.Env["EXTRA"] = "1"
	second := callText(t, g.Call(context.Background(), r, domain.ToolCall{NativeName: "pid", Arguments: json.RawMessage(`{}`)}))
	if first == second {
		t.Fatal("a changed environment reused the old process")
	}
	old, _ := strconv.Atoi(first)
	stdiotest.WaitGone(t, old)
}
