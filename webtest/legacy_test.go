package webtest

// End-to-end tests of Legacy generation (SPEC §7, reference §6): the
// adapter jsapi/legacy-mcp-tools.js driven by a SillyTavern-style Generate
// loop (testdata/generate.js) in Chromium, against a fake OpenAI-compatible
// chat-completions server (chatServer) whose replies each test scripts,
// with the real backend calling the demo MCP server. Each test asserts
// what the model was sent (tools, tool messages), the invoke frames the
// backend read, what the MCP server received, and what the chat saved.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/jsapi"
)

// ---------------------------------------------------------------- the model

// chatServer is a fake OpenAI-compatible chat-completions endpoint on
// loopback (CORS open: the page is on the backend's origin). Each POST
// gets the next reply of the test's script, as one JSON completion or,
// when the request says stream: true, as SSE chunks whose tool_calls
// deltas are split and interleaved across chunks, then [DONE]. Every
// request body is recorded.
type chatServer struct {
	URL string // the chat-completions URL
	tb  testing.TB

	mu      sync.Mutex
	replies []reply
	bodies  []string
}

// reply is one scripted answer of the model. From, when set, makes the
// answer from the request it answers (a model that reads what it was
// sent), instead of Text and Calls.
type reply struct {
	Text  string
	Calls []toolCall
	From  func(req chatRequest) reply
}

type toolCall struct{ ID, Name, Arguments string }

// calls is a reply with tool calls only.
func calls(c ...toolCall) reply { return reply{Calls: c} }

func newChatServer(tb testing.TB) *chatServer {
	tb.Helper()
	s := &chatServer{tb: tb}
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1/chat/completions"
	return s
}

// script appends replies to the script.
func (s *chatServer) script(r ...reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "POST")
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &req)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(body))
	n := len(s.bodies)
	var next reply
	ok := len(s.replies) > 0
	if ok {
		next, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if !ok {
		s.tb.Errorf("the model got request %d, beyond its script:\n%s", n, body)
		http.Error(w, "the script has no reply left", http.StatusInternalServerError)
		return
	}
	if next.From != nil {
		var cr chatRequest
		json.Unmarshal(body, &cr)
		next = next.From(cr)
	}
	if req.Stream {
		s.stream(w, next)
		return
	}
	message := map[string]any{"role": "assistant", "content": next.Text}
	finish := "stop"
	if len(next.Calls) > 0 {
		var tc []any
		for _, c := range next.Calls {
			tc = append(tc, map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}})
		}
		message["tool_calls"], finish = tc, "tool_calls"
		if next.Text == "" {
			message["content"] = nil
		}
	}
	h.Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
	})
}

