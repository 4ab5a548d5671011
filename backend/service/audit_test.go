package service

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// auditLines returns the lines of every audit file.
func (w *world) auditLines() []string {
	w.t.Helper()
	var lines []string
	files, _ := filepath.Glob(filepath.Join(w.audit.Dir(), "*.jsonl"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			w.t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
	}
	return lines
}

// lastAudit returns the newest audit entry, through the command.
func (w *world) lastAudit() jsapi.McpAuditEntry {
	w.t.Helper()
	one := 1
	l, err := w.svc.ListAudit(context.Background(), jsapi.McpAuditListDto{Limit: &one})
	if err != nil || len(l.Entries) != 1 {
		w.t.Fatalf("audit list: %+v %v", l, err)
	}
	return l.Entries[0]
}

// dyingServer serves echoServer's tool but drops the connection of every
// tools/call it reads: the call was sent, its outcome is unknown.
func dyingServer(t *testing.T) string {
	t.Helper()
	url, _ := echoServer(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
				return
			}
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, url, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// Every test and model call command appends exactly one record, sent or
// refused, with what let it through and how it ended; never the arguments.
func TestEveryCallAppendsOneAuditRecord(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	ctx := context.Background()
	id := w.register(url, true)
	paused := w.register(url, false)
	dying := w.register(dyingServer(t), true)
	w.permit(id, "echo", jsapi.PermissionAsk)
	w.permit(dying, "echo", jsapi.PermissionAllow)
	missing := string(domain.NewRegistrationID())
	tool := func(reg string) string { return "mcp/" + reg + ":echo" }
	approval := func(a string) *string { return &a }

	type want struct {
		source, reg, server, name, permission, approval, outcome, code, kind string
	}
	legacy := func(dto jsapi.CallLegacyMcpToolDto, start bool) (jsapi.McpCallOutcome, error) {
		if start {
			w.svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: dto.ExecutionCallID})
		}
		return w.svc.CallLegacyTool(ctx, dto)
	}
	test := func(dto jsapi.TestMcpToolCallDto, start bool) (jsapi.McpCallOutcome, error) {
		if start {
			w.start(dto.CallID)
		}
		return w.svc.TestCall(ctx, dto)
	}
	cases := []struct {
		name string
		call func() (jsapi.McpCallOutcome, error)
		args string
		want want
	}{
		{"model call, no approval (upstream hooks)", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m1", ToolID: tool(id), ArgumentsJSON: `{"n":"secret-1"}`}, true)
		}, `{"n":"secret-1"}`, want{"model", id, "fixture", "echo", "ask", "none", "known_response", "", "tool_result"}},
		{"model call, allowed once", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m2", ToolID: tool(id), ArgumentsJSON: `{}`, Approval: approval("once")}, true)
		}, `{}`, want{"model", id, "fixture", "echo", "ask", "once", "known_response", "", "tool_result"}},
		{"model call, always allowed", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m3", ToolID: tool(id), ArgumentsJSON: `{}`, Approval: approval("always")}, true)
		}, `{}`, want{"model", id, "fixture", "echo", "ask", "always", "known_response", "", "tool_result"}},
		{"model call, denied", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m4", ToolID: tool(id), ArgumentsJSON: `{"n":"x"}`, Approval: approval("denied")}, true)
		}, `{"n":"x"}`, want{"model", id, "fixture", "echo", "ask", "denied", "not_sent", CodeCallDeniedByUser, ""}},
		{"model call, not started", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m5", ToolID: tool(id), ArgumentsJSON: `{}`}, false)
		}, `{}`, want{"model", id, "fixture", "echo", "ask", "none", "not_sent", CodeCallNotStarted, ""}},
		{"model call, invalid JSON", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m6", ToolID: tool(id), ArgumentsJSON: `{`}, true)
		}, `{`, want{"model", id, "fixture", "echo", "ask", "none", "not_sent", CodeCallArgumentsInvalidJSON, ""}},
		{"model call, Off", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m7", ToolID: "mcp/" + id + ":other", ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"model", id, "fixture", "other", "off", "none", "not_sent", CodeCallPermissionOff, ""}},
		{"model call, paused", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m8", ToolID: tool(paused), ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"model", paused, "fixture", "echo", "off", "none", "not_sent", CodeCallServerPaused, ""}},
		{"model call, registration missing", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m9", ToolID: tool(missing), ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"model", missing, "", "echo", "", "none", "not_sent", CodeCallRegistrationNotFound, ""}},
		{"model call, malformed ToolId (rejected)", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m10", ToolID: "nope", ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"model", "", "", "", "", "none", "rejected", "tool.id_invalid", ""}},
		{"model call, invalid approval (rejected)", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m11", ToolID: tool(id), ArgumentsJSON: `{}`, Approval: approval("yes")}, true)
		}, `{}`, want{"model", id, "fixture", "echo", "ask", "none", "rejected", "mcp.call_approval_invalid", ""}},
		{"model call, connection dropped after sending", func() (jsapi.McpCallOutcome, error) {
			return legacy(jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m12", ToolID: tool(dying), ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"model", dying, "fixture", "echo", "allow", "none", "outcome_unknown", "mcp.call_response_failed", ""}},
		{"test call", func() (jsapi.McpCallOutcome, error) {
			return test(jsapi.TestMcpToolCallDto{CallID: "t1", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{"n":"secret-2"}`}, true)
		}, `{"n":"secret-2"}`, want{"test", id, "fixture", "echo", "ask", "manual", "known_response", "", "tool_result"}},
		{"test call of an Off tool the server does not have", func() (jsapi.McpCallOutcome, error) {
			return test(jsapi.TestMcpToolCallDto{CallID: "t2", RegistrationID: id, NativeName: "other", ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"test", id, "fixture", "other", "off", "manual", "known_response", "", "server_error"}},
		{"test call, not started", func() (jsapi.McpCallOutcome, error) {
			return test(jsapi.TestMcpToolCallDto{CallID: "t3", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{}`}, false)
		}, `{}`, want{"test", id, "fixture", "echo", "ask", "manual", "not_sent", CodeCallNotStarted, ""}},
		{"test call, bad registration id", func() (jsapi.McpCallOutcome, error) {
			return test(jsapi.TestMcpToolCallDto{CallID: "t4", RegistrationID: "NOPE", NativeName: "echo", ArgumentsJSON: `{}`}, true)
		}, `{}`, want{"test", "", "", "echo", "", "manual", "not_sent", CodeCallRegistrationInvalid, ""}},
		{"test call, paused", func() (jsapi.McpCallOutcome, error) {
			return test(jsapi.TestMcpToolCallDto{CallID: "t5", RegistrationID: paused, NativeName: "echo", ArgumentsJSON: `[]`}, true)
		}, `[]`, want{"test", paused, "fixture", "echo", "off", "manual", "not_sent", CodeCallArgumentsNotObject, ""}},
	}
	before := len(w.auditLines())
	for i, tc := range cases {
		_, err := tc.call()
		lines := w.auditLines()
		if n := len(lines) - before - i; n != 1 {
			t.Fatalf("%s: %d audit lines appended; want 1", tc.name, n)
		}
		if strings.Contains(lines[len(lines)-1], "secret") {
			t.Errorf("%s: the arguments reached the audit file: %s", tc.name, lines[len(lines)-1])
		}
		e := w.lastAudit()
		got := want{e.Source, e.RegistrationID, e.ServerDisplayName, e.NativeName, e.Permission, e.Approval, e.Outcome, e.Code, e.ResponseKind}
		if got != tc.want {
			t.Errorf("%s (err %v):\n got %+v\nwant %+v", tc.name, err, got, tc.want)
		}
		n, sum := domain.DigestArguments(tc.args)
		if e.ArgumentsBytes != n || e.ArgumentsSHA256 != sum || e.DurationMs < 0 {
			t.Errorf("%s: arguments %d %s, duration %v", tc.name, e.ArgumentsBytes, e.ArgumentsSHA256, e.DurationMs)
		}
		if e.Outcome == "rejected" && err == nil || e.Outcome != "rejected" && err != nil {
			t.Errorf("%s: outcome %s with error %v", tc.name, e.Outcome, err)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the echo server got %d calls; want 4 (three model calls, one test call)", n)
	}

	// Listing: newest first, filtered, paged.
	all, err := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{})
	if err != nil || len(all.Entries) != len(cases) {
		t.Fatalf("list: %d entries, %v", len(all.Entries), err)
	}
	if all.Entries[0].CallID != "t5" || all.Entries[len(cases)-1].CallID != "m1" {
		t.Errorf("order: first %s, last %s", all.Entries[0].CallID, all.Entries[len(cases)-1].CallID)
	}
	byReg, _ := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{RegistrationID: &paused})
	if len(byReg.Entries) != 2 || byReg.Entries[0].CallID != "t5" || byReg.Entries[1].CallID != "m8" {
		t.Errorf("paused registration: %+v", byReg.Entries)
	}
	two := 2
	page, _ := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{Limit: &two, Before: &all.Entries[1].Time})
	if len(page.Entries) != 2 || page.Entries[0].CallID != all.Entries[2].CallID || page.Entries[1].CallID != all.Entries[3].CallID {
		t.Errorf("page before %s: %+v", all.Entries[1].Time, page.Entries)
	}
	if _, err := time.Parse(time.RFC3339Nano, all.Entries[0].Time); err != nil {
		t.Errorf("time %q: %v", all.Entries[0].Time, err)
	}
}

func TestAuditListRejectsBadQueries(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	zero, huge, bad, notTime := 0, MaxAuditLimit+1, "NOPE", "yesterday"
	for _, tc := range []struct {
		dto  jsapi.McpAuditListDto
		code string
	}{
		{jsapi.McpAuditListDto{Limit: &zero}, CodeAuditLimitInvalid},
		{jsapi.McpAuditListDto{Limit: &huge}, CodeAuditLimitInvalid},
		{jsapi.McpAuditListDto{RegistrationID: &bad}, "mcp.registration_id_invalid"},
		{jsapi.McpAuditListDto{Before: &notTime}, CodeAuditBeforeInvalid},
	} {
		if _, err := w.svc.ListAudit(ctx, tc.dto); domain.CodeOf(err) != tc.code || domain.KindOf(err) != domain.KindBadRequest {
			t.Errorf("%+v: %v; want BadRequest %s", tc.dto, err, tc.code)
		}
	}
	if l, err := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{}); err != nil || l.Entries == nil || len(l.Entries) != 0 {
		t.Errorf("an empty log: %+v %v", l, err)
	}
}

// A record that cannot be written does not change the call's outcome.
func TestAuditFailureKeepsTheOutcome(t *testing.T) {
	url, calls := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	w.permit(id, "echo", jsapi.PermissionAllow)
	os.MkdirAll(filepath.Dir(w.audit.Dir()), 0o755)
	if err := os.WriteFile(w.audit.Dir(), []byte("a file where the directory belongs"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.svc.StartLegacyCall(context.Background(), jsapi.McpExecutionCallIdDto{ExecutionCallID: "x"})
	if o := w.legacyCall("x", "mcp/"+id+":echo", `{}`); o.Outcome != jsapi.OutcomeKnownResponse || calls.Load() != 1 {
		t.Fatalf("outcome %+v", o)
	}
}

// A test call's record is written after its answer (issue 31: the fsync is
// not in the call's time) when its command leaves work for then
// (WithLater): nothing is on disk until the work runs, the record's time
// is when the outcome was known, and a list made meanwhile waits for it.
func TestTestCallRecordWrittenAfterTheAnswer(t *testing.T) {
	url, _ := echoServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	var l Later
	ctx := WithLater(context.Background(), &l)
	w.start("late-1")
	o, err := w.svc.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "late-1", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{"text":"x"}`})
	answered := time.Now()
	if err != nil || o.Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("call: %+v %v", o, err)
	}
	if lines := w.auditLines(); len(lines) != 0 && lines[0] != "" {
		t.Fatalf("written before the answer: %q", lines)
	}
	listed := make(chan jsapi.McpAuditList)
	go func() {
		out, _ := w.svc.ListAudit(context.Background(), jsapi.McpAuditListDto{})
		listed <- out
	}()
	l.Run()
	got := <-listed
	if len(got.Entries) != 1 || got.Entries[0].CallID != "late-1" || got.Entries[0].Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("listed %+v", got.Entries)
	}
	if at, err := time.Parse(time.RFC3339Nano, got.Entries[0].Time); err != nil || at.After(answered) {
		t.Fatalf("time %s, after the answer at %s (%v)", got.Entries[0].Time, answered.UTC().Format(time.RFC3339Nano), err)
	}
	// without a Later the record is written before the call returns
	w.start("now-1")
	if _, err := w.svc.TestCall(context.Background(), jsapi.TestMcpToolCallDto{CallID: "now-1", RegistrationID: id, NativeName: "echo", ArgumentsJSON: `{}`}); err != nil {
		t.Fatal(err)
	}
	if n := len(w.auditLines()); n != 2 {
		t.Fatalf("%d lines", n)
	}
}
