//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// A stdio process is one session for every page: a 2025 one is told at
// initialize that its client renders MCP Apps, so an Apps-aware server
// lists its App tools and sees the extension on every call, whichever page
// asks; a 2026 one is told per request, only for a page that renders Apps
// (another page gets the server's text-only variant).
func TestStdioAppsExtensionDeclared(t *testing.T) {
	const declared = `{"mimeTypes":["text/html;profile=mcp-app"]}`
	for _, tt := range []struct {
		protocol domain.Protocol
		// what the page that renders no Apps gets: the tools listed, the
		// extension its call declares
		plainTools []string
		plainCall  string
	}{
		{domain.Protocol20251125, []string{"board", "move", "plain"}, declared},
		{domain.Protocol20260728, []string{"plain"}, "none"},
	} {
		t.Run(string(tt.protocol), func(t *testing.T) {
			g := stdioGateway(t, nil)
			r := stdioReg(t, "apps", t.TempDir())
			r.Protocol = tt.protocol
			apps := domain.WithAppsRenderer(context.Background(), func() bool { return true })
			plain := domain.WithAppsRenderer(context.Background(), func() bool { return false })
			for _, page := range []struct {
				name  string
				ctx   context.Context
				tools []string
				call  string
			}{
				{"a page without Apps", plain, tt.plainTools, tt.plainCall},
				{"an Apps page", apps, []string{"board", "move", "plain"}, declared},
				{"no page", context.Background(), tt.plainTools, tt.plainCall},
			} {
				cat, err := g.Discover(page.ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(cat); !reflect.DeepEqual(got, page.tools) {
					t.Errorf("%s: listed %q, want %q", page.name, got, page.tools)
				}
				out := g.Call(page.ctx, r, domain.ToolCall{NativeName: "plain", Arguments: json.RawMessage(`{}`)})
				if got := callText(t, out); got != page.call {
					t.Errorf("%s: the call declared %s, want %s", page.name, got, page.call)
				}
			}
		})
	}
}

// The stdio "apps" server's interface, listed with _meta.ui while its
// content carries none: the listing keeps the entry's _meta.ui, and the
// read's content has no _meta.
func TestStdioAppResourceListedUI(t *testing.T) {
	g := stdioGateway(t, nil)
	r := stdioReg(t, "apps", t.TempDir())
	ctx := context.Background()
	l, err := g.ListResources(ctx, r)
	if err != nil || len(l.Items) != 1 || l.Items[0].URI != stdiotest.AppsURI {
		t.Fatalf("resources %+v %v", l, err)
	}
	if got := string(l.Items[0].UI); got != stdiotest.AppsListedUI {
		t.Errorf("listed _meta.ui %s, want %s", got, stdiotest.AppsListedUI)
	}
	read := g.ReadResource(ctx, r, stdiotest.AppsURI)
	if read.Result == nil || len(read.Result.Contents) != 1 || read.Result.Contents[0].Meta != nil {
		t.Fatalf("read %+v", read)
	}
}
