package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func names(c domain.Catalog) []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.NativeName)
	}
	return out
}

func codes(c domain.Catalog) []string {
	var out []string
	for _, d := range c.Diagnostics {
		out = append(out, d.Code)
	}
	return out
}

func wantCode(t *testing.T, err error, code string, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if domain.CodeOf(err) != code {
		t.Fatalf("error %q, want code %s", err, code)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Fatalf("error %q does not mention %q", err, c)
		}
	}
}

func TestModernServerFullPagination(t *testing.T) {
	ts, rec := sdkServer(t, true, 1, nil, objectTool("second"), objectTool("first"))
	cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
	if err != nil {
		t.Fatal(err)
	}
	if cat.ProtocolVersion != "2026-07-28" || *cat.ServerName != "fixture" || *cat.ServerVersion != "1.2.3" {
		t.Fatalf("catalog %+v", cat)
	}
	if got := names(cat); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("tools %v", got)
	}
	if n := rec.count("tools/list"); n != 2 {
		t.Fatalf("%d tools/list requests, want 2 (page size 1)", n)
	}
	if rec.count("initialize") != 0 {
		t.Fatalf("a 2026 server got initialize: %v", rec.seen())
	}
}

func TestProtocolPreferences(t *testing.T) {
	legacy := []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	tests := []struct {
		name       string
		stateless  bool
		versions   []string
		pref       domain.Protocol
		negotiated string
		err        []string // code, then fragments of the message
		first      string   // first JSON-RPC method the server saw
		never      string
	}{
		{"auto against legacy", false, nil, domain.ProtocolAuto, "2025-11-25", nil, "server/discover", ""},
		{"fixed legacy initializes without discovering", false, nil, domain.Protocol20250618, "2025-06-18", nil, "initialize", "server/discover"},
		{"fixed 2025-03-26", true, nil, domain.Protocol20250326, "2025-03-26", nil, "initialize", "server/discover"},
		{"fixed modern against modern", true, nil, domain.Protocol20260728, "2026-07-28", nil, "server/discover", "initialize"},
		{"fixed modern never falls back", false, nil, domain.Protocol20260728, "", []string{CodeInitializeFailed, "2026-07-28"}, "server/discover", "initialize"},
		{"fixed version the server lacks", false, legacy[2:], domain.Protocol20250618, "", []string{CodeInitializeFailed, "2025-03-26", "accepted versions: 2025-06-18"}, "initialize", "tools/list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, rec := sdkServer(t, tt.stateless, 0, tt.versions, objectTool("search"))
			cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, tt.pref, nil))
			if tt.err != nil {
				wantCode(t, err, tt.err[0], tt.err[1:]...)
			} else if err != nil {
				t.Fatal(err)
			} else if cat.ProtocolVersion != tt.negotiated || !slices.Equal(names(cat), []string{"search"}) {
				t.Fatalf("catalog %+v", cat)
			}
			seen := rec.seen()
			if len(seen) == 0 || seen[0] != tt.first {
				t.Fatalf("requests %v, want %s first", seen, tt.first)
			}
			if tt.never != "" && slices.Contains(seen, tt.never) {
				t.Fatalf("requests %v include %s", seen, tt.never)
			}
		})
	}
}

// A server answering a version the registration does not accept is closed
// before any tools/list, whatever go-sdk thinks of that version.
func TestNegotiatedVersionIsChecked(t *testing.T) {
	for _, tt := range []struct {
		answer string
		pref   domain.Protocol
	}{
		{"2025-03-26", domain.Protocol20250618},
		{"2025-11-25", domain.Protocol20250326},
		{"2024-11-05", domain.ProtocolAuto},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			ts, rec := serve(t, &fake{version: tt.answer, list: func(string) any { return page("") }})
			_, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, tt.pref, nil))
			wantCode(t, err, CodeInitializeFailed, "The server selected MCP "+tt.answer)
			if rec.count("tools/list") != 0 {
				t.Fatalf("listed tools anyway: %v", rec.seen())
			}
		})
	}
}

func TestNoToolsCapabilityMeansNoList(t *testing.T) {
	ts, rec := serve(t, &fake{version: "2025-06-18", noTools: true, list: func(string) any { panic("listed") }})
	cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
	if err != nil || len(cat.Tools) != 0 || rec.count("tools/list") != 0 {
		t.Fatalf("catalog %+v, err %v, requests %v", cat, err, rec.seen())
	}
}

