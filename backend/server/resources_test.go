package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The resource and prompt commands over the socket, decoded strictly as
// the others: a list, a read's outcome with its contents, a get refused
// for a missing argument before anything is sent, a completion, the
// allowlist on the server and its refusal.
func TestResourceCommands(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"MCP"}}}, nil
		}})
	s.AddResource(&mcp.Resource{URI: "test://readme", Name: "README", MIMEType: "text/markdown"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Hi"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "About " + req.Params.Arguments["topic"]}}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)

	f := newFixture(t, nil)
	c := f.connect(t)
	var srv jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Docs", "endpoint": ts.URL}), &srv)
	if srv.Capabilities == nil || !srv.Capabilities.Allowed.Resources || srv.Capabilities.Advertised != nil {
		t.Fatalf("created %+v", srv.Capabilities)
	}
	if r := c.call(jsapi.CmdListResources, dto(map[string]any{"registrationId": srv.ID})); r.OK || r.Error.Code != service.CodeServerPaused {
		t.Fatalf("paused: %s", r.raw)
	}
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)

	var list jsapi.McpResourceList
	c.must(jsapi.CmdListResources, dto(map[string]any{"registrationId": srv.ID, "refresh": true}), &list)
	if len(list.Items) != 1 || list.Items[0].Name != "README" || *list.Items[0].MimeType != "text/markdown" || list.Diagnostics == nil {
		t.Fatalf("list %+v", list)
	}
	r := c.call(jsapi.CmdReadResource, dto(map[string]any{"registrationId": srv.ID, "uri": "test://readme"}))
	want := `{"outcome":"known_response","response":{"kind":"resource_contents","uri":"test://readme","contents":[{"type":"text","uri":"test://readme","mimeType":"text/markdown","text":"# Hi","size":4}],"totalBytes":4,"diagnostics":[]}}`
	if !r.OK || string(r.Value) != want {
		t.Fatalf("read %s\nwant %s", r.Value, want)
	}
	if r := c.call(jsapi.CmdGetPrompt, dto(map[string]any{"registrationId": srv.ID, "name": "summarize", "arguments": map[string]string{}})); r.OK ||
		r.Error.Code != domain.CodePromptArgumentMissing || r.Error.Kind != jsapi.KindBadRequest || !strings.Contains(r.Error.Message, "`topic`") {
		t.Fatalf("missing argument: %s", r.raw)
	}
	r = c.call(jsapi.CmdGetPrompt, dto(map[string]any{"registrationId": srv.ID, "name": "summarize", "arguments": map[string]string{"topic": "MCP"}}))
	if !r.OK || !strings.Contains(string(r.Value), `"messages":[{"role":"user","content":{"type":"text","text":"About MCP"}}]`) {
		t.Fatalf("get %s", r.raw)
	}
	var comp jsapi.McpCompletion
	c.must(jsapi.CmdCompleteArgument, dto(map[string]any{"registrationId": srv.ID, "ref": map[string]any{"type": "ref/prompt", "name": "summarize"},
		"argument": map[string]any{"name": "topic", "value": "M"}}), &comp)
	if len(comp.Values) != 1 || comp.Values[0] != "MCP" {
		t.Fatalf("completion %+v", comp)
	}
	for _, bad := range []map[string]any{
		{"registrationId": srv.ID, "uri": "test://readme", "extra": 1},
		{"registrationId": srv.ID},
		{"registrationId": srv.ID, "uri": 5},
	} {
		if r := c.call(jsapi.CmdReadResource, dto(bad)); r.OK || r.Error.Code != jsapi.CodeArgsInvalid {
			t.Errorf("%v: %s", bad, r.raw)
		}
	}

	var caps jsapi.McpServerCapabilities
	c.must(jsapi.CmdGetServerCapabilities, dto(map[string]any{"registrationId": srv.ID}), &caps)
	if caps.Advertised == nil || !caps.Advertised.Resources || !caps.Advertised.Prompts || !caps.Advertised.Completions || caps.Advertised.Tools {
		t.Fatalf("capabilities %+v", caps)
	}
	c.must(jsapi.CmdSetServerCapabilities, dto(map[string]any{"registrationId": srv.ID, "resources": false}), &srv)
	if srv.Capabilities.Allowed.Resources || !srv.Capabilities.Allowed.Prompts {
		t.Fatalf("set %+v", srv.Capabilities)
	}
	if r := c.call(jsapi.CmdReadResource, dto(map[string]any{"registrationId": srv.ID, "uri": "test://readme"})); r.OK || r.Error.Code != service.CodeResourcesDisabled || r.Error.Kind != jsapi.KindConflict {
		t.Fatalf("turned off: %s", r.raw)
	}
	var servers jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &servers)
	if c := servers.Servers[0].Capabilities; c == nil || c.Allowed.Resources || c.Advertised == nil {
		t.Fatalf("listed %+v", c)
	}
}
