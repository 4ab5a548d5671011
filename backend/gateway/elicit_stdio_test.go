//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// A stdio server asks too, in both eras: a 2025 process advertises
// elicitation at initialize and gives an asking call the process to itself
// (calls that ask nothing wait meanwhile); a 2026 one asks in rounds.
func TestStdioElicitation(t *testing.T) {
	for _, protocol := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20260728} {
		t.Run(string(protocol), func(t *testing.T) {
			g := stdioGateway(t, nil)
			r := stdioReg(t, "tools", t.TempDir())
			r.Protocol = protocol
			var asked []domain.ElicitRequest
			answered := make(chan struct{})
			elicit := func(ctx context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
				asked = append(asked, req)
				<-answered
				return accept(`{"name":"stdio"}`), nil
			}
			done := make(chan domain.CallOutcome, 1)
			go func() {
				done <- g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`), Elicit: elicit})
			}()
			other := make(chan domain.CallOutcome, 1)
			time.AfterFunc(20*time.Millisecond, func() {
				other <- g.Call(context.Background(), r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"x":1}`)})
			})
			time.Sleep(100 * time.Millisecond)
			close(answered)
			if got := callText(t, <-done); got != "hello stdio" || len(asked) != 1 {
				t.Fatalf("greet: %q, asked %+v", got, asked)
			}
			if got := callText(t, <-other); got != `{"x":1}` {
				t.Fatalf("echo: %q", got)
			}
			// without a handler: a 2025 process's question is answered cancel;
			// a 2026 input_required is not continued
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`)})
			if protocol == domain.Protocol20251125 {
				if got := callText(t, out); got != "no greeting: cancel" {
					t.Fatalf("greet without a handler: %q", got)
				}
			} else if out.Unsupported == nil || out.Unsupported.ResponseType != "input_required" {
				t.Fatalf("greet without a handler: %+v", out)
			}
		})
	}
}

// A stdio server that refuses a call until the user is done on a page and
// announces the page done: the question ends, and the call goes once more
// over the same process.
func TestStdioPageRequired(t *testing.T) {
	for _, protocol := range []domain.Protocol{domain.Protocol20251125, domain.Protocol20260728} {
		t.Run(string(protocol), func(t *testing.T) {
			g := stdioGateway(t, nil)
			dir := t.TempDir()
			r := stdioReg(t, "paged", dir)
			r.Protocol = protocol
			var asked []domain.ElicitRequest
			elicit := func(ctx context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
				asked = append(asked, req)
				if err := os.WriteFile(filepath.Join(dir, stdiotest.Connected), nil, 0o600); err != nil { // done on the page
					t.Error(err)
				}
				<-ctx.Done() // the popup stays until the server's announcement withdraws it
				return domain.ElicitResponse{}, ctx.Err()
			}
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "files", Arguments: json.RawMessage(`{}`), Elicit: elicit})
			if got := callText(t, out); got != "3 files" || len(asked) != 1 || !asked[0].Resend || asked[0].ElicitationID != "s1" {
				t.Fatalf("files: %q, asked %+v", got, asked)
			}
			if out.Rounds != 2 || len(out.Elicitations) != 1 || out.Elicitations[0].Action != domain.ElicitAccept {
				t.Fatalf("recorded %d rounds, %+v", out.Rounds, out.Elicitations)
			}
		})
	}
}
