// Package gateway is the MCP client of the backend: it reaches a registered
// Streamable HTTP server with github.com/modelcontextprotocol/go-sdk and
// returns what it learned as domain values. It is the only package that
// imports go-sdk; nothing of go-sdk leaves it.
//
// Every discovery (and, later, every call) uses a fresh short-lived client
// session, closed afterwards. Nothing is ever retried: no SSE reconnects,
// no standalone stream, no multi-round-trip follow-ups, no OAuth re-sends,
// no redirects. The HTTP profile (connect timeout, custom headers on every
// request, a response size cap) lives in transport.go.
package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Config holds the gateway's limits and timeouts. Tests inject short ones;
// zero values take the defaults of SPEC §6.
type Config struct {
	ConnectTimeout   time.Duration // TCP (and TLS) connect, default 30 s
	StartupTimeout   time.Duration // initialize or server/discover, default 120 s
	ListTimeout      time.Duration // one whole tools/list pagination run, default 120 s
	CallWait         time.Duration // waiting for the answer to a sent tools/call, default 60 s
	CloseTimeout     time.Duration // closing a session, default 2 s
	MaxResponseBytes int64         // one HTTP response body, default 4 MiB
	TLS              *tls.Config   // client TLS settings; nil: the system's roots
	ClientName       string        // implementation name sent to servers, default "ttmcp"
	ClientVersion    string
	Log              *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ConnectTimeout, 30*time.Second)
	def(&c.StartupTimeout, 120*time.Second)
	def(&c.ListTimeout, 120*time.Second)
	def(&c.CallWait, 60*time.Second)
	def(&c.CloseTimeout, 2*time.Second)
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 4 << 20
	}
	if c.ClientName == "" {
		c.ClientName = "ttmcp"
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "dev"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Gateway reaches MCP servers.
type Gateway struct {
	cfg Config
}

// New returns a Gateway with cfg (zero fields take their defaults).
func New(cfg Config) *Gateway { return &Gateway{cfg: cfg.withDefaults()} }

// Versions are the protocol versions ttmcp accepts, newest first.
var Versions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// offer returns the version to ask for and the versions to accept for a
// preference: auto asks for the newest and accepts any of the four; a fixed
// preference asks for and accepts only itself.
func offer(p domain.Protocol) (ask string, accept []string) {
	if p == domain.ProtocolAuto || p == "" {
		return Versions[0], Versions
	}
	return string(p), []string{string(p)}
}

// Error codes of discovery (reference §3.5).
const (
	CodeInitializeTimeout     = "mcp.discovery_initialize_timeout"
	CodeInitializeFailed      = "mcp.discovery_initialize_failed"
	CodeListTimeout           = "mcp.discovery_list_timeout"
	CodeListFailed            = "mcp.discovery_list_failed"
	CodeResultTypeUnsupported = "mcp.discovery_result_type_unsupported"
	CodeToolLimit             = "mcp.discovery_tool_limit"
	CodeCatalogSizeLimit      = "mcp.discovery_catalog_size_limit"
	CodeCursorCycle           = "mcp.discovery_cursor_cycle"
	CodePageLimit             = "mcp.discovery_page_limit"
	CodeToolSerializeFailed   = "mcp.tool_serialize_failed"
	CodeHeaderNameInvalid     = "mcp.header_name_invalid"
	CodeHeaderValueInvalid    = "mcp.header_value_invalid"
	// CodeToolHeaderAnnotationInvalid reports a tool that go-sdk excluded
	// from tools/list because its x-mcp-header annotations are invalid
	// (SEP-2243); the SDK only logs it, we keep a trace in the catalog.
	CodeToolHeaderAnnotationInvalid = "mcp.tool_header_annotation_invalid"
)

// session is one short-lived client session and what its transport saw.
type session struct {
	cs *mcp.ClientSession
	tr *transport
}

// openWith connects to the registration's server with its headers and
// protocol preference and checks the negotiated version. Failures are
// domain errors with the startup codes.
func (g *Gateway) openWith(ctx context.Context, r domain.Registration, middleware ...mcp.Middleware) (*session, error) {
	ask, accept := offer(r.Protocol)
	tr, err := newTransport(g.cfg, r.Headers, ask == Versions[0] && len(accept) == 1)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: g.cfg.ClientName, Version: g.cfg.ClientVersion}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{}, // none: the host serves no sampling, roots or elicitation
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Logger:         g.cfg.Log,
	})
	client.AddSendingMiddleware(middleware...)

	sctx, cancel := context.WithTimeout(ctx, g.cfg.StartupTimeout)
	defer cancel()
	cs, err := g.connect(sctx, client, tr, r.Endpoint.String(), ask)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, cancelled(ctx)
		case sctx.Err() != nil:
			return nil, domain.Errorf(domain.KindUnavailable, CodeInitializeTimeout, "the server did not complete startup within %s", g.cfg.StartupTimeout)
		case tr.refusedLegacy.Load():
			return nil, domain.Errorf(domain.KindUnavailable, CodeInitializeFailed,
				"the server does not offer MCP %s (server/discover failed) and this registration accepts no other version", ask)
		}
		return nil, domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "%s", tr.explain(err))
	}
	s := &session{cs: cs, tr: tr}
	res := cs.InitializeResult()
	if res == nil || !slices.Contains(accept, res.ProtocolVersion) {
		got := "(none)"
		if res != nil {
			got = res.ProtocolVersion
		}
		s.close(g.cfg.CloseTimeout)
		return nil, domain.Errorf(domain.KindUnavailable, CodeInitializeFailed,
			"The server selected MCP %s; accepted versions: %s", got, strings.Join(accept, ", "))
	}
	// serverInfo is required in an initialize result but optional in a
	// 2026-07-28 server/discover result.
	if res.ServerInfo == nil && res.ProtocolVersion < Versions[0] {
		s.close(g.cfg.CloseTimeout)
		return nil, domain.Errorf(domain.KindUnavailable, CodeInitializeFailed, "MCP startup completed without server information")
	}
	return s, nil
}

// connect runs go-sdk's Connect but returns as soon as ctx ends: after a
// timeout go-sdk still notifies the server of the cancellation and waits
// for that (up to 5 s) before Connect returns, which must not hold the
// caller. The abandoned attempt finishes and cleans up on its own.
func (g *Gateway) connect(ctx context.Context, client *mcp.Client, tr *transport, endpoint, version string) (*mcp.ClientSession, error) {
	type result struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           tr.client,
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		done <- result{cs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			tr.close()
		}
		return r.cs, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.cs != nil {
				r.cs.Close()
			}
			tr.close()
		}()
		return nil, ctx.Err()
	}
}

// close ends the session, waiting at most d: a server that does not answer
// the session DELETE must not hold the caller.
func (s *session) close(d time.Duration) {
	done := make(chan struct{})
	go func() {
		s.cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
	s.tr.close()
}

// cancelled reports that the caller gave up (its page closed the socket).
func cancelled(ctx context.Context) error {
	return &domain.Error{Kind: domain.KindUnavailable, Code: "mcp.request_cancelled", Detail: "the request was cancelled", Err: context.Cause(ctx)}
}

// isTimeout reports whether err is a deadline expiry.
func isTimeout(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
