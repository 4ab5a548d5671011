// Package gateway is the MCP client of the backend: it reaches a registered
// Streamable HTTP server with github.com/modelcontextprotocol/go-sdk and
// returns what it learned as domain values. It is the only package that
// imports go-sdk; nothing of go-sdk leaves it.
//
// A registration with a command (domain.Stdio) is a local server instead:
// its process is started, shared and stopped by the supervisor of
// stdio.go, one long-lived session per process.
//
// The operations of a remote server run on its live connection (live.go):
// one kept client session, opened by the first operation and shared by
// the ones after, closed when idle, changed, paused, removed, or at
// shutdown (session.go), over HTTP connections kept per profile
// (pool.go). Nothing the server may have acted on is sent again: no SSE
// reconnects, no OAuth re-sends, no redirects; the few second sends of
// requests the server provably did not process are named in call.go. The
// per-session HTTP profile (custom headers on every request, a response
// size cap) lives in transport.go, and what each request's operation must
// judge (written or not, its raw answer) in exchange.go.
package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Config holds the gateway's limits and timeouts. Tests inject short ones;
// zero values take the defaults of SPEC §6.
type Config struct {
	ConnectTimeout   time.Duration // TCP (and TLS) connect, default 30 s
	StartupTimeout   time.Duration // initialize or server/discover, default 120 s
	ListTimeout      time.Duration // one whole tools/list pagination run, default 120 s
	CallWait         time.Duration // waiting for the answer to a sent tools/call, default 60 s
	CloseTimeout     time.Duration // closing a session, in the background, default 2 s
	IdleTimeout      time.Duration // a kept HTTP connection unused this long is closed, default 45 s
	LiveIdleTimeout  time.Duration // a live connection (its MCP session) unused this long is closed, default 5 min
	MaxLive          int           // live connections kept at once (the least recently used closed first), default 64
	MaxResponseBytes int64         // one HTTP response body or stdio answer, default 4 MiB
	// MaxReadBytes bounds the answer to a resources/read or prompts/get
	// instead (an 8 MiB blob is 10.7 MiB of base64), default 12 MiB; a
	// stdio server's lines may be as long as the larger of the two.
	MaxReadBytes  int64
	TLS           *tls.Config // client TLS settings; nil: the system's roots
	ClientName    string      // implementation name sent to servers, default "ttmcp"
	ClientVersion string
	Log           *slog.Logger
	// Auths keeps the registrations' authorization (auth.go); nil keeps
	// nothing: no token is ever sent, refusals still fail with
	// mcp.auth_required.
	Auths Auths
	// Changed receives the list changes servers announce on live
	// connections (follow.go), at most one call per server per 2 s; nil:
	// no connection follows its server.
	Changed func(domain.ListChange)
	// LostStreamAge: a live connection's notification stream that followed
	// at least this long and then ended (its server went away, or closed
	// it) is opened again with the connection at its next operation;
	// one that ends sooner is taken as the server's choice. Default 10 s.
	LostStreamAge time.Duration
	// RefreshTimeout bounds a token refresh, default 30 s.
	RefreshTimeout time.Duration
	// Now is the clock of token lifetimes (tests move it); default time.Now.
	Now func() time.Time

	// Local (stdio) servers (stdio.go).
	StdioIdleTimeout time.Duration // a process unused this long is stopped, default 5 min
	StdioStopGrace   time.Duration // each step of stopping a process (stdin closed, SIGTERM, SIGKILL), default 2 s
	StdioStderrLines int           // the last lines of stderr kept per process, default 50

	// ProgressDrain bounds how long a call's end waits for the progress
	// notifications its transport read before the answer and go-sdk has
	// not yet handed over (progress.go), default 1 s.
	ProgressDrain time.Duration
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
	def(&c.IdleTimeout, 45*time.Second)
	def(&c.LiveIdleTimeout, 5*time.Minute)
	def(&c.LostStreamAge, 10*time.Second)
	def(&c.ProgressDrain, time.Second)
	if c.MaxLive <= 0 {
		c.MaxLive = 64
	}
	def(&c.RefreshTimeout, 30*time.Second)
	def(&c.StdioIdleTimeout, 5*time.Minute)
	def(&c.StdioStopGrace, 2*time.Second)
	if c.StdioStderrLines <= 0 {
		c.StdioStderrLines = 50
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 4 << 20
	}
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = 12 << 20
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

// Gateway reaches MCP servers over live connections (live.go) and kept
// HTTP connections (pool.go); Close closes them, waiting for the sessions
// being cleaned up. The processes of stdio servers are supervised by stdio
// (stdio.go); Close stops them.
type Gateway struct {
	cfg        Config
	pool       *pool
	lives      *lives
	background *background
	stdio      *stdioServers
	// schemas keeps verdicts on tool schemas across discoveries: a refresh
	// of an unchanged server compiles nothing.
	schemas *domain.SchemaCache
	// auth keeps the registrations' sign-ins (auth.go).
	auth *keeper
	// advertised keeps what each server advertised at its last startup
	// (resources.go).
	advertised advertised
	// pages routes servers' announcements that a page is done to the
	// question waiting for it (elicit.go).
	pages pageWatch
	// progress routes servers' notifications/progress to the call whose
	// token they name (progress.go).
	progress progressRoutes
	// asks counts each server's questions to its user for the per-minute
	// bound (elicit.go).
	asks askBudget
}

// maxSchemaVerdicts bounds the schema cache: eight catalogs of the largest
// kind (512 tools, input and output schemas each), about 2.5 MB.
const maxSchemaVerdicts = 8 * 2 * domain.MaxCatalogTools

// New returns a Gateway with cfg (zero fields take their defaults).
func New(cfg Config) *Gateway {
	cfg = cfg.withDefaults()
	g := &Gateway{cfg: cfg, pool: newPool(cfg), background: newBackground(), stdio: newStdioServers(cfg),
		schemas: domain.NewSchemaCache(maxSchemaVerdicts)}
	g.lives = newLives(g)
	g.stdio.g = g
	g.advertised.byID = map[domain.RegistrationID]observed{}
	g.asks.now = cfg.Now
	g.progress.drain = cfg.ProgressDrain
	g.auth = &keeper{store: cfg.Auths, now: cfg.Now, oauth: oauthClient(g.pool.newTransport()), log: cfg.Log,
		refreshTimeout: cfg.RefreshTimeout, locks: map[domain.RegistrationID]chan struct{}{}}
	return g
}

// Wait waits for the clean-ups of the operations finished so far (each
// takes at most CloseTimeout); the kept connections stay.
func (g *Gateway) Wait() { g.background.Wait() }

// Close waits for the clean-ups of finished operations and closes the kept
// connections; a later remote operation opens new ones. It also stops every
// stdio server's process tree, waits until they are all gone, and starts
// none afterwards.
func (g *Gateway) Close() error {
	g.lives.close()
	g.stdio.close()
	g.Wait()
	g.pool.closeIdle()
	return nil
}

// Disconnect closes the live connection of remote registration id, if
// there is one (it was paused, removed or changed). It returns at once;
// the session is closed in the background. A stdio server's process is
// stopped by StopStdio.
func (g *Gateway) Disconnect(id domain.RegistrationID) {
	g.lives.disconnect(id)
}

// closeIdle closes the live connections and drops the kept idle HTTP
// connections: the next operation starts cold (tests and benchmarks).
func (g *Gateway) closeIdle() {
	g.lives.closeAll()
	g.Wait()
	g.pool.closeIdle()
}

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
	// CodeToolMalformed: a tools/list entry that does not decode as a tool
	// (a name that is not a string, null); the other tools are kept.
	CodeToolMalformed = "mcp.tool_malformed"
)

// cancelled reports that the caller gave up (its page closed the socket).
func cancelled(ctx context.Context) error {
	return &domain.Error{Kind: domain.KindUnavailable, Code: "mcp.request_cancelled", Detail: "the request was cancelled", Err: context.Cause(ctx)}
}

// isTimeout reports whether err is a deadline expiry.
func isTimeout(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
