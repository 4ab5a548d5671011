package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Local (stdio) servers: a registration with a domain.Stdio is reached by
// running its command (configured by the user on this machine, never by a
// page) and speaking MCP over the process's stdin and stdout.
//
// Unlike a remote server, reached over a fresh session per operation, a
// stdio server is one process and the process is one session: it is
// started on the first use of the registration (discovery, test call,
// model call), shared by that registration's requests (go-sdk multiplexes
// them), and stopped after StdioIdleTimeout unused, on pause and removal
// (StopStdio), and when the backend stops (Close) — its whole process
// tree, with grace, never left behind (see process and tree). A process
// that exits, or breaks the protocol, is not restarted on its own: the
// next use starts a new one. One use starts at most one process, so
// nothing restarts in a loop.

// stdioServers supervises the processes of the stdio registrations.
type stdioServers struct {
	cfg Config
	g   *Gateway

	mu       sync.Mutex
	current  map[domain.RegistrationID]*stdioServer
	lastExit map[domain.RegistrationID]*domain.ProcessExit
	closed   bool
	// stopping counts the stops running in the background.
	stopping sync.WaitGroup
}

func newStdioServers(cfg Config) *stdioServers {
	return &stdioServers{cfg: cfg, current: map[domain.RegistrationID]*stdioServer{}, lastExit: map[domain.RegistrationID]*domain.ProcessExit{}}
}

// stdioServer is one process of a registration and its session.
type stdioServer struct {
	id   domain.RegistrationID
	conf domain.Registration // what it was started from
	// life ends when the server is retired: a start still running gives up.
	life context.Context
	quit context.CancelFunc

	ready chan struct{} // closed once the start succeeded or failed
	err   error         // why it failed to start, once ready is closed
	// watched is closed once watch has recorded the end of a started
	// process and retired it.
	watched chan struct{}

	// Set by a successful start, before ready is closed.
	proc *process
	cs   *mcp.ClientSession
	conn *stdioConn
	// follow hears its list-changed notifications (follow.go); on stdio
	// they come on stdout, while the process runs.
	follow *follower
	// turns: a 2025 call that may ask the user has the session to itself
	// (write lock), so the questions that come meanwhile are its own;
	// asking is that call (elicit.go).
	turns  sync.RWMutex
	asking atomic.Pointer[asking]

	// Under stdioServers.mu.
	users   int
	idle    *time.Timer
	retired bool
	stopped string // why it was stopped on purpose ("paused or removed", ...), "" if it was not
}

// sameStart reports whether the process of a and b is the same: same
// command line, environment, working directory and protocol preference.
func sameStart(a, b domain.Registration) bool {
	return a.Stdio != nil && b.Stdio != nil && a.Stdio.Equal(*b.Stdio) && a.Protocol == b.Protocol
}

// acquire returns the running server of r, starting it when there is none
// (or when the one running was started from another configuration), and
// counts the caller as a user until release. It waits for the start,
// bounded by StartupTimeout, or until ctx ends.
func (ss *stdioServers) acquire(ctx context.Context, r domain.Registration) (*stdioServer, error) {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, domain.Errorf(domain.KindUnavailable, CodeStdioBackendStopping, "the backend is stopping; stdio servers are not started any more")
	}
	srv := ss.current[r.ID]
	if srv != nil && !sameStart(srv.conf, r) {
		ss.retireLocked(srv, "its configuration changed")
		srv = nil
	}
	if srv != nil && srv.ending() {
		// Its process ended and watch is recording why: the operation
		// goes to the next process, not to the one that is gone.
		ss.mu.Unlock()
		select {
		case <-srv.watched:
		case <-ctx.Done():
			return nil, cancelled(ctx)
		}
		return ss.acquire(ctx, r)
	}
	if srv == nil {
		srv = &stdioServer{id: r.ID, conf: r.Clone(), ready: make(chan struct{}), watched: make(chan struct{}), follow: &follower{g: ss.g, id: r.ID}}
		srv.life, srv.quit = context.WithCancel(context.Background())
		ss.current[r.ID] = srv
		go ss.start(srv)
	}
	srv.users++
	if srv.idle != nil {
		srv.idle.Stop()
		srv.idle = nil
	}
	ss.mu.Unlock()
	select {
	case <-srv.ready:
	case <-ctx.Done():
		ss.release(srv)
		return nil, cancelled(ctx)
	}
	if srv.err != nil {
		ss.release(srv)
		return nil, srv.err
	}
	return srv, nil
}

