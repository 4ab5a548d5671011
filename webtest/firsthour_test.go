package webtest

// A SillyTavern user's first hour (issue 17): the page loaded before the
// backend picks it up by itself and offers its tools in the next
// generation; while the backend is down the console gets a bounded number
// of lines; a normal page load writes no error.

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/extension"
)

// withExtension serves the mcp-manager extension, as SillyTavern would.
func withExtension(c *server.Config) {
	c.Extensions = map[string]fs.FS{extension.Name: extension.Files()}
}

// savedBackendURL is a script for openPlayground's before: the Manager's
// saved backend URL is url (as the user would have saved it in the drawer).
func savedBackendURL(url string) string {
	return `localStorage.setItem('ttmcp.playground.extension_settings', JSON.stringify({ mcp_manager: { backendUrl: ` + jsString(url) + ` } }));`
}

func jsString(s string) string {
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + `'`
}

// failedRequests returns the console's "Failed to load resource" lines
// (Chromium's, one per failed request) from index since on.
func failedRequests(p *page, since int) []chromedp.ConsoleMessage {
	var out []chromedp.ConsoleMessage
	for _, m := range p.consoleMessages()[since:] {
		if m.Source == "network" && m.Type == chromedp.ConsoleError {
			out = append(out, m)
		}
	}
	return out
}

// consoleErrors returns the console's errors and exceptions from since on.
func consoleErrors(p *page, since int) []string {
	var out []string
	for _, m := range p.consoleMessages()[since:] {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			out = append(out, m.String()+" ("+m.URL+")")
		}
	}
	return out
}

