//go:build linux

package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// TestPeerEverythingProgress calls the independent peer's
// trigger-long-running-operation (5 steps in 1 s) over Streamable HTTP on
// each 2025 version it speaks, and over stdio: every step reaches the call
// in order, each with total 5, before the call's answer.
func TestPeerEverythingProgress(t *testing.T) {
	type target struct {
		name string
		g    *Gateway
		r    domain.Registration
	}
	endpoint := startEverything(t)
	var targets []target
	for _, pref := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20250618} {
		targets = append(targets, target{"http-" + string(pref), peerGateway(t), registration(t, endpoint, pref, nil)})
	}
	r, _ := everythingStdio(t)
	targets = append(targets, target{"stdio", stdioPeerGateway(t), r})
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := &collect{}
			o := tg.g.Call(ctx, tg.r, domain.ToolCall{NativeName: "trigger-long-running-operation", Arguments: json.RawMessage(`{"duration":1,"steps":5}`), Progress: c.fn})
			if o.Outcome != domain.OutcomeKnownResponse || o.Result == nil || len(o.Result.TextBlocks) != 1 || !strings.Contains(o.Result.TextBlocks[0].Text, "Steps: 5") {
				t.Fatalf("outcome %+v", o)
			}
			got := c.steps()
			if len(got) != 5 {
				t.Fatalf("%d steps reached the call: %+v", len(got), got)
			}
			for i, p := range got {
				if p != (domain.Progress{Progress: float64(i + 1), Total: 5}) {
					t.Fatalf("step %d: %+v", i, p)
				}
			}
		})
	}
}
