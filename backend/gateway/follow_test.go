package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// changes collects what a gateway's Changed receives.
type changes struct {
	mu  sync.Mutex
	got []domain.ListChange
	ch  chan domain.ListChange
}

func newChanges() *changes { return &changes{ch: make(chan domain.ListChange, 64)} }

func (c *changes) add(lc domain.ListChange) {
	c.mu.Lock()
	c.got = append(c.got, lc)
	c.mu.Unlock()
	c.ch <- lc
}

func (c *changes) next(t *testing.T, within time.Duration) domain.ListChange {
	t.Helper()
	select {
	case lc := <-c.ch:
		return lc
	case <-time.After(within):
		t.Fatalf("no list change within %s", within)
		return domain.ListChange{}
	}
}

func (c *changes) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func followingGateway(t *testing.T, c *changes) *Gateway {
	return newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second,
		CloseTimeout: time.Second, Changed: c.add})
}

// A server that adds a tool announces it, and the live connection hears
// it: on 2025 over the standalone GET stream, on 2026 over
// subscriptions/listen. Prompts and resources too.
func TestFollowsListChanges(t *testing.T) {
	for _, tt := range []struct {
		name      string
		stateless bool
		protocol  domain.Protocol
	}{
		{"2025", false, domain.Protocol20251125},
		{"2026", true, domain.Protocol20260728},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
			s.AddTool(objectTool("a"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
			prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			}
			// A server follows only what it advertised when the session
			// opened (2026: the lists subscriptions/listen names).
			s.AddPrompt(&mcp.Prompt{Name: "p"}, prompt)
			ts, _ := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: tt.stateless}))
			c := newChanges()
			g := followingGateway(t, c)
			r := registration(t, ts.URL, tt.protocol, nil)
			mustKnow(t, callA(g, r))
			waitFor(t, "the connection to follow", func() bool { return g.Status(r).Following })

			s.AddTool(objectTool("b"), nil)
			if lc := c.next(t, 5*time.Second); !lc.Tools || lc.RegistrationID != r.ID {
				t.Fatalf("change %+v", lc)
			}
			s.AddPrompt(&mcp.Prompt{Name: "q"}, prompt)
			if lc := c.next(t, 5*time.Second); !lc.Prompts {
				t.Fatalf("change %+v", lc)
			}
			// The next discovery lists the new tool (on the same session).
			cat, err := g.Discover(context.Background(), r)
			if err != nil || len(cat.Tools) != 2 {
				t.Fatalf("discovery after the change: %+v %v", cat.Tools, err)
			}
		})
	}
}

// streamServer is a hand-written 2025 server: initialize and a tool call
// answered in JSON, and a standalone GET stream the test writes.
type streamServer struct {
	get func(w http.ResponseWriter, r *http.Request)
}

