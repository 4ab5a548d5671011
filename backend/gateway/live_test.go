package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// expiring serves a stateful (2025) go-sdk server whose sessions the test
// can end: a request carrying an ended session's id is answered 404 without
// reaching the server, as the Streamable HTTP transport has a server answer
// for a session it terminated. runs counts the tool's runs.
type expiring struct {
	next http.Handler
	runs atomic.Int32

	mu    sync.Mutex
	seen  map[string]bool // session ids handed out
	ended map[string]bool
	// answered counts 404s per method
	answered map[string]int
}

func newExpiring(t *testing.T) (*expiring, string, *recorder) {
	t.Helper()
	e := &expiring{seen: map[string]bool{}, ended: map[string]bool{}, answered: map[string]int{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "expiring", Version: "1"}, nil)
	s.AddTool(objectTool("a"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		e.runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	e.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts, rec := serve(t, e)
	return e, ts.URL, rec
}

func (e *expiring) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	e.mu.Lock()
	if id != "" {
		e.seen[id] = true
	}
	gone := e.ended[id]
	e.mu.Unlock()
	if gone {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	e.next.ServeHTTP(w, r)
}

// endAll ends every session handed out so far.
func (e *expiring) endAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id := range e.seen {
		e.ended[id] = true
	}
}

func (e *expiring) sessions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.seen)
}

func callA(g *Gateway, r domain.Registration) domain.CallOutcome {
	return g.Call(context.Background(), r, domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)})
}

// A 2025 server that ended the kept session answers 404 for its id: by the
// transport's definition the request was not processed, so the call is
// sent once more on a new session — and the tool runs exactly once. A
// listing takes the same path.
func TestExpiredSessionGetsANewOneAndTheCallOnce(t *testing.T) {
	e, url, rec := newExpiring(t)
	g := callGateway(t, 5*time.Second)
	r := registration(t, url, domain.Protocol20251125, nil)
	mustKnow(t, callA(g, r))
	e.endAll()
	mustKnow(t, callA(g, r))
	if runs := e.runs.Load(); runs != 2 {
		t.Fatalf("the tool ran %d times for two calls", runs)
	}
	if calls := rec.count("tools/call"); calls != 3 || e.sessions() != 2 {
		t.Fatalf("%d tools/call requests (one answered 404) over %d sessions: %v", calls, e.sessions(), rec.seen())
	}
	mustKnow(t, callA(g, r)) // the new session serves a second operation: it is worth keeping
	e.endAll()
	if _, err := g.Discover(context.Background(), r); err != nil {
		t.Fatalf("discovery after an expiry: %v", err)
	}
	if st := g.Status(r); st.State != domain.ConnectionOpen || st.Sessions != domain.SessionsKept {
		t.Fatalf("status %+v: one expiry after a kept session is no reason to stop keeping them", st)
	}
}

// A server that ends every session between operations: after the second
// session that expired before it served two operations, each operation
// gets a fresh session of its own (no wasted request each time, no loop),
// and the status says so. Every call still runs the tool exactly once.
func TestServerThatExpiresSessionsGetsShortLivedOnes(t *testing.T) {
	e, url, rec := newExpiring(t)
	g := callGateway(t, 5*time.Second)
	r := registration(t, url, domain.Protocol20251125, nil)
	const calls = 5
	for range calls {
		mustKnow(t, callA(g, r))
		e.endAll()
	}
	if runs := e.runs.Load(); runs != calls {
		t.Fatalf("the tool ran %d times for %d calls", runs, calls)
	}
	if st := g.Status(r); st.Sessions != domain.SessionsShortLived {
		t.Fatalf("status %+v", st)
	}
	// calls 2 and 3 each lost one request to an ended session; from call 4
	// on, every call has a session of its own.
	if got := rec.count("tools/call"); got != calls+2 {
		t.Fatalf("%d tools/call requests for %d calls: %v", got, calls, rec.seen())
	}
}