// stream writes a reply as OpenAI streams it: the role, the text in small
// pieces, each call's id and name, then its arguments in three pieces,
// round-robin across the calls (so merging by index matters), the finish
// reason and [DONE].
func (s *chatServer) stream(w http.ResponseWriter, r reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk", "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f != nil {
			f.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, piece := range splitRunes(r.Text, (len([]rune(r.Text))+4)/5) {
		chunk(map[string]any{"content": piece}, nil)
	}
	for i, c := range r.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": ""}}}}, nil)
	}
	pieces := make([][]string, len(r.Calls))
	for i, c := range r.Calls {
		pieces[i] = splitRunes(c.Arguments, 3)
	}
	for k := range 3 {
		for i := range r.Calls {
			if k < len(pieces[i]) {
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]string{"arguments": pieces[i][k]}}}}, nil)
			}
		}
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// splitRunes cuts s into at most n non-empty pieces.
func splitRunes(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 || n <= 0 {
		return nil
	}
	size := (len(rs) + n - 1) / n
	var out []string
	for len(rs) > 0 {
		k := min(size, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}

// chatRequest is a request the model received.
type chatRequest struct {
	Model      string        `json:"model"`
	Stream     bool          `json:"stream"`
	Messages   []chatMessage `json:"messages"`
	Tools      []chatTool    `json:"tools"`
	ToolChoice any           `json:"tool_choice"`
}

type chatMessage struct {
	Role      string  `json:"role"`
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// requests decodes the requests received so far.
func (s *chatServer) requests() []chatRequest {
	s.tb.Helper()
	s.mu.Lock()
	bodies := slices.Clone(s.bodies)
	s.mu.Unlock()
	out := make([]chatRequest, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal([]byte(b), &out[i]); err != nil {
			s.tb.Fatalf("request %d to the model: %v\n%s", i+1, err, b)
		}
	}
	return out
}

// toolNames lists the names of a request's tools.
func (r chatRequest) toolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// toolMessages returns the tool messages of a request: tool_call_id → content.
func (r chatRequest) toolMessages() map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m.Role == "tool" && m.Content != nil {
			out[m.ToolCallID] = *m.Content
		}
	}
	return out
}

// ---------------------------------------------------------------- the page

// legacyEnv is a backend, an MCP server registered as "Demo", active,
// discovered (its catalog cached) with some tools permitted, the model,
// and the Generate page.
type legacyEnv struct {
	b   *backend
	mcp *mcpServer
	llm *chatServer
	p   *page
	id  string
}

// newLegacyEnv serves h (nil: the demo server) and sets perms from the
// page before discovering it.
func newLegacyEnv(t *testing.T, h http.Handler, protocol string, perms map[string]string) *legacyEnv {
	t.Helper()
	if h == nil {
		h = demo.Handler()
	}
	e := &legacyEnv{b: newBackend(t), mcp: newMCPServer(t, h), llm: newChatServer(t)}
	e.p = openPage(t, e.b.url("/webtest/generate.html"))
	e.p.run(`await tt.hostReady; gen.endpoint = %s;`, e.llm.URL)
	e.id = activeServer(t, e.p, e.mcp.endpoint(), protocol)
	e.p.run(`
		for (const [nativeName, permission] of Object.entries(%s)) {
			await tt.mcp.tools.setPermission({ registrationId: %s, nativeName, permission });
		}
		await tt.mcp.servers.discover(%[2]s);`, perms, e.id)
	return e
}

// toolID is the ToolId of a demo tool.
func (e *legacyEnv) toolID(name string) string { return "mcp/" + e.id + ":" + name }

// genResult is how a generation ended, as generate.js reports it.
type genResult struct {
	Status string   `json:"status"` // done, stopped (saved after Stop), aborted, failed
	Error  *jsError `json:"error"`
	Chat   []chatRow
	Saves  int
	Toasts []toast
}

type chatRow struct {
	IsUser    bool   `json:"is_user"`
	IsSystem  bool   `json:"is_system"`
	Role      string `json:"role"`
	Name      string `json:"name"`
	Mes       string `json:"mes"`
	ToolCalls []struct {
		ID, Name, DisplayName, Parameters string
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
	Error      bool   `json:"error"`
}

type toast struct {
	Level, Text, Title string
	Options            map[string]any
	Cleared            bool
}

// generate runs a root generation to its end.
func (e *legacyEnv) generate(user string, stream bool) genResult {
	return evalJS[genResult](e.p, `return await gen.generate(%s, { stream: %s });`, user, stream)
}

// start starts a root generation; finish waits for it.
func (e *legacyEnv) start(user string) {
	e.p.run(`gen.pending = gen.generate(%s);`, user)
}

func (e *legacyEnv) finish() genResult {
	return evalJS[genResult](e.p, `return await gen.pending;`)
}

// legacyFrame is a legacy invoke frame the backend read.
type legacyFrame struct{ Command, ExecutionCallID, Head string }

var executionCallIDField = regexp.MustCompile(`"executionCallId":"([^"]*)"`)

// legacyFrames returns the frames of the four legacy commands read after
// the first `from` invoke frames.
func (b *backend) legacyFrames(from int) []legacyFrame {
	var out []legacyFrame
	for _, f := range b.seenInvokes()[from:] {
		switch f.Command {
		case jsapi.CmdListLegacyTools, jsapi.CmdStartLegacyToolCall, jsapi.CmdCallLegacyTool, jsapi.CmdCancelLegacyToolCall:
			c := legacyFrame{Command: f.Command, Head: f.Head}
			if m := executionCallIDField.FindStringSubmatch(f.Head); m != nil {
				c.ExecutionCallID = m[1]
			}
			out = append(out, c)
		}
	}
	return out
}

const (
	cList   = jsapi.CmdListLegacyTools
	cStart  = jsapi.CmdStartLegacyToolCall
	cCall   = jsapi.CmdCallLegacyTool
	cCancel = jsapi.CmdCancelLegacyToolCall
)

// wantLegacyFrames checks the commands of frames, in order; every
// start is followed by the call (and cancel) of its own fresh UUID.
func wantLegacyFrames(t *testing.T, frames []legacyFrame, commands ...string) {
	t.Helper()
	var got []string
	for _, f := range frames {
		got = append(got, f.Command)
	}
	if !slices.Equal(got, commands) {
		t.Fatalf("legacy frames read by the backend: %v; want %v", got, commands)
	}
	seen := map[string]bool{}
	id := ""
	for _, f := range frames {
		switch f.Command {
		case cStart:
			id = f.ExecutionCallID
			if !canonicalUUID.MatchString(id) || seen[id] {
				t.Errorf("start frame %s: want a fresh UUID executionCallId", f.Head)
			}
			seen[id] = true
		case cCall, cCancel:
			if f.ExecutionCallID != id {
				t.Errorf("%s frame %s; want the executionCallId %s of the start before it", f.Command, f.Head, id)
			}
		}
	}
}

// wantCallHead checks that a call_legacy_mcp_tool frame carries toolId and
// argumentsJson exactly.
func wantCallHead(t *testing.T, f legacyFrame, toolID, argumentsJSON string) {
	t.Helper()
	args, _ := json.Marshal(argumentsJSON)
	want := fmt.Sprintf(`"args":{"dto":{"executionCallId":"%s","toolId":"%s","argumentsJson":%s}}}`, f.ExecutionCallID, toolID, args)
	if f.Command != cCall || !strings.HasSuffix(f.Head, want) {
		t.Errorf("call frame %s; want it to end %s", f.Head, want)
	}
}

// wantPretty checks that content is the outcome `want` (compact JSON),
// pretty-printed as JSON.stringify(outcome, null, 2) does.
func wantPretty(t *testing.T, what, content, want string) {
	t.Helper()
	var compact, pretty bytes.Buffer
	if err := json.Compact(&compact, []byte(content)); err != nil {
		t.Errorf("%s: %q is not JSON: %v", what, content, err)
		return
	}
	json.Indent(&pretty, compact.Bytes(), "", "  ")
	if pretty.String() != content {
		t.Errorf("%s:\n%s\nwant it printed with a two-space indent:\n%s", what, content, pretty.String())
	}
	if !sameJSON([]byte(content), []byte(want)) {
		t.Errorf("%s:\n%s\nwant the outcome %s", what, content, want)
	}
}

// echoOutcome is the outcome of the demo echo of text.
func echoOutcome(text string) string {
	b, _ := json.Marshal(text)
	return `{"outcome":"known_response","response":{"kind":"tool_result","isError":false,"textBlocks":[{"index":0,"text":` + string(b) + `}],"diagnostics":[]}}`
}

// notAdvertised is the adapter's result for an alias the hooks edited.
func notAdvertised(alias string) string {
	return fmt.Sprintf(`{"outcome":"not_sent","code":"mcp.legacy_tool_not_advertised","message":"MCP tool alias \"%s\" was not uniquely advertised in the post-hook frontend payload"}`, alias)
}

// wantSaved checks the chat rows: roles in order ("user", "assistant",
// "assistant+calls", "tool").
func wantSaved(t *testing.T, r genResult, rows ...string) {
	t.Helper()
	var got []string
	for _, c := range r.Chat {
		switch {
		case c.IsUser:
			got = append(got, "user")
		case c.Role == "tool":
			got = append(got, "tool")
		case c.ToolCalls != nil:
			got = append(got, "assistant+calls")
		default:
			got = append(got, "assistant")
		}
	}
	if !slices.Equal(got, rows) {
		t.Errorf("chat %v; want %v\n%+v", got, rows, r.Chat)
	}
}

// warnings returns the warning toasts.
func (r genResult) warnings() []toast {
	var out []toast
	for _, t := range r.Toasts {
		if t.Level == "warning" {
			out = append(out, t)
		}
	}
	return out
}

const outcomeUnknownText = "One or more tools in this batch may have executed, but an MCP result is unknown. " +
	"TauriTavern did not retry or save a partial tool turn. Check the MCP server and affected systems before trying again."

// wantOutcomeUnknown checks a generation that an unknown outcome ended:
// LegacyMcpOutcomeUnknownError with code, the persistent warning, nothing
// of the batch saved (the chat is the user's message alone).
func wantOutcomeUnknown(t *testing.T, r genResult, code, message string) {
	t.Helper()
	if r.Status != "failed" || r.Error == nil || r.Error.Name != "LegacyMcpOutcomeUnknownError" || r.Error.Code != code ||
		!strings.HasPrefix(r.Error.Message, code+": "+message) {
		t.Errorf("generation ended %s with %+v; want LegacyMcpOutcomeUnknownError %s %q", r.Status, r.Error, code, message)
	}
	wantSaved(t, r, "user")
	if r.Saves != 1 {
		t.Errorf("%d saves; want only the user's message", r.Saves)
	}
	w := r.warnings()
	if len(w) != 1 || w[0].Title != "MCP tool result unknown" || r.Error != nil && w[0].Text != outcomeUnknownText+"\n\n"+r.Error.Message ||
		!reflect.DeepEqual(w[0].Options, map[string]any{"timeOut": 0.0, "extendedTimeOut": 0.0, "closeButton": true}) {
		t.Errorf("warnings %+v; want the persistent MCP tool result unknown warning", w)
	}
}

// ---------------------------------------------------------------- tests

// The model calls an MCP tool, without and with streaming: one listing
// for the root, exactly one start and one call on the wire with the
// model's arguments byte for byte (an integer beyond 2^53 stays exact at
// the MCP server), the pretty outcome as the tool message of the second
// request, and the final answer ends the loop.
func TestLegacyGenerateCallsAnMCPTool(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow"})
			const args = `{"text":"hello","n":9007199254740993}`
			e.llm.script(calls(toolCall{"call_1", "mcp__Demo__echo", args}), reply{Text: "The tool said hello."})
			from := len(e.b.seenInvokes())
			r := e.generate("Say hello", stream)
			if r.Status != "done" || r.Error != nil {
				t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
			}

			frames := e.b.legacyFrames(from)
			wantLegacyFrames(t, frames, cList, cStart, cCall)
			wantCallHead(t, frames[2], e.toolID("echo"), args)
			mc := e.mcp.toolCalls()
			if len(mc) != 1 || mc[0].Tool != "echo" || !strings.Contains(mc[0].Body, `"arguments":`+args) {
				t.Errorf("the MCP server got %+v; want one echo with the arguments %s", mc, args)
			}

			reqs := e.llm.requests()
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests; want 2", len(reqs))
			}
			for i, q := range reqs {
				if q.Model != "fake-model" || q.Stream != stream || !slices.Equal(q.toolNames(), []string{"mcp__Demo__echo"}) || q.ToolChoice != "auto" {
					t.Errorf("request %d: model %s, stream %v, tools %v, tool_choice %v", i+1, q.Model, q.Stream, q.toolNames(), q.ToolChoice)
				}
			}
			m := reqs[1].Messages
			if len(m) != 3 || m[0].Role != "user" || m[1].Role != "assistant" || len(m[1].ToolCalls) != 1 || m[2].Role != "tool" || m[2].ToolCallID != "call_1" {
				t.Fatalf("second request messages %+v; want user, assistant with the call, tool", m)
			}
			if c := m[1].ToolCalls[0]; c.ID != "call_1" || c.Type != "function" || c.Function.Name != "mcp__Demo__echo" || c.Function.Arguments != args {
				t.Errorf("replayed call %+v; want call_1 mcp__Demo__echo %s", c, args)
			}
			wantPretty(t, "the tool message", *m[2].Content, echoOutcome("hello"))

			wantSaved(t, r, "user", "assistant+calls", "tool", "assistant")
			owner, row := r.Chat[1], r.Chat[2]
			if len(owner.ToolCalls) != 1 || owner.ToolCalls[0].ID != "call_1" || owner.ToolCalls[0].Name != "mcp__Demo__echo" ||
				owner.ToolCalls[0].DisplayName != "Echo (Demo)" || owner.ToolCalls[0].Parameters != args {
				t.Errorf("assistant tool_calls %+v", owner.ToolCalls)
			}
			if row.Mes != *m[2].Content || row.ToolCallID != "call_1" || row.Name != "mcp__Demo__echo" || row.Error || !row.IsSystem {
				t.Errorf("tool row %+v; want the outcome sent to the model, error false", row)
			}
			if last := r.Chat[3]; last.Mes != "The tool said hello." {
				t.Errorf("final answer %q", last.Mes)
			}
			if r.Saves != 3 {
				t.Errorf("%d saves; want the user's message, the tool turn, the answer", r.Saves)
			}
			if len(r.Toasts) != 1 || r.Toasts[0].Level != "info" || r.Toasts[0].Text != "Invoking MCP tool: Echo (Demo)" || !r.Toasts[0].Cleared {
				t.Errorf("toasts %+v; want the cleared progress toast only", r.Toasts)
			}
		})
	}
}

