//go:build unix

package gateway

import (
	"context"
	"encoding/json"
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
// ended. (That every step then reaches the call in order is not yet
// asserted: go-sdk hands a response to the call before its queued
// notifications, see progress.go.)
func TestCallProgressTokensBothErasHTTPAndStdio(t *testing.T) {
	type target struct {
		name string
		g    *Gateway
		r    domain.Registration
	}
	var targets []target
	for _, era := range eras {
		targets = append(targets, target{"http-" + era.name, callGateway(t, 5*time.Second), registration(t, progressServer(t, era.stateless), era.protocol, nil)})
	}
	for _, protocol := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20260728} {
		r := stdioReg(t, "tools", t.TempDir())
		r.Protocol = protocol
		targets = append(targets, target{"stdio-" + string(protocol), stdioGateway(t, nil), r})
	}
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
