package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// callServer is a go-sdk server (stateless: every version) whose tools run
// the given handlers.
func callServer(t *testing.T, tools map[*mcp.Tool]mcp.ToolHandler) (string, *recorder) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "calls", Version: "1"}, nil)
	for tool, h := range tools {
		s.AddTool(tool, h)
	}
	ts, rec := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	return ts.URL, rec
}

func wantOutcome(t *testing.T, o domain.CallOutcome, outcome domain.Outcome, code string) {
	t.Helper()
	if o.Outcome != outcome || o.Code != code {
		t.Fatalf("outcome %s %s (%s), want %s %s", o.Outcome, o.Code, o.Message, outcome, code)
	}
}

func callGateway(t testing.TB, wait time.Duration) *Gateway {
	return newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: wait, CloseTimeout: 200 * time.Millisecond})
}

// A 2026 call takes its Mcp-Param headers from the catalog's schema, so a
// warm call is its one request (no tools/list first); it keeps custom
// headers on every request and sends the arguments exactly.
func TestModernCallHeadersAndArguments(t *testing.T) {
	var gotArgs json.RawMessage
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer"}}}`)
	forecast := &mcp.Tool{Name: "forecast", InputSchema: schema}
	url, rec := callServer(t, map[*mcp.Tool]mcp.ToolHandler{forecast: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		gotArgs = req.Params.Arguments
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "rainy"}, &mcp.ImageContent{Data: []byte("png!"), MIMEType: "image/png"}}}, nil
	}})
	r := registration(t, url, domain.ProtocolAuto, map[string]string{"X-Api-Key": "k"})
	o := callGateway(t, 5*time.Second).Call(context.Background(), r, domain.ToolCall{NativeName: "forecast", InputSchema: schema,
		Arguments: json.RawMessage(`{"region":"us-east-1","n":9007199254740993}`)})
	wantOutcome(t, o, domain.OutcomeKnownResponse, "")
	res := o.Result
	if !res.IsError || len(res.TextBlocks) != 1 || res.TextBlocks[0] != (domain.TextBlock{Index: 0, Text: "rainy"}) ||
		len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != CodeCallContentUnsupported || *res.Diagnostics[0].ContentIndex != 1 ||
		res.Diagnostics[0].Message != "Image content (image/png, 8 encoded bytes) is not supported" {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(string(gotArgs), "9007199254740993") {
		t.Fatalf("arguments arrived as %s", gotArgs)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, m := range rec.methods {
		if rec.headers[i].Get("X-Api-Key") != "k" {
			t.Errorf("%s without the custom header", m)
		}
		if m == "tools/call" {
			h := rec.headers[i]
			if h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "forecast" || h.Get("Mcp-Param-Region") != "us-east-1" {
				t.Errorf("call headers %v", h)
			}
		}
	}
	if !slices.Equal(rec.methods, []string{"server/discover", "tools/call"}) {
		t.Fatalf("requests %v, want server/discover and the call", rec.methods)
	}
}

// HeaderMismatch (-32020), which SEP-2243 has the server answer before it
// runs anything, is the one answer after which a call is sent again: the
// tool's current schema is listed and the call sent once more with its
// headers. Whatever happens, the tool runs at most once and the call is
// sent at most twice.
func TestHeaderMismatchListsAndSendsOnce(t *testing.T) {
	current := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	stale := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Zone"}}}`)
	for _, tt := range []struct {
		name         string
		schema       json.RawMessage // what the catalog holds
		list         func(w http.ResponseWriter, r *http.Request) bool
		mismatchAll  bool // the server refuses every call's headers
		lists, calls int
		runs         int32
		code         int32 // the server error expected, 0 for a result
	}{
		{name: "the catalog's schema is current", schema: current, calls: 1, runs: 1},
		{name: "no schema known", calls: 2, lists: 1, runs: 1},
		{name: "the catalog's schema is stale", schema: stale, calls: 2, lists: 1, runs: 1},
		{name: "the listing fails", list: func(w http.ResponseWriter, r *http.Request) bool {
			reply(w, r, `{"tools":[],"nextCursor":"same"}`) // a cursor cycle
			return true
		}, calls: 1, lists: 2, code: codeHeaderMismatch},
		{name: "the tool is not listed", list: func(w http.ResponseWriter, r *http.Request) bool {
			reply(w, r, `{"tools":[]}`)
			return true
		}, calls: 1, lists: 1, code: codeHeaderMismatch},
		{name: "refused again", mismatchAll: true, calls: 2, lists: 1, code: codeHeaderMismatch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			s := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "forecast", InputSchema: current}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				runs.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil
			})
			var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
			if tt.list != nil {
				h = intercept(h, "tools/list", func(w http.ResponseWriter, r *http.Request) { tt.list(w, r) })
			}
			if tt.mismatchAll {
				h = intercept(h, "tools/call", func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusBadRequest)
					replyError(w, r, codeHeaderMismatch, "header mismatch: missing Mcp-Param-Region header")
				})
			}
			ts, rec := serve(t, h)
			o := callGateway(t, 5*time.Second).Call(context.Background(), registration(t, ts.URL, domain.Protocol20260728, nil),
				domain.ToolCall{NativeName: "forecast", InputSchema: tt.schema, Arguments: json.RawMessage(`{"region":"eu-west-1"}`)})
			wantOutcome(t, o, domain.OutcomeKnownResponse, "")
			switch {
			case tt.code == 0 && (o.Result == nil || len(o.Result.TextBlocks) != 1 || o.Result.TextBlocks[0].Text != "sunny"):
				t.Fatalf("result %+v", o)
			case tt.code != 0 && (o.ServerError == nil || o.ServerError.Code != tt.code):
				t.Fatalf("outcome %+v, want the server's error %d", o, tt.code)
			}
			if got := runs.Load(); got != tt.runs {
				t.Fatalf("the tool ran %d times, want %d", got, tt.runs)
			}
			if calls, lists := rec.count("tools/call"), rec.count("tools/list"); calls != tt.calls || lists < min(tt.lists, 1) || lists > tt.lists {
				t.Fatalf("%d calls and %d lists: %v", calls, lists, rec.seen())
			}
		})
	}
}

