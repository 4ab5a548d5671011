package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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
