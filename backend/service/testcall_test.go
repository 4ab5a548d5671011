package service

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// echoServer is a go-sdk server whose tool "echo" answers with the raw
// arguments it received; calls counts its invocations.
func echoServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	calls := &atomic.Int32{}
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL, calls
}

func (w *world) testCall(callID, id, name, args string) jsapi.McpCallOutcome {
	w.t.Helper()
	o, err := w.svc.TestCall(context.Background(), jsapi.TestMcpToolCallDto{CallID: callID, RegistrationID: id, NativeName: name, ArgumentsJSON: args})
	if err != nil {
		w.t.Fatal(err)
	}
	return o
}

func (w *world) start(callID string) error {
	_, err := w.svc.StartTestCall(context.Background(), jsapi.McpTestCallIdDto{CallID: callID})
	return err
}

func TestTestCallPreservesJSONAndIgnoresPermissions(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	ctx := context.Background()
	w.svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: "echo", Permission: jsapi.PermissionAsk})
	if err := w.start("c1"); err != nil {
		t.Fatal(err)
	}
	o := w.testCall("c1", id, "echo", `{"n":9007199254740993}`)
	r, ok := o.Response.(*jsapi.McpToolResult)
	if o.Outcome != jsapi.OutcomeKnownResponse || !ok || len(r.TextBlocks) != 1 || !strings.Contains(r.TextBlocks[0].Text, "9007199254740993") {
		t.Fatalf("outcome %+v", o)
	}
	list, _ := w.svc.List(ctx)
	if list.Servers[0].ToolPermissions["echo"] != jsapi.PermissionAsk || calls.Load() != 1 {
		t.Fatalf("permissions %v, %d calls", list.Servers[0].ToolPermissions, calls.Load())
	}
	// The call id is released when the call ends.
	if o := w.testCall("c1", id, "echo", `{}`); o.Code != CodeCallNotStarted {
		t.Fatalf("reused call id: %+v", o)
	}
}

func TestTestCallGates(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	active := w.register(url, true)
	paused := w.register(url, false)
	missing := string(domain.NewRegistrationID())
	tests := []struct {
		name, id, tool, args, code string
	}{
		{"bad registration id", "NOPE", "echo", `{}`, CodeCallRegistrationInvalid},
		{"empty tool name", active, "", `{}`, CodeCallToolNameInvalid},
		{"arguments too big", active, "echo", `{"a":"` + strings.Repeat("x", domain.MaxArgumentsBytes) + `"}`, CodeCallArgumentsSizeLimit},
		{"arguments not JSON", active, "echo", `{`, CodeCallArgumentsInvalidJSON},
		{"trailing data", active, "echo", `{} {}`, CodeCallArgumentsInvalidJSON},
		{"arguments an array", active, "echo", `[]`, CodeCallArgumentsNotObject},
		{"registration missing", missing, "echo", `{}`, CodeCallRegistrationNotFound},
		{"paused", paused, "echo", `{}`, CodeCallServerPaused},
		// Order: an invalid id is reported before bad arguments.
		{"first gate wins", "NOPE", "", `[`, CodeCallRegistrationInvalid},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callID := "gate" + string(rune('a'+i))
			if err := w.start(callID); err != nil {
				t.Fatal(err)
			}
			if o := w.testCall(callID, tt.id, tt.tool, tt.args); o.Outcome != jsapi.OutcomeNotSent || o.Code != tt.code {
				t.Fatalf("outcome %+v, want not_sent %s", o, tt.code)
			}
		})
	}
	if calls.Load() != 0 {
		t.Fatalf("%d calls reached the server", calls.Load())
	}
}

func TestCancelledPreparedCallIsNotSent(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	if o := w.testCall("never-started", id, "echo", `{}`); o.Code != CodeCallNotStarted {
		t.Fatalf("unstarted: %+v", o)
	}
	w.start("c")
	if err := w.start("c"); domain.CodeOf(err) != CodeCallIDInUse || domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("duplicate start: %v", err)
	}
	w.svc.CancelTestCall(context.Background(), jsapi.McpTestCallIdDto{CallID: "c"})
	w.svc.CancelTestCall(context.Background(), jsapi.McpTestCallIdDto{CallID: "unknown"}) // a no-op
	if o := w.testCall("c", id, "echo", `{}`); o.Outcome != jsapi.OutcomeNotSent || o.Code != CodeCallNotStarted {
		t.Fatalf("cancelled: %+v", o)
	}
	if calls.Load() != 0 {
		t.Fatal("a cancelled call reached the server")
	}
}

// A prepared call dies with the context that prepared it (its page's
// socket).
func TestPreparedCallEndsWithItsSocket(t *testing.T) {
	url, _ := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	socket, closeSocket := context.WithCancel(context.Background())
	if _, err := w.svc.StartTestCall(socket, jsapi.McpTestCallIdDto{CallID: "s"}); err != nil {
		t.Fatal(err)
	}
	closeSocket()
	if o := w.testCall("s", id, "echo", `{}`); o.Code != CodeCallNotStarted && o.Code != CodeCallCancelledBeforeSend {
		t.Fatalf("after the socket closed: %+v", o)
	}
}

func TestTestCallOfAnUnreadableRegistration(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	if err := os.WriteFile(w.store.RegistrationPath(domain.RegistrationID(id)), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.start("u")
	if o := w.testCall("u", id, "echo", `{}`); o.Outcome != jsapi.OutcomeNotSent || o.Code != CodeCallRegistrationUnavailable {
		t.Fatalf("outcome %+v", o)
	}
	if calls.Load() != 0 {
		t.Fatal("called anyway")
	}
}
