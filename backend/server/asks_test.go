package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// askingFixture serves a backend with one active 2026 server whose tool
// greet asks the user's name; it returns the fixture and the server's id.
func askingFixture(t *testing.T) (*fixture, string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "greet", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Mode: "form", Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v", resp.Action, resp.Content["name"])}}}, nil
	})
	return serveOne(t, s, "Greeter", service.Config{})
}

// serveOne serves a backend with s as its one active 2026 server (over
// stateless Streamable HTTP), the service made with cfg over the
// fixture's storage and a real gateway; it returns the fixture and the
// server's id.
func serveOne(t testing.TB, s *mcp.Server, name string, cfg service.Config) (*fixture, string) {
	return serveOneWith(t, s, name, cfg, nil)
}

// serveOneWith is serveOne with the server's Config changed by mutate.
func serveOneWith(t testing.TB, s *mcp.Server, name string, cfg service.Config, mutate func(*Config)) (*fixture, string) {
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	root := t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, CallWait: 10 * time.Second, CloseTimeout: time.Second})
	t.Cleanup(func() { gw.Close() })
	cfg.Registrations, cfg.Catalogs, cfg.Gateway = store, store, gw
	f := newFixtureWith(t, root, service.New(cfg), mutate)
	c := f.connect(t)
	var srv jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": name, "endpoint": ts.URL, "protocolVersion": "2026-07-28"}), &srv)
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)
	return f, srv.ID
}

// frame reads the next frame of any type but an event (those are kept in
// c.events).
func (c *client) frame() map[string]jsontext.Value {
	c.t.Helper()
	for {
		data := c.readFrame()
		var m map[string]jsontext.Value
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatalf("frame %s: %v", data, err)
		}
		if string(m["type"]) != `"`+jsapi.FrameEvent+`"` {
			return m
		}
		c.keepEvent(data)
	}
}

// testCallFrames starts a test call as the shim does (the call after the
// start's acknowledgement) and sends it; its result is the caller's to read.
func testCallFrames(c *client, callID, regID string, id uint64) {
	c.send(id, jsapi.CmdStartTestCall, dto(map[string]any{"callId": callID}))
	if r := c.read(); r.ID != id || !r.OK {
		c.t.Fatalf("start: %s", r.raw)
	}
	c.send(id+1, jsapi.CmdTestToolCall, dto(map[string]any{"callId": callID, "registrationId": regID, "nativeName": "greet", "argumentsJson": "{}"}))
}

// The frames of SPEC §10 "Elicitation" on a real socket: the page's
// handlers frame (read in order with the invoke frames, so the next call
// sees it), the backend's request frame for the call's question, the
// page's response frame, the result that used the answer; a page without a
// handler is never asked; a stopped call withdraws its question (a cancel
// frame); garbled handlers frames close the socket like any frame out of
// the protocol.
func TestElicitationFrames(t *testing.T) {
	f, id := askingFixture(t)
	c := f.connect(t)

	c.raw(`{"type":"handlers","elicitation":true}`)
	testCallFrames(c, "c1", id, 10)
	var reqID uint64
	for reqID == 0 {
		m := c.frame()
		if string(m["type"]) != `"request"` || string(m["method"]) != `"elicitation"` {
			t.Fatalf("frame %v", m)
		}
		var params jsapi.McpElicitationRequest
		json.Unmarshal(m["params"], &params)
		if params.CallID != "c1" || params.RegistrationID != id || params.NativeName != "greet" || params.Mode != "form" || params.Source != "test" {
			t.Fatalf("params %+v", params)
		}
		json.Unmarshal(m["id"], &reqID)
	}
	c.raw(fmt.Sprintf(`{"type":"response","id":%d,"ok":true,"value":{"action":"accept","content":{"name":"Ada"}}}`, reqID))
	r := c.read()
	if r.ID != 11 || !r.OK || !strings.Contains(string(r.Value), "accept Ada") || !strings.Contains(string(r.Value), `"rounds":2`) {
		t.Fatalf("result %s", r.raw)
	}

	// handler gone: not asked; the server's input_required is not continued
	c.raw(`{"type":"handlers","elicitation":false}`)
	testCallFrames(c, "c2", id, 20)
	if r := c.read(); r.ID != 21 || !strings.Contains(string(r.Value), "unsupported_response") {
		t.Fatalf("without a handler: %s", r.raw)
	}

	// Stop while the page answers: a cancel frame withdraws the question
	c.raw(`{"type":"handlers","elicitation":true}`)
	testCallFrames(c, "c3", id, 30)
	for {
		m := c.frame()
		if string(m["type"]) == `"request"` {
			json.Unmarshal(m["id"], &reqID)
			break
		}
	}
	c.send(40, jsapi.CmdCancelTestCall, dto(map[string]any{"callId": "c3"}))
	seen := map[string]bool{}
	for !seen["cancel"] || !seen["result31"] {
		m := c.frame()
		switch string(m["type"]) {
		case `"cancel"`:
			var got uint64
			json.Unmarshal(m["id"], &got)
			if got != reqID {
				t.Fatalf("cancel of %d, asked %d", got, reqID)
			}
			seen["cancel"] = true
		case `"result"`:
			if string(m["id"]) == "31" {
				if !strings.Contains(string(m["value"]), "stopped while the user was answering") {
					t.Fatalf("stopped: %v", m)
				}
				seen["result31"] = true
			}
		}
	}
	// a late answer to the withdrawn question is dropped, the socket carries on
	c.raw(fmt.Sprintf(`{"type":"response","id":%d,"ok":true,"value":{"action":"accept","content":{"name":"late"}}}`, reqID))
	if r := c.call(jsapi.CmdListServers, nil); !r.OK {
		t.Fatalf("after a late answer: %s", r.raw)
	}

	for _, bad := range []string{`{"type":"handlers"}`, `{"type":"handlers","elicitation":"yes"}`, `{"type":"response","ok":true}`, `{"type":"handlers","elicitation":true,"x":1}`} {
		c := f.connect(t)
		c.raw(bad)
		code, _ := closeStatus(t, c.conn)
		if code != jsapi.ClosePolicyViolation {
			t.Errorf("%s: close %d, want 1008", bad, code)
		}
	}
}

// The handlers frame says whether the page renders MCP Apps (issue 30),
// apart from its elicitation handler; a frame that says neither, or an
// apps member on a response frame, is out of the protocol.
func TestHandlersFrameApps(t *testing.T) {
	sk := &socket{}
	tests := []struct {
		frame       string
		ok          bool
		apps, elict bool
	}{
		{`{"type":"handlers","apps":true}`, true, true, false},
		{`{"type":"handlers","elicitation":true}`, true, true, true}, // apps unchanged
		{`{"type":"handlers","elicitation":false,"apps":false}`, true, false, false},
		{`{"type":"handlers"}`, false, false, false},
		{`{"type":"handlers","apps":"yes"}`, false, false, false},
		{`{"type":"response","id":1,"ok":true,"apps":true}`, false, false, false},
	}
	for _, tt := range tests {
		if got := sk.pageFrame([]byte(tt.frame)); got != tt.ok {
			t.Errorf("%s: accepted %v", tt.frame, got)
		}
		if sk.RendersApps() != tt.apps || sk.HasElicitationHandler() != tt.elict {
			t.Errorf("%s: apps %v, elicitation %v", tt.frame, sk.RendersApps(), sk.HasElicitationHandler())
		}
	}
}