// A call whose kept session ended after the call took it, before anything
// was written, goes on a new session: nothing left this host.
func TestCallOnASessionThatEndedGoesOnANewOne(t *testing.T) {
	e, url, rec := newExpiring(t)
	g := callGateway(t, 5*time.Second)
	r := registration(t, url, domain.Protocol20251125, nil)
	mustKnow(t, callA(g, r))
	le, err := g.lives.acquire(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	le.s.cs.Close() // as when its stream broke
	<-le.s.ended
	call := domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)}
	if out, again := g.callOn(context.Background(), le, call, nil, true); !again {
		t.Fatalf("a call on an ended session: %+v, not sent again", out)
	}
	out, again := g.callOn(context.Background(), le, call, nil, false)
	g.lives.release(le)
	if again || out.Outcome != domain.OutcomeNotSent || out.Code != CodeCallNotQueued {
		t.Fatalf("without a resend: %+v", out)
	}
	mustKnow(t, callA(g, r))
	if runs, calls := e.runs.Load(), rec.count("tools/call"); runs != 2 || calls != 2 {
		t.Fatalf("%d runs, %d tools/call requests", runs, calls)
	}
}

// The live connection is shared, and closed when idle, on Disconnect, when
// the registration's connection settings change, and beyond MaxLive (the
// least recently used first).
func TestLiveConnectionLifetime(t *testing.T) {
	_, url, rec := newExpiring(t)
	g := newGateway(t, Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second,
		LiveIdleTimeout: 200 * time.Millisecond, MaxLive: 2})
	r := registration(t, url, domain.Protocol20251125, nil)
	initializes := func() int { return rec.count("initialize") }

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { mustKnow(t, callA(g, r)) })
	}
	wg.Wait()
	if n := initializes(); n != 1 {
		t.Fatalf("%d sessions for 4 concurrent calls", n)
	}
	waitFor(t, "the idle connection to close", func() bool { return g.Status(r).State == domain.ConnectionClosed })
	mustKnow(t, callA(g, r))
	g.Disconnect(r.ID)
	mustKnow(t, callA(g, r))
	changed := r.Clone()
	changed.Headers = map[string]string{"X-Changed": "1"}
	mustKnow(t, callA(g, changed))
	if n := initializes(); n != 4 {
		t.Fatalf("%d sessions: want one each after idle, Disconnect and the change", n)
	}
	mustKnow(t, callA(g, changed)) // kept

	others := []domain.Registration{registration(t, url, domain.Protocol20251125, nil), registration(t, url, domain.Protocol20251125, nil)}
	for _, o := range others {
		mustKnow(t, callA(g, o))
	}
	if n := g.lives.count(); n != 2 {
		t.Fatalf("%d live connections, MaxLive is 2", n)
	}
	if st := g.Status(changed); st.State != domain.ConnectionClosed {
		t.Fatalf("the least recently used connection is %s", st.State)
	}
	if deletes := rec.count(http.MethodDelete); deletes < 3 {
		t.Fatalf("%d sessions deleted", deletes)
	}
}

// On 2026-07-28 go-sdk would answer a list from its per-session cache for
// the server's ttlMs (SEP-2549); on a kept session an explicit refresh must
// still reach the server.
func TestRefreshReachesTheServerDespiteTTL(t *testing.T) {
	var lists atomic.Int32
	h := intercept(modernHandler(objectTool("a")), "tools/list", func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		reply(w, r, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"ttlMs":600000,"cacheScope":"private"}`)
	})
	ts, rec := serve(t, h)
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.Protocol20260728, nil)
	for range 3 {
		if _, err := g.Discover(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists.Load(); n != 3 || rec.count("server/discover") != 1 {
		t.Fatalf("%d tools/list requests for 3 discoveries: %v", n, rec.seen())
	}
}

// waitFor polls cond for a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
