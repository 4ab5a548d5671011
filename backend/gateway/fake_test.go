package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// recorder wraps a handler and records the JSON-RPC method (or the HTTP
// method for bodiless requests) and headers of every request.
type recorder struct {
	next    http.Handler
	mu      sync.Mutex
	methods []string
	headers []http.Header
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.Method
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
		method = msg.Method
	}
	rec.mu.Lock()
	rec.methods = append(rec.methods, method)
	rec.headers = append(rec.headers, r.Header.Clone())
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) seen() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.methods)
}

func (rec *recorder) count(method string) int {
	n := 0
	for _, m := range rec.seen() {
		if m == method {
			n++
		}
	}
	return n
}

// serve starts h on a loopback server wrapped in a recorder.
func serve(t *testing.T, h http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{next: h}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	return ts, rec
}

// sdkServer is a real go-sdk server: stateless serves 2026-07-28 (and the
// legacy versions), stateful only the legacy ones.
func sdkServer(t *testing.T, stateless bool, pageSize int, versions []string, tools ...*mcp.Tool) (*httptest.Server, *recorder) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.2.3"}, &mcp.ServerOptions{PageSize: pageSize, SupportedProtocolVersions: versions})
	for _, tool := range tools {
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	return serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true}))
}

func objectTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "tool " + name, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
}

// fake is a hand-written legacy MCP server over plain JSON responses, for
// what a go-sdk server will not do: odd versions, cursor loops, invalid
// tools, huge pages.
type fake struct {
	version string // answered to initialize
	noTools bool   // leave the tools capability out
	list    func(cursor string) any
	onList  func(w http.ResponseWriter, r *http.Request) bool // may take over a tools/list answer
	// onCall answers tools/call; body is the raw request.
	onCall func(w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte)
	// caps, when set, is the capabilities answered to initialize instead.
	caps map[string]any
	// onOther may answer any other method; body is the raw request.
	onOther func(w http.ResponseWriter, method string, id json.RawMessage, body []byte) bool
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reply := func(status int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}
	switch req.Method {
	case "server/discover":
		reply(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
	case "initialize":
		caps := map[string]any{"tools": map[string]any{}}
		if f.noTools {
			caps = map[string]any{}
		}
		if f.caps != nil {
			caps = f.caps
		}
		reply(http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
			"protocolVersion": f.version, "capabilities": caps, "serverInfo": map[string]any{"name": "fake", "version": "0.1"}}})
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/call":
		f.onCall(w, r, req.ID, body)
	case "tools/list":
		if f.onList != nil && f.onList(w, r) {
			return
		}
		reply(http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": f.list(req.Params.Cursor)})
	default:
		if f.onOther != nil && f.onOther(w, req.Method, req.ID, body) {
			return
		}
		reply(http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

// page builds a tools/list result.
func page(next string, tools ...any) map[string]any {
	r := map[string]any{"tools": tools}
	if next != "" {
		r["nextCursor"] = next
	}
	return r
}

func rawTool(name string, schema string) map[string]any {
	var s any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		panic(err)
	}
	return map[string]any{"name": name, "inputSchema": s}
}

// registration returns an active registration of endpoint.
func registration(t *testing.T, endpoint string, protocol domain.Protocol, headers map[string]string) domain.Registration {
	t.Helper()
	ep, err := domain.ParseEndpoint(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	r, err := domain.NewRegistration("fixture", ep, headers, protocol)
	if err != nil {
		t.Fatal(err)
	}
	r.State = domain.StateActive
	return r
}

// testGateway has timeouts short enough for failure cases to stay fast and
// long enough for a 9 MiB catalog under the race detector.
func testGateway(t testing.TB) *Gateway {
	return newGateway(t, Config{ConnectTimeout: 2 * time.Second, StartupTimeout: 10 * time.Second, ListTimeout: 20 * time.Second, CloseTimeout: 500 * time.Millisecond})
}

// hasty is a gateway whose startup and list runs give up after 300 ms.
func hasty(t testing.TB) *Gateway {
	return newGateway(t, Config{StartupTimeout: 300 * time.Millisecond, ListTimeout: 300 * time.Millisecond, CloseTimeout: 100 * time.Millisecond})
}

// serveHanging serves a handler that may block (through wait) until its
// request ends or the test does: a server that never answers must not keep
// the test's server from closing.
func serveHanging(t *testing.T, handler func(wait func(*http.Request)) http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	stop := make(chan struct{})
	ts, rec := serve(t, handler(func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop) }) // runs before serve's Close
	return ts, rec
}

// newGateway returns New(cfg), closed when the test ends: its live
// connections would otherwise outlive the test (until their idle timeout),
// and with them their goroutines and the test server's connections.
func newGateway(t testing.TB, cfg Config) *Gateway {
	g := New(cfg)
	t.Cleanup(func() { g.Close() })
	return g
}

// callText is the one text block of a known, successful outcome.
func callText(t *testing.T, out domain.CallOutcome) string {
	t.Helper()
	if out.Outcome != domain.OutcomeKnownResponse || out.Result == nil || len(out.Result.TextBlocks) != 1 {
		t.Fatalf("outcome %+v (result %+v)", out, out.Result)
	}
	return out.Result.TextBlocks[0].Text
}

func toolNamed(t testing.TB, c domain.Catalog, name string) domain.Tool {
	t.Helper()
	i := slices.IndexFunc(c.Tools, func(tool domain.Tool) bool { return tool.NativeName == name })
	if i < 0 {
		t.Fatalf("no tool %s in %q", name, names(c))
	}
	return c.Tools[i]
}
