package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// BenchmarkPluginPath (issue 28): a page through SillyTavern's plugin (a
// Go stand-in: a reverse proxy adding the plugin's headers, in front of
// the real server, the HTTP transport: an event stream down, a POST per
// batch up) against the direct WebSocket path, on one backend, alternately
// (benchpair): servers.list and a warm test call of a go-sdk echo tool
// (start + call, its connection kept). `make bench` prints the ratio.
func BenchmarkPluginPath(b *testing.B) {
	echo := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	echo.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echo }, nil))
	b.Cleanup(ts.Close)
	root := b.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: time.Second})
	b.Cleanup(func() { gw.Close() })
	f := newFixtureWith(b, root, service.New(service.Config{Registrations: store, Catalogs: store, Gateway: gw}),
		func(c *Config) { c.PluginSecret = testSecret })
	base := stPlugin(b, f.url, testSecret, nil)
	direct := f.connect(b)
	var srv jsapi.McpServer
	direct.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Echo", "endpoint": ts.URL}), &srv)
	direct.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)
	direct.must(jsapi.CmdDiscoverTools, dto(map[string]any{"registrationId": srv.ID}), nil)
	plugin, _ := connectPlugin(b, base, "")
	// The events of the setup are behind us.
	for range 3 {
		if r := direct.call(jsapi.CmdListServers, nil); !r.OK {
			b.Fatalf("list: %s", r.raw)
		}
	}
	plugin.events, direct.events = nil, nil

	list := func(c *client) func() error {
		return func() error {
			if r := c.call(jsapi.CmdListServers, nil); !r.OK {
				b.Fatalf("list: %s", r.raw)
			}
			return nil
		}
	}
	n := 0
	call := func(c *client) func() error {
		return func() error {
			n++
			id := "b" + strconv.Itoa(n)
			c.must(jsapi.CmdStartTestCall, dto(map[string]any{"callId": id}), nil)
			r := c.call(jsapi.CmdTestToolCall, dto(map[string]any{"callId": id, "registrationId": srv.ID, "nativeName": "echo", "argumentsJson": "{}"}))
			if !r.OK {
				b.Fatalf("call: %s", r.raw)
			}
			return nil
		}
	}
	// warm both
	call(plugin)()
	call(direct)()
	b.Run("servers.list", func(b *testing.B) { benchpair.Run(b, "direct", list(plugin), list(direct)) })
	b.Run("warm-call", func(b *testing.B) { benchpair.Run(b, "direct", call(plugin), call(direct)) })
}
