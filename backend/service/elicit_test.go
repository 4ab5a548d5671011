package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// pageDouble is a page with (or without) an elicitation handler, as the
// server layer would put it in a command's context.
type pageDouble struct {
	handler func(ctx context.Context, req jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error)
	mu      sync.Mutex
	asked   []jsapi.McpElicitationRequest
}

func (p *pageDouble) HasElicitationHandler() bool { return p.handler != nil }

func (p *pageDouble) Elicit(ctx context.Context, req jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
	p.mu.Lock()
	p.asked = append(p.asked, req)
	p.mu.Unlock()
	return p.handler(ctx, req)
}

// greetServer's tool greet asks the user's name (both eras, as the
// gateway's askingServer).
func greetServer(t *testing.T, stateless bool) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "greet", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Mode: "form", Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}}}, nil
		}
		if resp.Action != "accept" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no greeting"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", resp.Content["name"])}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// The page that makes a call answers its server's questions, asked with
// the call's identity; one user action is one audit record with its rounds
// and answers (never the content); a declined question tells the model
// what the user decided; a page without a handler is never asked; the
// wait for the user is bounded.
func TestCallsAskTheirPage(t *testing.T) {
	for _, era := range []struct {
		name      string
		stateless bool
		protocol  string
		rounds    int
	}{{"2025", false, jsapi.Protocol20251125, 1}, {"2026", true, jsapi.Protocol20260728, 2}} {
		t.Run(era.name, func(t *testing.T) {
			// The server first: cleanups run last-in first-out, and the
			// gateway's kept sessions must close before the server does.
			endpoint := greetServer(t, era.stateless)
			root := t.TempDir()
			store := storage.Open(root)
			audit := storage.OpenAuditLog(root, storage.AuditOptions{})
			gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second})
			t.Cleanup(func() { gw.Close() })
			svc := New(Config{Registrations: store, Catalogs: store, Gateway: gw, Audit: audit, ElicitTimeout: 100 * time.Millisecond})
			ctx := context.Background()
			srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "Greeter", Endpoint: endpoint, ProtocolVersion: new(era.protocol)})
			if err != nil {
				t.Fatal(err)
			}
			svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
			svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "greet", Permission: jsapi.PermissionAllow})

			test := func(page Page, callID string) jsapi.McpCallOutcome {
				pctx := WithPage(ctx, page)
				if _, err := svc.StartTestCall(pctx, jsapi.McpTestCallIdDto{CallID: callID}); err != nil {
					t.Fatal(err)
				}
				out, err := svc.TestCall(pctx, jsapi.TestMcpToolCallDto{CallID: callID, RegistrationID: srv.ID, NativeName: "greet", ArgumentsJSON: `{}`})
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			text := func(o jsapi.McpCallOutcome) string {
				r, ok := o.Response.(*jsapi.McpToolResult)
				if !ok || len(r.TextBlocks) != 1 {
					t.Fatalf("outcome %+v", o)
				}
				return r.TextBlocks[0].Text
			}

			page := &pageDouble{handler: func(context.Context, jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
				return jsapi.McpElicitationResponse{Action: "accept", Content: jsapi.RawJSON(`{"name":"secret-octo"}`)}, nil
			}}
			out := test(page, "t1")
			if got := text(out); got != "hello secret-octo" || out.Rounds == nil || *out.Rounds != era.rounds || len(out.Elicitations) != 1 {
				t.Fatalf("outcome %q rounds %v %+v", got, out.Rounds, out.Elicitations)
			}
			q := page.asked[0]
			if q.CallID != "t1" || q.RegistrationID != srv.ID || q.ServerDisplayName != "Greeter" || q.NativeName != "greet" || q.Source != "test" ||
				q.Mode != "form" || q.Message != "Your name?" || !strings.Contains(string(q.RequestedSchema), `"name"`) {
				t.Fatalf("asked %+v", q)
			}
			e := auditLast(t, svc)
			if e.Rounds == nil || *e.Rounds != era.rounds || len(e.Elicitations) != 1 || e.Elicitations[0] != (jsapi.McpElicitationRecord{Mode: "form", Action: "accept"}) {
				t.Fatalf("audit %+v", e)
			}
			for _, line := range auditFileLines(t, audit) {
				if strings.Contains(line, "secret-octo") {
					t.Fatalf("what the user entered reached the audit log: %s", line)
				}
			}

			// a model call whose user declines: the model reads what the user decided
			declining := decliningPage()
			mo, err := modelCall(svc, declining, "m1", "mcp/"+srv.ID+":greet")
			if err != nil || mo.Readable == nil || !strings.Contains(mo.Readable.Text, "no greeting") || !strings.Contains(mo.Readable.Text, "the user declined") ||
				declining.asked[0].Source != "model" || declining.asked[0].CallID != "m1" {
				t.Fatalf("model call: %+v %v", mo.Readable, err)
			}

			// no handler: never asked, nothing advertised
			none := &pageDouble{}
			out = test(none, "t2")
			if len(none.asked) != 0 || out.Rounds != nil {
				t.Fatalf("a page without a handler: asked %d, %+v", len(none.asked), out)
			}

			// a user who never answers: cancel after the bound, recorded as a timeout
			silent := &pageDouble{handler: func(ctx context.Context, _ jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
				<-ctx.Done()
				return jsapi.McpElicitationResponse{}, ctx.Err()
			}}
			out = test(silent, "t3")
			if got := text(out); got != "no greeting" || len(out.Elicitations) != 1 || out.Elicitations[0].Action != "timeout" {
				t.Fatalf("timeout: %q %+v", got, out.Elicitations)
			}
		})
	}
}

