package service

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/internal/mcpbench"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// BenchmarkWANModelCall measures a model tool call as the legacy
// generation hooks make it (start acknowledgement, then the call: the
// registration read from disk, the permission gate, a fresh session) at
// 50 ms RTT over HTTPS with kept connections, against a bare go-sdk client
// with one shared http.Client making the same protocol exchanges through
// the same link.
func BenchmarkWANModelCall(b *testing.B) {
	for _, gen := range []struct {
		name     string
		modern   bool
		protocol string
	}{{"2026", true, "2026-07-28"}, {"2025", false, "2025-11-25"}} {
		b.Run(gen.name, func(b *testing.B) {
			far := mcpbench.Serve(b, mcpbench.Options{Modern: gen.modern, TLS: true, Tools: 16, OneWay: 25 * time.Millisecond})
			store := storage.Open(b.TempDir())
			gw := gateway.New(gateway.Config{TLS: &tls.Config{RootCAs: far.Roots}})
			svc := New(Config{Registrations: store, Catalogs: store, Gateway: gw})
			ctx := context.Background()
			srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "far", Endpoint: far.URL, ProtocolVersion: &gen.protocol})
			if err != nil {
				b.Fatal(err)
			}
			target := mcpbench.ToolName(0)
			svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
			if _, err := svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: target, Permission: jsapi.PermissionAllow}); err != nil {
				b.Fatal(err)
			}
			toolID, err := domain.NewToolID(domain.RegistrationID(srv.ID), target)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			ours := func() error {
				n++
				id := fmt.Sprintf("model-%d", n)
				if _, err := svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: id}); err != nil {
					return err
				}
				o, err := svc.CallLegacyTool(ctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: id, ToolID: string(toolID), ArgumentsJSON: string(mcpbench.Args)})
				if err == nil && o.Outcome != jsapi.OutcomeKnownResponse {
					err = fmt.Errorf("%+v", o)
				}
				return err
			}
			bare := mcpbench.NewBare(far.Roots)
			base := func() error { return bare.Call(ctx, far.URL, gen.protocol, target, mcpbench.Args) }
			for _, warm := range []func() error{ours, base} {
				if err := warm(); err != nil {
					b.Fatal(err)
				}
			}
			gw.Wait()
			// Settle: the session's clean-up (a 2025 DELETE) finishes before
			// the bare client's turn, so the counts stay each side's own.
			benchpair.RunSides(b, "bare", benchpair.Side{Op: ours, Settle: gw.Wait}, benchpair.Side{Op: base}, map[string]benchpair.Counter{
				"rt":    func() int { return far.Stats().RoundTrips },
				"conns": func() int { return far.Stats().Conns },
			})
		})
	}
}