// hostileLists are tools/list answers that misbehave in one way each,
// with the error code and a part of the message discovery must give.
// (Package level: the stdio tests serve the same lists from a child
// process, see stdio_fake_test.go.)
var hostileLists = []struct {
	name string
	list func(cursor string) any
	code string
	msg  string
}{
	{"cursor cycle", func(c string) any {
		return page(map[string]string{"": "a", "a": "b", "b": "a"}[c], rawTool("t"+c, `{"type":"object"}`))
	}, CodeCursorCycle, "`a`"},
	{"33 pages", func(c string) any {
		n := 0
		fmt.Sscan(c, &n)
		return page(fmt.Sprint(n+1), rawTool(fmt.Sprint("t", n), `{"type":"object"}`))
	}, CodePageLimit, "32 pages"},
	{"513 tools", func(c string) any {
		var tools []any
		for i := range 513 {
			tools = append(tools, rawTool(fmt.Sprint("t", i), `{"type":"object"}`))
		}
		return page("", tools...)
	}, CodeToolLimit, "512 tools"},
	{"9 MiB catalog", func(c string) any {
		n := 0
		fmt.Sscan(c, &n)
		var tools []any
		for i := range 10 {
			tool := rawTool(fmt.Sprint("t", n, "_", i), `{"type":"object"}`)
			tool["description"] = hostileBig
			tools = append(tools, tool)
		}
		next := ""
		if n < 4 {
			next = fmt.Sprint(n + 1)
		}
		return page(next, tools...)
	}, CodeCatalogSizeLimit, "8388608 bytes"},
	{"incomplete result", func(string) any {
		r := page("", rawTool("t", `{"type":"object"}`))
		r["resultType"] = "input_required"
		return r
	}, CodeResultTypeUnsupported, "complete"},
}

var hostileBig = strings.Repeat("x", 230<<10)

// hostile lists pages of a fake server that misbehaves in one way each.
func TestHostilePagination(t *testing.T) {
	for _, tt := range hostileLists {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := serve(t, &fake{version: "2025-11-25", list: tt.list})
			_, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
			wantCode(t, err, tt.code, tt.msg)
		})
	}
}

func TestToolIsolation(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"object"}`), 0o600)
	huge := rawTool("huge", `{"type":"object"}`)
	huge["description"] = strings.Repeat("y", 300<<10)
	withOutput := rawTool("bad_output", `{"type":"object"}`)
	withOutput["outputSchema"] = map[string]any{"type": 5}
	annotated := rawTool("annotated", `{"type":"object"}`)
	annotated["annotations"] = map[string]any{"readOnlyHint": true, "destructiveHint": false}
	list := page("",
		rawTool("healthy", `{"type":"object","properties":{"q":{"type":"string"}},"$defs":{"a":{"type":"string"}}}`),
		rawTool("broken_type", `{"type":"object","properties":{"q":{"type":12}}}`),
		rawTool("remote_ref", `{"type":"object","properties":{"q":{"$ref":"https://example.invalid/schema.json"}}}`),
		rawTool("file_ref", `{"type":"object","properties":{"q":{"$ref":"file://`+secret+`"}}}`),
		rawTool("twin", `{"type":"object"}`), rawTool("twin", `{"type":"object"}`),
		huge, withOutput, annotated,
		rawTool("search:exact", `{"type":"object"}`),
		rawTool(strings.Repeat("n", 257), `{"type":"object"}`),
		// nested 900 deep (go-sdk refuses a response nested past 1,000): the library alone spent seconds over it, and accepted it
		rawTool("deep", `{"type":"object","properties":{"q":`+strings.Repeat(`{"not":`, 900)+`{}`+strings.Repeat(`}`, 900)+`}}`),
	)
	ts, _ := serve(t, &fake{version: "2025-06-18", list: func(string) any { return list }})
	cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(cat); !slices.Equal(got, []string{"annotated", "bad_output", "healthy", "search:exact"}) {
		t.Fatalf("kept %v", got)
	}
	want := map[string]string{
		"broken_type": domain.CodeToolInputSchemaInvalid, "remote_ref": domain.CodeToolInputSchemaInvalid,
		"file_ref": domain.CodeToolInputSchemaInvalid, "twin": domain.CodeToolDuplicateName,
		"huge": domain.CodeToolSizeLimit, "bad_output": domain.CodeToolOutputSchemaInvalid,
		strings.Repeat("n", 257): domain.CodeToolNameInvalid, "deep": domain.CodeToolInputSchemaInvalid,
	}
	if len(cat.Diagnostics) != len(want) {
		t.Fatalf("diagnostics %v", codes(cat))
	}
	for _, d := range cat.Diagnostics {
		if want[*d.NativeName] != d.Code {
			t.Errorf("diagnostic %s for %s (%s)", d.Code, *d.NativeName, d.Message)
		}
	}
	for _, tool := range cat.Tools {
		switch tool.NativeName {
		case "bad_output":
			if tool.OutputSchema != nil {
				t.Errorf("invalid output schema kept: %s", tool.OutputSchema)
			}
		case "annotated":
			var a map[string]any
			json.Unmarshal(tool.Annotations, &a)
			if a["readOnlyHint"] != true {
				t.Errorf("annotations %s", tool.Annotations)
			}
		case "healthy":
			if string(tool.Annotations) != "{}" || tool.Description != nil || tool.Title != nil {
				t.Errorf("healthy %+v", tool)
			}
		}
	}
}

// go-sdk silently drops tools with invalid x-mcp-header annotations; the
// catalog reports them.
func TestExcludedHeaderAnnotationsAreReported(t *testing.T) {
	list := page("",
		rawTool("good", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`),
		rawTool("bad", `{"type":"object","properties":{"r":{"type":"object","x-mcp-header":"Region"}}}`),
	)
	ts, _ := serve(t, &fake{version: "2025-11-25", list: func(string) any { return list }})
	cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(cat), []string{"good"}) || len(cat.Diagnostics) != 1 ||
		cat.Diagnostics[0].Code != CodeToolHeaderAnnotationInvalid || *cat.Diagnostics[0].NativeName != "bad" {
		t.Fatalf("catalog %v %+v", names(cat), cat.Diagnostics)
	}
}