// decliningPage is a page whose user declines every question.
func decliningPage() *pageDouble {
	return &pageDouble{handler: func(context.Context, jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
		return jsapi.McpElicitationResponse{Action: "decline"}, nil
	}}
}

// modelCall is the model's call of toolID from page, asking for its readable text.
func modelCall(svc *Service, page Page, callID, toolID string) (jsapi.McpCallOutcome, error) {
	ctx := WithPage(context.Background(), page)
	svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: callID})
	return svc.CallLegacyTool(ctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: callID, ToolID: toolID, ArgumentsJSON: "{}", Readable: &jsapi.McpReadableOptions{}})
}

func auditLast(t *testing.T, svc *Service) jsapi.McpAuditEntry {
	t.Helper()
	one := 1
	l, err := svc.ListAudit(context.Background(), jsapi.McpAuditListDto{Limit: &one})
	if err != nil || len(l.Entries) != 1 {
		t.Fatalf("audit: %+v %v", l, err)
	}
	return l.Entries[0]
}

func auditFileLines(t *testing.T, a *storage.AuditLog) []string {
	t.Helper()
	w := &world{t: t, audit: a}
	return w.auditLines()
}

// A server that refuses the call until the user connects an account on a
// page (URL elicitation required): the page is asked with resend set, the
// call goes once more when the user is done and runs once, and the audit
// counts both requests. A model whose user declines reads the refusal and
// what the user decided.
func TestPagesBeforeTheCall(t *testing.T) {
	var connected bool
	var mu sync.Mutex
	runs := 0
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "files", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		if !connected {
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: "p1",
				URL: "https://files.example/connect", Message: "Connect your Files account."}})
		}
		runs++
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 files"}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	root := t.TempDir()
	store := storage.Open(root)
	audit := storage.OpenAuditLog(root, storage.AuditOptions{})
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second})
	t.Cleanup(func() { gw.Close() })
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gw, Audit: audit})
	ctx := context.Background()
	srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "Files", Endpoint: ts.URL, ProtocolVersion: new(jsapi.Protocol20251125)})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
	svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "files", Permission: jsapi.PermissionAllow})

	// the model's call, its user declining to go to the page
	declining := decliningPage()
	mo, err := modelCall(svc, declining, "m1", "mcp/"+srv.ID+":files")
	if err != nil || mo.Readable == nil || !strings.Contains(mo.Readable.Text, "URL elicitation required") || !strings.Contains(mo.Readable.Text, "the user declined") {
		t.Fatalf("model call: %+v %v", mo.Readable, err)
	}
	if q := declining.asked; len(q) != 1 || !q[0].Resend || q[0].Mode != "url" || q[0].URL == nil || *q[0].URL != "https://files.example/connect" {
		t.Fatalf("asked %+v", q)
	}

	// a test call whose user connects the account
	page := &pageDouble{handler: func(context.Context, jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
		mu.Lock()
		connected = true
		mu.Unlock()
		return jsapi.McpElicitationResponse{Action: "accept"}, nil
	}}
	pctx := WithPage(ctx, page)
	if _, err := svc.StartTestCall(pctx, jsapi.McpTestCallIdDto{CallID: "t1"}); err != nil {
		t.Fatal(err)
	}
	out, err := svc.TestCall(pctx, jsapi.TestMcpToolCallDto{CallID: "t1", RegistrationID: srv.ID, NativeName: "files", ArgumentsJSON: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := out.Response.(*jsapi.McpToolResult); !ok || len(r.TextBlocks) != 1 || r.TextBlocks[0].Text != "3 files" || runs != 1 {
		t.Fatalf("outcome %+v, %d runs", out, runs)
	}
	e := auditLast(t, svc)
	if e.Rounds == nil || *e.Rounds != 2 || len(e.Elicitations) != 1 || e.Elicitations[0] != (jsapi.McpElicitationRecord{Mode: "url", Action: "accept"}) {
		t.Fatalf("audit %+v", e)
	}
}

// A server that asks more than a call may put to its user (a 2026 round
// naming 40 questions): the page is asked the first 16, the rest are
// answered cancel without asking, and the call's record says so — the test
// console's outcome and the audit entry end with one "limited", and the
// model reads that ttmcp answered them.
func TestTooManyQuestionsAreRecorded(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			reqs := mcp.InputRequestMap{}
			for i := range 40 {
				reqs[fmt.Sprintf("q%02d", i)] = &mcp.ElicitParams{Mode: "form", Message: "Again?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}
			}
			return &mcp.CallToolResult{InputRequests: reqs}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d answers", len(req.Params.InputResponses))}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	root := t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second})
	t.Cleanup(func() { gw.Close() })
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gw, Audit: storage.OpenAuditLog(root, storage.AuditOptions{})})
	ctx := context.Background()
	srv, err := svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "Asker", Endpoint: ts.URL, ProtocolVersion: new(jsapi.Protocol20260728)})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive})
	svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: srv.ID, NativeName: "ask", Permission: jsapi.PermissionAllow})
	page := &pageDouble{handler: func(context.Context, jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
		return jsapi.McpElicitationResponse{Action: "accept", Content: jsapi.RawJSON(`{"ok":true}`)}, nil
	}}
	pctx := WithPage(ctx, page)
	if _, err := svc.StartTestCall(pctx, jsapi.McpTestCallIdDto{CallID: "t1"}); err != nil {
		t.Fatal(err)
	}
	out, err := svc.TestCall(pctx, jsapi.TestMcpToolCallDto{CallID: "t1", RegistrationID: srv.ID, NativeName: "ask", ArgumentsJSON: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	limited := func(recs []jsapi.McpElicitationRecord) bool {
		return len(recs) == 17 && recs[15].Action == "accept" && recs[16] == (jsapi.McpElicitationRecord{Mode: "form", Action: "limited"})
	}
	if r, ok := out.Response.(*jsapi.McpToolResult); !ok || r.TextBlocks[0].Text != "40 answers" || !limited(out.Elicitations) || len(page.asked) != 16 {
		t.Fatalf("outcome %+v, %d asked", out, len(page.asked))
	}
	if e := auditLast(t, svc); !limited(e.Elicitations) {
		t.Fatalf("audit %+v", e.Elicitations)
	}
	toolID := "mcp/" + srv.ID + ":ask"
	model, err := modelCall(svc, page, "m1", toolID)
	if err != nil || model.Readable == nil || !strings.Contains(model.Readable.Text, "ttmcp answered them cancel without asking") {
		t.Fatalf("model call: %+v %v", model, err)
	}
}