// release ends a use. The last user arms the idle timer.
func (ss *stdioServers) release(srv *stdioServer) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	srv.users--
	if srv.users == 0 && !srv.retired {
		srv.idle = time.AfterFunc(ss.cfg.StdioIdleTimeout, func() {
			ss.mu.Lock()
			defer ss.mu.Unlock()
			if srv.users == 0 {
				ss.retireLocked(srv, "it was idle")
			}
		})
	}
}

// retireLocked takes srv out of service and stops its process in the
// background. ss.mu is held.
func (ss *stdioServers) retireLocked(srv *stdioServer, why string) {
	if srv.retired {
		return
	}
	srv.retired, srv.stopped = true, why
	srv.follow.stop()
	if ss.current[srv.id] == srv {
		delete(ss.current, srv.id)
	}
	if srv.idle != nil {
		srv.idle.Stop()
		srv.idle = nil
	}
	srv.quit()
	ss.stopping.Add(1)
	go func() {
		defer ss.stopping.Done()
		<-srv.ready
		srv.shutdown(ss.cfg)
	}()
}

// shutdown stops the process tree (stdin closed first, see process.stop),
// then closes the session, whose calls then end.
func (srv *stdioServer) shutdown(cfg Config) {
	if srv.proc != nil {
		srv.proc.stop(cfg.StdioStopGrace)
	}
	if srv.cs != nil {
		closeWithin(srv.cs, cfg.CloseTimeout)
	}
}

