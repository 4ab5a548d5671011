package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// session is one go-sdk client session over ttmcp's transport: the shared
// session of a live connection (live.go), one of its 2025 eliciting
// sessions, or a short-lived one that serves a single operation (for a
// server that expires kept sessions). The operations on it judge their own
// requests (exchange.go); the session only lives and ends.
//
// close hands the session to a background clean-up: the 2025 DELETE, the
// tails of response bodies (read to their end, so their connections stay
// reusable), then the end of life, all within CloseTimeout. Nobody waits
// for it but Gateway.Close.
type session struct {
	g   *Gateway
	cs  *mcp.ClientSession
	tr  *transport
	r   domain.Registration
	end context.CancelFunc // ends life: aborts every exchange still running
	// abandoned, when set, delivers the result of a Connect that the
	// opener stopped waiting for; the clean-up closes what it returns.
	abandoned <-chan connected
	// ended is closed once the go-sdk session is over: closed by ttmcp, or
	// lost (the server closed it, its stream broke, its process exited).
	ended   chan struct{}
	closing sync.Once
	// served counts the operations answered on it (under lives.mu).
	served int
	// asking is the call an eliciting session's questions go to, nil
	// between calls (elicit.go).
	asking atomic.Pointer[asking]
	// kind is what a 2025 session of one operation at a time declared at
	// initialize (live.go's dedicated sessions); zero for the others.
	kind sessionKind
}

// sessionKind is what a 2025 session declares at initialize for the
// operation that holds it: elicitation (its page answers questions), the
// MCP Apps extension (its page renders Apps), or both.
type sessionKind struct{ eliciting, apps bool }

// asking is a call on an eliciting session: who answers and the request
// whose response stream brings the questions.
type asking struct {
	a  *asker
	ex *exchange
}

// elicit is an eliciting session's ElicitationHandler: the question goes
// to the call that holds the session.
func (s *session) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return s.asking.Load().answer(req)
}

type connected struct {
	cs  *mcp.ClientSession
	err error
}

// over reports whether the session has ended.
func (s *session) over() bool {
	select {
	case <-s.ended:
		return true
	default:
		return false
	}
}

// close ends the session in the background.
func (s *session) close() {
	s.closing.Do(func() { s.g.background.Go(s.cleanUp) })
}

// cleanUp closes the session within CloseTimeout: whatever is still running
// then is aborted.
func (s *session) cleanUp() {
	bound := time.AfterFunc(s.g.cfg.CloseTimeout, s.end)
	defer bound.Stop()
	if s.abandoned != nil {
		// Returns once go-sdk has given up, at the latest when the bound
		// aborts its exchanges.
		s.cs = (<-s.abandoned).cs
	}
	if s.cs != nil {
		// a call stopped just before the close: its cancellation first
		s.tr.awaitCancels(s.g.cfg.CloseTimeout)
		s.cs.Close() // the DELETE of a session with an id
	}
	s.tr.settled()
	s.end()
}

// requestContext returns the context of an operation's requests on a
// session: it ends when ctx does, or after d, but only until done is
// called (the answer is in). From then on the caller no longer reaches
// it: the response's tail has CloseTimeout to be read to its end, so its
// connection stays reusable even when the caller gives up right after the
// answer. Closing the session ends it too (transport.go). While the user
// answers a question of the server's (pause … resume), d does not run: the
// server waits for the user then, not ttmcp for the server.
func (g *Gateway) requestContext(ctx context.Context, d time.Duration) (context.Context, *deadline) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	dl := &deadline{cancel: cancel, stop: context.AfterFunc(ctx, cancel), left: d, since: time.Now(), grace: g.cfg.CloseTimeout}
	dl.timer = time.AfterFunc(d, cancel)
	return rctx, dl
}

// deadline is a request context's bound (requestContext).
type deadline struct {
	cancel context.CancelFunc
	stop   func() bool
	grace  time.Duration

	mu     sync.Mutex
	timer  *time.Timer
	left   time.Duration
	since  time.Time
	paused bool
}

// done detaches the request from its caller and gives its tail the grace.
func (d *deadline) done() {
	d.stop()
	d.mu.Lock()
	d.timer.Stop()
	d.mu.Unlock()
	time.AfterFunc(d.grace, d.cancel)
}

// pause stops the wait until resume is called.
func (d *deadline) pause() (resume func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused || !d.timer.Stop() {
		return func() {} // paused already, or run out: nothing to resume
	}
	d.paused = true
	d.left -= time.Since(d.since)
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.paused, d.since = false, time.Now()
		d.timer.Reset(max(d.left, 0))
	}
}

// sessionOptions say what a session is for.
type sessionOptions struct {
	// version, when set, is asked for instead of the registration's
	// preference (a further session of a server whose version is known).
	version string
	// client adds to the go-sdk client options of the session (handlers).
	client func(*mcp.ClientOptions)
	// eliciting: the session advertises elicitation and routes its
	// server's questions to the call that holds it (a 2025 session, taken
	// by one call at a time; live.go).
	eliciting bool
	// apps: the session declares the MCP Apps extension (a 2025 session
	// of an operation whose page renders Apps; live.go).
	apps bool
}

// withApps returns caps declaring the MCP Apps extension with the one MIME
// type ttmcp renders: a copy (caps may be shared, as elicitCaps is), with an
// extensions map of its own.
func withApps(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	c := *caps
	c.Extensions = nil
	c.AddExtension(domain.AppsExtension, map[string]any{"mimeTypes": []any{domain.AppMIMEType}})
	return &c
}