func TestLegacyCallSkipsMetadataAndProjectsStructuredContent(t *testing.T) {
	add := &mcp.Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)}
	url, rec := callServer(t, map[*mcp.Tool]mcp.ToolHandler{add: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3"}}, StructuredContent: map[string]any{"z": 1, "a": "<b>", "big": json.Number("12345678901234567890")}}, nil
	}})
	o := callGateway(t, 5*time.Second).Call(context.Background(), registration(t, url, domain.Protocol20250618, nil), domain.ToolCall{NativeName: "add", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeKnownResponse, "")
	want := "{\n  \"a\": \"<b>\",\n  \"big\": 12345678901234567890,\n  \"z\": 1\n}"
	if o.Result.StructuredJSON == nil || *o.Result.StructuredJSON != want || o.Result.IsError {
		t.Fatalf("structured %v", o.Result.StructuredJSON)
	}
	if rec.count("tools/list") != 0 || rec.count("tools/call") != 1 {
		t.Fatalf("requests %v", rec.seen())
	}
}

// A 2026 call of a tool the server does not have is sent (there is no
// tools/list before it any more): the server's answer is the outcome.
func TestModernCallOfAnAbsentToolIsTheServersAnswer(t *testing.T) {
	url, rec := callServer(t, map[*mcp.Tool]mcp.ToolHandler{objectTool("other"): nil})
	o := callGateway(t, 5*time.Second).Call(context.Background(), registration(t, url, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "missing", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeKnownResponse, "")
	if o.ServerError == nil || !strings.Contains(o.ServerError.Message, "missing") || rec.count("tools/list") != 0 {
		t.Fatalf("outcome %+v, requests %v", o, rec.seen())
	}
}

// slowTool runs until its context ends or release is closed, announcing
// itself on started.
func slowTool(started chan<- struct{}, release <-chan struct{}) mcp.ToolHandler {
	return func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
		}
	}
}

func TestCancelAndTimeoutAfterTheWriteAreUnknown(t *testing.T) {
	for _, tt := range []struct {
		name   string
		wait   time.Duration
		cancel bool
		code   string
	}{
		{"cancelled", 5 * time.Second, true, CodeCallCancelled},
		{"timed out", 200 * time.Millisecond, false, CodeCallTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			started, release := make(chan struct{}, 1), make(chan struct{})
			defer close(release)
			url, rec := callServer(t, map[*mcp.Tool]mcp.ToolHandler{objectTool("slow"): slowTool(started, release)})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() { <-started; cancel() }()
			}
			o := callGateway(t, tt.wait).Call(ctx, registration(t, url, domain.Protocol20251125, nil), domain.ToolCall{NativeName: "slow", Arguments: json.RawMessage(`{}`)})
			wantOutcome(t, o, domain.OutcomeUnknown, tt.code)
			if rec.count("tools/call") != 1 {
				t.Fatalf("requests %v", rec.seen())
			}
		})
	}
}