// Recursion over streamed rounds reuses the root's context: one listing
// for three rounds, a batch of two interleaved calls then one, every tool
// message replayed in order. A second root lists again; at
// RECURSE_LIMIT no MCP tool is advertised and returned calls are not run.
func TestLegacyGenerateRecursion(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "add": "ask", "forecast": "allow"})
	e.llm.script(
		calls(toolCall{"a1", "mcp__Demo__echo", `{"text":"one"}`}, toolCall{"a2", "mcp__Demo__add", `{"a":2,"b":40}`}),
		calls(toolCall{"b1", "mcp__Demo__forecast", `{"region":"us-east-1","days":2}`}),
		reply{Text: "Sunny, and the sum is 42."},
	)
	from := len(e.b.seenInvokes())
	r := e.generate("Plan my day", true)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	frames := e.b.legacyFrames(from)
	wantLegacyFrames(t, frames, cList, cStart, cCall, cStart, cCall, cStart, cCall)
	wantCallHead(t, frames[2], e.toolID("echo"), `{"text":"one"}`)
	wantCallHead(t, frames[4], e.toolID("add"), `{"a":2,"b":40}`)
	wantCallHead(t, frames[6], e.toolID("forecast"), `{"region":"us-east-1","days":2}`)

	reqs := e.llm.requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests; want 3", len(reqs))
	}
	want := []string{"mcp__Demo__add", "mcp__Demo__echo", "mcp__Demo__forecast"}
	for i, q := range reqs {
		if !slices.Equal(q.toolNames(), want) {
			t.Errorf("request %d tools %v; want %v", i+1, q.toolNames(), want)
		}
	}
	var roles []string
	for _, m := range reqs[2].Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "tool", "tool", "assistant", "tool"}) {
		t.Errorf("third request roles %v", roles)
	}
	tm := reqs[2].toolMessages()
	wantPretty(t, "echo's tool message", tm["a1"], echoOutcome("one"))
	wantPretty(t, "add's tool message", tm["a2"],
		`{"outcome":"known_response","response":{"kind":"tool_result","isError":false,"textBlocks":[{"index":0,"text":"42"}],"structuredJson":"{\n  \"sum\": 42\n}","diagnostics":[]}}`)
	wantPretty(t, "forecast's tool message", tm["b1"], echoOutcome("us-east-1: sunny for 2 day(s)"))
	if reqs[1].Messages[1].ToolCalls[1].Function.Arguments != `{"a":2,"b":40}` {
		t.Errorf("the streamed arguments of the second call were merged into %+v", reqs[1].Messages[1].ToolCalls)
	}
	wantSaved(t, r, "user", "assistant+calls", "tool", "tool", "assistant+calls", "tool", "assistant")
	if r.Chat[6].Mes != "Sunny, and the sum is 42." {
		t.Errorf("final streamed answer %q", r.Chat[6].Mes)
	}

	// A second root, with RECURSE_LIMIT 2: depths 0 and 1 run their calls,
	// depth 2 advertises no MCP tool and its calls are plain text.
	e.p.run(`gen.reset(); gen.ToolManager.RECURSE_LIMIT = 2;`)
	e.llm.script(
		calls(toolCall{"c1", "mcp__Demo__echo", `{"text":"d0"}`}),
		calls(toolCall{"c2", "mcp__Demo__echo", `{"text":"d1"}`}),
		reply{Text: "at the limit", Calls: []toolCall{{"c3", "mcp__Demo__echo", `{"text":"d2"}`}}},
	)
	from = len(e.b.seenInvokes())
	r = e.generate("Again", false)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("second generation ended %s with %+v", r.Status, r.Error)
	}
	wantLegacyFrames(t, e.b.legacyFrames(from), cList, cStart, cCall, cStart, cCall)
	reqs = e.llm.requests()[3:]
	if len(reqs) != 3 || len(reqs[0].Tools) != 3 || len(reqs[1].Tools) != 3 || reqs[2].Tools != nil || reqs[2].ToolChoice != nil {
		t.Errorf("at the limit the request advertised %v (%v); want no tools", reqs[len(reqs)-1].toolNames(), reqs[len(reqs)-1].ToolChoice)
	}
	wantSaved(t, r, "user", "assistant+calls", "tool", "assistant+calls", "tool", "assistant")
	if n := len(e.mcp.toolCalls()); n != 5 {
		t.Errorf("the MCP server got %d tools/call in all; want 5", n)
	}
}