// closeWithin closes cs, waiting at most d.
func closeWithin(cs *mcp.ClientSession, d time.Duration) {
	done := make(chan struct{})
	go func() {
		cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// stop retires the server of id, if one runs.
func (ss *stdioServers) stop(id domain.RegistrationID, why string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if srv := ss.current[id]; srv != nil {
		ss.retireLocked(srv, why)
	}
}

// close retires every server, refuses new ones, and waits for every
// process to be stopped.
func (ss *stdioServers) close() {
	ss.mu.Lock()
	ss.closed = true
	for _, srv := range ss.current {
		ss.retireLocked(srv, "the backend stopped")
	}
	ss.mu.Unlock()
	ss.stopping.Wait()
}

// running returns the registrations whose process runs or starts.
func (ss *stdioServers) running() []domain.RegistrationID {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ids := make([]domain.RegistrationID, 0, len(ss.current))
	for id := range ss.current {
		ids = append(ids, id)
	}
	return ids
}

// status returns what is known of the process of id.
func (ss *stdioServers) status(id domain.RegistrationID) domain.ProcessStatus {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := domain.ProcessStatus{State: domain.ProcessStopped}
	if srv := ss.current[id]; srv != nil {
		st.State = domain.ProcessStarting
		select {
		case <-srv.ready:
			st.State = domain.ProcessRunning
		default:
		}
	}
	if e := ss.lastExit[id]; e != nil {
		c := *e
		st.LastExit = &c
	}
	return st
}

// elicit is the process session's ElicitationHandler (2025): the question
// goes to the asking call that holds the process (turns), if any.
func (srv *stdioServer) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return srv.asking.Load().answer(req)
}

// connectionStatus is Gateway.Status of a stdio registration: the running
// process is its open connection, following what its server advertised.
func (ss *stdioServers) connectionStatus(id domain.RegistrationID) domain.ConnectionStatus {
	st := domain.ConnectionStatus{State: domain.ConnectionClosed, Sessions: domain.SessionsKept}
	ss.mu.Lock()
	srv := ss.current[id]
	ss.mu.Unlock()
	if srv == nil {
		return st
	}
	select {
	case <-srv.ready:
	default:
		st.State = domain.ConnectionOpening
		return st
	}
	if srv.cs == nil {
		return st
	}
	init := srv.cs.InitializeResult()
	st.State, st.ProtocolVersion = domain.ConnectionOpen, init.ProtocolVersion
	if c := init.Capabilities; ss.cfg.Changed != nil && c != nil {
		st.Following = c.Tools != nil && c.Tools.ListChanged || c.Prompts != nil && c.Prompts.ListChanged ||
			c.Resources != nil && c.Resources.ListChanged
	}
	if !st.Following {
		st.Note = "the server announces no list changes"
	}
	return st
}

// start starts srv's process and its MCP session, within StartupTimeout.
// A failure is srv.err, recorded as the registration's last exit.
func (ss *stdioServers) start(srv *stdioServer) {
	defer close(srv.ready)
	ctx, cancel := context.WithTimeout(srv.life, ss.cfg.StartupTimeout)
	defer cancel()
	proc, err := startProcess(*srv.conf.Stdio, ss.cfg.StdioStderrLines)
	if err != nil {
		srv.err = err
		ss.failed(srv, err, nil)
		return
	}
	ask, accept := offer(srv.conf.Protocol)
	// A line may be as long as the largest answer accepted: a read's
	// (MaxReadBytes) is longer than a call's, whose size is checked per
	// answer (sendStdio), so a long answer never ends the session.
	tr := newStdioTransport(proc, int(max(ss.cfg.MaxResponseBytes, ss.cfg.MaxReadBytes)), ask == Versions[0] && len(accept) == 1)
	tr.conn.progress = func(params []byte) bool { return ss.g.progress.take(srv.id, params) }
	tr.conn.question = func(params json.RawMessage) {
		if cur := srv.asking.Load(); cur != nil {
			cur.ex.keep(params)
		}
	}
	opts := &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{}, // none: the host serves no sampling, roots or elicitation
		MultiRoundTrip:              &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:                      ss.cfg.Log,
		ElicitationCompleteHandler:  ss.g.pages.completed(srv.id),
		ProgressNotificationHandler: ss.g.progress.handler(srv.id),
	}
	srv.follow.handlers(opts)
	// The process is one session for every page, so a 2025 one advertises
	// elicitation at initialize whatever the call (its questions go to an
	// asking call, or are answered cancel; DECISIONS "Elicitation"); a
	// 2026 one advertises it per request, only for a call that may ask.
	// Likewise MCP Apps: a 2025 process is told at initialize that its
	// client renders Apps (what only a page that renders them may do stays
	// gated per page: the service's App commands, the catalog's
	// visibility); a 2026 one is told per request, only for a page that
	// renders them (sendingMiddleware).
	opts.ElicitationHandler = srv.elicit
	opts.Capabilities = withApps(elicitCaps)
	client := mcp.NewClient(&mcp.Implementation{Name: ss.cfg.ClientName, Version: ss.cfg.ClientVersion}, opts)
	client.AddSendingMiddleware(sendingMiddleware)
	cs, err := connectStdio(ctx, client, tr, ask)
	if err == nil {
		err = checkStartup(cs.InitializeResult(), accept)
	}
	if err != nil {
		srv.err = ss.startError(srv, ctx, proc, tr, ask, err)
		ss.failed(srv, srv.err, proc)
		ss.stopping.Add(1)
		go func() { // the error does not wait for the stop
			defer ss.stopping.Done()
			proc.stop(ss.cfg.StdioStopGrace)
			if cs != nil {
				closeWithin(cs, ss.cfg.CloseTimeout)
			}
		}()
		return
	}
	srv.proc, srv.cs, srv.conn = proc, cs, tr.conn
	ss.mu.Lock()
	delete(ss.lastExit, srv.id)
	ss.mu.Unlock()
	go ss.watch(srv)
}

// connectStdio runs go-sdk's Connect, returning as soon as ctx ends. The
// abandoned attempt ends when the process is stopped.
func connectStdio(ctx context.Context, client *mcp.Client, tr *stdioTransport, version string) (*mcp.ClientSession, error) {
	done := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		done <- connected{cs, err}
	}()
	select {
	case r := <-done:
		return r.cs, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.cs != nil {
				r.cs.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// checkStartup checks what startup negotiated: an accepted version, and
// the server's information where it is required.
func checkStartup(res *mcp.InitializeResult, accept []string) error {
	if res == nil || !slices.Contains(accept, res.ProtocolVersion) {
		got := "(none)"
		if res != nil {
			got = res.ProtocolVersion
		}
		return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "The server selected MCP %s; accepted versions: %s", got, strings.Join(accept, ", "))
	}
	// serverInfo is required in an initialize result but optional in a
	// 2026-07-28 server/discover result.
	if res.ServerInfo == nil && res.ProtocolVersion < Versions[0] {
		return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "MCP startup completed without server information")
	}
	return nil
}