func TestCancelBeforeTheWriteIsNotSent(t *testing.T) {
	var release chan struct{} = make(chan struct{})
	ts, rec := serveHanging(t, func(wait func(*http.Request)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wait(r) })
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	o := callGateway(t, 5*time.Second).Call(ctx, registration(t, ts.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "slow", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeCallCancelledBeforeSend)
	if rec.count("tools/call") != 0 {
		t.Fatal("a call was sent")
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	o = callGateway(t, time.Second).Call(done, registration(t, ts.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "slow", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeCallCancelledBeforeSend)
}

// Fakes answer tools/call in ways go-sdk servers do not.
func TestCallResponses(t *testing.T) {
	jsonReply := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
	tests := []struct {
		name    string
		onCall  func(w http.ResponseWriter, id string)
		outcome domain.Outcome
		code    string
		check   func(t *testing.T, o domain.CallOutcome)
	}{
		{"json-rpc error on HTTP 400", func(w http.ResponseWriter, id string) {
			jsonReply(w, 400, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"fixture invalid params","data":{ "field" : "region" }}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			if e := o.ServerError; e == nil || e.Code != -32602 || e.Message != "fixture invalid params" || *e.DataJSON != `{"field":"region"}` {
				t.Fatalf("server error %+v", o)
			}
		}},
		{"unknown content type stays known", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"video","uri":"x"},{"type":"text","text":"t"},{"type":"resource_link","uri":"file:///a","name":"a","size":12},{"type":"resource","resource":{"uri":"x:y","text":"abc"}},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}],"_meta":{"k":1}}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			r := o.Result
			msgs := []string{}
			for _, d := range r.Diagnostics {
				msgs = append(msgs, d.Message)
			}
			want := []string{"Unknown content type is not supported", "Resource link (12 bytes) is not supported",
				"Embedded resource content (3 encoded bytes) is not supported", "Audio content (audio/wav, 4 encoded bytes) is not supported", "Result metadata is not supported"}
			if fmt.Sprint(msgs) != fmt.Sprint(want) || len(r.TextBlocks) != 1 || r.TextBlocks[0].Index != 1 {
				t.Fatalf("result %+v / %q", r, msgs)
			}
			// and the link and the embedded resource are kept for the user
			if len(r.Resources) != 2 || r.Resources[0].Index != 2 || *r.Resources[0].Block.URI != "file:///a" || *r.Resources[0].Block.Size != 12 ||
				r.Resources[1].Index != 3 || r.Resources[1].Block.Resource.URI != "x:y" || *r.Resources[1].Block.Resource.Text != "abc" || !r.Resources[1].Block.Resource.IsText {
				t.Fatalf("resources %+v", r.Resources)
			}
		}},
		{"resource blocks that do not check out are only reported", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"resource_link","uri":"relative/a","name":"a"},{"type":"resource_link","uri":"file:///b"},`+
				`{"type":"resource","resource":{"uri":"x:y","text":"a","blob":"AAAA"}},{"type":"resource","resource":{"uri":"x:z","blob":"not base64!"}},{"type":"resource","resource":{"uri":"x:w","blob":"AAAA","mimeType":"image/png"}}]}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			r := o.Result
			if len(r.Diagnostics) != 5 || len(r.Resources) != 1 || r.Resources[0].Index != 4 || r.Resources[0].Block.Resource.Size != 3 || r.Resources[0].Block.Resource.IsText {
				t.Fatalf("result %+v", r)
			}
		}},
		{"input required", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"input_required","inputRequests":{}}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			if o.Unsupported == nil || o.Unsupported.ResponseType != "input_required" {
				t.Fatalf("%+v", o)
			}
		}},
		{"a task", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"task":{"taskId":"t1","status":"working"}}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			if o.Unsupported == nil || o.Unsupported.ResponseType != "task" {
				t.Fatalf("%+v", o)
			}
		}},
		{"not a tool result", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"answer":42}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, o domain.CallOutcome) {
			if o.Unsupported == nil || o.Unsupported.ResponseType != "other" {
				t.Fatalf("%+v", o)
			}
		}},
		{"malformed JSON", func(w http.ResponseWriter, id string) { jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{`) },
			domain.OutcomeUnknown, CodeCallResponseFailed, nil},
		{"5 MiB response", func(w http.ResponseWriter, id string) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 5<<20)+`"}]}}`)
		}, domain.OutcomeUnknown, CodeCallResponseFailed, func(t *testing.T, o domain.CallOutcome) {
			if !strings.Contains(o.Message, "4194304 bytes") {
				t.Fatalf("message %q", o.Message)
			}
		}},
		{"dies mid-response", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "500")
			w.WriteHeader(200)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[`)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, domain.OutcomeUnknown, CodeCallResponseFailed, nil},
		{"500 after the write", func(w http.ResponseWriter, id string) { http.Error(w, "boom", 500) },
			domain.OutcomeUnknown, CodeCallResponseFailed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{version: "2025-11-25", onCall: func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ []byte) { tt.onCall(w, string(id)) }}
			ts, rec := serve(t, f)
			// A generous wait: none of these answers is late, but 5 MiB
			// through the race detector on a loaded machine can take 6 s.
			o := callGateway(t, time.Minute).Call(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`)})
			wantOutcome(t, o, tt.outcome, tt.code)
			if tt.check != nil {
				tt.check(t, o)
			}
			if n := rec.count("tools/call"); n != 1 {
				t.Fatalf("%d tools/call requests", n)
			}
		})
	}
}

