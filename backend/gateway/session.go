package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// session is one short-lived client session (a fresh one per operation:
// the honest-outcome rules depend on it) and the contexts that bound its
// exchanges.
//
// Every exchange of the session is bound to its life (see transport);
// the operation's contexts (startup, listing, the call) derive from op,
// which also ends when the caller's context does. Once the operation's
// answer is known, release detaches op from the caller and hands the
// session to a background clean-up: the 2025 DELETE, the tails of response
// bodies (read to their end, so their connections stay reusable), then the
// end of life, all within CloseTimeout. The caller's result never waits
// for any of that.
type session struct {
	g   *Gateway
	cs  *mcp.ClientSession
	tr  *transport
	r   domain.Registration
	end context.CancelFunc // ends life: aborts every exchange still running
	op  context.Context
	// detach stops the caller's end from ending op.
	detach func() bool
	// abandoned, when set, delivers the result of a Connect that the
	// operation stopped waiting for; the clean-up closes what it returns.
	abandoned <-chan connected
	cancels   []context.CancelFunc
	released  sync.Once
}

type connected struct {
	cs  *mcp.ClientSession
	err error
}

// within returns a context of op that also ends after d.
func (s *session) within(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(s.op, d)
	s.cancels = append(s.cancels, cancel)
	return ctx
}

// release ends the operation: the caller's end no longer reaches the
// session, and the session is cleaned up in the background.
func (s *session) release() {
	s.released.Do(func() {
		s.detach()
		s.g.background.Go(s.cleanUp)
	})
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
		s.cs.Close() // the DELETE of a session with an id
	}
	s.tr.settled()
	s.end()
	for _, cancel := range s.cancels {
		cancel()
	}
}

// openWith connects to the registration's server with its headers and
// protocol preference and checks the negotiated version. Failures are
// domain errors with the startup codes. The session must be released.
func (g *Gateway) openWith(ctx context.Context, r domain.Registration, middleware ...mcp.Middleware) (*session, error) {
	ask, accept := offer(r.Protocol)
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
	op, stop := context.WithCancel(life)
	s := &session{g: g, tr: tr, r: r, end: end, op: op, detach: context.AfterFunc(ctx, stop)}
	s.cancels = append(s.cancels, stop)

	client := mcp.NewClient(&mcp.Implementation{Name: g.cfg.ClientName, Version: g.cfg.ClientVersion}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{}, // none: the host serves no sampling, roots or elicitation
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         g.cfg.Log,
	})
	client.AddSendingMiddleware(middleware...)

	sctx := s.within(g.cfg.StartupTimeout)
	cs, err := s.connect(sctx, client, r.Endpoint.String(), ask)
	if err != nil {
		err = g.startupError(ctx, sctx, r, tr, ask, err)
		s.release() // after the diagnosis: the clean-up ends sctx
		return nil, err
	}
	s.cs = cs
	if err := checkStartup(cs.InitializeResult(), accept); err != nil {
		s.release()
		return nil, err
	}
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
	return domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "%s", tr.explain(err))
}

// connect runs go-sdk's Connect but returns as soon as ctx ends: after a
// timeout go-sdk still notifies the server of the cancellation and waits
// for that (up to 5 s) before Connect returns, which must not hold the
// caller. The clean-up waits for the abandoned attempt instead.
func (s *session) connect(ctx context.Context, client *mcp.Client, endpoint, version string) (*mcp.ClientSession, error) {
	done := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           s.tr.client,
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
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
