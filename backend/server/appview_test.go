package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/jsapi"
)

// An App's document is served once, by the backend, with the policy it
// built: the CSP as a header with the sandbox directive (an opaque origin
// however the document is loaded), framable only by the backend and the
// allowed origins, the permissions it did not declare denied.
func TestAppViewRoute(t *testing.T) {
	const doc = "<!doctype html><title>board</title><script>parent.postMessage('hi','*')</script>"
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "board", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://chess/board.html", Name: "board", MIMEType: "text/html;profile=mcp-app"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://chess/board.html", MIMEType: "text/html;profile=mcp-app", Text: doc,
			Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{"https://api.chess.example"}}, "permissions": map[string]any{"geolocation": map[string]any{}}}}}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(ts.Close)

	f := newFixture(t, nil)
	c := f.connect(t)
	var srv jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Chess", "endpoint": ts.URL}), &srv)
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)
	c.must(jsapi.CmdDiscoverTools, dto(map[string]any{"registrationId": srv.ID}), nil)
	c.raw(`{"type":"handlers","apps":true}`) // the page renders Apps
	var app jsapi.McpAppResource
	c.must(jsapi.CmdReadAppResource, dto(map[string]any{"registrationId": srv.ID, "appToolName": "board"}), &app)
	if app.ViewID == "" || app.HTML != doc {
		t.Fatalf("app %+v", app)
	}
	get := func(id string) *http.Response {
		resp, err := http.Get(f.url + jsapi.PathAppView + id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get(app.ViewID)
	body, _ := io.ReadAll(resp.Body)
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != http.StatusOK || string(body) != doc || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("view: %d %q", resp.StatusCode, body)
	}
	for _, part := range []string{"default-src 'none'", "connect-src https://api.chess.example", "sandbox allow-scripts", "frame-ancestors 'self' http://localhost:8000", "base-uri 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	if strings.Contains(csp, "allow-same-origin") || strings.Contains(csp, "'self' 'unsafe-inline'") {
		t.Errorf("CSP %q", csp)
	}
	pp := resp.Header.Get("Permissions-Policy")
	if !strings.Contains(pp, "geolocation=*") || !strings.Contains(pp, "camera=()") || !strings.Contains(pp, "microphone=()") {
		t.Errorf("Permissions-Policy %q", pp)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	if again := get(app.ViewID); again.StatusCode != http.StatusNotFound || again.Header.Get("Content-Security-Policy") != noFraming {
		t.Errorf("a second load: %d", again.StatusCode)
	}
	if made := get("0123456789abcdef0123456789abcdef"); made.StatusCode != http.StatusNotFound {
		t.Errorf("a made-up view: %d", made.StatusCode)
	}
}
