package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/internal/mcpbench"
)

// wanOneWay is the benchmarks' delay each way: a 50 ms round trip, a
// server on another continent or behind a slow VPN.
const wanOneWay = 25 * time.Millisecond

// wanGeneration is one protocol generation as the benchmarks play it.
type wanGeneration struct {
	name     string // in the benchmark's name
	modern   bool   // a stateless 2026-07-28 server; else a stateful 2025 one
	protocol domain.Protocol
}

var wanGenerations = []wanGeneration{
	{"2026", true, domain.Protocol20260728},
	{"2025", false, domain.Protocol20251125},
}

// wanLinks are the link variants: plain HTTP/1.1 warm, HTTPS (HTTP/2)
// warm, and HTTPS cold (every operation starts without a kept connection).
var wanLinks = []struct {
	name string
	tls  bool
	cold bool
}{
	{"http/warm", false, false},
	{"https/warm", true, false},
	{"https/cold", true, true},
}

// BenchmarkWAN measures discovery and a test call at 50 ms RTT against a
// bare go-sdk client with one shared http.Client making the same protocol
// exchanges through the same link: wall time, and from the link's own
// counters the round trips (rt) and connections (conns) per operation.
// Discovery lists 64 tools over 4 pages; the call's tool is on page 1.
// "call" compares with a bare session per call, "kept-call" (warm links)
// with a bare session kept open: the protocol's floor.
func BenchmarkWAN(b *testing.B) {
	for _, op := range []string{"discover", "call", "kept-call"} {
		for _, gen := range wanGenerations {
			for _, link := range wanLinks {
				if op == "kept-call" && link.cold {
					continue // a kept session has its connection
				}
				b.Run(fmt.Sprintf("%s/%s/%s", op, gen.name, link.name), func(b *testing.B) {
					benchWAN(b, op, gen, link.tls, link.cold)
				})
			}
		}
	}
}

func benchWAN(b *testing.B, op string, gen wanGeneration, useTLS, cold bool) {
	const tools = 64
	far := mcpbench.Serve(b, mcpbench.Options{Modern: gen.modern, TLS: useTLS, Tools: tools, PageSize: 16, OneWay: wanOneWay})
	ep, err := domain.ParseEndpoint(far.URL)
	if err != nil {
		b.Fatal(err)
	}
	r, err := domain.NewRegistration("far", ep, map[string]string{"X-Api-Key": "k"}, gen.protocol)
	if err != nil {
		b.Fatal(err)
	}
	g := newGateway(b, Config{TLS: &tls.Config{RootCAs: far.Roots}})
	bare := mcpbench.NewBare(far.Roots)
	ctx := context.Background()
	target := mcpbench.ToolName(0)

	// Between operations: ttmcp's session clean-ups finish (reported as
	// rt-settle), and for cold runs both sides drop their connections and
	// the link sees them closed.
	drop := func(closeIdle func()) {
		for far.Stats().Open > 0 { // a stream still draining keeps its connection busy
			closeIdle()
			time.Sleep(time.Millisecond)
		}
	}
	ours := benchpair.Side{Settle: func() {
		g.Wait()
		if cold {
			drop(g.closeIdle)
		}
	}}
	base := benchpair.Side{Settle: func() {
		if cold {
			drop(bare.CloseIdle)
		}
	}}
	switch op {
	case "discover":
		ours.Op = func() error {
			cat, err := g.Discover(ctx, r)
			if err == nil && len(cat.Tools) != tools {
				err = fmt.Errorf("%d tools", len(cat.Tools))
			}
			return err
		}
		base.Op = func() error { return bare.Discover(ctx, far.URL, string(gen.protocol), tools) }
	case "call":
		// The service passes the catalog's schema (the Mcp-Param headers
		// come from it); the catalog is the one a discovery kept.
		cat, err := g.Discover(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		call := domain.ToolCall{NativeName: target, Arguments: mcpbench.Args, InputSchema: toolNamed(b, cat, target).InputSchema}
		ours.Op = func() error {
			if o := g.Call(ctx, r, call); o.Outcome != domain.OutcomeKnownResponse || o.Result.IsError {
				return fmt.Errorf("%+v", o)
			}
			return nil
		}
		base.Op = func() error { return bare.Call(ctx, far.URL, string(gen.protocol), target, mcpbench.Args) }
	case "kept-call":
		cat, err := g.Discover(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		call := domain.ToolCall{NativeName: target, Arguments: mcpbench.Args, InputSchema: toolNamed(b, cat, target).InputSchema}
		ours.Op = func() error {
			if o := g.Call(ctx, r, call); o.Outcome != domain.OutcomeKnownResponse || o.Result.IsError {
				return fmt.Errorf("%+v", o)
			}
			return nil
		}
		kept, err := bare.Keep(ctx, far.URL, string(gen.protocol), target)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { kept.Close() })
		base.Op = func() error { return kept.Call(ctx, target, mcpbench.Args) }
	}
	// One untimed round of each first: warm runs start with kept
	// connections, cold ones with TLS tickets (a process that has talked
	// to the server before).
	for _, s := range []benchpair.Side{ours, base} {
		if err := s.Op(); err != nil {
			b.Fatal(err)
		}
		s.Settle()
	}
	benchpair.RunSides(b, "bare", ours, base, map[string]benchpair.Counter{
		"rt":    func() int { return far.Stats().RoundTrips },
		"conns": func() int { return far.Stats().Conns },
	})
}
