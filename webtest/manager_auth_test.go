package webtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/server"
)

// Sign-in in the Manager, in the playground: "Add the sign-in demo" adds
// the demo behind the demo authorization server; once active, it shows
// "Needs sign-in" where discovery was refused, with why; Sign in opens the
// server's sign-in window, the user approves, the row says "Signed in" and
// lists the tools; a test call works; Sign out forgets it.
func TestManagerSignIn(t *testing.T) {
	needBundle(t)
	as := demo.NewAuthServer(demo.AuthOptions{})
	mcp := newMCPServer(t, as.Handler())
	b := newBackend(t, withManager(nil), func(c *server.Config) {
		c.DemoAuth = &server.DemoServer{DisplayName: "Signed", Endpoint: mcp.endpoint()}
	})
	p := openManager(t, b)

	p.run(`window.beforeReload = true; await ui.click('button', 'Add the sign-in demo', document);`)
	waitReloaded(p)
	loadUI(p)
	p.run(`await ui.click('button', 'Paused', await ui.row('Signed'));
		await ui.click('button', 'Activate');
		await ui.get('button', 'Active', await ui.row('Signed'));`)
	if reg := regFile(t, b, "Signed"); reg == nil || reg["endpoint"] != mcp.endpoint() {
		t.Fatalf("registration %v", reg)
	}

	// Expand: discovery is refused; the row explains and offers Sign in.
	p.run(`const row = await ui.row('Signed');
		await ui.click('button', 'Show or hide tools', row);
		await ui.withText('This server asks you to sign in before it can be used.', row);
		await ui.withText('Needs sign-in', row);
		await ui.withText('mcp.auth_required', row);`)
	shots(p, "manager-needs-sign-in")

	popup := chromedp.WaitNewTarget(p.ctx, func(info *target.Info) bool { return info.Type == "page" })
	p.run(`const row = await ui.row('Signed');
		const notice = row.querySelector('.tt-mcp-auth-notice');
		await ui.click('button', 'Sign in', notice);`)
	var id target.ID
	select {
	case id = <-popup:
	case <-time.After(20 * time.Second):
		t.Fatal("no sign-in window opened")
	}
	pctx, cancel := chromedp.NewContext(p.ctx, chromedp.WithTargetID(id))
	defer cancel()
	wctx, wcancel := context.WithTimeout(pctx, 30*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID("approve")), chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatalf("approval page: %v", err)
	}

	p.run(`const row = await ui.row('Signed');
		await ui.withText('Signed in', row);
		await ui.withText('5 tools', row);
		await ui.get('button', 'Sign out', row);`)
	shots(p, "manager-signed-in")
	title := evalJS[string](p, `return (await ui.row('Signed')).querySelector('.tt-mcp-auth-signed-in').title;`)
	if !strings.Contains(title, demo.Scope) || !strings.Contains(title, "Renewed automatically") {
		t.Fatalf("chip details: %q", title)
	}

	p.run(`await ui.click('button', 'Test call', document);
		await ui.withText('Test MCP tool');
		await ui.choose('Server', 'Signed');
		await ui.choose('Tool', 'Echo');
		await ui.type(/^text\b/, 'signed in');
		await ui.click('button', 'Run test');
		await ui.withText('Server responded');
		await ui.click('button', 'Close');`)

	p.run(`const row = await ui.row('Signed');
		await ui.click('button', 'Sign out', row);
		await ui.gone(() => row.querySelector('.tt-mcp-auth-signed-in'), 'the Signed in chip');`)
	for _, secret := range as.Issued() {
		if html := evalJS[string](p, `return document.documentElement.outerHTML;`); strings.Contains(html, secret) {
			t.Fatal("the page holds a credential")
		}
	}
}
