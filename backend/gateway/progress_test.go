//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// progressServer is a go-sdk server with the steps tool, answering over
// SSE (a call's notifications come on its response stream): stateless
// serves 2026-07-28, stateful 2025-11-25.
func progressServer(t *testing.T, stateless bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "progress", Version: "1"}, nil)
	stdiotest.AddSteps(s)
	ts, _ := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	return ts.URL
}

// progressTarget is a gateway and a registration of a server that reports
// progress (the steps tool).
type progressTarget struct {
	name string
	g    *Gateway
	r    domain.Registration
}

// progressTargets are the steps servers of the progress tests: over HTTP in
// both eras and over stdio in both.
func progressTargets(t *testing.T) []progressTarget {
	var targets []progressTarget
	for _, era := range eras {
		targets = append(targets, progressTarget{"http-" + era.name, callGateway(t, 5*time.Second), registration(t, progressServer(t, era.stateless), era.protocol, nil)})
	}
	for _, protocol := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20260728} {
		r := stdioReg(t, "tools", t.TempDir())
		r.Protocol = protocol
		targets = append(targets, progressTarget{"stdio-" + string(protocol), stdioGateway(t, nil), r})
	}
	return targets
}

// collect is a ProgressFunc that keeps what it was given.
type collect struct {
	mu  sync.Mutex
	got []domain.Progress
}

func (c *collect) fn(p domain.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, p)
}

func (c *collect) steps() []domain.Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// Every tools/call request carries a progress token in its _meta, over
// HTTP in both eras and over stdio in both (the steps tool answers the
// token it received); each request gets a token of its own (two calls on
// the same kept session: two tokens), and no route is left once the calls
// ended (TestCallProgressEveryStepInOrder: every step reaches the call).
func TestCallProgressTokensBothErasHTTPAndStdio(t *testing.T) {
	targets := progressTargets(t)
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			var tokens []string
			for range 2 {
				c := &collect{}
				out := tg.g.Call(context.Background(), tg.r, domain.ToolCall{NativeName: "steps", Arguments: json.RawMessage(`{"n":5}`), Progress: c.fn})
				tok := callText(t, out)
				if !strings.HasPrefix(tok, "ttmcp-") || len(tok) != len("ttmcp-")+32 {
					t.Fatalf("the request carried the token %q", tok)
				}
				tokens = append(tokens, tok)
			}
			if tokens[0] == tokens[1] {
				t.Fatalf("two calls carried one token %q", tokens[0])
			}
			if n := tg.g.progress.inFlight(); n != 0 {
				t.Fatalf("%d progress routes left after the calls", n)
			}
			// a call that takes no progress still sends a token
			if tok := callText(t, tg.g.Call(context.Background(), tg.r, domain.ToolCall{NativeName: "steps", Arguments: json.RawMessage(`{"n":2}`)})); !strings.HasPrefix(tok, "ttmcp-") {
				t.Fatalf("a call without a ProgressFunc carried %q", tok)
			}
		})
	}
}

// Progress naming a token whose request ended, another server's, or a
// token that is not ours reaches nobody; a stop waits for a delivery under
// way, so nothing reaches a call after it.
func TestProgressRoutes(t *testing.T) {
	var pr progressRoutes
	c := &collect{}
	p := &mcp.CallToolParams{Name: "x"}
	stop := pr.attach("a", c.fn, p)
	tok := p.GetProgressToken()
	send := func(reg domain.RegistrationID, tok any) {
		pr.handler(reg)(context.Background(), &mcp.ProgressNotificationClientRequest{Params: &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1}})
	}
	send("b", tok)     // another server's session
	send("a", 7.0)     // a number: not ours
	send("a", "ttmcp") // unknown
	send("a", tok)
	stop()
	send("a", tok) // after the end
	if got := c.steps(); len(got) != 1 {
		t.Fatalf("delivered %+v", got)
	}
	p2 := &mcp.CallToolParams{Name: "x"}
	pr.attach("a", nil, p2)()
	if p2.GetProgressToken() == tok || pr.inFlight() != 0 {
		t.Fatalf("token reused or route left: %v", p2.GetProgressToken())
	}
}

// Every step of a call reaches its ProgressFunc, in order, with total and
// message, before the call returns: over HTTP in both eras and over stdio
// in both, steps sent back to back (no gap). The transport takes them
// before go-sdk: none goes through go-sdk's notification queue, where the
// last ones were still waiting when the response came.
func TestCallProgressEveryStepInOrder(t *testing.T) {
	targets := progressTargets(t)
	const n = 50
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			for round := range 3 {
				c := &collect{}
				out := tg.g.Call(context.Background(), tg.r, domain.ToolCall{NativeName: "steps", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Progress: c.fn})
				callText(t, out)
				got := c.steps()
				if len(got) != n {
					t.Fatalf("round %d: %d of %d steps reached the call", round, len(got), n)
				}
				for i, p := range got {
					want := domain.Progress{Progress: float64(i + 1), Total: n, Message: fmt.Sprintf("step %d of %d", i+1, n)}
					if p != want {
						t.Fatalf("round %d: step %d is %+v, want %+v", round, i, p, want)
					}
				}
			}
			if n := tg.g.progress.viaHandler.Load(); n != 0 {
				t.Fatalf("%d steps went through go-sdk's queue: the transport takes a call's own", n)
			}
		})
	}
}

