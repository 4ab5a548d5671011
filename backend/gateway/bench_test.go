package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/internal/mcpbench"
)

// benchServer is a local go-sdk server with n tools served pageSize per page.
func benchServer(b *testing.B, n, pageSize int) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	for i := range n {
		// Every schema differs: the worst case for validation, which
		// compiles each distinct schema once.
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "a benchmark tool",
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"q":{"type":"string","description":"query %d"},"n":{"type":"integer","minimum":1}},"required":["q"]}`, i))},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(ts.Close)
	return ts.URL
}

// BenchmarkDiscover512Tools32Pages measures discovery of 512 tools over 32
// pages, against the bare go-sdk page loop on the same server: the ratio
// is the cost of our limits, validation (schema compilation) and
// projection. cold: no schema seen before (a first discovery); warm: the
// verdicts of an earlier discovery are kept (a refresh of an unchanged
// server).
func BenchmarkDiscover512Tools32Pages(b *testing.B) {
	for _, cold := range []bool{true, false} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			url := benchServer(b, 512, 16)
			ep, _ := domain.ParseEndpoint(url)
			r, _ := domain.NewRegistration("bench", ep, nil, domain.Protocol20251125)
			g := newGateway(b, Config{})
			bare := mcpbench.NewBare(nil)
			ctx := context.Background()
			ours := benchpair.Side{Op: func() error {
				cat, err := g.Discover(ctx, r)
				if err == nil && len(cat.Tools) != 512 {
					err = fmt.Errorf("%d tools", len(cat.Tools))
				}
				return err
			}, Settle: func() {
				g.Wait()
				if cold {
					g.schemas = domain.NewSchemaCache(maxSchemaVerdicts)
				}
			}}
			base := benchpair.Side{Op: func() error { return bare.Discover(ctx, url, "2025-11-25", 512) }}
			for _, s := range []benchpair.Side{ours, base} { // connections kept, as in use
				if err := s.Op(); err != nil {
					b.Fatal(err)
				}
			}
			ours.Settle()
			benchpair.RunSides(b, "bare", ours, base, nil)
		})
	}
}

// BenchmarkCall measures one test call (on ttmcp's live connection),
// against a bare go-sdk client making the same call over a fresh session,
// as a program that does not keep its session would (BenchmarkWarmCall
// compares against a kept one).
func BenchmarkCall(b *testing.B) {
	url := benchServer(b, 4, 0)
	ep, _ := domain.ParseEndpoint(url)
	r, _ := domain.NewRegistration("bench", ep, nil, domain.Protocol20251125)
	g := newGateway(b, Config{})
	bare := mcpbench.NewBare(nil)
	ctx := context.Background()
	args := json.RawMessage(`{"q":"x"}`)
	benchpair.Run(b, "bare", func() error {
		if o := g.Call(ctx, r, domain.ToolCall{NativeName: "tool_001", Arguments: args}); o.Outcome != domain.OutcomeKnownResponse {
			return fmt.Errorf("%+v", o)
		}
		return nil
	}, func() error {
		return bare.Call(ctx, url, "2025-11-25", "tool_001", args)
	})
}

// BenchmarkWarmCall measures a warm call on ttmcp's live connection
// against a bare go-sdk call on a session it keeps open with its
// list-changed stream (as ttmcp's follows the server), on a loopback
// server of each generation (the tool has an x-mcp-header parameter): the
// floor is one request on both sides, so the ratio is ttmcp's own work per
// call — the exchange tracking, the raw answer kept and judged, the
// projection, the Mcp-Param headers from the catalog's schema.
func BenchmarkWarmCall(b *testing.B) {
	for _, gen := range wanGenerations {
		b.Run(gen.name, func(b *testing.B) {
			far := mcpbench.Serve(b, mcpbench.Options{Modern: gen.modern, Tools: 4})
			ep, _ := domain.ParseEndpoint(far.URL)
			r, _ := domain.NewRegistration("bench", ep, nil, gen.protocol)
			g := newGateway(b, Config{})
			ctx := context.Background()
			target := mcpbench.ToolName(1)
			cat, err := g.Discover(ctx, r)
			if err != nil {
				b.Fatal(err)
			}
			call := domain.ToolCall{NativeName: target, Arguments: mcpbench.Args, InputSchema: toolNamed(b, cat, target).InputSchema}
			kept, err := mcpbench.NewBare(nil).KeepStreaming(ctx, far.URL, string(gen.protocol), target)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { kept.Close() })
			benchpair.Run(b, "kept", func() error {
				if o := g.Call(ctx, r, call); o.Outcome != domain.OutcomeKnownResponse || o.Result.IsError {
					return fmt.Errorf("%+v", o)
				}
				return nil
			}, func() error {
				return kept.Call(ctx, target, mcpbench.Args)
			})
		})
	}
}

// BenchmarkRead1MiBText measures reading a 1 MiB text resource on a kept
// connection against a bare go-sdk ReadResource on a kept session of the
// same server: the ratio is the cost of ttmcp's judgment of the answer
// (the raw answer kept and decoded content by content, the size checks,
// the projection) over go-sdk's own decoding, which runs on both sides.
func BenchmarkRead1MiBText(b *testing.B) {
	text := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "test://big", Name: "big", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(ts.Close)
	ep, _ := domain.ParseEndpoint(ts.URL)
	r, _ := domain.NewRegistration("bench", ep, nil, domain.Protocol20251125)
	g := newGateway(b, Config{})
	ctx := context.Background()
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bare.Close() })
	ours := func() error {
		a := g.ReadResource(ctx, r, "test://big")
		if a.Result == nil || len(a.Result.Contents) != 1 || a.Result.Contents[0].Size != 1<<20 {
			return fmt.Errorf("%s %s %s", a.Outcome, a.Code, a.Message)
		}
		return nil
	}
	base := func() error {
		res, err := bare.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://big"})
		if err == nil && len(res.Contents[0].Text) != 1<<20 {
			err = fmt.Errorf("%d bytes", len(res.Contents[0].Text))
		}
		return err
	}
	for _, op := range []func() error{ours, base} { // sessions open, as in use
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(1 << 20)
	benchpair.Run(b, "bare", ours, base)
}
