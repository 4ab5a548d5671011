package webtest

// The harness: one headless Chromium for the package (TestMain), a fresh
// tab per test (openPage) with its console mirrored into the test log on
// failure, and an in-process backend per test (newBackend) that can be
// stopped and restarted on the same port.
//
// server.Serve owns its http.Server, so the harness cannot wrap the
// handler; it taps the listener instead: every accepted connection is
// watched on the wire, which records the status of each /ws and
// /jsapi/session request and, once a connection is upgraded, the command of
// every invoke frame the backend reads.
//
// MCP servers for the backend to reach run on loopback behind a recorder
// (newMCPServer, newDemoServer) that logs every request by JSON-RPC method.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// ---------------------------------------------------------------- browser

var (
	browserCtx context.Context // the Chromium shared by every test; tabs are its children
	browserErr error           // why there is no browser; every test fails with it
)

func TestMain(m *testing.M) {
	stdiotest.RunIfChild() // a stdio server started by a test (stdio_test.go)
	code := func() int {
		dir, err := os.MkdirTemp("", "ttmcp-webtest-chromium-")
		if err != nil {
			browserErr = err
			return m.Run()
		}
		defer os.RemoveAll(dir)
		stop, err := startBrowser(dir)
		if err != nil {
			browserErr = err
		} else {
			defer stop()
		}
		return m.Run()
	}()
	printBenchTable()
	os.Exit(code)
}

// startBrowser starts the package's headless Chromium with a fresh profile in dir.
func startBrowser(dir string) (stop func(), err error) {
	bctx, stop, err := launchBrowser(dir)
	if err != nil {
		return nil, err
	}
	browserCtx = bctx
	return stop, nil
}

// launchBrowser starts headless Chromium (CHROME, else /usr/bin/chromium)
// with a fresh profile in dir and the extra options, and returns its
// context and the function that stops it.
func launchBrowser(dir string, extra ...chromedp.ExecAllocatorOption) (context.Context, func(), error) {
	path := os.Getenv("CHROME")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		return nil, nil, fmt.Errorf("Chromium not found (CHROME=%q: %v); `make webtest` installs it", path, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		cancelBrowser()
		cancelAlloc()
		return nil, nil, fmt.Errorf("cannot start Chromium (%s): %v; `make webtest` installs it", path, err)
	}
	return bctx, func() {
		ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		chromedp.Cancel(ctx)
		cancelBrowser()
		cancelAlloc()
	}, nil
}

// page is one tab.
type page struct {
	tb  testing.TB
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// evalTimeout bounds one evaluation, so a hung promise fails the test with
// its expression instead of hanging the suite. Not a timing assertion.
const evalTimeout = 45 * time.Second

// openPage opens url in a new tab. The tab closes when the test ends; if
// the test failed, the page's console is logged first.
func openPage(tb testing.TB, url string) *page {
	tb.Helper()
	if browserErr != nil {
		tb.Fatal(browserErr)
	}
	ctx, cancel := chromedp.NewContext(browserCtx)
	p := &page{tb: tb, ctx: ctx}
	messages := chromedp.Console(ctx) // opens the tab and subscribes before anything runs in it
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
		if tb.Failed() {
			p.mu.Lock()
			defer p.mu.Unlock()
			tb.Logf("console of %s (%d messages):", url, len(p.console))
			for _, m := range p.console {
				tb.Log("  " + m.String())
			}
		}
	})
	p.navigate(url)
	return p
}

// consoleMessages returns the console messages of the tab so far.
func (p *page) consoleMessages() []chromedp.ConsoleMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), p.console...)
}

// navigate loads url in the tab and waits for its load event.
func (p *page) navigate(url string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		p.tb.Fatalf("navigate %s: %v", url, err)
	}
}

