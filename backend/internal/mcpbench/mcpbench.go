// Package mcpbench serves MCP servers at network distance and plays the
// bare go-sdk client that ttmcp's benchmarks compare against. It is for
// tests and benchmarks only: no production package imports it.
package mcpbench

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/internal/wan"
)

// Options describe a far server.
type Options struct {
	// Modern serves MCP 2026-07-28 (a stateless go-sdk server, which also
	// answers the 2025 versions); otherwise a stateful 2025 server with
	// session ids, so closing a session costs a DELETE.
	Modern   bool
	TLS      bool          // HTTPS (with HTTP/2) in front of the server
	Tools    int           // tool_000, tool_001, … each with its own schema
	PageSize int           // tools/list page size (0: go-sdk's default)
	OneWay   time.Duration // the link's delay each way (0: no link, loopback)
}

// Far is a server behind a delaying link.
type Far struct {
	URL   string         // the endpoint, through the link
	Link  *wan.Link      // counts connections and round trips (nil without a delay)
	Roots *x509.CertPool // trusts the server's certificate (TLS only)
}

// Stats returns the link's counters.
func (f *Far) Stats() wan.Stats { return f.Link.Stats() }

// Serve starts a go-sdk MCP server behind a link; both stop with tb.
// Every tool has an x-mcp-header parameter, so a 2026-07-28 client must
// list the tool before calling it (SEP-2243), as ttmcp does.
func Serve(tb testing.TB, o Options) *Far {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, &mcp.ServerOptions{PageSize: o.PageSize})
	for i := range o.Tools {
		s.AddTool(&mcp.Tool{Name: ToolName(i), Description: "a benchmark tool",
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string","description":"query %d"},"n":{"type":"integer","minimum":1}},"required":["q"]}`, i))},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	ts := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: o.Modern}))
	f := &Far{}
	scheme := "http"
	if o.TLS {
		ts.EnableHTTP2 = true
		ts.StartTLS()
		f.Roots = x509.NewCertPool()
		f.Roots.AddCert(ts.Certificate())
		scheme = "https"
	} else {
		ts.Start()
	}
	if o.OneWay == 0 { // loopback, no link between
		tb.Cleanup(ts.Close)
		f.URL = ts.URL + "/mcp"
		return f
	}
	link, err := wan.Listen(ts.Listener.Addr().String(), o.OneWay)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		link.Close()
		ts.Close()
	})
	f.Link = link
	f.URL = scheme + "://" + link.Addr() + "/mcp"
	return f
}

// ToolName is the name of tool i.
func ToolName(i int) string { return fmt.Sprintf("tool_%03d", i) }

// Args are arguments every tool accepts.
var Args = json.RawMessage(`{"region":"eu-west-1","q":"x"}`)

// Bare is a plain go-sdk client with one shared http.Client, as a Go
// program that keeps its connections would use it: a new session per
// operation, closed before the operation returns.
type Bare struct {
	transport *http.Transport
	client    *http.Client
}

// NewBare returns a bare client trusting roots (nil: the system's).
func NewBare(roots *x509.CertPool) *Bare {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = roots
	return &Bare{transport: tr, client: &http.Client{Transport: tr}}
}

// CloseIdle drops the kept connections: the next operation starts cold.
func (b *Bare) CloseIdle() { b.transport.CloseIdleConnections() }

func (b *Bare) connect(ctx context.Context, url, version string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: b.client, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
}

// Discover lists every tool with go-sdk's page loop and checks there are n.
func (b *Bare) Discover(ctx context.Context, url, version string, n int) error {
	cs, err := b.connect(ctx, url, version)
	if err != nil {
		return err
	}
	defer cs.Close()
	got := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		got++
	}
	if got != n {
		return fmt.Errorf("bare discovery: %d tools, want %d", got, n)
	}
	return nil
}

// Call calls tool once. On 2026-07-28 it first lists pages until the tool
// appears, which go-sdk needs to send the tool's Mcp-Param headers.
func (b *Bare) Call(ctx context.Context, url, version, tool string, args json.RawMessage) error {
	cs, err := b.connect(ctx, url, version)
	if err != nil {
		return err
	}
	defer cs.Close()
	if version >= "2026-07-28" {
		found := false
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if t.Name == tool {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("bare call: %s is not listed", tool)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("bare call: tool error")
	}
	return nil
}

// Kept is a bare go-sdk session kept open, as a Go program that holds its
// session calls: on 2026-07-28 the tool is listed once when the session is
// kept (go-sdk then knows its Mcp-Param headers), and each call is one
// request. It is the floor ttmcp's live connections are measured against.
type Kept struct{ cs *mcp.ClientSession }

// Keep opens a session to url and, on 2026-07-28, lists until tool.
func (b *Bare) Keep(ctx context.Context, url, version, tool string) (*Kept, error) {
	return b.keep(ctx, url, version, tool, true)
}

// KeepStreaming is Keep with go-sdk's standalone stream open (2025: the
// GET stream; 2026: subscriptions/listen), as a client that follows its
// server's list changes keeps it.
func (b *Bare) KeepStreaming(ctx context.Context, url, version, tool string) (*Kept, error) {
	return b.keep(ctx, url, version, tool, false)
}

func (b *Bare) keep(ctx context.Context, url, version, tool string, quiet bool) (*Kept, error) {
	opts := &mcp.ClientOptions{}
	if !quiet {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: b.client, MaxRetries: -1, DisableStandaloneSSE: quiet},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	if version >= "2026-07-28" {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				cs.Close()
				return nil, err
			}
			if t.Name == tool {
				break
			}
		}
	}
	return &Kept{cs: cs}, nil
}

// Call calls tool once on the kept session.
func (k *Kept) Call(ctx context.Context, tool string, args json.RawMessage) error {
	res, err := k.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("kept call: tool error")
	}
	return nil
}

// Close ends the session.
func (k *Kept) Close() error { return k.cs.Close() }