// What is advertised: Ask and Allow tools with the description override
// applied (description and a property's), in server then ToolId order
// after the local tools; an Off tool is not; a local tool named like the
// base alias pushes the MCP alias to __2, and each name reaches its own
// tool. A permitted tool missing from the catalog is a warning.
func TestLegacyAdvertisedTools(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "add": "ask", "fail": "off", "forecast": "allow", "ghost": "allow"})
	e.p.run(`
		await tt.mcp.tools.setDescriptionOverride({ registrationId: %s, nativeName: 'echo',
			override: { description: '  Echo it back, verbatim. ', properties: { text: 'The words to echo' } } });
		gen.ToolManager.registerFunctionTool({
			name: 'mcp__Demo__echo', displayName: 'Local echo', description: 'A local tool named like the alias',
			parameters: { type: 'object', properties: {} },
			action: async (args) => 'local result ' + JSON.stringify(args),
		});`, e.id)
	e.llm.script(
		calls(toolCall{"m", "mcp__Demo__echo__2", `{"text":"via mcp"}`}, toolCall{"l", "mcp__Demo__echo", ``}),
		reply{Text: "ok"},
	)
	from := len(e.b.seenInvokes())
	r := e.generate("Which echo?", false)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests; want 2", len(reqs))
	}
	type tool struct{ name, description, parameters string }
	want := []tool{
		{"mcp__Demo__echo", "A local tool named like the alias", `{"type":"object","properties":{}}`},
		{"mcp__Demo__add", "Adds two numbers and returns the sum as structured content.",
			`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`},
		{"mcp__Demo__echo__2", "  Echo it back, verbatim. ",
			`{"type":"object","properties":{"text":{"type":"string","description":"The words to echo"}},"required":["text"]}`},
		{"mcp__Demo__forecast", "A made-up forecast. Its region travels as the Mcp-Param-Region header on MCP 2026-07-28.",
			`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["region"]}`},
	}
	for i, q := range reqs {
		ok := len(q.Tools) == len(want) && q.ToolChoice == "auto"
		for j := 0; ok && j < len(want); j++ {
			g := q.Tools[j]
			ok = g.Type == "function" && g.Function.Name == want[j].name && g.Function.Description == want[j].description &&
				sameJSON(g.Function.Parameters, []byte(want[j].parameters))
		}
		if !ok {
			t.Errorf("request %d advertised:\n%s\nwant (in order) %+v", i+1, jsonText(q.Tools), want)
		}
	}
	frames := e.b.legacyFrames(from)
	wantLegacyFrames(t, frames, cList, cStart, cCall)
	wantCallHead(t, frames[2], e.toolID("echo"), `{"text":"via mcp"}`)
	tm := reqs[1].toolMessages()
	wantPretty(t, "the MCP echo's tool message", tm["m"], echoOutcome("via mcp"))
	if tm["l"] != "local result {}" {
		t.Errorf("the local tool's message %q; want its own result", tm["l"])
	}
	wantSaved(t, r, "user", "assistant+calls", "tool", "tool", "assistant")
	// ghost is permitted but absent from the catalog: a diagnostic, told
	// once for the root (not once per round).
	var warned []string
	for _, w := range r.warnings() {
		warned = append(warned, w.Title+": "+w.Text)
	}
	if want := []string{"MCP tools unavailable: Some MCP tools are unavailable for this generation. Check MCP Manager and the console for details."}; !slices.Equal(warned, want) {
		t.Errorf("warnings %q; want %q", warned, want)
	}
	if c := r.Chat[1].ToolCalls; len(c) != 2 || c[0].DisplayName != "Echo (Demo)" || c[1].DisplayName != "Local echo" {
		t.Errorf("tool_calls %+v", c)
	}
}