// evalJS runs body as the body of an async function in the page and
// decodes its result into T. Each %s of body is replaced by the JSON of
// the next arg, so Go values enter the page as literals.
func evalJS[T any](p *page, body string, args ...any) T {
	p.tb.Helper()
	lits := make([]any, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			p.tb.Fatalf("evalJS arg %d: %v", i, err)
		}
		lits[i] = string(b)
	}
	src := fmt.Sprintf(body, lits...)
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T]("(async () => {\n"+src+"\n})()", chromedp.EvalAwaitPromise))
	if err != nil {
		p.tb.Fatalf("in the page:\n%s\nfailed: %v", src, err)
	}
	return v
}

// run is evalJS for a body whose result does not matter.
func (p *page) run(body string, args ...any) {
	p.tb.Helper()
	evalJS[any](p, body, args...)
}

// jsError describes a rejection, as tt.err (testdata/tt.js) returns it.
type jsError struct {
	IsError bool   `json:"isError"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Code    string `json:"code"`
	Kind    string `json:"kind"`
}

// ---------------------------------------------------------------- backend

// backend is the ttmcp backend, in-process, on one 127.0.0.1 port for its
// whole life: restart serves the same data root on the same port with a
// new token.
type backend struct {
	tb    testing.TB
	root  string
	store *gatedStore
	audit *storage.AuditLog
	addr  string   // 127.0.0.1:port, fixed at the first start
	allow []string // --allow-origin, read at each start
	// assets replaces jsapi.Assets() when set, read at each start.
	assets fs.FS

	configure []func(*server.Config) // applied to every start's Config

	srv    *server.Server
	gw     *gateway.Gateway // the current start's, closed when it stops (as serve closes it)
	cancel context.CancelFunc
	done   chan error

	mu       sync.Mutex
	requests []request     // /ws and /jsapi/session requests, in the order answered
	invokes  []invoke      // invoke frames read, in order
	conns    []*tapConn    // connections accepted by the current server
	accepted chan struct{} // a token per accepted connection (dropped when full)
}

// request is an HTTP request the backend answered.
type request struct {
	Path, Origin, SecFetchSite string
	Status                     int
}

// invoke is an invoke frame the backend read.
type invoke struct {
	Command string
	Head    string // the frame's first bytes (up to tapHeadLen)
}

// newBackend starts a backend on a fresh data root; each configure
// function adjusts its server.Config (extensions, the demo server, …).
func newBackend(tb testing.TB, configure ...func(*server.Config)) *backend {
	tb.Helper()
	root := tb.TempDir()
	b := &backend{tb: tb, root: root, store: &gatedStore{Store: storage.Open(root)}, audit: storage.OpenAuditLog(root, storage.AuditOptions{}),
		accepted: make(chan struct{}, 64), configure: configure}
	b.start()
	tb.Cleanup(func() {
		if b.cancel != nil {
			b.stop()
		}
	})
	return b
}

// start serves on b.addr (a free port the first time).
func (b *backend) start() {
	b.tb.Helper()
	addr := b.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		b.tb.Fatalf("listen %s: %v", addr, err)
	}
	b.addr = ln.Addr().String()
	b.mu.Lock()
	b.conns = nil
	b.mu.Unlock()
	// As serve: the gateway tells the service of the list changes its live
	// connections hear.
	var svc *service.Service
	gw := gateway.New(gateway.Config{ClientVersion: "webtest", Auths: b.store, Changed: func(c domain.ListChange) { svc.ListChanged(c) }})
	svc = service.New(service.Config{
		Registrations:  b.store,
		Catalogs:       b.store,
		Gateway:        gw,
		Audit:          b.audit,
		ExtensionStore: storage.OpenExtensionStore(b.root),
		ToolSets:       b.store,
		Results:        storage.OpenResultStore(b.root, storage.ResultOptions{}),
		Capabilities:   b.store,
		RedirectURL:    b.url(jsapi.PathOAuthCallback), // as serve: the backend's own loopback address
	})
	b.gw = gw
	cfg := server.Config{
		Commands:         server.NewCommands(svc, nil),
		Assets:           cmp.Or[fs.FS](b.assets, jsapi.Assets()),
		AllowOrigins:     b.allow,
		Pages:            map[string]fs.FS{"/webtest/": os.DirFS("testdata")},
		Version:          "webtest",
		HandshakeTimeout: 3 * time.Second,
	}
	for _, f := range b.configure {
		f(&cfg)
	}
	b.srv = server.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan error, 1)
	go func(srv *server.Server, done chan<- error) {
		done <- srv.Serve(ctx, tapListener{ln, b}, 3*time.Second)
	}(b.srv, b.done)
}

// stop shuts the backend down and waits for Serve to return.
func (b *backend) stop() {
	b.tb.Helper()
	b.cancel()
	b.wait()
}

// wait waits for Serve, after b.cancel, and checks it shut down cleanly.
func (b *backend) wait() {
	b.tb.Helper()
	b.cancel = nil
	select {
	case err := <-b.done:
		if err != nil {
			b.tb.Errorf("server.Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		b.tb.Fatal("server.Serve did not return after its context ended")
	}
	b.gw.Close() // its live connections and stdio servers
}

// url returns the absolute URL of path on the backend.
func (b *backend) url(path string) string { return "http://" + b.addr + path }

// origin is the backend's origin, as the page sees it.
func (b *backend) origin() string { return "http://" + b.addr }

// openHost opens the host page in a new tab and waits for `ready`.
func (b *backend) openHost(tb testing.TB) *page {
	tb.Helper()
	p := openPage(tb, b.url("/webtest/host.html"))
	p.run(`await tt.hostReady;`)
	return p
}

// regPath is the registration file of id.
func (b *backend) regPath(id string) string {
	return filepath.Join(b.root, "_tauritavern", "mcp", "registrations", id+".json")
}

// regFiles returns the registration directory: file name → content.
func (b *backend) regFiles() map[string]string {
	b.tb.Helper()
	dir := filepath.Join(b.root, "_tauritavern", "mcp", "registrations")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}
	}
	if err != nil {
		b.tb.Fatal(err)
	}
	files := make(map[string]string, len(entries))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.tb.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// dropSockets breaks the TCP connection under every upgraded socket, as a
// network failure would (no close frame: the page sees 1006), and returns
// how many it broke. The backend stays up.
func (b *backend) dropSockets() int {
	b.mu.Lock()
	conns := append([]*tapConn(nil), b.conns...)
	b.mu.Unlock()
	n := 0
	for _, c := range conns {
		c.mu.Lock()
		ws := c.ws
		c.mu.Unlock()
		if ws && c.Conn.Close() == nil {
			n++
		}
	}
	return n
}

// seenRequests returns the /ws and /jsapi/session requests answered so far.
func (b *backend) seenRequests() []request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]request(nil), b.requests...)
}

// seenInvokes returns the invoke frames read so far.
func (b *backend) seenInvokes() []invoke {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]invoke(nil), b.invokes...)
}

// countInvokes counts the invoke frames of command read so far.
func (b *backend) countInvokes(command string) int {
	n := 0
	for _, f := range b.seenInvokes() {
		if f.Command == command {
			n++
		}
	}
	return n
}

// gatedStore is the storage the service uses, with a gate on the Stat of
// the registrations folder (every list_mcp_servers revalidates the
// service's view with it first), so a test can hold a list in flight
// inside the backend.
type gatedStore struct {
	*storage.Store

	mu      sync.Mutex
	gate    chan struct{}
	entered chan struct{}
}

// holdNextScan makes the next Stat of the registrations folder wait until
// release is called; entered is closed once it has started waiting.
func (s *gatedStore) holdNextScan() (entered <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate, in := make(chan struct{}), make(chan struct{})
	s.gate, s.entered = gate, in
	var once sync.Once
	return in, func() { once.Do(func() { close(gate) }) }
}

func (s *gatedStore) RegistrationsFolderStamp() domain.FileStamp {
	s.mu.Lock()
	gate, entered := s.gate, s.entered
	s.gate, s.entered = nil, nil
	s.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	return s.Store.RegistrationsFolderStamp()
}

// ---------------------------------------------------------------- wire tap

// tapListener hands out tapped connections.
type tapListener struct {
	net.Listener
	b *backend
}

func (l tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: c, b: l.b}
	l.b.mu.Lock()
	l.b.conns = append(l.b.conns, tc)
	l.b.mu.Unlock()
	select {
	case l.b.accepted <- struct{}{}:
	default:
	}
	return tc, nil
}

// tapConn watches one connection. Browsers do not pipeline HTTP/1.1 and
// the pages send no request bodies, so each response's first write answers
// the oldest request head read; after a 101 the reads are WebSocket frames
// from the client (masked, never compressed: the backend does not
// negotiate permessage-deflate).
type tapConn struct {
	net.Conn
	b *backend

	mu      sync.Mutex
	in      []byte    // request bytes not yet parsed
	pending []request // request heads awaiting their response
	ws      bool      // upgraded
	frames  frameTap
	used    bool // a byte was read
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used = c.used || n > 0
	if c.ws {
		c.frames.feed(p[:n], c.b.recordInvoke)
		return n, err
	}
	c.in = append(c.in, p[:n]...)
	for {
		i := bytes.Index(c.in, []byte("\r\n\r\n"))
		if i < 0 {
			break
		}
		head := c.in[:i+4]
		c.in = c.in[i+4:]
		req, rerr := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		if rerr != nil {
			continue
		}
		c.pending = append(c.pending, request{Path: req.URL.Path, Origin: req.Header.Get("Origin"), SecFetchSite: req.Header.Get("Sec-Fetch-Site")})
	}
	return n, err
}

func (c *tapConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.ws && len(c.pending) > 0 && len(p) >= 12 && bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		r := c.pending[0]
		c.pending = c.pending[1:]
		r.Status, _ = strconv.Atoi(string(p[9:12]))
		c.ws = r.Status == http.StatusSwitchingProtocols
		if r.Path == jsapi.PathWS || r.Path == jsapi.PathSession {
			c.b.mu.Lock()
			c.b.requests = append(c.b.requests, r)
			c.b.mu.Unlock()
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (b *backend) recordInvoke(head []byte) {
	var f struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	// The head is cut short, so decode only the members before "args":
	// {"type":"invoke","id":N,"command":"...","args":...
	h := string(head)
	if i := strings.Index(h, `,"args":`); i >= 0 {
		h = h[:i] + "}"
	}
	if json.Unmarshal([]byte(h), &f) != nil || f.Type != jsapi.FrameInvoke {
		return
	}
	b.mu.Lock()
	b.invokes = append(b.invokes, invoke{Command: f.Command, Head: string(head)})
	b.mu.Unlock()
}

// frameTap parses client-to-server WebSocket frames from a byte stream and
// reports the first bytes of each text frame, unmasked.
type frameTap struct {
	hdr       []byte
	inPayload bool
	text      bool
	left      uint64 // payload bytes left in the frame
	pos       uint64 // payload bytes seen
	mask      [4]byte
	head      []byte
}

const tapHeadLen = 1024

func (t *frameTap) feed(b []byte, onText func(head []byte)) {
	for len(b) > 0 {
		if !t.inPayload {
			t.hdr = append(t.hdr, b[0])
			b = b[1:]
			if len(t.hdr) < 2 {
				continue
			}
			need := 2
			switch t.hdr[1] & 0x7f {
			case 126:
				need += 2
			case 127:
				need += 8
			}
			if t.hdr[1]&0x80 != 0 {
				need += 4
			}
			if len(t.hdr) < need {
				continue
			}
			n := uint64(t.hdr[1] & 0x7f)
			ext := t.hdr[2:]
			switch n {
			case 126:
				n, ext = uint64(ext[0])<<8|uint64(ext[1]), ext[2:]
			case 127:
				n = 0
				for _, x := range ext[:8] {
					n = n<<8 | uint64(x)
				}
				ext = ext[8:]
			}
			t.mask = [4]byte{}
			if t.hdr[1]&0x80 != 0 {
				copy(t.mask[:], ext[:4])
			}
			t.text = t.hdr[0]&0x0f == 1
			t.left, t.pos, t.head, t.hdr = n, 0, t.head[:0], t.hdr[:0]
			t.inPayload = true
			if n == 0 {
				t.inPayload = false
				if t.text {
					onText(t.head)
				}
				continue
			}
		}
		k := min(uint64(len(b)), t.left)
		for i := uint64(0); i < k && t.pos+i < tapHeadLen; i++ {
			t.head = append(t.head, b[i]^t.mask[(t.pos+i)%4])
		}
		t.pos += k
		t.left -= k
		b = b[k:]
		if t.left == 0 {
			t.inPayload = false
			if t.text {
				onText(t.head)
			}
		}
	}
}

// ---------------------------------------------------------------- MCP servers

// mcpServer is an MCP server on 127.0.0.1 that records every request it
// receives: its JSON-RPC method, the tool name of a tools/call, the body
// and headers, and how the request ended. Closing it (at the end of the
// test) does not wait for handlers still running: the demo's slow tool
// runs to its end even when the client went away (go-sdk's stateless
// handler does not cancel it).
type mcpServer struct {
	URL  string
	mu   sync.Mutex
	reqs []*mcpRequest
}

// mcpRequest is one HTTP request an mcpServer received.
type mcpRequest struct {
	Method string // the JSON-RPC method, or the HTTP method of a request without one
	Tool   string // params.name of a tools/call
	Body   string
	Header http.Header
	// Gone: the client went away (the request's context ended) while the
	// handler ran; Done: the handler returned.
	Gone, Done bool
}

// newMCPServer serves h behind the recorder.
func newMCPServer(tb testing.TB, h http.Handler) *mcpServer {
	tb.Helper()
	s := &mcpServer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		req := &mcpRequest{Method: r.Method, Body: string(body), Header: r.Header.Clone()}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			req.Method = msg.Method
			if msg.Method == "tools/call" {
				req.Tool = msg.Params.Name
			}
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		stop := context.AfterFunc(r.Context(), func() {
			s.mu.Lock()
			req.Gone = true
			s.mu.Unlock()
		})
		h.ServeHTTP(w, r)
		stop()
		s.mu.Lock()
		req.Done = true
		s.mu.Unlock()
	})}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return s
}

// newDemoServer serves backend/demo (stateless: every protocol version).
func newDemoServer(tb testing.TB) *mcpServer {
	tb.Helper()
	return newMCPServer(tb, demo.Handler())
}

// endpoint is the URL to register.
func (s *mcpServer) endpoint() string { return s.URL + "/mcp" }

// requests returns copies of the requests received so far, in order.
func (s *mcpServer) requests() []mcpRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]mcpRequest, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// count counts the requests of a JSON-RPC method; "" counts them all.
func (s *mcpServer) count(method string) int {
	n := 0
	for _, r := range s.requests() {
		if method == "" || r.Method == method {
			n++
		}
	}
	return n
}

// toolCalls returns the tools/call requests received so far.
func (s *mcpServer) toolCalls() []mcpRequest {
	var out []mcpRequest
	for _, r := range s.requests() {
		if r.Method == "tools/call" {
			out = append(out, r)
		}
	}
	return out
}

// waitUntil polls cond until it holds. The deadline only keeps a broken
// path from hanging the suite; it is not a timing assertion.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// withFile serves FS with the file name replaced by data.
type withFile struct {
	fs.FS
	name string
	data []byte
}

func (w withFile) Open(name string) (fs.File, error) {
	if name == w.name {
		return fstest.MapFS{name: {Data: w.data}}.Open(name)
	}
	return w.FS.Open(name)
}