func (s *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.get(w, r)
		return
	}
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.NewDecoder(r.Body).Decode(&m)
	w.Header().Set("Mcp-Session-Id", "s1")
	switch m.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"streams","version":"1"}}}`, m.ID)
	case "tools/call":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// Whatever becomes of the server's notification stream — never answered,
// refused, ended, flooding — only following stops: the session goes on,
// its calls are answered, and nothing waits for the stream. A flood is
// cut, and what got through is debounced to one change per 2 s.
func TestNotificationStreamNeverHoldsTheSession(t *testing.T) {
	notification := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	for _, tt := range []struct {
		name string
		get  func(w http.ResponseWriter, r *http.Request)
		note string // "" while following
	}{
		{"never answered", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "following"},
		{"405", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }, "offers no notification stream"},
		{"refused", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusBadRequest) }, "refused the notification stream"},
		{"ended", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
		}, "ended its notification stream"},
		{"flood", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, strings.Repeat(notification, 500))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "flooded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := serve(t, &streamServer{get: tt.get})
			c := newChanges()
			g := followingGateway(t, c)
			r := registration(t, ts.URL, domain.Protocol20251125, nil)
			for range 3 {
				mustKnow(t, callA(g, r))
			}
			if tt.note == "following" {
				if st := g.Status(r); st.State != domain.ConnectionOpen || st.Following {
					t.Fatalf("status %+v", st)
				}
				return
			}
			waitFor(t, "the stream's end to be seen", func() bool { return strings.Contains(g.Status(r).Note, tt.note) })
			st := g.Status(r)
			if st.State != domain.ConnectionOpen || st.Following {
				t.Fatalf("status %+v", st)
			}
			mustKnow(t, callA(g, r)) // the session is still there
			if tt.name == "flood" {
				time.Sleep(followDebounce + 500*time.Millisecond)
				if n := c.count(); n < 1 || n > 2 {
					t.Fatalf("%d changes delivered for a flood", n)
				}
			}
		})
	}
}

// restartable serves a fresh go-sdk server (tool "a", counting its runs)
// on one loopback address, and can stop and start it again there, as a
// server process that is restarted: the new one knows nothing of the old
// one's sessions.
type restartable struct {
	t         *testing.T
	addr      string
	stateless bool
	srv       *http.Server
	mcp       *mcp.Server
	runs      atomic.Int32
}

func startRestartable(t *testing.T, stateless bool) *restartable {
	rs := &restartable{t: t, addr: "127.0.0.1:0", stateless: stateless}
	rs.start()
	t.Cleanup(rs.stop)
	return rs
}

func (rs *restartable) start() {
	l, err := net.Listen("tcp", rs.addr)
	if err != nil {
		rs.t.Fatal(err)
	}
	rs.addr = l.Addr().String()
	rs.mcp = mcp.NewServer(&mcp.Implementation{Name: "restarting", Version: "1"}, nil)
	rs.mcp.AddTool(objectTool("a"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rs.runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	s := rs.mcp
	rs.srv = &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: rs.stateless})}
	go rs.srv.Serve(l)
}

func (rs *restartable) stop() { rs.srv.Close() } // the listener and every connection, its streams too

// A server that goes down and comes back is followed again: its
// notification stream ended with it, so the next operation opens the
// connection afresh (2025: the old session is gone with the old process;
// 2026: a new subscriptions/listen), and the server's next change is
// heard. The operations are a page's that may ask the user (on 2025 they
// run on an eliciting session, never on the shared one that follows), and
// the tool runs once per call.
func TestFollowsAServerThatCameBack(t *testing.T) {
	for _, tt := range eras {
		t.Run(tt.name, func(t *testing.T) {
			rs := startRestartable(t, tt.stateless)
			c := newChanges()
			g := newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second,
				CloseTimeout: time.Second, Changed: c.add, LostStreamAge: time.Millisecond})
			r := registration(t, "http://"+rs.addr+"/mcp", tt.protocol, nil)
			var asked []domain.ElicitRequest
			call := func() domain.CallOutcome {
				return g.Call(context.Background(), r, domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`),
					Elicit: answering(&asked, domain.ElicitResponse{Action: domain.ElicitCancel})})
			}
			mustKnow(t, call())
			waitFor(t, "the connection to follow", func() bool { return g.Status(r).Following })
			time.Sleep(5 * time.Millisecond) // the stream has followed for LostStreamAge

			rs.stop()
			waitFor(t, "the stream's end to be seen", func() bool { return !g.Status(r).Following })
			if st := g.Status(r); !strings.Contains(st.Note, "ended its notification stream") {
				t.Fatalf("status %+v", st)
			}
			// The pool drops the stopped server's idle connections, as it does
			// once it reads their close (a request put on one before that
			// fails, as any request to a stopped server may: not what this
			// test is about).
			g.pool.closeIdle()
			rs.start()
			rs.runs.Store(0)
			mustKnow(t, call())
			if n := rs.runs.Load(); n != 1 {
				t.Fatalf("the tool ran %d times for one call", n)
			}
			waitFor(t, "the connection to follow the server that came back", func() bool { return g.Status(r).Following })
			rs.mcp.AddTool(objectTool("b"), nil)
			if lc := c.next(t, 5*time.Second); !lc.Tools || lc.RegistrationID != r.ID {
				t.Fatalf("change %+v", lc)
			}
		})
	}
}

// A lost stream's session is not replaced while another operation runs on
// the connection — closing it would cut that one —, and the first
// operation after it replaces it: the connection follows again. (A 2026
// server whose first subscriptions/listen ends after 300 ms, while a slow
// call runs.)
func TestLostStreamWaitsForRunningOperations(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	ok := func(text string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
	}
	started, release := make(chan struct{}, 1), make(chan struct{})
	var releasing sync.Once
	free := func() { releasing.Do(func() { close(release) }) }
	s.AddTool(objectTool("a"), ok("ok"))
	s.AddTool(objectTool("slow"), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-release
		return ok("slow done")(ctx, req)
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	var listens atomic.Int32
	ts, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"subscriptions/listen"`)) && listens.Add(1) == 1 {
			ctx, cancel := context.WithTimeout(r.Context(), 300*time.Millisecond)
			defer cancel()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	}))
	c := newChanges()
	g := newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second,
		CloseTimeout: 200 * time.Millisecond, Changed: c.add, LostStreamAge: time.Millisecond})
	t.Cleanup(free) // first: a failing test does not leave the tool (and the server's Close) waiting
	r := registration(t, ts.URL, domain.Protocol20260728, nil)
	mustKnow(t, callA(g, r))
	waitFor(t, "the connection to follow", func() bool { return g.Status(r).Following })
	slow := make(chan domain.CallOutcome, 1)
	go func() {
		slow <- g.Call(context.Background(), r, domain.ToolCall{NativeName: "slow", Arguments: json.RawMessage(`{}`)})
	}()
	<-started
	waitFor(t, "the first stream to be lost", func() bool { return strings.Contains(g.Status(r).Note, "opened again") })
	mustKnow(t, callA(g, r))
	if st := g.Status(r); st.Following || listens.Load() != 1 {
		t.Fatalf("the session was replaced under a running call: status %+v, %d listens", st, listens.Load())
	}
	time.Sleep(300 * time.Millisecond) // past CloseTimeout: a closed session would have cut the slow call
	free()
	if got := callText(t, <-slow); got != "slow done" {
		t.Fatalf("the running call: %q", got)
	}
	mustKnow(t, callA(g, r))
	waitFor(t, "the connection to follow again", func() bool { return g.Status(r).Following })
	if n := listens.Load(); n != 2 {
		t.Fatalf("%d subscriptions/listen requests", n)
	}
}