// startError words a failed start: the server was stopped meanwhile, it
// broke the protocol on stdout, it exited, it did not finish in time, or
// its answer was not acceptable.
func (ss *stdioServers) startError(srv *stdioServer, ctx context.Context, proc *process, tr *stdioTransport, ask string, err error) error {
	if de, ok := errors.AsType[*domain.Error](err); ok {
		return de // checkStartup's
	}
	if srv.life.Err() != nil {
		return domain.Errorf(domain.KindUnavailable, CodeStdioProcessStopped, "the server was stopped while it started")
	}
	if code, msg := tr.conn.broken(); code != "" {
		return domain.Errorf(domain.KindUnavailable, code, "%s", withStderr(msg, proc.stderr.Lines()))
	}
	if ctx.Err() != nil {
		return domain.Errorf(domain.KindUnavailable, CodeInitializeTimeout, "%s",
			withStderr(fmt.Sprintf("the server did not complete startup within %s", ss.cfg.StartupTimeout), proc.stderr.Lines()))
	}
	if tr.conn.refusedLegacy.Load() {
		return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed,
			"the server does not offer MCP %s (server/discover failed) and this registration accepts no other version", ask)
	}
	if ss.awaitExit(proc) {
		return domain.Errorf(domain.KindUnavailable, CodeStdioExitedAtStart, "%s",
			withStderr(fmt.Sprintf("the process exited (%s) before completing MCP startup", proc.describeExit()), proc.stderr.Lines()))
	}
	return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "%s", withStderr(err.Error(), proc.stderr.Lines()))
}

// exitWait bounds how long a failure waits to learn whether the process
// exited (its stdout ends a moment before it is reaped).
const exitWait = 500 * time.Millisecond

// awaitExit reports whether proc exited, waiting a moment for it, and
// then for what it wrote to stderr last.
func (ss *stdioServers) awaitExit(proc *process) bool {
	d := min(exitWait, ss.cfg.CloseTimeout)
	select {
	case <-proc.done:
	case <-time.After(d):
		return false
	}
	select {
	case <-proc.stderr.drained:
	case <-time.After(d):
	}
	return true
}

