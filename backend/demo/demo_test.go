package demo_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
)

// The demo server is discovered whole, across pages, in every version.
func TestDemoDiscovery(t *testing.T) {
	ts := httptest.NewServer(demo.Handler())
	defer ts.Close()
	ep, _ := domain.ParseEndpoint(ts.URL + "/mcp")
	for _, p := range []domain.Protocol{domain.ProtocolAuto, domain.Protocol20260728, domain.Protocol20251125, domain.Protocol20250618, domain.Protocol20250326} {
		t.Run(string(p), func(t *testing.T) {
			r, err := domain.NewRegistration("demo", ep, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			cat, err := gateway.New(gateway.Config{}).Discover(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range cat.Tools {
				names = append(names, tool.NativeName)
			}
			want := []string{"add", "echo", "fail", "forecast", "slow"}
			if !slices.Equal(names, want) || len(cat.Diagnostics) != 0 || *cat.ServerName != "ttmcp-demo" {
				t.Fatalf("tools %v, diagnostics %+v", names, cat.Diagnostics)
			}
			if wantV := map[domain.Protocol]string{domain.ProtocolAuto: "2026-07-28"}[p]; wantV != "" && cat.ProtocolVersion != wantV || wantV == "" && cat.ProtocolVersion != string(p) {
				t.Fatalf("negotiated %s", cat.ProtocolVersion)
			}
		})
	}
}