func TestCallPreparationFailuresAreNotSent(t *testing.T) {
	url, rec := callServer(t, map[*mcp.Tool]mcp.ToolHandler{objectTool("a"): nil})
	for _, tt := range []struct {
		headers map[string]string
		code    string
	}{
		{map[string]string{"bad name": "x"}, CodeCallHeadersInvalid},
		{map[string]string{"Accept": "text/html"}, CodeCallInitializeFailed},
	} {
		o := callGateway(t, time.Second).Call(context.Background(), registration(t, url, domain.ProtocolAuto, tt.headers), domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)})
		wantOutcome(t, o, domain.OutcomeNotSent, tt.code)
	}
	noTools, _ := serve(t, &fake{version: "2025-06-18", noTools: true})
	o := callGateway(t, time.Second).Call(context.Background(), registration(t, noTools.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeCallToolsMissing)
	down, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }))
	o = callGateway(t, time.Second).Call(context.Background(), registration(t, down.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeCallInitializeFailed)
	if rec.count("tools/call") != 0 {
		t.Fatalf("requests %v", rec.seen())
	}
}

// intercept serves a go-sdk handler but lets a test answer one JSON-RPC
// method itself.
func intercept(next http.Handler, method string, answer func(w http.ResponseWriter, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == method {
			answer(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// replyError answers a JSON-RPC request with an error.
func replyError(w http.ResponseWriter, r *http.Request, code int, message string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	msg, _ := json.Marshal(message)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, req.ID, code, msg)
}

// reply answers a JSON-RPC request with result.
func reply(w http.ResponseWriter, r *http.Request, result string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
}

func modernHandler(tools ...*mcp.Tool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "modern", Version: "1"}, nil)
	for _, tool := range tools {
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// Every not_sent code of the gateway, from a real server situation. Only
// the timeout cases run with short bounds: the others must not turn into a
// timeout on a loaded machine (a cursor cycle takes several round trips).
func TestNotSentCodes(t *testing.T) {
	hasty := newGateway(t, Config{StartupTimeout: 300 * time.Millisecond, ListTimeout: 300 * time.Millisecond, CallWait: time.Second, CloseTimeout: 100 * time.Millisecond})
	patient := newGateway(t, Config{StartupTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, CallWait: time.Second, CloseTimeout: 100 * time.Millisecond})
	tests := []struct {
		name    string
		handler func(wait func(*http.Request)) http.Handler
		tool    string
		code    string
	}{
		{"startup never completes", func(wait func(*http.Request)) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wait(r) })
		}, "a", CodeCallInitializeTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, rec := serveHanging(t, tt.handler)
			gw := patient
			if tt.code == CodeCallInitializeTimeout {
				gw = hasty
			}
			o := gw.Call(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: tt.tool, Arguments: json.RawMessage(`{}`)})
			wantOutcome(t, o, domain.OutcomeNotSent, tt.code)
			if rec.count("tools/call") != 0 {
				t.Fatalf("a call was sent: %v", rec.seen())
			}
		})
	}
}

