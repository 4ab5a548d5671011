package webtest

// End-to-end tests of discovery (issue 3) and test calls (issue 4) from
// the page: the real backend and the wasm shim in Chromium, reaching the
// demo MCP server (backend/demo) and a hand-written fake on loopback. The
// test-call tests are the JS contract of reference §1.5 and §9.6, asserted
// on the invoke frames the backend read and on what the MCP server got.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/jsapi"
)

// activeServer registers endpoint from the page, activates it and returns
// its id.
func activeServer(t *testing.T, p *page, endpoint, protocol string) string {
	t.Helper()
	return evalJS[string](p, `
		const s = await tt.mcp.servers.create({ displayName: 'Demo', endpoint: %s, protocolVersion: %s });
		await tt.mcp.servers.setState({ registrationId: s.id, state: 'active' });
		return s.id;`, endpoint, protocol)
}

// catalogPath is the catalog file of a registration.
func (b *backend) catalogPath(id string) string {
	return filepath.Join(b.root, "_tauritavern", "mcp", "catalogs", id+".json")
}

// callFrame is a test-call invoke frame the backend read.
type callFrame struct{ Command, CallID, Head string }

var callIDField = regexp.MustCompile(`"callId":"([^"]*)"`)

// callFrames returns the start/test/run/cancel frames read after the first
// `from` invoke frames.
func (b *backend) callFrames(from int) []callFrame {
	var out []callFrame
	for _, f := range b.seenInvokes()[from:] {
		switch f.Command {
		case jsapi.CmdStartTestCall, jsapi.CmdTestToolCall, jsapi.CmdRunTestCall, jsapi.CmdCancelTestCall:
			c := callFrame{Command: f.Command, Head: f.Head}
			if m := callIDField.FindStringSubmatch(f.Head); m != nil {
				c.CallID = m[1]
			}
			out = append(out, c)
		}
	}
	return out
}

// wantCallFrames checks the commands of frames, in order, all with one
// callId, and returns that id.
func wantCallFrames(t *testing.T, frames []callFrame, commands ...string) string {
	t.Helper()
	var got []string
	for _, f := range frames {
		got = append(got, f.Command)
	}
	if !slices.Equal(got, commands) {
		t.Fatalf("test-call frames read by the backend: %v; want %v\n%+v", got, commands, frames)
	}
	if len(frames) == 0 {
		return ""
	}
	id := frames[0].CallID
	for _, f := range frames {
		if f.CallID != id || !canonicalUUID.MatchString(id) {
			t.Fatalf("frames with callIds %+v; want one UUID in all of them", frames)
		}
	}
	return id
}

// outcome is McpCallOutcome as the page receives it.
type outcome struct {
	Outcome  string    `json:"outcome"`
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Response *response `json:"response"`
}

type response struct {
	Kind           string                    `json:"kind"`
	IsError        bool                      `json:"isError"`
	TextBlocks     []jsapi.McpTextBlock      `json:"textBlocks"`
	StructuredJSON *string                   `json:"structuredJson"`
	Diagnostics    []jsapi.McpCallDiagnostic `json:"diagnostics"`
}