// The page (SillyTavern, here the playground on another server) loads
// while the backend is not running: the drawer says so, a generation runs
// without MCP tools and says so once. The backend starts a few seconds
// later on its port: with no click the drawer shows the servers and the
// next generation offers the tools. Then the backend goes away again: the
// page keeps trying, with a bounded number of failed requests over a fixed
// window (the old ≈1 s cap made one a second), and recovers by itself.
func TestPageLoadedBeforeTheBackend(t *testing.T) {
	// The backend with Demo registered (active, discovered, Ask and Allow
	// tools), then stopped: ttmcp not running when the page loads.
	b := newBackend(t)
	mcp := newMCPServer(t, demo.Handler())
	setup := b.openHost(t)
	id := evalJS[string](setup, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Demo', endpoint: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await mcp.tools.setPermission({ registrationId: s.id, nativeName: 'echo', permission: 'allow' });
		await mcp.tools.setPermission({ registrationId: s.id, nativeName: 'add', permission: 'ask' });
		await mcp.servers.discover(s.id);
		return s.id;`, mcp.endpoint())
	setup.navigate("about:blank")
	b.stop()

	st := newBackend(t, withExtension)
	b.allow = []string{st.origin()}
	e := &stEnv{b: b, mcp: mcp, llm: newChatServer(t), id: id}
	e.p = openPlayground(t, st, savedBackendURL(b.origin()))
	p := e.p
	loadUI(p)
	p.run(`await ui.withText('The ttmcp backend is not running', document);`)
	loadSTChatNow(p, e.llm)

	// A generation while the backend is down: no MCP tool, said once.
	e.llm.script(reply{Text: "no tools"})
	if r := e.send("hello", false); r.Status != "done" {
		t.Fatalf("the generation without the backend ended %s: %s", r.Status, r.Error)
	}
	if q := e.llm.requests(); len(q) != 1 || len(q[0].toolNames()) != 0 {
		t.Errorf("without the backend the model was offered %v", q[0].toolNames())
	}
	if errs := e.toasts("error"); len(errs) != 1 || errs[0].Title != "MCP tools unavailable" {
		t.Errorf("error toasts %+v; want one saying MCP tools are unavailable", errs)
	}
	down := failedRequests(p, 0)

	// ttmcp serve starts: the drawer shows the servers without a click.
	time.Sleep(3 * time.Second) // not a timing assertion: the page loaded well before the backend
	for _, m := range failedRequests(p, 0) {
		if !strings.Contains(m.Text, "ERR_CONNECTION_REFUSED") || !strings.HasPrefix(m.URL, b.origin()+"/jsapi/tauritavern-mcp.js") {
			t.Errorf("while down: %s (%s); want only the loader's refused imports", m.Text, m.URL)
		}
	}
	if n := len(failedRequests(p, 0)); n < 2 {
		t.Errorf("%d failed loader imports while down (first %d); the page does not try again", n, len(down))
	}
	t.Logf("before the start: %d failed imports", len(failedRequests(p, 0)))
	b.start()
	p.run(`await ui.withText(/Servers · 2/, document);
		await ui.row('Demo');`)
	if s := evalJS[string](p, `return window.__TAURITAVERN__.mcpBridge.state;`); s != "open" {
		t.Errorf("bridge %s after the pickup", s)
	}

	// The next generation offers the tools.
	e.llm.script(calls(toolCall{"c1", "mcp__Demo__echo", `{"text":"up"}`}), reply{Text: "It said up."})
	if r := e.send("Use echo", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if len(reqs) != 3 || !slices.Equal(reqs[1].toolNames(), []string{"mcp__Demo__add", "mcp__Demo__echo", "ttmcp_read_result"}) {
		t.Fatalf("after the pickup the model got %d requests, offered %v", len(reqs), reqs[1].toolNames())
	}
	if got := reqs[2].toolMessages()["c1"]; got != "up" {
		t.Errorf("the tool message is %q; want the text itself", got)
	}
	if errs := e.toasts("error"); len(errs) != 1 {
		t.Errorf("error toasts after the pickup %+v", errs)
	}

	// The backend goes away while the page works: over a fixed window the
	// page's attempts thin out (about 0.1, 0.2, 0.4, 0.8, 1.6, 3.2 s, then
	// every 5 s: 7–8 in 12 s), where the old ≈1 s cap made 14–16.
	const window = 12 * time.Second
	since := len(p.consoleMessages())
	b.stop()
	time.Sleep(window)
	lost := failedRequests(p, since)
	t.Logf("lost: %d failed requests in %v", len(lost), window)
	if n := len(lost); n < 3 || n > 9 {
		t.Errorf("%d failed requests in %v with the backend down; want 3..9", n, window)
	}
	for _, m := range lost {
		if !strings.Contains(m.Text, "ERR_CONNECTION_REFUSED") || m.URL != b.url("/jsapi/session") {
			t.Errorf("while down: %s (%s); want only the session fetch", m.Text, m.URL)
		}
	}
	if errs := consoleErrors(p, since); len(errs) != len(lost) {
		t.Errorf("console errors besides the failed requests: %q", errs)
	}
	b.start()
	p.run(`await new Promise((resolve) => {
		const c = () => window.__TAURITAVERN__.mcpBridge.state === 'open' ? resolve() : setTimeout(c, 50);
		c();
	});`)
}

// The drawer's two states a newcomer meets first, in SillyTavern's shape
// (the page on another server than the backend), with screenshots at both
// widths: the backend not running, and this origin refused — whose command
// is the backend's own (its --data-root and --listen kept) with
// --allow-origin added, and the page loads with no console error but the
// refusal's.
func TestStatePanels(t *testing.T) {
	b := newBackend(t)
	b.stop()
	st := newBackend(t, withExtension)
	p := openPlayground(t, st, savedBackendURL(b.origin()))
	loadUI(p)
	p.run(`await ui.withText('The ttmcp backend is not running', document);
		// the playground opens the drawer with SillyTavern's slide
		await new Promise((r) => { const c = () => jQuery('#mcp_manager_container .inline-drawer-content').is(':animated') ? setTimeout(c, 20) : r(); c(); });`)
	if got := evalJS[string](p, `return document.querySelector('.tt-mcp-state-panel code.tt-mcp-command').textContent;`); got != "ttmcp serve --listen "+b.addr {
		t.Errorf("the not-running panel's command %q", got)
	}
	shots(p, "state-backend-down")

	serve := "ttmcp serve --data-root '/home/user/my data/ttmcp' --listen " + b.addr
	b.configure = append(b.configure, func(c *server.Config) { c.ServeCommand = serve })
	b.start()
	since := len(p.consoleMessages())
	p.run(`await ui.withText('This page’s origin is not allowed', document);`)
	got := evalJS[[]string](p, `return [...document.querySelectorAll('.tt-mcp-state-panel code.tt-mcp-command .tt-mcp-command-part')].map((e) => e.textContent);`)
	want := []string{"ttmcp serve", " --data-root '/home/user/my data/ttmcp'", " --listen " + b.addr, " --allow-origin " + st.origin()}
	if !slices.Equal(got, want) {
		t.Errorf("the refused panel's command %q; want %q", got, want)
	}
	shots(p, "state-origin-refused")
	// Chromium's lines for the 403 itself are all there is (no exception, no error of ours).
	for _, m := range consoleErrors(p, since) {
		if !strings.Contains(m, "403") && !strings.Contains(m, "ERR_CONNECTION_REFUSED") {
			t.Errorf("console: %s", m)
		}
	}
}

// A normal page load writes no error to the console: the playground served
// by the backend, and SillyTavern's shape — the page elsewhere, no backend
// URL saved, so the extension reads ttmcp.json beside its manifest (here
// naming the test's backend, as `ttmcp install-extension --backend` writes
// it; without --backend it names the default, and the extension ships one).
func TestNormalPageLoadIsQuiet(t *testing.T) {
	b := newBackend(t, withExtension)
	p := openManager(t, b)
	time.Sleep(time.Second) // what comes after the Manager shows (its first lists, the reach line)
	if errs := consoleErrors(p, 0); len(errs) != 0 {
		t.Errorf("the playground's console: %q", errs)
	}

	st := newBackend(t, func(c *server.Config) {
		c.Extensions = map[string]fs.FS{extension.Name: withFile{extension.Files(), "ttmcp.json", []byte(`{"backendUrl":"` + b.origin() + `"}` + "\n")}}
	})
	b.stop()
	b.allow = []string{st.origin()}
	b.start()
	q := openPlayground(t, st, savedBackendURL(""))
	loadUI(q)
	q.run(`await ui.withText(/Servers · \d+/, document);`)
	time.Sleep(time.Second)
	if errs := consoleErrors(q, 0); len(errs) != 0 {
		t.Errorf("SillyTavern's console: %q", errs)
	}
	if got := evalJS[string](q, `return window.__TAURITAVERN__.mcpBridge.backend;`); got != b.origin() {
		t.Errorf("the Manager's backend %s; want %s from ttmcp.json", got, b.origin())
	}
}