// A server that goes away between the handshake and the call: the request
// is never written, so the call was not queued. Every answer closes its
// connection, and the listener closes before the handshake's last answer,
// so the call finds nothing to write to.
func TestCallNotQueuedWhenTheServerIsGone(t *testing.T) {
	f := &fake{version: "2025-11-25"}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		w.Header().Set("Connection", "close")
		if bytes.Contains(body, []byte(`"notifications/initialized"`)) {
			ts.Listener.Close() // no new connections from now on
		}
		f.ServeHTTP(w, r)
	})
	ts.Start()
	defer ts.Close()
	o := callGateway(t, time.Second).Call(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil), domain.ToolCall{NativeName: "a", Arguments: json.RawMessage(`{}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeCallNotQueued)
}

// responseMessages reads a JSON body as one message and an SSE body as the
// data of each event, as go-sdk reads them; what is not JSON is left to
// the decoders of its callers.
func TestResponseMessages(t *testing.T) {
	for _, tt := range []struct {
		name, contentType, body string
		want                    []string
	}{
		{"json", "application/json", `{"id":1}`, []string{`{"id":1}`}},
		{"one event", "text/event-stream", "event: message\nid: 1\ndata: {\"id\":1}\n\n", []string{`{"id":1}`}},
		{"media type parameters", "Text/Event-Stream; charset=utf-8", "data: {\"id\":1}\n\n", []string{`{"id":1}`}},
		{"events in order", "text/event-stream", "data: {\"method\":\"x\"}\n\ndata: {\"id\":1}\n\n", []string{`{"method":"x"}`, `{"id":1}`}},
		{"lines joined", "text/event-stream", "data: {\"id\":\ndata:1}\n\n", []string{"{\"id\":\n1}"}},
		{"crlf", "text/event-stream", "data: {\"id\":1}\r\n\r\ndata:{\"id\":2}\r\n", []string{`{"id":1}`, `{"id":2}`}},
		{"one space dropped", "text/event-stream", "data:  {\"id\":1}\n\n", []string{` {"id":1}`}},
		{"no data", "text/event-stream", ": ping\n\nevent: x\n\ndata:\n\n", nil},
		{"cut short", "text/event-stream", "data: {\"id\":1", []string{`{"id":1`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			var got []string
			for _, m := range responseMessages(tt.contentType, body) {
				got = append(got, string(m))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("%q, want %q", got, tt.want)
			}
			if string(body) != tt.body {
				t.Fatalf("the body changed: %q", body)
			}
		})
	}
}

// A call stopped after its write tells the server so (notifications/cancelled)
// before its session goes, also on a session closed right after the call —
// a 2025 App or asking session (go-sdk sends the notification from a
// goroutine, so the session's DELETE could overtake it; found in the
// 2026-12-02 walk: 3 of 9 Stops never reached the server, whose tool ran
// on). The server's handler must hear the cancellation each time.
func TestCancelAfterTheWriteReachesTheServer(t *testing.T) {
	for _, tt := range []struct {
		name string
		ctx  func() context.Context
	}{
		{"kept session", context.Background},
		{"app session, closed after the call", func() context.Context {
			return domain.WithAppsRenderer(context.Background(), func() bool { return true })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			heard := make(chan struct{}, 16)
			started := make(chan struct{}, 1)
			slow := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				select {
				case <-ctx.Done():
					heard <- struct{}{}
					return nil, ctx.Err()
				case <-time.After(10 * time.Second):
					return &mcp.CallToolResult{}, nil
				}
			}
			// a stateful server: a stateless one cannot route a cancellation
			// to a request it serves on another HTTP request
			srv := mcp.NewServer(&mcp.Implementation{Name: "calls", Version: "1"}, nil)
			srv.AddTool(objectTool("slow"), slow)
			ts, rec := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			url := ts.URL
			g := callGateway(t, 5*time.Second)
			r := registration(t, url, domain.Protocol20251125, nil)
			const n = 8
			for i := range n {
				ctx, cancel := context.WithCancel(tt.ctx())
				go func() { <-started; cancel() }()
				o := g.Call(ctx, r, domain.ToolCall{NativeName: "slow", Arguments: json.RawMessage(`{}`)})
				cancel()
				wantOutcome(t, o, domain.OutcomeUnknown, CodeCallCancelled)
				select {
				case <-heard:
				case <-time.After(3 * time.Second):
					t.Fatalf("call %d: the server never heard the cancellation (requests %v)", i+1, rec.seen())
				}
			}
			if c := rec.count("notifications/cancelled"); c != n {
				t.Errorf("%d cancellations reached the server, want %d", c, n)
			}
		})
	}
}
