// Package server is the presentation layer of the backend: the HTTP routes
// of SPEC §3 and the command WebSocket of SPEC §5.
//
// Trust is decided before anything else is read: every route checks the
// Host header (DNS-rebinding defence), /ws and /jsapi/session check the
// Origin, and a socket must present the per-launch token in its first
// frame. Requests on one socket run concurrently; when the socket closes,
// the context of everything it started is cancelled.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ttmcp/ttmcp/jsapi"
)

// Config configures a Server.
type Config struct {
	// Commands answers the invoke frames.
	Commands *Commands
	// Assets holds the files served under /jsapi/ (loader, wasm, wasm_exec.js,
	// declarations), usually jsapi.Assets().
	Assets fs.FS
	// Pages holds extra static trees by URL prefix, e.g. "/extension/".
	Pages map[string]fs.FS
	// Extensions are SillyTavern third-party extensions by folder name,
	// served at /scripts/extensions/third-party/<name>/ and loaded by the
	// playground at / through their manifests (static.go).
	Extensions map[string]fs.FS
	// Demo is the demo MCP server the playground offers to add, if any.
	Demo *DemoServer
	// DemoAuth is the demo that requires sign-in (behind the demo
	// authorization server), which the playground offers too, if any.
	DemoAuth *DemoServer
	// AllowOrigins are origins besides the server's own that may open the
	// socket and read the session token (exact "scheme://host[:port]").
	AllowOrigins []string
	// ServeCommand is the command line that started this backend, as a
	// user would type it again ("ttmcp serve --data-root ..."): a refused
	// page is told to run it with --allow-origin added. Empty: "ttmcp
	// serve".
	ServeCommand string
	// Token is the per-launch secret; empty means a fresh random one.
	Token string
	// Version is reported in the welcome frame.
	Version string
	// Log receives operational messages; nil discards.
	Log *slog.Logger
	// HandshakeTimeout bounds the wait for the hello frame (default 10 s).
	HandshakeTimeout time.Duration
	// MaxInFlight bounds the concurrent requests of one socket (default 64);
	// further frames wait, which pushes back on the page.
	MaxInFlight int
	// MaxSockets bounds the open command sockets (default 256); a socket
	// beyond it is closed at once with 1013 and a reason.
	MaxSockets int
	// MaxQueuedPerSocket and MaxQueued bound the result bytes waiting to be
	// written, to one socket (default 16 MiB) and across sockets (default
	// 128 MiB); see outbox.go.
	MaxQueuedPerSocket, MaxQueued int64

	// ForUser returns the commands over a SillyTavern user's data, for
	// plugin requests naming that user (an error: 403
	// mcp.user_unavailable). Nil: only jsapi.DefaultUser is served, with
	// Commands.
	ForUser func(handle string) (*Commands, error)
}

// DefaultAllowOrigins are SillyTavern's default origins.
var DefaultAllowOrigins = []string{"http://localhost:8000", "http://127.0.0.1:8000"}

// Server serves the HTTP routes and the command sockets.
type Server struct {
	cfg     Config
	log     *slog.Logger
	token   string
	origins map[string]bool
	mux     *http.ServeMux
	refused refusals // origins refused so far, each logged once (trust.go)
	// serveCommand restarts this backend (Config.ServeCommand).
	serveCommand string

	// ctx is the parent of every socket's context; stop cancels it.
	ctx  context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	sockets map[*websocket.Conn]struct{}
	wg      sync.WaitGroup // socket handlers

	outbox *outbox // the result bytes waiting to be written
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 64
	}
	if cfg.MaxSockets <= 0 {
		cfg.MaxSockets = defaultMaxSockets
	}
	if cfg.MaxQueuedPerSocket <= 0 {
		cfg.MaxQueuedPerSocket = defaultMaxQueuedPerSocket
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = defaultMaxQueued
	}
	if cfg.Token == "" {
		cfg.Token = NewToken()
	}
	if cfg.ServeCommand == "" {
		cfg.ServeCommand = "ttmcp serve"
	}
	s := &Server{
		cfg:          cfg,
		log:          cfg.Log,
		token:        cfg.Token,
		serveCommand: cfg.ServeCommand,
		origins:      make(map[string]bool),
		sockets:      make(map[*websocket.Conn]struct{}),
		outbox:       newOutbox(cfg.MaxQueuedPerSocket, cfg.MaxQueued),
	}
	for _, o := range cfg.AllowOrigins {
		if n, ok := normalizeOrigin(o); ok {
			s.origins[n] = true
		}
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.mux = http.NewServeMux()
	s.routes()
	return s
}

// NewToken returns a random 256-bit token, hex encoded.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand contract since Go 1.24)
	return hex.EncodeToString(b)
}

// Token returns the per-launch token.
func (s *Server) Token() string { return s.token }

// ServeHTTP checks the Host header, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "ttmcp: forbidden host", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: the
// listener closes, sockets are closed with 1001, running requests are
// cancelled, and Serve waits (up to grace) for the handlers to return.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	fresh := &freshConns{conns: map[net.Conn]bool{}}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnState:         fresh.track,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	// Sockets first: they are hijacked, so http.Server neither closes nor
	// waits for them, and a page should hear 1001 at once. Then connections
	// that never sent a request (browsers open them speculatively):
	// Shutdown would wait up to 5 s for each.
	s.Close()
	ln.Close()
	fresh.closeAll()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		err = nil // the listener was closed above
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-sctx.Done():
		err = errors.Join(err, sctx.Err())
	}
	if err != nil {
		hs.Close()
	}
	return err
}

// freshConns tracks the connections that have not sent a request yet.
type freshConns struct {
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if state == http.StateNew {
		f.conns[c] = true
	} else {
		delete(f.conns, c)
	}
}

func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.Close()
	}
}

// Close cancels every socket's work and closes the sockets with 1001.
func (s *Server) Close() {
	s.mu.Lock()
	s.stop() // under mu: track either sees it or counts its socket first

	conns := make([]*websocket.Conn, 0, len(s.sockets))
	for c := range s.sockets {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		go c.Close(jsapi.CloseGoingAway, "ttmcp backend shutting down")
	}
}

// track counts a new socket, or says why it must close at once.
func (s *Server) track(c *websocket.Conn) (code websocket.StatusCode, reason string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return jsapi.CloseGoingAway, "ttmcp backend shutting down", false
	}
	if len(s.sockets) >= s.cfg.MaxSockets {
		return jsapi.CloseTryAgainLater, fmt.Sprintf("ttmcp: too many open pages (%d sockets); close some and reconnect", s.cfg.MaxSockets), false
	}
	s.sockets[c] = struct{}{}
	s.wg.Add(1)
	return 0, "", true
}

func (s *Server) untrack(c *websocket.Conn) {
	s.mu.Lock()
	delete(s.sockets, c)
	s.mu.Unlock()
	s.wg.Done()
}
