package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/wan"
)

// far puts a poolServer behind a delaying link and holds every DELETE until
// a token arrives on the returned channel, so a test can tell the round
// trips on the caller's path from the clean-up's. The link delays 50 ms
// each way: a count can only go wrong when a goroutine is held up longer
// than that, which a loaded machine does do for 20 ms.
func far(t *testing.T, stateless, tlsOn bool) (*Gateway, string, *wan.Link, chan<- struct{}) {
	t.Helper()
	ts, log, tlsConfig := poolServer(t, stateless, tlsOn, nil)
	tokens := make(chan struct{})
	sdk := log.next
	log.next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			select {
			case <-tokens:
			case <-r.Context().Done():
			}
		}
		sdk.ServeHTTP(w, r)
	})
	link, err := wan.Listen(ts.Listener.Addr().String(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { link.Close() })
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	g := newGateway(t, Config{StartupTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, CallWait: 10 * time.Second, CloseTimeout: 10 * time.Second, TLS: tlsConfig})
	return g, scheme + "://" + link.Addr() + "/", link, tokens
}

// A warm operation costs one round trip (issue 21): it runs on the
// server's live connection, whose session is open — 2026-07-28: no
// server/discover, and the call's Mcp-Param headers come from the catalog,
// so no tools/list; 2025: no initialize. A cold one adds the session's
// startup (server/discover; initialize and notifications/initialized), its
// connection, and over TLS the handshake's round trip, once. A 2025
// discovery lists on an eliciting session (discover.go), opened once and
// then kept beside the shared one, so a warm asking call costs one round
// trip too. Nothing is sent after the answer; a 2025 session's DELETE is
// sent when the live connection closes. Counted by the link.
func TestRoundTripsPerOperation(t *testing.T) {
	for _, tt := range []struct {
		name      string
		stateless bool
		tls       bool
		protocol  domain.Protocol
		startup   int // round trips of opening the session
		listing   int // of opening the eliciting session discovery lists on
		// beside the path: over HTTP/1.1 the eliciting session's GET stream
		// takes a connection of its own, whose round trip the link counts
		// though nothing waits for it (HTTP/2 multiplexes it)
		beside  int
		closing int // DELETEs of closing the live connection, a round trip each (they may overlap)
	}{
		{"2026 http", true, false, domain.Protocol20260728, 1, 0, 0, 0},
		{"2026 https", true, true, domain.Protocol20260728, 1, 0, 0, 0},
		{"2025 http", false, false, domain.Protocol20251125, 2, 2, 1, 2},
		{"2025 https", false, true, domain.Protocol20251125, 2, 2, 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // mostly waiting on the link
			g, url, link, deletes := far(t, tt.stateless, tt.tls)
			r := registration(t, url, tt.protocol, nil)
			ctx := context.Background()
			measure := func(name string, op func(), path, conns int) {
				t.Helper()
				start := time.Now()
				var mu sync.Mutex
				var trace []string
				record := func(up bool, n, d int) {
					mu.Lock()
					defer mu.Unlock()
					dir := "server→client"
					if up {
						dir = "client→server"
					}
					trace = append(trace, fmt.Sprintf("%5dms %s %5d bytes, depth %d", time.Since(start).Milliseconds(), dir, n, d))
				}
				link.Trace.Store(&record)
				defer func() {
					link.Trace.Store(nil)
					if t.Failed() {
						mu.Lock()
						defer mu.Unlock()
						t.Logf("%s, as the link saw it:\n%s", name, strings.Join(trace, "\n"))
					}
				}()
				before := link.Stats()
				op()
				onPath := link.Stats().Sub(before)
				// HTTP/1.1 may open a spare connection (see
				// TestOperationsShareOneConnection): no round trip waits for it.
				if onPath.RoundTrips != path || (tt.tls && onPath.Conns != conns) || onPath.Conns < conns {
					t.Errorf("%s: %+v on the caller's path; want %d round trips, %d connections", name, onPath, path, conns)
				}
			}
			schema := json.RawMessage(`{"type":"object"}`)
			call := func() {
				mustKnow(t, g.Call(ctx, r, domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`), InputSchema: schema}))
			}
			discover := func() {
				if _, err := g.Discover(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			handshake := 0
			if tt.tls {
				handshake = 1 // TLS 1.3
			}
			measure("cold call", call, 1+tt.startup+handshake, 1)
			for range 5 {
				measure("warm call", call, 1, 0)
			}
			measure("first discovery", discover, 1+tt.listing+tt.beside, 0)
			measure("warm discovery", discover, 1, 0)
			asking := func() {
				mustKnow(t, g.Call(ctx, r, domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`), InputSchema: schema,
					Elicit: func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
						return domain.ElicitResponse{}, errors.New("not asked")
					}}))
			}
			measure("warm asking call", asking, 1, 0)
			before := link.Stats()
			go func() {
				for range tt.closing {
					deletes <- struct{}{}
				}
			}()
			g.closeIdle()
			for link.Stats().Open > 0 { // the old connection's goodbye is not the next operation's
				time.Sleep(time.Millisecond)
			}
			if closing := link.Stats().Sub(before); closing.RoundTrips > tt.closing || (tt.closing > 0) != (closing.RoundTrips > 0) {
				t.Errorf("closing the live connection: %+v, want %d round trips at most (%d DELETEs)", closing, tt.closing, tt.closing)
			}
			measure("cold discovery", discover, 1+tt.startup+tt.listing+handshake+tt.beside, 1)
			g.Close()
		})
	}
}