// A CHAT_COMPLETION_SETTINGS_READY hook renames one alias, removes another
// and duplicates a third: calling any of them is the
// mcp.legacy_tool_not_advertised error result, without a command to the
// backend; the renamed name is not guessed back (it is no tool at all).
// The error results go back to the model and the loop goes on.
func TestLegacyHookEditedAliases(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "add": "allow", "forecast": "allow"})
	e.p.run(`
		gen.hooks.push((data) => {
			const byName = (n) => data.tools.find((t) => t.function.name === n);
			byName('mcp__Demo__echo').function.name = 'renamed_echo';
			data.tools = data.tools.filter((t) => t.function.name !== 'mcp__Demo__add');
			data.tools.push(structuredClone(byName('mcp__Demo__forecast')));
		});`)
	e.llm.script(
		calls(
			toolCall{"x1", "mcp__Demo__echo", `{"text":"x"}`},
			toolCall{"x2", "mcp__Demo__add", `{"a":1,"b":2}`},
			toolCall{"x3", "mcp__Demo__forecast", `{"region":"eu"}`},
			toolCall{"x4", "renamed_echo", `{"text":"y"}`},
		),
		reply{Text: "none of them worked"},
	)
	from := len(e.b.seenInvokes())
	r := e.generate("Try them", false)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	wantLegacyFrames(t, e.b.legacyFrames(from), cList)
	if n := len(e.mcp.toolCalls()); n != 0 {
		t.Errorf("the MCP server got %d tools/call; want none", n)
	}
	reqs := e.llm.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests; want 2", len(reqs))
	}
	if names, want := reqs[0].toolNames(), []string{"renamed_echo", "mcp__Demo__forecast", "mcp__Demo__forecast"}; !slices.Equal(names, want) {
		t.Errorf("post-hook tools %v; want %v", names, want)
	}
	tm := reqs[1].toolMessages()
	wantPretty(t, "the renamed alias", tm["x1"], notAdvertised("mcp__Demo__echo"))
	wantPretty(t, "the removed alias", tm["x2"], notAdvertised("mcp__Demo__add"))
	wantPretty(t, "the duplicated alias", tm["x3"], notAdvertised("mcp__Demo__forecast"))
	if want := `Error: No tool with the name "renamed_echo" has been registered`; tm["x4"] != want {
		t.Errorf("the hook's new name: %q; want %q (a local lookup, not the MCP tool)", tm["x4"], want)
	}
	wantSaved(t, r, "user", "assistant+calls", "tool", "tool", "tool", "tool", "assistant")
	for _, row := range r.Chat[2:6] {
		if !row.Error {
			t.Errorf("tool row %+v; want error true", row)
		}
	}
	if n := len(r.Toasts); n == 0 || r.Toasts[n-1].Level != "error" || r.Toasts[n-1].Title != "Tool Calling Error" {
		t.Errorf("toasts %+v; want the tool calling errors shown", r.Toasts)
	}
}