// A call's progress, however much, is neither kept with its answer nor
// counted against the answer's cap: 3,000 progress notifications (some
// 400 KB of SSE) on a call whose answer may be 32 KiB reach the call, and
// the call's answer is its own.
func TestCallProgressFloodWithinCap(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			g := newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: 200 * time.Millisecond, MaxResponseBytes: 32 << 10})
			r := registration(t, progressServer(t, era.stateless), era.protocol, nil)
			c := &collect{}
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "steps", Arguments: json.RawMessage(`{"n":3000,"flood":true}`), Progress: c.fn})
			callText(t, out)
			got := c.steps()
			if len(got) != 3000 || got[2999].Progress != 3000 || got[0].Total != 0 || got[0].Message != "" {
				t.Fatalf("%d steps, last %+v", len(got), got[len(got)-1])
			}
		})
	}
}

// The guard takes a small progress-only event of a call's stream: its
// route gets it on the reading goroutine, go-sdk gets only its id (or
// nothing), its bytes go back to the stream's cap and stay out of the
// call's kept answer. An event that is more than progress, or too long,
// is handed on whole, kept and counted.
func TestGuardProgressEvents(t *testing.T) {
	var pr progressRoutes
	c := &collect{}
	p := &mcp.CallToolParams{Name: "x"}
	defer pr.attach("a", c.fn, p)()
	tok := p.GetProgressToken().(string)
	progress := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + tok + `","progress":1,"total":2,"message":"half"}}` + "\n\n"
	cases := []struct {
		name, event, handedOn string
		taken                 bool
	}{
		{"progress", progress, "", true},
		{"with an id", "id: 7\n" + progress, "id: 7\n\n", true},
		{"another token", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"ttmcp-x","progress":1}}` + "\n\n", "", true},
		{"answer", `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"notifications/progress\""}]}}` + "\n\n", "", false},
		{"request", `data: {"jsonrpc":"2.0","id":2,"method":"notifications/progress","params":{}}` + "\n\n", "", false},
		{"no progress value", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + tok + `"}}` + "\n\n", "", false},
		{"long", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + tok + `","progress":1,"message":"` + strings.Repeat("x", maxProgressEvent) + `"}}` + "\n\n", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(c.steps())
			var teed []byte
			refunded := 0
			g := newGuardReader(io.NopCloser(strings.NewReader(tc.event)), guardSSE)
			g.progress = func(e []byte) bool { return pr.takeEvent("a", e) }
			g.refund = func(n int) { refunded += n }
			g.tee = func(p []byte) { teed = append(teed, p...) }
			all, _ := io.ReadAll(g)
			want := tc.event
			if tc.taken {
				want = tc.handedOn
			}
			if string(all) != want {
				t.Fatalf("handed on %q, want %q", all, want)
			}
			if tc.taken != (len(teed) == 0) || tc.taken != (refunded == len(tc.event)) {
				t.Fatalf("teed %d bytes, refunded %d", len(teed), refunded)
			}
			delivered := len(c.steps()) - before
			if wantN := map[bool]int{true: 1}[tc.taken && strings.Contains(tc.event, tok)]; delivered != wantN {
				t.Fatalf("delivered %d", delivered)
			}
		})
	}
	if got := c.steps(); got[0] != (domain.Progress{Progress: 1, Total: 2, Message: "half"}) {
		t.Fatalf("delivered %+v", got[0])
	}
}

// Progress never extends a call's wait for its answer (DECISIONS
// "Progress"): a server reporting a step every 50 ms for a second still
// has its call end at CallWait (300 ms), as an unknown outcome, with the
// steps that came before it.
func TestCallProgressDoesNotExtendTheWait(t *testing.T) {
	g := callGateway(t, 300*time.Millisecond)
	r := registration(t, progressServer(t, true), domain.Protocol20260728, nil)
	c := &collect{}
	start := time.Now()
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "steps", Arguments: json.RawMessage(`{"n":20,"gap":50}`), Progress: c.fn})
	if out.Outcome != domain.OutcomeUnknown || out.Code != CodeCallTimeout {
		t.Fatalf("outcome %+v after %v", out, time.Since(start))
	}
	if n := len(c.steps()); n == 0 || n >= 20 {
		t.Fatalf("%d steps reached the call before its wait ended", n)
	}
}