// wantToolResult checks a known tool_result with text blocks only.
func wantToolResult(t *testing.T, what string, got outcome, isError bool, text string, structured *string) {
	t.Helper()
	r := got.Response
	if got.Outcome != jsapi.OutcomeKnownResponse || got.Code != "" || got.Message != "" || r == nil ||
		r.Kind != jsapi.ResponseToolResult || r.IsError != isError ||
		!slices.Equal(r.TextBlocks, []jsapi.McpTextBlock{{Index: 0, Text: text}}) ||
		r.Diagnostics == nil || len(r.Diagnostics) != 0 ||
		(structured == nil) != (r.StructuredJSON == nil) || structured != nil && *structured != *r.StructuredJSON {
		t.Errorf("%s: %+v (response %+v); want a known tool_result, isError %v, text block 0 %q, structuredJson %v",
			what, got, r, isError, text, strOrNil(structured))
	}
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func wantOutcome(t *testing.T, what string, got outcome, kind, code, message string) {
	t.Helper()
	if got.Outcome != kind || got.Code != code || got.Response != nil || !strings.HasPrefix(got.Message, message) {
		t.Errorf("%s: %+v; want %s %s with a message starting %q", what, got, kind, code, message)
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// ---------------------------------------------------------------- discovery

// 1. Discovery of the demo server from the page: the catalog as upstream
// projects it; discover is served from memory, then from disk after a
// restart, without a request to the server; refresh always asks it.
func TestDiscoverFromThePage(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	p := b.openHost(t)
	id := activeServer(t, p, mcp.endpoint(), "auto")

	type found struct {
		Result jsapi.McpDiscoveryResult
		Keys   []string
		// what the page sees: schemas and annotations are objects
		Objects bool
	}
	const discover = `
		const r = await tt.mcp.servers[%s](%s);
		const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
		return { result: r, keys: Object.keys(r).sort(),
			objects: r.tools.every((t) => isObj(t.inputSchema) && isObj(t.annotations) && (t.outputSchema === undefined || isObj(t.outputSchema))) };`
	first := evalJS[found](p, discover, "discover", id)
	r := first.Result
	lists := mcp.count("tools/list")
	if lists != 3 { // five tools, two per page
		t.Errorf("the demo server answered %d tools/list; want 3 pages", lists)
	}
	if want := []string{"diagnostics", "protocolVersion", "registrationId", "serverName", "serverVersion", "staleTools", "tools"}; !slices.Equal(first.Keys, want) {
		t.Errorf("result keys %v; want %v", first.Keys, want)
	}
	if !first.Objects {
		t.Errorf("inputSchema, outputSchema or annotations reached the page as something else than an object")
	}
	if r.RegistrationID != id || r.ProtocolVersion != "2026-07-28" || r.ServerName == nil || *r.ServerName != "ttmcp-demo" ||
		r.ServerVersion == nil || *r.ServerVersion != "1.0.0" || r.Diagnostics == nil || len(r.Diagnostics) != 0 ||
		r.StaleTools == nil || len(r.StaleTools) != 0 {
		t.Errorf("discovery: %s/%s %s %v %v diagnostics %+v stale %+v", r.RegistrationID, id, r.ProtocolVersion,
			strOrNil(r.ServerName), strOrNil(r.ServerVersion), r.Diagnostics, r.StaleTools)
	}
	type tool struct{ title, input, output, annotations string }
	want := map[string]tool{
		"add": {"Add", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
			`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`, `{"readOnlyHint":true,"idempotentHint":false}`},
		"echo": {"Echo", `{"type":"object","properties":{"text":{"type":"string","description":"What to echo"}},"required":["text"]}`, "", `{"readOnlyHint":true,"idempotentHint":false}`},
		"fail": {"Fail", `{"type":"object","properties":{"reason":{"type":"string"}}}`, "", `{}`},
		"forecast": {"Forecast", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["region"]}`,
			"", `{"readOnlyHint":true,"idempotentHint":false,"openWorldHint":false}`},
		"slow": {"Slow", `{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}}}`, "", `{}`},
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.NativeName)
		w, ok := want[tl.NativeName]
		if !ok {
			continue
		}
		if tl.ID != "mcp/"+id+":"+tl.NativeName || tl.Permission != jsapi.PermissionOff ||
			tl.Title == nil || *tl.Title != w.title || tl.Description == nil || *tl.Description == "" ||
			!sameJSON(tl.InputSchema, []byte(w.input)) || !sameJSON(tl.Annotations, []byte(w.annotations)) ||
			(w.output == "") != (len(tl.OutputSchema) == 0) || w.output != "" && !sameJSON(tl.OutputSchema, []byte(w.output)) {
			t.Errorf("tool %s: id %s, permission %s, title %v, description %v\n input %s\n output %s\n annotations %s",
				tl.NativeName, tl.ID, tl.Permission, strOrNil(tl.Title), strOrNil(tl.Description), tl.InputSchema, tl.OutputSchema, tl.Annotations)
		}
	}
	if !slices.Equal(names, []string{"add", "echo", "fail", "forecast", "slow"}) {
		t.Fatalf("tools %v; want add, echo, fail, forecast, slow in ToolId order", names)
	}
	if fi, err := os.Stat(b.catalogPath(id)); err != nil || fi.Size() == 0 {
		t.Errorf("catalog file %s: %v", b.catalogPath(id), err)
	}

	// discover again: from memory, nothing reaches the server.
	total := mcp.count("")
	again := evalJS[found](p, discover, "discover", map[string]string{"registrationId": id})
	if !reflect.DeepEqual(again.Result, r) {
		t.Errorf("second discover:\n%+v\nwant the first:\n%+v", again.Result, r)
	}
	if n := mcp.count("") - total; n != 0 {
		t.Errorf("a cached discover sent %d requests to the server; want none", n)
	}

	// refresh: the server again, every page.
	refreshed := evalJS[found](p, discover, "refresh", id)
	if n := mcp.count("tools/list") - lists; n != lists {
		t.Errorf("refresh sent %d tools/list; want %d", n, lists)
	}
	if !reflect.DeepEqual(refreshed.Result, r) {
		t.Errorf("refresh:\n%+v\nwant the first discovery:\n%+v", refreshed.Result, r)
	}

	// Restart on the same data root: discover reads the catalog file.
	b.stop()
	evalJS[string](p, `return await tt.until((s) => s !== 'open', 'the bridge to see the drop');`)
	b.start()
	evalJS[string](p, `return await tt.until((s) => s === 'open', 'the bridge to reopen');`)
	total = mcp.count("")
	disk := evalJS[found](p, discover, "discover", id)
	if n := mcp.count("") - total; n != 0 {
		t.Errorf("discover after a restart sent %d requests to the server; want none (catalog file)", n)
	}
	if !reflect.DeepEqual(disk.Result, r) {
		t.Errorf("discover from disk:\n%+v\nwant the first discovery:\n%+v", disk.Result, r)
	}
}

// 2. A paused registration: discover and refresh reject with
// mcp.server_paused (Conflict) and nothing reaches the server.
func TestDiscoverPausedRegistration(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	p := b.openHost(t)
	id := evalJS[string](p, `return (await tt.mcp.servers.create({ displayName: 'Paused', endpoint: %s })).id;`, mcp.endpoint())
	errs := evalJS[[]*jsError](p, `return [
		await tt.err(tt.mcp.servers.discover(%[1]s)),
		await tt.err(tt.mcp.servers.refresh(%[1]s)),
	];`, id)
	wantRejection(t, "discover of a paused registration", errs[0], "mcp.server_paused", jsapi.KindConflict)
	wantRejection(t, "refresh of a paused registration", errs[1], "mcp.server_paused", jsapi.KindConflict)
	if n := mcp.count(""); n != 0 {
		t.Errorf("the server got %d requests; want none", n)
	}
	if _, err := os.Stat(b.catalogPath(id)); !os.IsNotExist(err) {
		t.Errorf("catalog file of a paused registration: %v", err)
	}
}

// brokenServer is a hand-written MCP server (2025-06-18, JSON responses)
// that lists what a go-sdk server will not serve: a tool with an invalid
// output schema and two tools of one name. Its tools/call answers with its
// arguments as text and structured content whose keys are out of order.
func brokenServer(t *testing.T) *mcpServer {
	t.Helper()
	const tools = `[
		{"name":"good","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},
		{"name":"bad_output","inputSchema":{"type":"object"},"outputSchema":{"type":5}},
		{"name":"twin","inputSchema":{"type":"object"}},
		{"name":"twin","inputSchema":{"type":"object","properties":{"x":{"type":"integer"}}}}]`
	const structured = `{"z":1,"big":9007199254740993,"a":{"y":[1,{"d":"<&>","c":[]}],"b":null,"e":{}}}`
	return newMCPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusOK)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"0.1"}}`
		case "tools/list":
			result = `{"tools":` + tools + `}`
		case "tools/call":
			text, _ := json.Marshal(string(req.Params.Arguments))
			result = `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + structured + `}`
		default:
			w.WriteHeader(http.StatusAccepted) // notifications
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
}

// 3. Diagnostics and stale tools reach the page exactly: an invalid output
// schema keeps its tool without the schema, a duplicate name isolates the
// group, and a permission for a tool the catalog lacks (or isolated) is a
// stale tool. 4. A permission set before discovery shows on its tool.
func TestDiscoverDiagnosticsAndStaleTools(t *testing.T) {
	b := newBackend(t)
	mcp := brokenServer(t)
	p := b.openHost(t)
	id := activeServer(t, p, mcp.endpoint(), "2025-06-18")
	type found struct {
		Result    jsapi.McpDiscoveryResult
		DiagKeys  [][]string
		StaleKeys [][]string
	}
	got := evalJS[found](p, `
		const mcp = tt.mcp;
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'ghost', permission: 'allow' });
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'twin', permission: 'ask' });
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'good', permission: 'ask' });
		const r = await mcp.servers.discover(%[1]s);
		return { result: r, diagKeys: r.diagnostics.map((d) => Object.keys(d)), staleKeys: r.staleTools.map((s) => Object.keys(s)) };`, id)
	r := got.Result
	outputErr := domain.CompileSchema(json.RawMessage(`{"type":5}`))
	if outputErr == nil {
		t.Fatal(`{"type":5} compiles`)
	}
	wantDiags := []jsapi.McpDiagnostic{
		{Code: "mcp.tool_output_schema_invalid", NativeName: new("bad_output"),
			Message: strings.TrimSpace(fmt.Sprintf("Tool `bad_output` output schema is invalid: %v", outputErr))},
		{Code: "mcp.tool_duplicate_name", NativeName: new("twin"),
			Message: "Server returned 2 tools named `twin`; the whole name group was isolated"},
	}
	if !reflect.DeepEqual(r.Diagnostics, wantDiags) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", jsonText(r.Diagnostics), jsonText(wantDiags))
	}
	if want := [][]string{{"code", "nativeName", "message"}, {"code", "nativeName", "message"}}; !reflect.DeepEqual(got.DiagKeys, want) {
		t.Errorf("diagnostic keys %v; want %v", got.DiagKeys, want)
	}
	wantStale := []jsapi.McpStaleTool{{NativeName: "ghost", Permission: "allow"}, {NativeName: "twin", Permission: "ask"}}
	if !reflect.DeepEqual(r.StaleTools, wantStale) {
		t.Errorf("staleTools %+v; want %+v", r.StaleTools, wantStale)
	}
	if want := [][]string{{"nativeName", "permission"}, {"nativeName", "permission"}}; !reflect.DeepEqual(got.StaleKeys, want) {
		t.Errorf("staleTools keys %v; want %v", got.StaleKeys, want)
	}
	var tools []string
	for _, tl := range r.Tools {
		tools = append(tools, tl.NativeName+"="+tl.Permission)
		if tl.NativeName == "bad_output" && len(tl.OutputSchema) != 0 {
			t.Errorf("bad_output kept its invalid output schema %s", tl.OutputSchema)
		}
	}
	if want := []string{"bad_output=off", "good=ask"}; !slices.Equal(tools, want) {
		t.Errorf("tools %v; want %v", tools, want)
	}
	if r.ProtocolVersion != "2025-06-18" || r.ServerName == nil || *r.ServerName != "broken" {
		t.Errorf("negotiated %s with %v", r.ProtocolVersion, strOrNil(r.ServerName))
	}

	// setPermission, then discover (from memory) shows it.
	perms := evalJS[[]string](p, `
		await tt.mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'bad_output', permission: 'allow' });
		await tt.mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'good', permission: 'off' });
		const r = await tt.mcp.servers.discover(%[1]s);
		return [...r.tools.map((t) => t.nativeName + '=' + t.permission), ...r.staleTools.map((s) => 'stale ' + s.nativeName + '=' + s.permission)];`, id)
	if want := []string{"bad_output=allow", "good=off", "stale ghost=allow", "stale twin=ask"}; !slices.Equal(perms, want) {
		t.Errorf("after setPermission: %v; want %v", perms, want)
	}
	if n := mcp.count("tools/list"); n != 1 {
		t.Errorf("the server answered %d tools/list; want 1", n)
	}
}

func jsonText(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// ---------------------------------------------------------------- test calls

// 5. Known responses from the page: text, structured content (pretty,
// sorted, numbers exact), isError, a SEP-2243 header on 2026-07-28, and an
// integer beyond 2^53 that reaches the server unchanged.
func TestTestCallKnownResponses(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	broken := brokenServer(t)
	p := b.openHost(t)
	id := activeServer(t, p, mcp.endpoint(), "auto")
	fake := activeServer(t, p, broken.endpoint(), "2025-06-18")

	type results struct{ Echo, Add, Fail, Forecast, Big, Sorted outcome }
	// Discovered first, as the Manager does before its test console: the
	// catalog's schema gives the forecast call its Mcp-Param header.
	r := evalJS[results](p, `
		await tt.mcp.servers.discover(%[1]s);
		const call = (registrationId, nativeName, argumentsJson) => tt.mcp.tools.testCall({ registrationId, nativeName, argumentsJson });
		return {
			echo: await call(%[1]s, 'echo', '{"text":"hello"}'),
			add: await call(%[1]s, 'add', '{"a":2,"b":40}'),
			fail: await call(%[1]s, 'fail', '{"reason":"no luck"}'),
			forecast: await call(%[1]s, 'forecast', '{"region":"us-east-1","days":2}'),
			big: await call(%[1]s, 'echo', '{"text":"big","n":9007199254740993}'),
			sorted: await call(%[2]s, 'good', '{"q":"x","n":9007199254740993}'),
		};`, id, fake)
	wantToolResult(t, "echo", r.Echo, false, "hello", nil)
	wantToolResult(t, "add", r.Add, false, "42", new("{\n  \"sum\": 42\n}"))
	wantToolResult(t, "fail", r.Fail, true, "no luck", nil)
	wantToolResult(t, "forecast", r.Forecast, false, "us-east-1: sunny for 2 day(s)", nil)
	wantToolResult(t, "echo with a big integer", r.Big, false, "big", nil)
	wantToolResult(t, "a fake's unsorted structured content", r.Sorted, false, `{"q":"x","n":9007199254740993}`, new(`{
  "a": {
    "b": null,
    "e": {},
    "y": [
      1,
      {
        "c": [],
        "d": "<&>"
      }
    ]
  },
  "big": 9007199254740993,
  "z": 1
}`))

	// What the backend read and what the servers received.
	var tests []string
	for _, f := range b.callFrames(0) {
		if f.Command == jsapi.CmdRunTestCall {
			tests = append(tests, f.Head)
		}
	}
	if len(tests) != 6 || !strings.Contains(tests[4], `"argumentsJson":"{\"text\":\"big\",\"n\":9007199254740993}"`) {
		t.Errorf("test frames %q; want 6, the fifth with the big integer as typed", tests)
	}
	calls := mcp.toolCalls()
	var seen []string
	for _, c := range calls {
		seen = append(seen, c.Tool)
	}
	if !slices.Equal(seen, []string{"echo", "add", "fail", "forecast", "echo"}) {
		t.Fatalf("the demo server got tools/call of %v", seen)
	}
	if !strings.Contains(calls[4].Body, `"arguments":{"text":"big","n":9007199254740993}`) {
		t.Errorf("the demo server got %s; want the big integer unchanged", calls[4].Body)
	}
	if h := calls[3].Header; h.Get("Mcp-Param-Region") != "us-east-1" || h.Get("Mcp-Protocol-Version") != "2026-07-28" {
		t.Errorf("forecast headers %v; want Mcp-Param-Region us-east-1 on 2026-07-28", h)
	}
	if fc := broken.toolCalls(); len(fc) != 1 || !strings.Contains(fc[0].Body, `"arguments":{"q":"x","n":9007199254740993}`) {
		t.Errorf("the fake got %+v", fc)
	}
}

// 6, 7, 8, 9, 12. The AbortSignal and callId contract of reference §1.5,
// against the demo server.
func TestTestCallContract(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	p := b.openHost(t)
	id := activeServer(t, p, mcp.endpoint(), "2025-11-25")

	// 6. A pre-aborted signal: the local not_sent, no command at all.
	t.Run("pre-aborted", func(t *testing.T) {
		from, requests := len(b.seenInvokes()), mcp.count("")
		got := evalJS[outcome](p, `
			const c = new AbortController();
			c.abort();
			const out = await tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"x"}' }, { signal: c.signal });
			await tt.mcp.servers.list(); // read after anything the call sent
			return out;`, id)
		wantOutcome(t, "pre-aborted testCall", got, jsapi.OutcomeNotSent, jsapi.CodeCallCancelledBeforeSend, jsapi.MessageCallCancelledBeforeSend)
		if got.Message != jsapi.MessageCallCancelledBeforeSend {
			t.Errorf("message %q; want the local %q", got.Message, jsapi.MessageCallCancelledBeforeSend)
		}
		wantCallFrames(t, b.callFrames(from))
		if n := mcp.count("") - requests; n != 0 {
			t.Errorf("the server got %d requests", n)
		}
	})

	// 7. Abort before the start acknowledgement returns. Upstream's page
	// waits for the acknowledgement, so its call is never sent; ttmcp's
	// sends the start and the call as one run_mcp_test_call (issue 31), so
	// the abort is a cancel the backend orders after the start: the
	// outcome is the backend's and says what happened — not_sent if the
	// cancel came before anything was sent, else the call's — and the
	// server saw exactly what it says. Both happen: which one is a race on
	// the backend's side.
	t.Run("abort during start", func(t *testing.T) {
		from, requests := len(b.seenInvokes()), mcp.count("")
		calls := len(mcp.toolCalls())
		got := evalJS[outcome](p, `
			const c = new AbortController();
			const call = tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"x"}' }, { signal: c.signal });
			c.abort(); // synchronously: the acknowledgement cannot have arrived
			const out = await call;
			await tt.mcp.servers.list();
			return out;`, id)
		wantCallFrames(t, b.callFrames(from), jsapi.CmdRunTestCall, jsapi.CmdCancelTestCall)
		sent := len(mcp.toolCalls()) - calls
		switch got.Outcome {
		case jsapi.OutcomeNotSent:
			// cancelled before send: read while the start ran; not started:
			// the cancel released the start before the call came to it
			if got.Code != jsapi.CodeCallCancelledBeforeSend && got.Code != service.CodeCallNotStarted {
				t.Errorf("not_sent %+v", got)
			}
			// the tool request never left; the session's own requests may
			// have (the cancel came while the gateway connected)
			if sent != 0 {
				t.Errorf("not_sent, but the server got %d tools/call (%d requests)", sent, mcp.count("")-requests)
			}
		case jsapi.OutcomeKnownResponse, jsapi.OutcomeOutcomeUnknown:
			if sent != 1 {
				t.Errorf("%s, but the server got %d tools/call", got.Outcome, sent)
			}
		default:
			t.Errorf("outcome %+v", got)
		}
		t.Logf("aborted during start: %s %s", got.Outcome, got.Code)
	})

	// 8. Abort after dispatch: cancel with the same callId, and the
	// backend's outcome (outcome_unknown mcp.call_cancelled) comes back.
	t.Run("abort after dispatch", func(t *testing.T) {
		from, calls := len(b.seenInvokes()), len(mcp.toolCalls())
		p.run(`
			tt.ctl = new AbortController();
			tt.pending = tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'slow', argumentsJson: '{"ms":30000}' }, { signal: tt.ctl.signal });`, id)
		waitUntil(t, "the slow tools/call at the server", func() bool { return len(mcp.toolCalls()) > calls })
		if n := len(b.callFrames(from)); n != 1 {
			t.Fatalf("%d test-call frames read before the abort; want the run", n)
		}
		got := evalJS[outcome](p, `tt.ctl.abort(); return await tt.pending;`)
		wantOutcome(t, "testCall aborted after dispatch", got, jsapi.OutcomeOutcomeUnknown, "mcp.call_cancelled",
			"Stopped waiting for the tool response; the remote tool may have executed")
		wantCallFrames(t, b.callFrames(from), jsapi.CmdRunTestCall, jsapi.CmdCancelTestCall)
		waitUntil(t, "the slow tools/call to end at the server", func() bool { c := mcp.toolCalls()[calls]; return c.Gone || c.Done })
		if c := mcp.toolCalls()[calls]; c.Tool != "slow" || !c.Gone {
			t.Errorf("the server's tools/call %+v; want the slow call abandoned by the client", c)
		}
	})

	// 9. The input is captured when testCall is called.
	t.Run("input captured at call time", func(t *testing.T) {
		from, calls := len(b.seenInvokes()), len(mcp.toolCalls())
		got := evalJS[outcome](p, `
			const input = { registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"original"}' };
			const call = tt.mcp.tools.testCall(input);
			input.registrationId = %s;
			input.nativeName = 'fail';
			input.argumentsJson = '{"reason":"mutated"}';
			input.extra = true;
			return await call;`, id, unknownID)
		wantToolResult(t, "testCall after its input was mutated", got, false, "original", nil)
		frames := b.callFrames(from)
		wantCallFrames(t, frames, jsapi.CmdRunTestCall)
		want := fmt.Sprintf(`"args":{"dto":{"registrationId":"%s","nativeName":"echo","argumentsJson":"{\"text\":\"original\"}","callId":"%s"}}}`, id, frames[0].CallID)
		if !strings.HasSuffix(frames[0].Head, want) {
			t.Errorf("run frame %s; want it to end %s", frames[0].Head, want)
		}
		if c := mcp.toolCalls()[calls:]; len(c) != 1 || c[0].Tool != "echo" || !strings.Contains(c[0].Body, `"arguments":{"text":"original"}`) {
			t.Errorf("the server got %+v", c)
		}
	})

	// 12. A retry after an outcome is a new call, with a new callId.
	t.Run("retry uses a new callId", func(t *testing.T) {
		from := len(b.seenInvokes())
		got := evalJS[[]outcome](p, `
			const input = { registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"again"}' };
			return [await tt.mcp.tools.testCall(input), await tt.mcp.tools.testCall(input)];`, id)
		for i, o := range got {
			wantToolResult(t, fmt.Sprintf("call %d", i+1), o, false, "again", nil)
		}
		frames := b.callFrames(from)
		if len(frames) != 2 {
			t.Fatalf("frames %+v; want two runs", frames)
		}
		first := wantCallFrames(t, frames[:1], jsapi.CmdRunTestCall)
		second := wantCallFrames(t, frames[1:], jsapi.CmdRunTestCall)
		if first == second {
			t.Errorf("both calls used callId %s", first)
		}
	})
}

// 10. The WebSocket is lost while a sent call runs: the page gets
// outcome_unknown mcp.host_connection_lost, the backend cancels the call
// (the server sees its request abandoned), and nothing is replayed.
func TestTestCallConnectionLost(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	p := b.openHost(t)
	id := activeServer(t, p, mcp.endpoint(), "auto")
	const slowCall = `tt.pending = tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'slow', argumentsJson: '{"ms":30000}' });`

	// The TCP connection under the socket breaks (no close frame).
	from := len(b.seenInvokes())
	p.run(slowCall, id)
	waitUntil(t, "the slow tools/call at the server", func() bool { return len(mcp.toolCalls()) == 1 })
	if n := b.dropSockets(); n != 1 {
		t.Fatalf("dropped %d sockets; want the page's one", n)
	}
	got := evalJS[outcome](p, `return await tt.pending;`)
	wantOutcome(t, "testCall whose socket was lost", got, jsapi.OutcomeOutcomeUnknown, jsapi.CodeHostConnectionLost, "")
	waitUntil(t, "the slow tools/call to end at the server", func() bool { c := mcp.toolCalls()[0]; return c.Gone || c.Done })
	if c := mcp.toolCalls()[0]; !c.Gone {
		t.Errorf("the server's slow tools/call %+v; want it abandoned by the backend", c)
	}
	// The bridge reconnects; the call is not replayed.
	p.run(`await tt.until((s) => s === 'open', 'the bridge to reopen'); await tt.mcp.servers.list();`)
	wantCallFrames(t, b.callFrames(from), jsapi.CmdRunTestCall)
	if n := len(mcp.toolCalls()); n != 1 {
		t.Errorf("the server got %d tools/call; want 1 (no replay)", n)
	}

	// The backend shuts down. It cancels the socket's work while it closes
	// the socket with 1001, so the page hears either the close (the
	// host_connection_lost of the shim) or, first, the backend's own
	// outcome_unknown for the call it just cancelled: unknown either way.
	from = len(b.seenInvokes())
	p.run(slowCall, id)
	waitUntil(t, "the second slow tools/call at the server", func() bool { return len(mcp.toolCalls()) == 2 })
	b.cancel()
	got = evalJS[outcome](p, `return await tt.pending;`)
	b.wait()
	if got.Code != jsapi.CodeHostConnectionLost {
		t.Logf("testCall during shutdown: the backend's outcome arrived before the close: %+v", got)
		wantOutcome(t, "testCall during shutdown", got, jsapi.OutcomeOutcomeUnknown, "mcp.call_cancelled", "Stopped waiting for the tool response")
	} else {
		wantOutcome(t, "testCall during shutdown", got, jsapi.OutcomeOutcomeUnknown, jsapi.CodeHostConnectionLost, "")
	}
	wantCallFrames(t, b.callFrames(from), jsapi.CmdRunTestCall)
	waitUntil(t, "the second slow tools/call to end at the server", func() bool { c := mcp.toolCalls()[1]; return c.Gone || c.Done })
	if c := mcp.toolCalls()[1]; !c.Gone {
		t.Errorf("the server's second slow tools/call %+v; want it abandoned by the backend", c)
	}
}

// 11. Gates before sending: a paused registration and invalid arguments
// are not_sent from the backend, nothing reaches the server, and test
// calls never change permissions.
func TestTestCallGates(t *testing.T) {
	b := newBackend(t)
	mcp := newDemoServer(t)
	p := b.openHost(t)
	id := evalJS[string](p, `
		const s = await tt.mcp.servers.create({ displayName: 'Gated', endpoint: %s });
		await tt.mcp.tools.setPermission({ registrationId: s.id, nativeName: 'echo', permission: 'ask' });
		return s.id;`, mcp.endpoint())
	before, err := os.ReadFile(b.regPath(id))
	if err != nil {
		t.Fatal(err)
	}
	from := len(b.seenInvokes())
	paused := evalJS[outcome](p, `return await tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"x"}' });`, id)
	wantOutcome(t, "testCall of a paused registration", paused, jsapi.OutcomeNotSent, "mcp.call_server_paused",
		fmt.Sprintf("MCP registration `%s` must be Active before a test call", id))
	wantCallFrames(t, b.callFrames(from), jsapi.CmdRunTestCall)
	if after, _ := os.ReadFile(b.regPath(id)); string(after) != string(before) {
		t.Errorf("a test call changed the registration file:\n%s\nwas:\n%s", after, before)
	}

	p.run(`await tt.mcp.servers.setState({ registrationId: %s, state: 'active' });`, id)
	before, _ = os.ReadFile(b.regPath(id))
	type results struct {
		Invalid, NotObject, Known outcome
		Perms                     map[string]string
	}
	r := evalJS[results](p, `
		const call = (argumentsJson) => tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson });
		const invalid = await call('{"text":');
		const notObject = await call('["x"]');
		const known = await call('{"text":"x"}');
		const list = await tt.mcp.servers.list();
		return { invalid, notObject, known, perms: list.servers[0].toolPermissions };`, id)
	wantOutcome(t, "invalid argumentsJson", r.Invalid, jsapi.OutcomeNotSent, "mcp.call_arguments_invalid_json", "Arguments are not valid JSON: ")
	wantOutcome(t, "array argumentsJson", r.NotObject, jsapi.OutcomeNotSent, "mcp.call_arguments_not_object", "Arguments must be a JSON object")
	wantToolResult(t, "a valid call", r.Known, false, "x", nil)
	if !reflect.DeepEqual(r.Perms, map[string]string{"echo": "ask"}) {
		t.Errorf("permissions after test calls %v; want echo: ask", r.Perms)
	}
	if after, _ := os.ReadFile(b.regPath(id)); string(after) != string(before) {
		t.Errorf("a test call changed the registration file:\n%s\nwas:\n%s", after, before)
	}
	if calls := mcp.toolCalls(); len(calls) != 1 {
		t.Errorf("the server got %d tools/call; want only the valid one", len(calls))
	}
}
