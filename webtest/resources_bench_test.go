package webtest

// Issue 18's figure: a 1 MiB text resource read from the page
// (api.mcp.resources.read → the shim → WebSocket → backend → its kept
// connection → the server, and the whole answer back as an object in the
// page) against the same read made in Go by a bare go-sdk client on a kept
// session, in the same run, alternately; the backend's gateway called
// directly from Go on its own kept connection (its MCP leg alone, without
// the page, the socket and the service) is measured in the same rounds, so
// the ratio splits into the MCP leg's cost and the page's.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// BenchmarkReadResource1MiBFromThePage: after a warm-up, 20 rounds each
// reading the resource once from the page and once with the bare client,
// in rotating order; medians. MCP 2025-11-25 on both sides, one local
// go-sdk server (resourceServer). The page's time is taken in the page
// (performance.now around the call, until the parsed outcome is in hand).
func BenchmarkReadResource1MiBFromThePage(b *testing.B) {
	be := newBackend(b)
	srv := httptest.NewServer(resourceServer())
	b.Cleanup(srv.Close)
	p := be.openHost(b)
	const version = "2025-11-25"
	endpoint := srv.URL + "/mcp"
	id := evalJS[string](p, `
		const s = await tt.mcp.servers.create({ displayName: 'Bench', endpoint: %s, protocolVersion: %s });
		await tt.mcp.servers.setState({ registrationId: s.id, state: 'active' });
		return s.id;`, endpoint, version)
	page := func() float64 {
		return evalJS[float64](p, `
			const t0 = performance.now();
			const o = await tt.mcp.resources.read({ registrationId: %s, uri: %s });
			const ms = performance.now() - t0;
			const text = o.response?.contents?.[0]?.text;
			if (o.outcome !== 'known_response' || text?.length !== %s) throw new Error('read: ' + JSON.stringify(o).slice(0, 300));
			return ms;`, id, bigURI, bigTextLen)
	}

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	bare := func() float64 {
		start := time.Now()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bigURI})
		d := time.Since(start)
		if err != nil || len(res.Contents) != 1 || len(res.Contents[0].Text) != bigTextLen {
			b.Fatalf("bare read: %v", err)
		}
		return float64(d.Microseconds()) / 1000
	}

	reg, gw := benchGateway(b, endpoint, version)
	direct := func() float64 {
		start := time.Now()
		a := gw.ReadResource(ctx, reg, bigURI)
		d := time.Since(start)
		if a.Outcome != domain.OutcomeKnownResponse || a.Result == nil || len(a.Result.Contents) != 1 {
			b.Fatalf("gateway read: %s %s %s", a.Outcome, a.Code, a.Message)
		}
		return float64(d.Microseconds()) / 1000
	}

	const warmup, rounds = 3, 20
	reportPageBareGateway(b, "read", "%.1f",
		fmt.Sprintf("1 MiB text resources.read from the page vs bare go-sdk ReadResource (kept sessions, %s; %d rounds)", version, rounds),
		interleaved(warmup, rounds, page, bare, direct))
}
