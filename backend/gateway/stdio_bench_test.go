//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
)

// bareStdio connects a bare go-sdk client to the same stdio server over
// go-sdk's own CommandTransport.
func bareStdio(ctx context.Context, s domain.Stdio) (*mcp.ClientSession, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
}

func bareEcho(ctx context.Context, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"q":"hi"}`)})
	if err == nil && (res.IsError || len(res.Content) != 1) {
		err = fmt.Errorf("bare echo: %+v", res)
	}
	return err
}

func oursEcho(ctx context.Context, g *Gateway, r domain.Registration) error {
	if out := g.Call(ctx, r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"q":"hi"}`)}); out.Outcome != domain.OutcomeKnownResponse || out.Result == nil || out.Result.IsError {
		return fmt.Errorf("echo: %+v", out)
	}
	return nil
}

// BenchmarkStdioCall measures a tool call on a stdio server (a go-sdk
// server in a child process, the test binary run again), against a bare
// go-sdk client over go-sdk's CommandTransport driving the same server.
// cold: the first call, process start + initialize + call (the process is
// stopped, untimed, after each); warm: a call on the running process.
func BenchmarkStdioCall(b *testing.B) {
	ctx := context.Background()
	cfg := stdiotest.Stdio(b, "tools", b.TempDir())
	r, err := domain.NewStdioRegistration("bench", cfg, domain.ProtocolAuto)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cold", func(b *testing.B) {
		var g *Gateway
		var cs *mcp.ClientSession
		ours := benchpair.Side{
			Op: func() error {
				g = newGateway(b, Config{})
				return oursEcho(ctx, g, r)
			},
			Settle: func() { g.Close() },
		}
		base := benchpair.Side{
			Op: func() error {
				var err error
				if cs, err = bareStdio(ctx, cfg); err != nil {
					return err
				}
				return bareEcho(ctx, cs)
			},
			Settle: func() { cs.Close() },
		}
		benchpair.RunSides(b, "bare", ours, base, nil)
	})
	b.Run("warm", func(b *testing.B) {
		g := newGateway(b, Config{})
		defer g.Close()
		cs, err := bareStdio(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		if err := oursEcho(ctx, g, r); err != nil {
			b.Fatal(err)
		}
		benchpair.Run(b, "bare", func() error { return oursEcho(ctx, g, r) }, func() error { return bareEcho(ctx, cs) })
	})
}