// Error results that do not end the generation: a tool's isError (demo
// fail) and a tool set Off after the root listed it (the backend's
// permission re-check: not_sent mcp.call_permission_off, nothing reaches
// the MCP server). Both go back to the model with error true and the loop
// goes on; the root's frozen list still advertises the tool, the next root
// does not.
func TestLegacyToolErrors(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "fail": "allow"})
	e.p.run(`
		gen.hooks.push(async (data, { depth }) => {
			if (depth === 0) await tt.mcp.tools.setPermission({ registrationId: %s, nativeName: 'echo', permission: 'off' });
		});`, e.id)
	e.llm.script(
		calls(toolCall{"f", "mcp__Demo__fail", `{"reason":"no luck"}`}, toolCall{"o", "mcp__Demo__echo", `{"text":"x"}`}),
		reply{Text: "both failed"},
	)
	from := len(e.b.seenInvokes())
	r := e.generate("Fail twice", true)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	frames := e.b.legacyFrames(from)
	wantLegacyFrames(t, frames, cList, cStart, cCall, cStart, cCall)
	wantCallHead(t, frames[4], e.toolID("echo"), `{"text":"x"}`)
	if mc := e.mcp.toolCalls(); len(mc) != 1 || mc[0].Tool != "fail" {
		t.Errorf("the MCP server got %+v; want the fail call only", mc)
	}
	reqs := e.llm.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests; want 2", len(reqs))
	}
	tm := reqs[1].toolMessages()
	wantPretty(t, "fail's tool message", tm["f"],
		`{"outcome":"known_response","response":{"kind":"tool_result","isError":true,"textBlocks":[{"index":0,"text":"no luck"}],"diagnostics":[]}}`)
	wantPretty(t, "the tool set Off", tm["o"], fmt.Sprintf(`{"outcome":"not_sent","code":"mcp.call_permission_off","message":"MCP tool %s is Off"}`, "`"+e.toolID("echo")+"`"))
	wantSaved(t, r, "user", "assistant+calls", "tool", "tool", "assistant")
	if !r.Chat[2].Error || !r.Chat[3].Error {
		t.Errorf("tool rows %+v; want error true on both", r.Chat[2:4])
	}
	if names := reqs[1].toolNames(); !slices.Equal(names, []string{"mcp__Demo__echo", "mcp__Demo__fail"}) {
		t.Errorf("the root's second round advertised %v; want its frozen list", names)
	}

	// The next root lists again: echo is Off now.
	e.llm.script(reply{Text: "hi"})
	r = e.generate("Next", false)
	if names := e.llm.requests()[2].toolNames(); r.Status != "done" || !slices.Equal(names, []string{"mcp__Demo__fail"}) {
		t.Errorf("the next root (%s) advertised %v; want fail only", r.Status, names)
	}
	if n := e.b.countInvokes(cList); n != 2 {
		t.Errorf("%d listings; want one per root", n)
	}
}

// Stop. While a sent MCP call runs, Stop cancels it: the backend answers
// outcome_unknown mcp.call_cancelled, the generation ends without saving
// the batch (not even its completed first call) and without a second
// request. Stop after a fully confirmed batch saves it and does not
// recurse. Stop between two calls runs no more calls and saves nothing.
func TestLegacyStop(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "slow": "allow"})

	t.Run("during a call", func(t *testing.T) {
		e.p.run(`gen.reset();`)
		requests, mcpCalls := len(e.llm.requests()), len(e.mcp.toolCalls())
		e.llm.script(calls(toolCall{"s1", "mcp__Demo__echo", `{"text":"first"}`}, toolCall{"s2", "mcp__Demo__slow", `{"ms":30000}`}))
		from := len(e.b.seenInvokes())
		e.start("Wait for it")
		waitUntil(t, "the slow tools/call at the MCP server", func() bool { return len(e.mcp.toolCalls()) == mcpCalls+2 })
		e.p.run(`gen.stop();`)
		r := e.finish()
		wantOutcomeUnknown(t, r, "mcp.call_cancelled", "Stopped waiting for the tool response")
		frames := e.b.legacyFrames(from)
		wantLegacyFrames(t, frames, cList, cStart, cCall, cStart, cCall, cCancel)
		wantCallHead(t, frames[4], e.toolID("slow"), `{"ms":30000}`)
		if n := len(e.llm.requests()) - requests; n != 1 {
			t.Errorf("the model got %d requests; want 1 (no retry, no recursion)", n)
		}
		waitUntil(t, "the slow tools/call to end at the MCP server", func() bool { c := e.mcp.toolCalls()[mcpCalls+1]; return c.Gone || c.Done })
		if c := e.mcp.toolCalls()[mcpCalls+1]; c.Tool != "slow" || !c.Gone {
			t.Errorf("the MCP server's slow call %+v; want it abandoned", c)
		}
	})

	t.Run("before the call is sent", func(t *testing.T) {
		// Stop while start_legacy_mcp_tool_call is in flight: the adapter
		// cancels that execution id and throws AbortError; nothing is called.
		e.p.run(`gen.reset(); gen.onInvocationStarted = () => gen.stop();`)
		requests, mcpCalls := len(e.llm.requests()), len(e.mcp.toolCalls())
		e.llm.script(calls(toolCall{"n", "mcp__Demo__echo", `{"text":"never"}`}))
		from := len(e.b.seenInvokes())
		r := e.generate("Stop at once", false)
		if r.Status != "aborted" || r.Error == nil || r.Error.Name != "AbortError" {
			t.Errorf("generation ended %s with %+v; want an AbortError", r.Status, r.Error)
		}
		// The cancel is fire-and-forget: the generation may end first.
		waitUntil(t, "the cancel frame", func() bool { return len(e.b.legacyFrames(from)) == 3 })
		wantLegacyFrames(t, e.b.legacyFrames(from), cList, cStart, cCancel)
		wantSaved(t, r, "user")
		if n := len(e.mcp.toolCalls()) - mcpCalls; n != 0 {
			t.Errorf("the MCP server got %d calls; want none", n)
		}
		if n := len(e.llm.requests()) - requests; n != 1 {
			t.Errorf("the model got %d requests; want 1", n)
		}
		if w := r.warnings(); len(w) != 0 {
			t.Errorf("warnings %+v", w)
		}
	})

	t.Run("after a confirmed batch", func(t *testing.T) {
		e.p.run(`gen.reset(); gen.onInvocationComplete = () => gen.stop();`)
		requests := len(e.llm.requests())
		e.llm.script(calls(toolCall{"k", "mcp__Demo__echo", `{"text":"kept"}`}))
		from := len(e.b.seenInvokes())
		r := e.generate("Stop after it", false)
		if r.Status != "stopped" || r.Error != nil {
			t.Errorf("generation ended %s with %+v; want stopped after saving", r.Status, r.Error)
		}
		wantLegacyFrames(t, e.b.legacyFrames(from), cList, cStart, cCall)
		wantSaved(t, r, "user", "assistant+calls", "tool")
		if len(r.Chat) == 3 {
			wantPretty(t, "the saved tool row", r.Chat[2].Mes, echoOutcome("kept"))
		}
		if n := len(e.llm.requests()) - requests; n != 1 {
			t.Errorf("the model got %d requests; want 1 (no recursion after Stop)", n)
		}
		if w := r.warnings(); len(w) != 0 {
			t.Errorf("warnings %+v", w)
		}
	})

	t.Run("between calls", func(t *testing.T) {
		e.p.run(`gen.reset(); gen.onInvocationComplete = () => gen.stop();`)
		requests, mcpCalls := len(e.llm.requests()), len(e.mcp.toolCalls())
		e.llm.script(calls(toolCall{"a", "mcp__Demo__echo", `{"text":"a"}`}, toolCall{"b", "mcp__Demo__echo", `{"text":"b"}`}))
		from := len(e.b.seenInvokes())
		r := e.generate("Stop in between", false)
		if r.Status != "aborted" || r.Error == nil || r.Error.Name != "AbortError" {
			t.Errorf("generation ended %s with %+v; want an AbortError", r.Status, r.Error)
		}
		wantLegacyFrames(t, e.b.legacyFrames(from), cList, cStart, cCall)
		wantSaved(t, r, "user")
		if n := len(e.mcp.toolCalls()) - mcpCalls; n != 1 {
			t.Errorf("the MCP server got %d calls; want the first only", n)
		}
		if n := len(e.llm.requests()) - requests; n != 1 {
			t.Errorf("the model got %d requests; want 1", n)
		}
		if w := r.warnings(); len(w) != 0 {
			t.Errorf("warnings %+v", w)
		}
	})
}