// open connects to the registration's server with its headers and
// protocol preference and checks the negotiated version. ctx bounds the
// startup (with StartupTimeout); the session itself lives until closed.
// Failures are domain errors with the startup codes.
func (g *Gateway) open(ctx context.Context, r domain.Registration, o sessionOptions) (*session, error) {
	ask, accept := offer(r.Protocol)
	if o.version != "" {
		ask = o.version
	}
	bearer, err := g.auth.bearer(ctx, r) // refreshed first when it expires
	if err != nil {
		return nil, err
	}
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	tr, err := newTransport(g.cfg, g.pool, life, r.Headers, bearer, string(r.ID), ask == Versions[0] && len(accept) == 1)
	if err != nil {
		end()
		return nil, err
	}
	s := &session{g: g, tr: tr, r: r, end: end, ended: make(chan struct{})}
	tr.progress = func(event []byte) bool { return g.progress.takeEvent(r.ID, event) }
	tr.progressSeen = func(event []byte) { g.progress.sawEvent(r.ID, event) }
	opts := &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{}, // none of its own: what a request may ask is in its _meta (2026) or its session (2025)
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         g.cfg.Log,
		// a page a call waits for may be announced done on any session
		ElicitationCompleteHandler: g.pages.completed(r.ID),
		// a call's progress comes on the session its request went on
		ProgressNotificationHandler: g.progress.handler(r.ID),
	}
	if o.client != nil {
		o.client(opts)
	}
	if o.eliciting {
		opts.ElicitationHandler = s.elicit
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
		if ask >= "2025-11-25" {
			opts.Capabilities = elicitCaps // URL mode came with 2025-11-25
		}
	}
	if o.apps {
		opts.Capabilities = withApps(opts.Capabilities)
	}
	s.kind = sessionKind{eliciting: o.eliciting, apps: o.apps}
	client := mcp.NewClient(&mcp.Implementation{Name: g.cfg.ClientName, Version: g.cfg.ClientVersion}, opts)
	client.AddSendingMiddleware(sendingMiddleware)

	sctx, cancel := context.WithTimeout(ctx, g.cfg.StartupTimeout)
	defer cancel()
	if o.eliciting {
		tr.question = func(params json.RawMessage) {
			if cur := s.asking.Load(); cur != nil {
				cur.ex.keep(params)
			}
		}
	}
	// A session opens its server's notification stream when it follows
	// list changes, or may be asked on it (2025 servers may ask there).
	quiet := opts.ToolListChangedHandler == nil && !o.eliciting
	cs, err := s.connect(sctx, client, r.Endpoint.String(), ask, quiet)
	if err != nil {
		err = g.startupError(ctx, sctx, r, tr, ask, err)
		close(s.ended)
		s.close() // after the diagnosis
		return nil, err
	}
	s.cs = cs
	if err := checkStartup(cs.InitializeResult(), accept); err != nil {
		close(s.ended)
		s.close()
		return nil, err
	}
	go func() {
		cs.Wait()
		close(s.ended)
	}()
	return s, nil
}

// startupError words a failed startup.
func (g *Gateway) startupError(ctx, sctx context.Context, r domain.Registration, tr *transport, ask string, err error) error {
	switch {
	case ctx.Err() != nil:
		return cancelled(ctx)
	case sctx.Err() != nil:
		return domain.Errorf(domain.KindUnavailable, CodeInitializeTimeout, "the server did not complete startup within %s", g.cfg.StartupTimeout)
	case tr.refused.Load() != nil:
		err, _ := g.authFailure(r, tr)
		return err
	case tr.refusedLegacy.Load():
		return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed,
			"the server does not offer MCP %s (server/discover failed) and this registration accepts no other version", ask)
	}
	return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "%s", tr.explain(nil, err))
}

// connect runs go-sdk's Connect but returns as soon as ctx ends: after a
// timeout go-sdk still notifies the server of the cancellation and waits
// for that (up to 5 s) before Connect returns, which must not hold the
// caller. The clean-up waits for the abandoned attempt instead. quiet
// keeps the 2025 standalone GET stream closed: only a session that
// follows list changes opens it.
func (s *session) connect(ctx context.Context, client *mcp.Client, endpoint, version string, quiet bool) (*mcp.ClientSession, error) {
	done := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           s.tr.client,
			MaxRetries:           -1,
			DisableStandaloneSSE: quiet,
		}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		done <- connected{cs, err}
	}()
	select {
	case r := <-done:
		return r.cs, r.err
	case <-ctx.Done():
		s.abandoned = done
		return nil, ctx.Err()
	}
}

// background counts the clean-ups still running, so Close can wait for
// them.
type background struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n is 0
}

func newBackground() *background {
	b := &background{idle: make(chan struct{})}
	close(b.idle)
	return b
}

// Go runs f in its own goroutine and counts it until it returns.
func (b *background) Go(f func()) {
	b.mu.Lock()
	if b.n == 0 {
		b.idle = make(chan struct{})
	}
	b.n++
	b.mu.Unlock()
	go func() {
		defer b.done()
		f()
	}()
}

func (b *background) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n--; b.n == 0 {
		close(b.idle)
	}
}

// running is how many are running now.
func (b *background) running() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// Wait returns once nothing is running.
func (b *background) Wait() {
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	<-idle
}