// connWith is a client connection to a real server whose writes can be
// made to fail and are counted.
type connWith struct {
	net.Conn
	failWrites bool
	writes     *atomic.Int32
}

func (c *connWith) Write(p []byte) (int, error) {
	c.writes.Add(1)
	if c.failWrites {
		return 0, errors.New("connection reset")
	}
	return c.Conn.Write(p)
}

// dialing is an HTTP transport to ts whose connections fail to open
// (refuse), fail every write (failWrites), or count their writes.
func dialing(ts *httptest.Server, refuse, failWrites bool, writes *atomic.Int32) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		if refuse {
			return nil, errors.New("connection refused")
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, ts.Listener.Addr().String())
		if err != nil {
			return nil, err
		}
		return &connWith{Conn: c, failWrites: failWrites, writes: writes}, nil
	}}
}

// The sent boundary: a tracked request counts as possibly sent from the
// moment its headers are written (before any byte of its body; over
// HTTP/2 the end of the write is reported only after the server may
// already have the whole request), even when the write then fails, or
// when anything answered it; not before. Requests the exchange does not
// track are never marked.
func TestSentBoundary(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }))
	defer ts.Close()
	for _, tt := range []struct {
		name               string
		refuse, failWrites bool
		sent               bool
	}{
		{"not connected", true, false, false},
		{"failed after its headers", false, true, true},
		{"answered", false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"tools/call", "tools/list"} {
				tr := &transport{base: dialing(ts, tt.refuse, tt.failWrites, new(atomic.Int32)), life: context.Background(), limit: 1 << 20, openDone: make(chan struct{}, 1)}
				body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}`
				ctx, ex := withExchange(context.Background(), "tools/call")
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, bytes.NewReader([]byte(body)))
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				if (err == nil) != (tt.name == "answered") {
					t.Fatalf("%s: %v", method, err)
				}
				if got := ex.written.Load(); got != (tt.sent && method == "tools/call") {
					t.Fatalf("%s: sent %v", method, got)
				}
			}
		})
	}
}

// A tracked request leaves in one write, its headers and its body
// together: marking the sent boundary must not make net/http flush the
// headers on their own (it does for a body it does not know to be in
// memory), which costs a second write per request and the server a
// second read.
func TestARequestLeavesInOneWrite(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "{}")
	}))
	defer ts.Close()
	writes := new(atomic.Int32)
	tr := &transport{base: dialing(ts, false, false, writes), headers: http.Header{"X-Team": {"a"}}, life: context.Background(), limit: 1 << 20, openDone: make(chan struct{}, 1)}
	for i := range 3 {
		ctx, ex := withExchange(context.Background(), "tools/call")
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a","arguments":{"q":"x"}}}`, i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, bytes.NewReader([]byte(body)))
		before := writes.Load()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := writes.Load() - before; n != 1 || !ex.written.Load() {
			t.Fatalf("request %d: %d writes (sent %v)", i, n, ex.written.Load())
		}
	}
}