// An unknown outcome ends the generation with LegacyMcpOutcomeUnknownError:
// the persistent warning, nothing of the batch saved, no retry and no
// second request. Here the MCP server drops the connection of a tools/call
// it received (mcp.call_response_failed).
func TestLegacyOutcomeUnknown(t *testing.T) {
	e := newLegacyEnv(t, dyingOn("slow"), "auto", map[string]string{"echo": "allow", "slow": "allow"})
	e.llm.script(calls(toolCall{"e", "mcp__Demo__echo", `{"text":"before"}`}, toolCall{"d", "mcp__Demo__slow", `{}`}))
	from := len(e.b.seenInvokes())
	r := e.generate("Break it", false)
	wantOutcomeUnknown(t, r, "mcp.call_response_failed", "The tool response could not be confirmed")
	wantLegacyFrames(t, e.b.legacyFrames(from), cList, cStart, cCall, cStart, cCall)
	if n := len(e.llm.requests()); n != 1 {
		t.Errorf("the model got %d requests; want 1", n)
	}
	if mc := e.mcp.toolCalls(); len(mc) != 2 || mc[1].Tool != "slow" {
		t.Errorf("the MCP server got %+v; want echo then one slow (no retry)", mc)
	}
}

// The page's socket to the backend drops while call_legacy_mcp_tool is in
// flight: the call was sent and the backend cancels it, so its outcome is
// unknown and the generation must end as for any unknown outcome
// (LegacyMcpOutcomeUnknownError, the persistent warning, nothing saved).
// The shim rejects the in-flight command with mcp.host_connection_lost;
// the adapter turns that rejection into LegacyMcpOutcomeUnknownError.
func TestLegacyConnectionLost(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"slow": "allow"})
	e.llm.script(calls(toolCall{"s", "mcp__Demo__slow", `{"ms":30000}`}))
	from := len(e.b.seenInvokes())
	e.start("Lose the socket")
	waitUntil(t, "the slow tools/call at the MCP server", func() bool { return len(e.mcp.toolCalls()) == 1 })
	if n := e.b.dropSockets(); n != 1 {
		t.Fatalf("dropped %d sockets; want the page's one", n)
	}
	r := e.finish()
	wantOutcomeUnknown(t, r, jsapi.CodeHostConnectionLost, "")
	wantLegacyFrames(t, e.b.legacyFrames(from)[:3], cList, cStart, cCall)
	if n := len(e.llm.requests()); n != 1 {
		t.Errorf("the model got %d requests; want 1", n)
	}
	waitUntil(t, "the slow tools/call to end at the MCP server", func() bool { c := e.mcp.toolCalls()[0]; return c.Gone || c.Done })
	if c := e.mcp.toolCalls()[0]; !c.Gone {
		t.Errorf("the MCP server's slow call %+v; want it abandoned by the backend", c)
	}
}

