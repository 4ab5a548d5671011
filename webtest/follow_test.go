package webtest

// Issue 21's acceptance in Chromium: a server that announces a new tool
// shows it in the Manager, Off, without a click — the backend's live
// connection heard the announcement, refreshed the catalog and told the
// page — on a 2025 server (its session's GET stream) and a 2026 one
// (subscriptions/listen).

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestManagerFollowsTheServer(t *testing.T) {
	needBundle(t)
	for _, tt := range []struct {
		name      string
		stateless bool
		protocol  string
	}{
		{"2025", false, "2025-11-25"},
		{"2026", true, "2026-07-28"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
			ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			}
			s.AddTool(&mcp.Tool{Name: "echo", Title: "Echo", InputSchema: map[string]any{"type": "object"}}, ok)
			srv := newMCPServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: tt.stateless}))
			b := newBackend(t, withManager(nil))
			p := openManager(t, b)
			p.run(`const mcp = window.__TAURITAVERN__.api.mcp;
				const s = await mcp.servers.create({ displayName: 'Changing', endpoint: %s, protocolVersion: %s });
				await mcp.servers.setState({ registrationId: s.id, state: 'active' });
				window.dispatchEvent(new Event('ttmcp:registrations-changed'));
				const row = await ui.row('Changing');
				await ui.get('.tt-mcp-state-active', undefined, row); // the Manager may list between the two changes
				await ui.click('button', 'Show or hide tools', row);
				await ui.get('radiogroup', 'Permission for Echo', row);
				await ui.withText(/follows its server’s changes/, row);`, srv.endpoint(), tt.protocol)
			lists := srv.count("tools/list")

			s.AddTool(&mcp.Tool{Name: "grep", Title: "Grep", InputSchema: map[string]any{"type": "object"}}, ok)
			p.run(`const group = await ui.get('radiogroup', 'Permission for Grep', await ui.row('Changing'));
				const checked = group.querySelector('input[type=radio]:checked');
				if (!checked || ui.nameOf(checked) !== 'Off') throw new Error('the new tool is not Off: ' + (checked && ui.nameOf(checked)));`)
			if n := srv.count("tools/list"); n != lists+1 {
				t.Errorf("%d tools/list after the announcement, want one refresh", n-lists)
			}
			if tt.name == "2026" {
				shots(p, "manager-followed")
			}
		})
	}
}
