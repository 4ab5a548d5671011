package webtest

// Richer ext-apps example servers from npm as independent peers (issue 30,
// "Tests and figures"), beside server-basic-vanillajs (apps_test.go): each
// in the SillyTavern stand-in with the real extension, the model calls its
// App tool, the App appears below the tool message with what the tool
// gave, and the App calls its server back through ttmcp's gates, audited
// as the App's. Both Apps are single documents (their scripts, styles and
// libraries inline) that fetch nothing: they run offline under the
// restrictive default CSP.

import (
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/jsapi"
)

// newNodeAppEnv is the stand-in with the npm App server pkg as Demo.
func newNodeAppEnv(t *testing.T, pkg string, perms map[string]string) *stEnv {
	t.Helper()
	endpoint := startNodeMCP(t, pkg)
	target, err := url.Parse(strings.TrimSuffix(endpoint, "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	return newSTEnvWith(t, httputil.NewSingleHostReverseProxy(target), perms)
}

// chatAppShown waits for the App below a tool message to be shown and
// returns its frame's src.
func chatAppShown(t *testing.T, p *page) string {
	t.Helper()
	state := evalJS[string](p, `
		for (let i = 0; i < 400; i++) {
			const f = document.querySelector('#chat .mes .mes_text + .ttmcp-apps .ttmcp-app-frame');
			if (f && f.dataset.ttmcpState === 'shown') return 'shown ' + f.src;
			const failed = document.querySelector('.ttmcp-app-failed');
			if (failed) return 'failed: ' + failed.textContent;
			await new Promise((r) => setTimeout(r, 50));
		}
		const f = document.querySelector('.ttmcp-app-frame');
		return f ? 'stuck: ' + f.outerHTML : 'no frame';`)
	src, ok := strings.CutPrefix(state, "shown ")
	if !ok {
		t.Fatalf("the App: %s", state)
	}
	return src
}

// inFrame evaluates js (an expression) in the App's own target.
func inFrame[T any](t *testing.T, p *page, src, js string) T {
	t.Helper()
	fctx, done, ok := appTarget(t, p, src)
	if !ok {
		t.Fatalf("no target for %s", src)
	}
	defer done()
	v, err := chromedp.Run(fctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s in the App: %v", js, err)
	}
	return v
}

// appCalls returns the audit's tool calls made by Apps, newest first.
func (e *stEnv) appCalls() []jsapi.McpAuditEntry {
	var out []jsapi.McpAuditEntry
	for _, a := range e.audit() {
		if a.Source == jsapi.AuditSourceApp && a.Kind == jsapi.AuditKindToolCall {
			out = append(out, a)
		}
	}
	return out
}

// viewChat closes SillyTavern's open drawers and scrolls the App into the
// middle of the chat, as a user reading the chat sees it.
func viewChat(p *page) {
	p.run(`
		for (const c of document.querySelectorAll('.drawer-content.openDrawer')) c.closest('.drawer')?.querySelector('.drawer-toggle')?.click();
		document.querySelector('.ttmcp-app-frame').scrollIntoView({ block: 'center' });`)
}

// @modelcontextprotocol/server-system-monitor: the model calls
// get-system-info; the App shows its result (hostname, platform) and then
// polls poll-system-stats, an app-only tool the model is never offered,
// every two seconds through ttmcp (Allow here; under Ask, one question at
// a time: TestSTSystemMonitorAppPollingUnderAsk), drawing its chart.js chart
// and memory bar from the answers; each poll is audited as the App's and
// reaches the server. The App's own Stop ends the polling.
func TestSTSystemMonitorApp(t *testing.T) {
	e := newNodeAppEnv(t, "server-system-monitor", map[string]string{"get-system-info": "allow", "poll-system-stats": "allow"})
	e.llm.script(calls(toolCall{"c1", "mcp__Demo__get-system-info", `{}`}), reply{Text: "Here is the system."})
	r := e.send("How is the machine doing?", false)
	if r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	for i, q := range e.llm.requests() {
		if names := q.toolNames(); slices.Contains(names, "mcp__Demo__poll-system-stats") || !slices.Contains(names, "mcp__Demo__get-system-info") {
			t.Errorf("request %d offered %v; want get-system-info, never the app-only poll-system-stats", i+1, names)
		}
	}
	// The model's result: the structured content as SillyTavern's tool
	// message shows it.
	var info struct{ Hostname, Platform string }
	for _, m := range r.Chat {
		for _, inv := range m.Extra.ToolInvocations {
			if inv.Name == "mcp__Demo__get-system-info" {
				if m := regexp.MustCompile(`\*\*hostname\*\*: (.+)`).FindStringSubmatch(inv.Result); m != nil {
					info.Hostname = m[1]
				}
				if m := regexp.MustCompile(`\*\*platform\*\*: (.+)`).FindStringSubmatch(inv.Result); m != nil {
					info.Platform = m[1]
				}
			}
		}
	}
	if info.Hostname == "" || info.Platform == "" {
		t.Fatalf("no get-system-info result in the chat: %+v", r.Chat)
	}
	src := chatAppShown(t, e.p)
	// The App picks its colours by prefers-color-scheme only (not the host
	// context's theme): the frame's color-scheme makes it SillyTavern's.
	if !inFrame[bool](t, e.p, src, `matchMedia('(prefers-color-scheme: dark)').matches`) {
		t.Error("the App on SillyTavern's dark chat prefers a light scheme")
	}
	// The App polls by itself once it has the result; its status line
	// shows the time of the last answer, its memory bar the server's
	// figure.
	var shown map[string]string
	waitUntil(t, "the App's first poll", func() bool {
		shown = inFrame[map[string]string](t, e.p, src, `({
			hostname: document.getElementById('info-hostname').textContent,
			platform: document.getElementById('info-platform').textContent,
			status: document.getElementById('status-text').textContent,
			memory: document.getElementById('memory-percent').textContent,
			button: document.getElementById('poll-toggle-btn').textContent,
		})`)
		return regexp.MustCompile(`^\d\d:\d\d:\d\d$`).MatchString(shown["status"]) || shown["status"] == "Error"
	})
	if shown["hostname"] != info.Hostname || shown["platform"] != info.Platform {
		t.Errorf("the App shows %v; the tool gave %+v", shown, info)
	}
	if !regexp.MustCompile(`^\d+%$`).MatchString(shown["memory"]) || shown["button"] != "Stop" {
		t.Errorf("the App after its poll: %v", shown)
	}
	waitUntil(t, "two polls", func() bool { return len(e.appCalls()) >= 2 })
	for _, a := range e.appCalls() {
		if a.NativeName != "poll-system-stats" || a.AppTool == nil || *a.AppTool != "get-system-info" || a.Permission != "allow" || a.Outcome != jsapi.OutcomeKnownResponse {
			t.Errorf("an App call: %+v", a)
		}
	}
	var polls int
	for _, c := range e.mcp.toolCalls() {
		if c.Tool == "poll-system-stats" {
			polls++
		}
	}
	if polls < 2 {
		t.Errorf("the server got %d polls", polls)
	}
	viewChat(e.p)
	screenshot(e.p, "apps-system-monitor-1280", 1280, 800)
	viewChat(e.p)
	screenshot(e.p, "apps-system-monitor-390", 390, 844)
	// The App's own Stop: polling ends.
	clickInFrame(t, e.p, ".ttmcp-app-frame", "#poll-toggle-btn")
	if s := inFrame[string](t, e.p, src, `document.getElementById('status-text').textContent`); s != "Stopped" {
		t.Errorf("after the App's Stop its status says %q", s)
	}
}

// The same App with its poll under Ask: the first poll asks the user,
// naming the App, and while that question is open the App's next polls
// (every two seconds) are refused in the page without a second popup,
// without reaching the server and without an audit line; the answer lets
// that one poll through, once.
func TestSTSystemMonitorAppPollingUnderAsk(t *testing.T) {
	e := newNodeAppEnv(t, "server-system-monitor", map[string]string{"get-system-info": "allow", "poll-system-stats": "ask"})
	e.llm.script(calls(toolCall{"c1", "mcp__Demo__get-system-info", `{}`}), reply{Text: "Here is the system."})
	if r := e.send("How is the machine doing?", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	chatAppShown(t, e.p)
	polls := func() int {
		n := 0
		for _, c := range e.mcp.toolCalls() {
			if c.Tool == "poll-system-stats" {
				n++
			}
		}
		return n
	}
	open := func() int {
		return evalJS[int](e.p, `return document.querySelectorAll('dialog.popup .tt-mcp-approval').length;`)
	}
	waitUntil(t, "the first poll's question", func() bool { return open() == 1 })
	// two more polls come while it is open (the App polls every 2 s)
	time.Sleep(4500 * time.Millisecond)
	if n := open(); n != 1 {
		t.Fatalf("%d approval popups open after three polls; want 1", n)
	}
	if n, a := polls(), len(e.appCalls()); n != 0 || a != 0 {
		t.Fatalf("before the answer the server got %d polls and the audit has %d App calls", n, a)
	}
	if text := e.answerPopup("Allow once"); !strings.Contains(text, "(App Demo: get-system-info)") {
		t.Errorf("the Ask popup: %q", text)
	}
	waitUntil(t, "the allowed poll at the server", func() bool { return polls() == 1 })
	waitUntil(t, "its audit line", func() bool { return len(e.appCalls()) == 1 })
	if a := e.appCalls()[0]; a.NativeName != "poll-system-stats" || a.Permission != "ask" || a.Approval != "once" || a.Outcome != jsapi.OutcomeKnownResponse {
		t.Errorf("the App's call: %+v", a)
	}
	// The App's own Stop ends the polling; a question open then is denied.
	clickInFrame(t, e.p, ".ttmcp-app-frame", "#poll-toggle-btn")
	if open() == 1 {
		e.answerPopup("Deny")
	}
}

// @modelcontextprotocol/server-cohort-heatmap (React): the model calls
// get-cohort-data; the App draws its heatmap from its own call of that
// tool, with its chosen arguments (it ignores the result it is given), and
// a change of its Metric calls it again. get-cohort-data is Ask, so each
// of the App's calls asks the user first, naming the App: Deny sends
// nothing and the App says it failed; Allow once runs it and the heatmap
// shows the new metric.
func TestSTCohortHeatmapApp(t *testing.T) {
	e := newNodeAppEnv(t, "server-cohort-heatmap", map[string]string{"get-cohort-data": "allow"})
	e.llm.script(calls(toolCall{"c1", "mcp__Demo__get-cohort-data", `{"metric":"retention"}`}), reply{Text: "Here is the retention."})
	if r := e.send("Show the cohort retention", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	src := chatAppShown(t, e.p)
	// Its first call, on mount, under Allow.
	var heat map[string]any
	waitUntil(t, "the heatmap", func() bool {
		heat = inFrame[map[string]any](t, e.p, src, `({
			title: document.querySelector('h1')?.textContent ?? '',
			cells: document.querySelectorAll('[class*="_cell_"]').length,
			loading: !!document.querySelector('[class*="_loading_"]'),
			failed: document.querySelector('[class*="_error_"]')?.textContent ?? '',
		})`)
		return heat["cells"].(float64) > 0 || heat["failed"] != ""
	})
	if heat["title"] != "Cohort Retention Analysis" || heat["cells"].(float64) < 12 || heat["failed"] != "" {
		t.Errorf("the App: %v", heat)
	}
	waitUntil(t, "the App's call", func() bool { return len(e.appCalls()) >= 1 })
	first := e.appCalls()[0]
	if first.NativeName != "get-cohort-data" || first.AppTool == nil || *first.AppTool != "get-cohort-data" || first.Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("the App's call: %+v", first)
	}
	viewChat(e.p)
	screenshot(e.p, "apps-cohort-heatmap-1280", 1280, 800)
	viewChat(e.p)
	screenshot(e.p, "apps-cohort-heatmap-390", 390, 844)
	e.p.run(`await window.__TAURITAVERN__.api.mcp.tools.setPermission({ registrationId: %s, nativeName: 'get-cohort-data', permission: 'ask' });`, e.id)
	before := len(e.mcp.toolCalls())
	// A change of metric calls the tool again: Ask; Deny sends nothing.
	setSelect := func(value string) {
		inFrame[bool](t, e.p, src, `(() => {
			const s = document.querySelector('select');
			s.value = `+strconv.Quote(value)+`;
			s.dispatchEvent(new Event('change', { bubbles: true }));
			return true;
		})()`)
	}
	setSelect("revenue")
	if text := e.answerPopup("Deny"); !strings.Contains(text, "(App Demo: get-cohort-data)") || !strings.Contains(text, "An MCP App in the chat asked") || !strings.Contains(text, `"metric": "revenue"`) {
		t.Errorf("the Ask popup: %q", text)
	}
	waitUntil(t, "the App told of the denial", func() bool {
		return inFrame[string](t, e.p, src, `document.querySelector('[class*="_error_"]')?.textContent ?? ''`) == "Failed to load data"
	})
	e.p.run(`while (document.querySelector('dialog.popup .tt-mcp-approval')) await new Promise((r) => setTimeout(r, 20));`)
	setSelect("active")
	e.answerPopup("Allow once")
	waitUntil(t, "the active users' heatmap", func() bool {
		return inFrame[float64](t, e.p, src, `document.querySelectorAll('[class*="_cell_"]').length`) > 0
	})
	var approvals []string
	waitUntil(t, "the Ask calls in the audit", func() bool {
		approvals = approvals[:0]
		for _, a := range e.appCalls() {
			if a.Permission == "ask" {
				approvals = append(approvals, a.Approval+" "+a.Outcome)
			}
		}
		return len(approvals) >= 2
	})
	if want := []string{"once known_response", "denied not_sent"}; !slices.Equal(approvals, want) {
		t.Errorf("the App's Ask calls, newest first: %v, want %v", approvals, want)
	}
	calls := e.mcp.toolCalls()
	if len(calls) != before+1 || !strings.Contains(calls[len(calls)-1].Body, `"active"`) {
		t.Errorf("the server got %d calls after the switch to Ask (want 1, the allowed one with metric active): %+v", len(calls)-before, calls[before:])
	}
}
