package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// A go-sdk server with an MCP App: discovery keeps each tool's _meta.ui
// (and the deprecated flat key) in the catalog; a tool whose visibility
// cannot be read is isolated.
func TestDiscoverKeepsToolUI(t *testing.T) {
	board := objectTool("board")
	board.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html"}}
	move := objectTool("move")
	move.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html", "visibility": []string{"app"}}}
	old := objectTool("old")
	old.Meta = mcp.Meta{"ui/resourceUri": "ui://chess/old.html"}
	bad := objectTool("bad")
	bad.Meta = mcp.Meta{"ui": map[string]any{"visibility": "app"}}
	plain := objectTool("plain")
	plain.Meta = mcp.Meta{"other/vendor": true}
	for _, stateless := range []bool{true, false} {
		ts, _ := sdkServer(t, stateless, 0, nil, board, move, old, bad, plain)
		g := callGateway(t, 5*time.Second)
		cat, err := g.Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*domain.ToolUI{}
		for _, tool := range cat.Tools {
			got[tool.NativeName] = tool.UI
		}
		want := map[string]*domain.ToolUI{
			"board": {ResourceURI: "ui://chess/board.html"},
			"move":  {ResourceURI: "ui://chess/board.html", Visibility: []string{"app"}},
			"old":   {ResourceURI: "ui://chess/old.html"},
			"plain": nil,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stateless %v: ui = %+v", stateless, got)
		}
		if len(cat.Diagnostics) != 1 || cat.Diagnostics[0].Code != domain.CodeToolUIInvalid || *cat.Diagnostics[0].NativeName != "bad" {
			t.Errorf("diagnostics %+v", cat.Diagnostics)
		}
	}
}

// A 2026 request declares the io.modelcontextprotocol/ui extension in its
// _meta's clientCapabilities only when the operation's page renders Apps
// (asked when the request goes out), for lists and calls alike; other
// requests declare nothing of it.
func TestAppsExtensionDeclared2026(t *testing.T) {
	board := objectTool("board")
	board.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html"}}
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
	s.AddTool(board, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts, seen := capsRecorder(t, h, "server/discover")
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.Protocol20260728, nil)
	var on atomic.Bool
	ctx := domain.WithAppsRenderer(context.Background(), on.Load)
	if _, err := g.Discover(ctx, r); err != nil {
		t.Fatal(err)
	}
	g.Call(ctx, r, domain.ToolCall{NativeName: "board", Arguments: json.RawMessage(`{}`)})
	on.Store(true) // the page said it renders Apps
	if _, err := g.Discover(ctx, r); err != nil {
		t.Fatal(err)
	}
	g.Call(ctx, r, domain.ToolCall{NativeName: "board", Arguments: json.RawMessage(`{}`)})
	g.Call(context.Background(), r, domain.ToolCall{NativeName: "board", Arguments: json.RawMessage(`{}`)}) // no page
	const eliciting = `{"elicitation":{"form":{},"url":{}}}`
	const appsAndEliciting = `{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`
	const apps = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`
	want := []string{"tools/list " + eliciting, "tools/call {}", "tools/list " + appsAndEliciting, "tools/call " + apps, "tools/call {}"}
	if got := seen(); !reflect.DeepEqual(got, want) {
		t.Fatalf("declared\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// capsRecorder serves h and records, per request but those of the methods
// skipped, "<method> <the clientCapabilities of its _meta>".
func capsRecorder(t *testing.T, h http.Handler, skip ...string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	ts, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" && !slices.Contains(skip, m.Method) {
			mu.Lock()
			seen = append(seen, m.Method+" "+string(m.Params.Meta[mcp.MetaKeyClientCapabilities]))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	return ts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// A 2025 server learns what its client declares at initialize, so an
// operation whose page renders Apps runs on a session of its own that
// declares the extension (kept for the next such operation); the shared
// session, and the operations of other pages, declare nothing of it.
func TestAppsExtensionDeclared2025(t *testing.T) {
	board := objectTool("board")
	board.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html"}}
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	s.AddTool(board, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	declared := map[string]bool{} // session id → its initialize declared the extension
	pending := []bool{}           // initializes answered, in order, before their session id is known
	var calls []bool              // per tools/call: its session declared the extension
	ts, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Capabilities struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"capabilities"`
			} `json:"params"`
		}
		json.Unmarshal(body, &m)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		mu.Lock()
		switch m.Method {
		case "initialize":
			_, ext := m.Params.Capabilities.Extensions[domain.AppsExtension]
			if ext && string(m.Params.Capabilities.Extensions[domain.AppsExtension]) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
				t.Errorf("declared %s", m.Params.Capabilities.Extensions[domain.AppsExtension])
			}
			declared[rec.Header().Get("Mcp-Session-Id")] = ext
			pending = append(pending, ext)
		case "tools/call":
			calls = append(calls, declared[r.Header.Get("Mcp-Session-Id")])
		}
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.ProtocolAuto, nil)
	apps := domain.WithAppsRenderer(context.Background(), func() bool { return true })
	call := func(ctx context.Context) {
		if out := g.Call(ctx, r, domain.ToolCall{NativeName: "board", Arguments: json.RawMessage(`{}`)}); out.Outcome != domain.OutcomeKnownResponse {
			t.Fatalf("call %+v", out)
		}
	}
	call(context.Background())
	call(apps)
	call(apps) // on the kept Apps session
	call(context.Background())
	if _, err := g.Discover(apps, r); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []bool{false, true, true, false}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls on sessions that declared Apps: %v, want %v", calls, want)
	}
	// the shared session, one Apps session for the calls, one eliciting
	// Apps session for the discovery
	if want := []bool{false, true, true}; !reflect.DeepEqual(pending, want) {
		t.Errorf("initializes declaring Apps: %v, want %v", pending, want)
	}
}