func TestCustomHeadersOnEveryRequest(t *testing.T) {
	ts, rec := sdkServer(t, false, 1, nil, objectTool("a"), objectTool("b"))
	headers := map[string]string{"X-Api-Key": "s3cret", "X-Unicode": "héllo"}
	g := testGateway(t)
	if _, err := g.Discover(context.Background(), registration(t, ts.URL, domain.Protocol20251125, headers)); err != nil {
		t.Fatal(err)
	}
	g.Close() // the DELETE is sent in the background
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.headers) < 4 || !slices.Contains(rec.methods, http.MethodDelete) {
		t.Fatalf("requests %v", rec.methods)
	}
	for i, h := range rec.headers {
		if h.Get("X-Api-Key") != "s3cret" || h.Get("X-Unicode") != "héllo" {
			t.Fatalf("request %d (%s) headers %v", i, rec.methods[i], h)
		}
	}
}

func TestInvalidHeadersAreRejectedBeforeAnyRequest(t *testing.T) {
	tests := []struct {
		headers map[string]string
		code    string
	}{
		{map[string]string{"bad name": "x"}, CodeHeaderNameInvalid},
		{map[string]string{"X-Line": "a\nb"}, CodeHeaderValueInvalid},
		{map[string]string{"accept": "text/html"}, CodeInitializeFailed},
		{map[string]string{"Mcp-Param-Region": "eu"}, CodeInitializeFailed},
	}
	for _, tt := range tests {
		ts, rec := sdkServer(t, false, 0, nil, objectTool("a"))
		_, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, tt.headers))
		wantCode(t, err, tt.code)
		if len(rec.seen()) != 0 {
			t.Fatalf("%v: requests %v", tt.headers, rec.seen())
		}
	}
}