// failed records a start failure as the registration's last exit and
// takes srv out of service (the next use starts afresh).
func (ss *stdioServers) failed(srv *stdioServer, err error, proc *process) {
	var stderr []string
	if proc != nil {
		stderr = proc.stderr.Lines()
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !srv.retired { // a start stopped on purpose is no failure
		ss.recordLocked(srv.id, err, stderr)
	}
	srv.retired = true
	if ss.current[srv.id] == srv {
		delete(ss.current, srv.id)
	}
}

func (ss *stdioServers) recordLocked(id domain.RegistrationID, err error, stderr []string) {
	e := &domain.ProcessExit{Time: time.Now().UTC(), Code: domain.CodeOf(err), Message: err.Error(), Stderr: stderr}
	if de, ok := errors.AsType[*domain.Error](err); ok {
		e.Message = withoutStderr(de.Detail) // the lines are in Stderr
	}
	ss.lastExit[id] = e
}

// watch waits for a running server's process to exit or its session to
// break, when nobody asked for it: that is recorded as the last exit, and
// the server is retired (what is left of it is stopped).
func (ss *stdioServers) watch(srv *stdioServer) {
	ended := make(chan struct{})
	go func() {
		srv.cs.Wait()
		close(ended)
	}()
	select {
	case <-srv.proc.done:
	case <-ended:
	}
	defer close(srv.watched)
	code, msg := srv.failure(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if srv.retired {
		return // stopped on purpose
	}
	ss.recordLocked(srv.id, domain.Errorf(domain.KindUnavailable, code, "%s", msg), srv.proc.stderr.Lines())
	ss.retireLocked(srv, "")
}

// ending reports whether srv started and its process or its session has
// ended since (watch retires it a moment later).
func (srv *stdioServer) ending() bool {
	select {
	case <-srv.ready:
	default:
		return false
	}
	if srv.err != nil || srv.proc == nil {
		return false
	}
	select {
	case <-srv.proc.done:
		return true
	default:
	}
	code, _ := srv.conn.broken()
	return code != ""
}

// failure says why a running server can no longer answer: it was stopped
// on purpose, it broke the protocol on stdout, or its process exited.
func (srv *stdioServer) failure(ss *stdioServers) (code, message string) {
	ss.mu.Lock()
	stopped := srv.stopped
	ss.mu.Unlock()
	if stopped != "" {
		return CodeStdioProcessStopped, "the server's process was stopped (" + stopped + ")"
	}
	if code, msg := srv.conn.broken(); code != "" {
		return code, withStderr(msg, srv.proc.stderr.Lines())
	}
	if ss.awaitExit(srv.proc) {
		return CodeStdioProcessExited, withStderr(fmt.Sprintf("the process exited (%s)", srv.proc.describeExit()), srv.proc.stderr.Lines())
	}
	return CodeStdioConnectionLost, withStderr("the connection to the process broke", srv.proc.stderr.Lines())
}

// CodeStdioConnectionLost: the session ended while the process still ran.
const CodeStdioConnectionLost = "mcp.stdio_connection_lost"

// discoverStdio is Discover for a stdio registration, over its shared
// session.
func (g *Gateway) discoverStdio(ctx context.Context, r domain.Registration) (domain.Catalog, error) {
	srv, err := g.stdio.acquire(ctx, r)
	if err != nil {
		return domain.Catalog{}, err
	}
	defer g.stdio.release(srv)
	g.observe(r, srv.cs.InitializeResult())
	init := srv.cs.InitializeResult()
	cat := catalogHead(init)
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return cat, nil
	}
	lctx, cancel := context.WithTimeout(ctx, g.cfg.ListTimeout)
	defer cancel()
	lctx, _ = withExchange(lctx, "")
	failed := func(err error) error {
		if code, msg := srv.failure(g.stdio); code != "" {
			return domain.Errorf(domain.KindUnavailable, code, "%s", msg)
		}
		return domain.Errorf(domain.KindUnavailable, CodeListFailed, "%s", err)
	}
	l, err := g.listPages(ctx, lctx, srv.cs, failed, "", nil)
	if err != nil {
		return domain.Catalog{}, err
	}
	cat.Tools, cat.Diagnostics = domain.ValidateTools(l.tools, g.schemas)
	cat.Diagnostics = append(cat.Diagnostics, l.excluded...)
	return cat, nil
}

// callStdio is Call's one send for a stdio registration: one tools/call
// over its shared session. A call is sent once any byte of it was written
// to the process's stdin; nothing is sent again here (only Call sends a
// call refused until the user was done on a page once more).
func (g *Gateway) callStdio(ctx context.Context, r domain.Registration, call domain.ToolCall, a *asker) domain.CallOutcome {
	srv, err := g.stdio.acquire(ctx, r)
	if err != nil {
		return stdioStartNotSent(err)
	}
	defer g.stdio.release(srv)
	g.observe(r, srv.cs.InitializeResult())
	return g.callOnStdio(ctx, srv, call, a)
}

// callOnStdio makes the call over srv, which the caller acquired. srv's
// process may have died since (after the handshake, before the call was
// written: then nothing reached it, and the call is not_sent with the
// reason the process ended).
func (g *Gateway) callOnStdio(ctx context.Context, srv *stdioServer, call domain.ToolCall, a *asker) domain.CallOutcome {
	init := srv.cs.InitializeResult()
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return domain.NotSent(CodeCallToolsMissing, "The MCP server did not declare the tools capability")
	}
	modern := init.ProtocolVersion >= Versions[0]
	// A 2025 process's questions carry nothing that tells whose they are:
	// while a call that may ask runs, it has the process to itself (the
	// others wait); between such calls a question is answered cancel.
	if a != nil && !modern {
		srv.turns.Lock()
		defer srv.turns.Unlock()
	} else {
		srv.turns.RLock()
		defer srv.turns.RUnlock()
	}
	out, ans := g.sendStdio(ctx, srv, call, a, nil)
	if a == nil {
		return out
	}
	rounds := 1
	if modern {
		out, rounds = g.rounds(ctx, a, out, ans, func(cont *continuation) (domain.CallOutcome, rawAnswer) {
			return g.sendStdio(ctx, srv, call, a, cont)
		})
	}
	if recs := a.trace(); len(recs) > 0 || rounds > 1 {
		out.Rounds, out.Elicitations = rounds, recs
	}
	return out
}

