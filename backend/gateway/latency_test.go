package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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

// fakeBase is an HTTP transport that may read the request body and then
// fails or answers.
type fakeBase struct {
	read    int  // body bytes to read (-1: use GetBody and read it all)
	respond bool // answer instead of failing
}

func (f fakeBase) RoundTrip(req *http.Request) (*http.Response, error) {
	body := req.Body
	if f.read < 0 {
		body, _ = req.GetBody()
		io.ReadAll(body)
	} else if f.read > 0 {
		io.ReadFull(body, make([]byte, f.read))
	}
	if f.respond {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
	}
	return nil, errors.New("connection reset")
}

// The sent boundary: a tracked request counts as possibly sent from the
// moment the HTTP transport reads its body (over HTTP/2 the write is
// reported only after the server may already have the whole request), or
// when anything answered it; not before.
func TestSentBoundary(t *testing.T) {
	for _, tt := range []struct {
		name string
		base fakeBase
		sent bool
	}{
		{"failed before the body", fakeBase{}, false},
		{"failed after a byte of the body", fakeBase{read: 1}, true},
		{"failed after a retry's body", fakeBase{read: -1}, true},
		{"answered without reading", fakeBase{respond: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"tools/call", "tools/list"} {
				tr := &transport{base: tt.base, life: context.Background(), limit: 1 << 20, openDone: make(chan struct{}, 1)}
				body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{}}`
				ctx, ex := withExchange(context.Background(), "tools/call")
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://example.invalid/", strings.NewReader(body))
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				if got := ex.written.Load(); got != (tt.sent && method == "tools/call") {
					t.Fatalf("%s: sent %v", method, got)
				}
			}
		})
	}
}