func TestBrokenTransport(t *testing.T) {
	// target counts what a redirect would have reached.
	target, targetRec := sdkServer(t, false, 0, nil, objectTool("a"))
	never := func(wait func(*http.Request)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wait(r) })
	}
	slowList := func(wait func(*http.Request)) http.Handler {
		return &fake{version: "2025-11-25", onList: func(w http.ResponseWriter, r *http.Request) bool { wait(r); return true }}
	}
	fixed := func(h http.Handler) func(func(*http.Request)) http.Handler {
		return func(func(*http.Request)) http.Handler { return h }
	}
	tests := []struct {
		name    string
		gw      *Gateway
		handler func(wait func(*http.Request)) http.Handler
		code    string
		msg     string
	}{
		{"redirect", testGateway(t), fixed(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect)), CodeInitializeFailed, "redirect"},
		{"500", testGateway(t), fixed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })), CodeInitializeFailed, ""},
		{"never answers", hasty(t), never, CodeInitializeTimeout, ""},
		{"slow list", hasty(t), slowList, CodeListTimeout, ""},
		{"dies mid-page", testGateway(t), fixed(&fake{version: "2025-11-25", onList: func(w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			w.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[`))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return true
		}}), CodeListFailed, ""},
		{"5 MiB page", testGateway(t), fixed(&fake{version: "2025-11-25", list: func(string) any {
			tool := rawTool("t", `{"type":"object"}`)
			tool["description"] = strings.Repeat("z", 5<<20)
			return page("", tool)
		}}), CodeListFailed, "4194304 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := serveHanging(t, tt.handler)
			_, err := tt.gw.Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
			wantCode(t, err, tt.code, tt.msg)
		})
	}
	if n := len(targetRec.seen()); n != 0 {
		t.Fatalf("a redirect was followed: %d requests reached its target", n)
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := testGateway(t).Discover(context.Background(), registration(t, "http://"+addr+"/mcp", domain.ProtocolAuto, nil))
	wantCode(t, err, CodeInitializeFailed)
}

func TestCallerCancellation(t *testing.T) {
	ts, _ := serveHanging(t, func(wait func(*http.Request)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wait(r) })
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := testGateway(t).Discover(ctx, registration(t, ts.URL, domain.ProtocolAuto, nil))
	wantCode(t, err, "mcp.request_cancelled")
}

// Under auto, every way a legacy server refuses server/discover ends in an
// initialize negotiating 2025-11-25 (reference §9.1).
func TestAutoFallsBackFromEveryLegacyRejection(t *testing.T) {
	rejections := map[string]func(w http.ResponseWriter, id string){
		"SSE -32601": func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n\n", id)
		},
		"400 -32000": func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`, id)
		},
		"400 -32600": func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`)
		},
		"400 text": func(w http.ResponseWriter, id string) { http.Error(w, "Bad Request", 400) },
		"404":      func(w http.ResponseWriter, id string) { http.NotFound(w, nil) },
	}
	for name, reject := range rejections {
		t.Run(name, func(t *testing.T) {
			legacy := &fake{version: "2025-11-25", list: func(string) any { return page("", rawTool("legacy_tool", `{"type":"object"}`)) }}
			ts, rec := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				json.Unmarshal(body, &m)
				if m.Method == "server/discover" {
					reject(w, string(m.ID))
					return
				}
				legacy.ServeHTTP(w, r)
			}))
			cat, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
			if err != nil {
				t.Fatal(err)
			}
			if cat.ProtocolVersion != "2025-11-25" || !slices.Equal(names(cat), []string{"legacy_tool"}) {
				t.Fatalf("catalog %+v", cat)
			}
			if seen := rec.seen(); seen[0] != "server/discover" || !slices.Contains(seen, "initialize") {
				t.Fatalf("requests %v", seen)
			}
		})
	}
}

// The response cap holds for SSE too, before an oversized event is parsed.
func TestOversizedSSEPage(t *testing.T) {
	f := &fake{version: "2025-11-25", onList: func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"},\"description\":\"%s\"}]}}\n\n", strings.Repeat("z", 5<<20))
		return true
	}}
	ts, _ := serve(t, f)
	_, err := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
	wantCode(t, err, CodeListFailed, "4194304 bytes")
}

// Verdicts on schemas outlive a discovery: a refresh of an unchanged server
// compiles nothing, and the first discovery compiles each distinct schema
// once although the warmer and validation both reach for it.
func TestRefreshCompilesNothing(t *testing.T) {
	var tools []any
	for i := range 40 {
		tools = append(tools, rawTool(fmt.Sprintf("t%02d", i), fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string"}}}`, i%30)))
	}
	tools = append(tools, rawTool("bad", `{"type":5}`))
	pages := map[string]any{"": page("2", tools[:20]...), "2": page("3", tools[20:35]...), "3": page("", tools[35:]...)}
	ts, _ := serve(t, &fake{version: "2025-11-25", list: func(cursor string) any { return pages[cursor] }})
	g := testGateway(t)
	r := registration(t, ts.URL, domain.ProtocolAuto, nil)
	first, err := g.Discover(context.Background(), r)
	if err != nil || len(first.Tools) != 40 || len(first.Diagnostics) != 1 {
		t.Fatalf("%d tools, %v, %v", len(first.Tools), first.Diagnostics, err)
	}
	if n := g.schemas.Compilations(); n != 31 {
		t.Fatalf("%d compilations for 31 distinct schemas", n)
	}
	again, err := g.Discover(context.Background(), r)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Fatalf("refresh %+v, %v", again, err)
	}
	if n := g.schemas.Compilations(); n != 31 {
		t.Fatalf("the refresh compiled %d schemas", n-31)
	}
}