// sendStdio makes one tools/call request over srv's session.
func (g *Gateway) sendStdio(ctx context.Context, srv *stdioServer, call domain.ToolCall, a *asker, cont *continuation) (domain.CallOutcome, rawAnswer) {
	cctx, dl := g.requestContext(ctx, g.cfg.CallWait)
	defer dl.done()
	cctx, ex := withExchange(cctx, "tools/call")
	version := srv.cs.InitializeResult().ProtocolVersion
	if a != nil {
		ex.mayElicit = true
		a.pause = dl.pause
		if version < Versions[0] {
			srv.asking.Store(&asking{a: a, ex: ex})
			defer srv.asking.Store(nil)
		}
	}
	p := callParams(call, cont)
	defer g.progress.attach(srv.id, call.Progress, p)()
	res, err := srv.cs.CallTool(cctx, p)
	ans, known := ex.end()
	if known {
		if int64(len(ans.result)) > g.cfg.MaxResponseBytes {
			// The line fit (a read's answers may be longer), the call's
			// answer may not: as an HTTP body over the cap.
			return domain.Unknown(CodeCallResponseFailed, fmt.Sprintf("The tool response could not be confirmed: the server's response exceeded %d bytes; the tool may have executed", g.cfg.MaxResponseBytes)), ans
		}
		if out, ok := answerOutcome(ans); ok {
			return out, ans
		}
	}
	if !ex.written.Load() {
		// Nothing reached the process.
		if ctx.Err() != nil {
			return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it was queued"), ans
		}
		if code, msg := srv.failure(g.stdio); code != "" && err != nil {
			return domain.NotSent(code, msg+"; the tool request was not sent"), ans
		}
		if err == nil {
			err = errors.New("no request was written")
		}
		return domain.NotSent(CodeCallNotQueued, "The tool request could not be queued: "+err.Error()), ans
	}
	if out, ok := writtenOutcome(ctx, cctx, res, err, "the tool"); ok {
		return out, ans
	}
	if code, msg := srv.failure(g.stdio); code != "" {
		return domain.Unknown(code, msg+"; the tool may have executed"), ans
	}
	return domain.Unknown(CodeCallResponseFailed, "The tool response could not be confirmed: "+err.Error()+"; the tool may have executed"), ans
}

// stdioStartNotSent maps a failure to start (or reach) a stdio server to
// its not_sent outcome: the stdio codes stay (they say what to fix), the
// others take the call's startup codes.
func stdioStartNotSent(err error) domain.CallOutcome { return stdioStartNotSentAs(err, "tool request") }

// stdioStartNotSentAs is stdioStartNotSent for any request, named by what.
func stdioStartNotSentAs(err error, what string) domain.CallOutcome {
	switch code := domain.CodeOf(err); code {
	case CodeStdioCommandNotFound, CodeStdioStartFailed, CodeStdioExitedAtStart, CodeStdioStdoutInvalid,
		CodeStdioLineTooLong, CodeStdioProcessStopped, CodeStdioBackendStopping, CodeStdioUnsupported:
		de, _ := errors.AsType[*domain.Error](err)
		return domain.NotSent(code, de.Detail+"; the "+what+" was not sent")
	}
	return startupNotSentAs(err, what)
}

// StdioStatus returns what is known of the process of stdio registration
// id: stopped, starting or running, and how the last one ended when it
// failed to start or died.
func (g *Gateway) StdioStatus(id domain.RegistrationID) domain.ProcessStatus {
	return g.stdio.status(id)
}

// RunningStdio returns the stdio registrations whose process runs or
// starts.
func (g *Gateway) RunningStdio() []domain.RegistrationID { return g.stdio.running() }

// StopStdio stops the process of stdio registration id, if one runs (the
// registration was paused or removed). It returns at once; the process is
// stopped in the background, and Close waits for it.
func (g *Gateway) StopStdio(id domain.RegistrationID, why string) {
	g.stdio.stop(id, why)
}