// A root whose listing fails (the backend is gone) gets an empty context:
// the error toast, no MCP tool advertised, and the local tools and the
// generation go on.
func TestLegacyListingFails(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow"})
	e.p.run(`gen.ToolManager.registerFunctionTool({ name: 'local_time', description: 'The time', parameters: { type: 'object', properties: {} }, action: () => 'noon' });`)
	e.b.stop()
	e.p.run(`await tt.until((s) => s !== 'open', 'the bridge to see the backend go');`)
	e.llm.script(calls(toolCall{"t", "local_time", `{}`}), reply{Text: "It is noon."})
	r := e.generate("What time is it?", true)
	if r.Status != "done" || r.Error != nil {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if len(reqs) != 2 || !slices.Equal(reqs[0].toolNames(), []string{"local_time"}) || reqs[1].toolMessages()["t"] != "noon" {
		t.Errorf("the model got %d requests, tools %v", len(reqs), reqs[0].toolNames())
	}
	wantSaved(t, r, "user", "assistant+calls", "tool", "assistant")
	var errs []string
	for _, ts := range r.Toasts {
		if ts.Level == "error" {
			errs = append(errs, ts.Title+": "+ts.Text)
		}
	}
	if want := []string{"MCP tools unavailable: MCP tools are unavailable for this generation. Local tools and normal generation are unaffected."}; !slices.Equal(errs, want) {
		t.Errorf("error toasts %q; want %q", errs, want)
	}
}

// auditEntries reads the audit log from the page (api.mcp.audit.list).
func (e *legacyEnv) auditEntries(input map[string]any) []jsapi.McpAuditEntry {
	return evalJS[jsapi.McpAuditList](e.p, `return await tt.mcp.audit.list(%s);`, input).Entries
}

// auditFileLines returns the lines of the backend's audit files, oldest
// first (monthly files, none sealed in a test).
func (e *legacyEnv) auditFileLines(t *testing.T) []string {
	t.Helper()
	return e.b.auditFileLines(t)
}

// auditFileLines returns the lines of the backend's audit files, oldest first.
func (b *backend) auditFileLines(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(b.audit.Dir(), "*.jsonl"))
	slices.Sort(files)
	var lines []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...)
	}
	return lines
}

// Every tools/call of a generation and of the Manager's test console is in
// the audit file once, and api.mcp.audit.list returns it newest first: a
// model call that ran, one refused by the permission re-check, one whose
// outcome is unknown, and a test call. An alias the hooks removed never
// reaches the backend, so it is no call of ttmcp's (nothing recorded).
func TestLegacyAuditRecordsEveryCall(t *testing.T) {
	e := newLegacyEnv(t, nil, "auto", map[string]string{"echo": "allow", "add": "ask", "slow": "allow"})
	e.p.run(`
		gen.hooks.push(async (data, { depth }) => {
			if (depth === 0) await tt.mcp.tools.setPermission({ registrationId: %s, nativeName: 'add', permission: 'off' });
		});`, e.id)
	e.llm.script(
		calls(toolCall{"a", "mcp__Demo__echo", `{"text":"secret words"}`}, toolCall{"b", "mcp__Demo__add", `{"a":1,"b":2}`}),
		reply{Text: "done"},
	)
	if r := e.generate("Go", false); r.Status != "done" {
		t.Fatalf("generation ended %s with %+v", r.Status, r.Error)
	}
	e.p.run(`gen.reset();`)
	e.llm.script(calls(toolCall{"s", "mcp__Demo__slow", `{"ms":30000}`}))
	e.start("Wait")
	waitUntil(t, "the slow tools/call at the MCP server", func() bool { return len(e.mcp.toolCalls()) == 2 })
	e.p.run(`gen.stop();`)
	if r := e.finish(); r.Error == nil || r.Error.Name != "LegacyMcpOutcomeUnknownError" {
		t.Fatalf("stopped generation ended %s with %+v", r.Status, r.Error)
	}
	e.p.run(`await tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"t"}' });`, e.id)

	type row struct{ Source, Name, Permission, Approval, Outcome, Code, Kind string }
	want := []row{
		{"test", "echo", "allow", "manual", "known_response", "", "tool_result"},
		{"model", "slow", "allow", "none", "outcome_unknown", "mcp.call_cancelled", ""},
		{"model", "add", "off", "none", "not_sent", "mcp.call_permission_off", ""},
		{"model", "echo", "allow", "none", "known_response", "", "tool_result"},
	}
	entries := e.auditEntries(map[string]any{"registrationId": e.id})
	var got []row
	for _, en := range entries {
		got = append(got, row{en.Source, en.NativeName, en.Permission, en.Approval, en.Outcome, en.Code, en.ResponseKind})
		if en.RegistrationID != e.id || en.ServerDisplayName != "Demo" {
			t.Errorf("entry %+v; want registration %s Demo", en, e.id)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit.list:\n%+v\nwant newest first:\n%+v", got, want)
	}
	n, sum := len(`{"text":"secret words"}`), sha256.Sum256([]byte(`{"text":"secret words"}`))
	if last := entries[len(entries)-1]; last.ArgumentsBytes != n || last.ArgumentsSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("echo's arguments recorded as %d %s", last.ArgumentsBytes, last.ArgumentsSHA256)
	}
	lines := e.auditFileLines(t)
	if len(lines) != len(want) {
		t.Fatalf("the audit file holds %d lines; want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, line := range lines {
		if strings.Contains(line, "secret") {
			t.Errorf("the arguments reached the audit file: %s", line)
		}
		var en jsapi.McpAuditEntry
		err := json.Unmarshal([]byte(line), &en)
		if en.Kind == "" {
			en.Kind = jsapi.AuditKindToolCall // a tool call's line names no kind (as before there were others)
		}
		if err != nil || !reflect.DeepEqual(en, entries[len(entries)-1-i]) {
			t.Errorf("line %d %s; want the entry %+v", i+1, line, entries[len(entries)-1-i])
		}
	}
	if page := e.auditEntries(map[string]any{"limit": 2, "before": entries[1].Time}); len(page) != 2 || !reflect.DeepEqual(page[0], entries[2]) || !reflect.DeepEqual(page[1], entries[3]) {
		t.Errorf("the page before %s: %+v", entries[1].Time, page)
	}
}

// dyingOn is the demo MCP server, except that it drops the connection of a
// tools/call of tool once it has read it: the call was sent, its outcome
// is unknown (mcp.call_response_failed).
func dyingOn(tool string) http.Handler {
	demoH := demo.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) && bytes.Contains(body, []byte(`"name":"`+tool+`"`)) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
				return
			}
		}
		demoH.ServeHTTP(w, r)
	})
}
