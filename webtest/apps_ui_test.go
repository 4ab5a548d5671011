package webtest

// MCP Apps in the SillyTavern stand-in, what the user does to them (issue
// 30; DECISIONS "MCP Apps: the host in SillyTavern's chat"): Stop reaches
// an App's own tool call (SillyTavern's Stop, the App's line, the App's own
// notifications/cancelled), fullscreen where the App declares it, and the
// App across swipes and deletions.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/jsapi"
)

// uiApp speaks the App protocol by hand and shows everything it is told:
// #mode its display mode (host context), #dims its container, #result the
// tool's result, #answer the answer to its fullscreen request, #slow what
// came of its call of the slow tool. Buttons: #full asks for fullscreen,
// #slow calls the slow tool, #cancel cancels that call
// (notifications/cancelled). Once it has its result it puts a line into
// the model's context. DISPLAY_MODES is what it declares.
const uiApp = `<!doctype html><html><body style="margin:0;font:16px sans-serif;background:#1d3557;color:#f1faee">
<div style="padding:8px"><b>UI probe</b> mode <span id="mode">?</span> · dims <span id="dims">?</span><br>
result <span id="result">none</span> · answer <span id="answer">none</span> · slow <span id="slow">none</span><br>
<button id="full">Full screen</button> <button id="slow-btn">Slow call</button> <button id="cancel">Cancel it</button></div>
<script>
const send = (m) => parent.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
const $ = (id) => document.getElementById(id);
const pending = new Map();
let next = 10;
const ask = (method, params) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); send({ id, method, params }); ask.last = id; });
const show = (ctx) => {
  if (ctx.displayMode) $('mode').textContent = ctx.displayMode;
  if (ctx.containerDimensions) $('dims').textContent = JSON.stringify(ctx.containerDimensions);
};
addEventListener('message', (e) => {
  const m = e.data;
  if (!m || m.jsonrpc !== '2.0') return;
  if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  if (m.id === 1 && m.result) { show(m.result.hostContext || {}); send({ method: 'ui/notifications/initialized', params: {} }); return; }
  if (m.method === 'ui/notifications/host-context-changed') show(m.params || {});
  if (m.method === 'ui/notifications/tool-result') {
    $('result').textContent = (m.params.content || []).map((c) => c.text).join(' ');
    ask('ui/update-model-context', { content: [{ type: 'text', text: 'the probe is on the board' }] });
  }
  if (m.method === 'ui/resource-teardown' && m.id !== undefined) send({ id: m.id, result: {} });
});
$('full').onclick = async () => {
  const r = await ask('ui/request-display-mode', { mode: 'fullscreen' });
  $('answer').textContent = r.result ? r.result.mode : 'error ' + JSON.stringify(r.error);
};
$('slow-btn').onclick = async () => {
  $('slow').textContent = 'running';
  const r = await ask('tools/call', { name: 'slow', arguments: {} });
  $('slow').textContent = r.result ? (r.result.isError ? 'error: ' : '') + r.result.content.map((c) => c.text).join(' ') : 'error ' + JSON.stringify(r.error);
};
$('cancel').onclick = () => send({ method: 'notifications/cancelled', params: { requestId: ask.last, reason: 'the App cancelled' } });
send({ id: 1, method: 'ui/initialize', params: { protocolVersion: '2026-01-26', appInfo: { name: 'probe', version: '1' }, appCapabilities: { availableDisplayModes: DISPLAY_MODES } } });
</script></body></html>`

// uiAppServer is a go-sdk server (stateful: a cancellation reaches the
// call it names) with two App tools — show (its App declares fullscreen)
// and inline (its App declares inline only) — and slow, for the Apps only,
// which runs until it is cancelled or a minute passes.
type uiAppServer struct {
	mu        sync.Mutex
	slowCalls int
	cancelled int
}

func (u *uiAppServer) counts() (calls, cancelled int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.slowCalls, u.cancelled
}

func (u *uiAppServer) handler() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	for tool, modes := range map[string]string{"show": `['inline', 'fullscreen']`, "inline": `['inline']`} {
		uri := "ui://probe/" + tool + ".html"
		s.AddTool(&mcp.Tool{Name: tool, Description: "Show the probe", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shown by " + tool}}}, nil
			})
		doc := strings.Replace(uiApp, "DISPLAY_MODES", modes, 1)
		s.AddResource(&mcp.Resource{URI: uri, Name: tool, MIMEType: "text/html;profile=mcp-app"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/html;profile=mcp-app", Text: doc}}}, nil
		})
	}
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Take a while", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://probe/show.html", "visibility": []string{"app"}}}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.mu.Lock()
			u.slowCalls++
			u.mu.Unlock()
			select {
			case <-ctx.Done():
				u.mu.Lock()
				u.cancelled++
				u.mu.Unlock()
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
			}
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// showApp has the model call tool (show or inline) and waits until its App
// is shown; it returns the App frame's src.
func showApp(t *testing.T, e *stEnv, tool, reply string) string {
	t.Helper()
	e.llm.script(calls(toolCall{"c-" + tool, "mcp__Demo__" + tool, `{}`}), reply2(reply))
	e.p.run(`window.__seenFrames = new Set([...document.querySelectorAll('.ttmcp-app-frame')].map((f) => f.src));`)
	if r := e.send("Show the probe", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	src := evalJS[string](e.p, `
		for (let i = 0; i < 400; i++) {
			const f = [...document.querySelectorAll('.ttmcp-app-frame')].find((x) => !__seenFrames.has(x.src));
			if (f && f.dataset.ttmcpState === 'shown') return f.src;
			const failed = document.querySelector('.ttmcp-app-failed');
			if (failed) return 'failed: ' + failed.textContent;
			await new Promise((r) => setTimeout(r, 50));
		}
		return 'not shown';`)
	if !strings.HasPrefix(src, "http") {
		t.Fatalf("the App: %s", src)
	}
	waitInFrame(t, e.p, src, "#result", "shown by "+tool)
	return src
}

func reply2(text string) reply { return reply{Text: text} }

// waitInFrame waits until selector's text in the App at src is want (or starts with it).
func waitInFrame(t *testing.T, p *page, src, selector, want string) string {
	t.Helper()
	var got string
	for i := 0; i < 200; i++ {
		got = textInFrame(t, p, src, selector)
		if strings.HasPrefix(got, want) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s in the App: %q, want %q", selector, got, want)
	return got
}

// Stop reaches an App's own call of a slow tool: SillyTavern's Stop (with
// no generation running, as /stop does it), the Stop of the App's line, and
// the App's own notifications/cancelled each cancel the call in ttmcp;
// the App is told the outcome is unknown (the call was sent) — or, when it
// cancelled itself, nothing, as the protocol says — and the audit says so
// (cancelled at once, where the tool would have run a minute).
func TestSTAppCallStopped(t *testing.T) {
	u := &uiAppServer{}
	e := newSTEnvWith(t, u.handler(), map[string]string{"show": "allow", "slow": "allow"})
	src := showApp(t, e, "show", "Here it is.")
	busy := func() string {
		return evalJS[string](e.p, `const b = document.querySelector('.ttmcp-app-busy'); return b && !b.hidden ? b.textContent : '';`)
	}
	startSlow := func(want int) {
		t.Helper()
		clickInFrame(t, e.p, ".ttmcp-app-frame", "#slow-btn")
		for i := 0; i < 200; i++ {
			if n, _ := u.counts(); n == want {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if n, _ := u.counts(); n != want {
			t.Fatalf("the server got %d slow calls, want %d", n, want)
		}
		if b := busy(); !strings.Contains(b, "Demo: the App runs slow") || !strings.Contains(b, "Stop") {
			t.Errorf("while it runs the App's line says %q", b)
		}
	}
	// The backend's audit: the slow tool would run a minute; cancelled,
	// its outcome is unknown (mcp.call_cancelled) at once. (Whether the
	// server's handler hears of it is go-sdk's; it is logged.)
	waitCancelled := func(want int) {
		t.Helper()
		var got []string
		for i := 0; i < 200; i++ {
			got = got[:0]
			for _, a := range e.audit() {
				if a.Source == jsapi.AuditSourceApp && a.NativeName == "slow" {
					got = append(got, a.Outcome+" "+a.Code)
				}
			}
			if len(got) == want {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if len(got) != want || got[0] != jsapi.OutcomeOutcomeUnknown+" mcp.call_cancelled" {
			t.Fatalf("the audit of the App's slow calls, newest first: %v, want %d, the newest cancelled", got, want)
		}
		_, c := u.counts()
		t.Logf("the server's handler saw %d cancellations of %d", c, want)
	}

	// SillyTavern's Stop, no generation running (/stop, stopGeneration).
	startSlow(1)
	e.p.run(`stChat.stop();`)
	waitCancelled(1)
	if got := waitInFrame(t, e.p, src, "#slow", "error: Whether the tool ran is unknown"); !strings.Contains(got, "mcp.") {
		t.Errorf("the App was told %q", got)
	}
	if b := busy(); b != "" {
		t.Errorf("after the Stop the App's line still says %q", b)
	}

	// The Stop of the App's own line.
	startSlow(2)
	e.p.run(`
		for (const c of document.querySelectorAll('.drawer-content.openDrawer')) c.closest('.drawer')?.querySelector('.drawer-toggle')?.click();
		document.querySelector('.ttmcp-app-busy').scrollIntoView({ block: 'center' });`)
	shots(e.p, "apps-call-running")
	e.p.run(`document.querySelector('.ttmcp-app-busy .ttmcp-app-stop').click();`)
	waitCancelled(2)
	waitInFrame(t, e.p, src, "#slow", "error: Whether the tool ran is unknown")

	// The App cancels its own request.
	startSlow(3)
	clickInFrame(t, e.p, ".ttmcp-app-frame", "#cancel")
	waitCancelled(3)
	for i := 0; i < 40 && busy() != ""; i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if b := busy(); b != "" {
		t.Errorf("after the App's cancellation its line says %q", b)
	}
	if got := textInFrame(t, e.p, src, "#slow"); got != "running" {
		t.Errorf("the App was answered a request it cancelled: %q", got)
	}

	if f := evalJS[int](e.p, `return document.querySelectorAll('.ttmcp-app-frame').length;`); f != 1 {
		t.Errorf("%d App frames after the Stops, want the App still there", f)
	}
}

// An App that declares fullscreen gets it on its request (a click in it):
// its box covers the page in the top layer with an exit control, the App
// is told its display mode and room; Escape and the exit control bring it
// back inline at its height; an App that declares inline only is answered
// inline and stays in the message.
func TestSTAppFullscreen(t *testing.T) {
	u := &uiAppServer{}
	e := newSTEnvWith(t, u.handler(), map[string]string{"show": "allow", "inline": "allow"})
	src := showApp(t, e, "show", "Here it is.")
	waitInFrame(t, e.p, src, "#mode", "inline")
	inlineHeight := evalJS[string](e.p, `return document.querySelector('.ttmcp-app-frame').style.height;`)
	type box struct {
		Fullscreen, Open, Exit bool
		Top, Left, W, H        float64
		VW, VH                 float64
		Focus                  string
	}
	state := func() box {
		return evalJS[box](e.p, `
			const f = document.querySelector('.ttmcp-app-frame');
			const b = f.parentElement;
			const r = b.getBoundingClientRect();
			let open = false;
			try { open = b.matches(':popover-open'); } catch {}
			return { fullscreen: b.classList.contains('ttmcp-app-fullscreen'), open, exit: !!b.querySelector('.ttmcp-app-exit'),
				top: r.top, left: r.left, w: r.width, h: r.height, vw: innerWidth, vh: innerHeight,
				focus: document.activeElement ? document.activeElement.className : '' };`)
	}
	enter := func() {
		t.Helper()
		clickInFrame(t, e.p, ".ttmcp-app-frame", "#full")
		waitInFrame(t, e.p, src, "#answer", "fullscreen")
		waitInFrame(t, e.p, src, "#mode", "fullscreen")
		if s := state(); !s.Fullscreen || !s.Open || !s.Exit || s.Top != 0 || s.Left != 0 || s.W != s.VW || s.H != s.VH {
			t.Fatalf("fullscreen: %+v", s)
		}
	}
	enter()
	if dims := textInFrame(t, e.p, src, "#dims"); !strings.Contains(dims, `"height"`) {
		t.Errorf("the App's room in fullscreen: %s", dims)
	}
	e.p.run(`for (const c of document.querySelectorAll('.drawer-content.openDrawer')) c.closest('.drawer')?.querySelector('.drawer-toggle')?.click();`)
	shots(e.p, "apps-fullscreen")
	// The room follows the window (the screenshots resized it to 1280 × 800
	// last): the frame's own size on the overlay.
	room := evalJS[string](e.p, `const f = document.querySelector('.ttmcp-app-frame'); return JSON.stringify({ width: f.clientWidth, height: f.clientHeight });`)
	if !strings.HasPrefix(room, `{"width":12`) {
		t.Errorf("the frame in fullscreen at 1280 px: %s", room)
	}
	waitInFrame(t, e.p, src, "#dims", room)
	// Escape (the exit control has the focus).
	if s := state(); !strings.Contains(s.Focus, "ttmcp-app-exit") {
		t.Errorf("the focus in fullscreen is on %q", s.Focus)
	}
	if err := chromedp.Do(e.p.ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	waitInFrame(t, e.p, src, "#mode", "inline")
	if s := state(); s.Fullscreen || s.Open || s.Exit {
		t.Errorf("after Escape: %+v", s)
	}
	if h := evalJS[string](e.p, `return document.querySelector('.ttmcp-app-frame').style.height;`); h != inlineHeight {
		t.Errorf("back inline the frame is %s high, was %s", h, inlineHeight)
	}
	// The exit control.
	enter()
	ctx, cancel := context.WithTimeout(e.p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".ttmcp-app-exit"))); err != nil {
		t.Fatal(err)
	}
	waitInFrame(t, e.p, src, "#mode", "inline")
	if s := state(); s.Fullscreen || s.Exit {
		t.Errorf("after the exit control: %+v", s)
	}
	// Without the user's click the App is answered inline.
	fctx, done, ok := appTarget(t, e.p, src)
	if !ok {
		t.Fatal("no App target")
	}
	if _, err := chromedp.Run(fctx, chromedp.Evaluate[bool](`document.getElementById('answer').textContent = 'none'; document.getElementById('full').click(); true`)); err != nil {
		t.Fatal(err)
	}
	done()
	waitInFrame(t, e.p, src, "#answer", "inline")
	if s := state(); s.Fullscreen {
		t.Errorf("fullscreen without the user's click: %+v", s)
	}

	// An App that declares inline only.
	src2 := showApp(t, e, "inline", "Here it is inline.")
	fctx, done, ok = appTarget(t, e.p, src2)
	if !ok {
		t.Fatal("no App target")
	}
	if err := chromedp.Do(fctx, chromedp.Click(chromedp.CSS("#full"))); err != nil {
		t.Fatal(err)
	}
	done()
	waitInFrame(t, e.p, src2, "#answer", "inline")
	if n := evalJS[int](e.p, `return document.querySelectorAll('.ttmcp-app-fullscreen').length;`); n != 0 {
		t.Errorf("%d Apps in fullscreen; the inline-only App asked", n)
	}
}

// messageListeners counts the page window's message listeners (the App
// bridges' transports among them), through the DevTools protocol.
func messageListeners(t *testing.T, p *page) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	win, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "window"})
	if err != nil {
		t.Fatal(err)
	}
	if win.ExceptionDetails != nil {
		t.Fatal(fmt.Errorf("%s", win.ExceptionDetails.Text))
	}
	ls, err := chromedp.Call(ctx, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{ObjectID: win.Result.ObjectID})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range ls.Listeners {
		if l.Type == "message" {
			n++
		}
	}
	return n
}

// Inline, the App's room follows its message: the window narrowed to a
// phone's 390 px, the App hears its container's new width (host context
// changed), and the width it was drawn with before.
func TestSTAppFollowsTheChatWidth(t *testing.T) {
	u := &uiAppServer{}
	e := newSTEnvWith(t, u.handler(), map[string]string{"show": "allow", "inline": "allow"})
	src := showApp(t, e, "show", "Here it is.")
	waitInFrame(t, e.p, src, "#mode", "inline")
	room := func() string {
		return evalJS[string](e.p, `const c = document.querySelector('.ttmcp-app-frame').parentElement.parentElement;
			return JSON.stringify({ maxHeight: 900, width: c.clientWidth });`)
	}
	before := room()
	waitInFrame(t, e.p, src, "#dims", before)
	ctx, cancel := context.WithTimeout(e.p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 800)); err != nil {
		t.Fatal(err)
	}
	after := room()
	if after == before {
		t.Fatalf("the App's container kept its width at 390 px: %s", after)
	}
	waitInFrame(t, e.p, src, "#dims", after)
}

// The App across what SillyTavern does to messages (the stand-in does it
// as 1.18.0's script.js: st-chat.js): swiping the reply after the App's
// message (to a new swipe and back) and deleting an earlier message (the
// later ones renumbered) leave the App as it is — the same frame, its
// model context kept; its own message swiped by /swipe (a tool message is
// isSmallSys: the arrows do not swipe it) keeps its records in every swipe
// (SillyTavern carries the extra), so the App stays through the new swipe
// and back; opened again, the chat draws it from the saved records;
// deleting its message tears it down: no frame, no bridge listening, its
// model context gone.
func TestSTAppSwipesAndDeletion(t *testing.T) {
	u := &uiAppServer{}
	e := newSTEnvWith(t, u.handler(), map[string]string{"show": "allow"})
	before := messageListeners(t, e.p)
	src := showApp(t, e, "show", "Here it is.")
	with := messageListeners(t, e.p)
	if with != before+1 {
		t.Errorf("window message listeners: %d before the App, %d with it; want one more (its bridge)", before, with)
	}
	modelContext := func() string {
		return evalJS[string](e.p, `
			const p = Object.entries(SillyTavern.getContext().extensionPrompts).filter(([k, v]) => k.startsWith('ttmcp_app_') && v.value);
			return p.map(([, v]) => v.value).join(' | ');`)
	}
	for i := 0; i < 100 && modelContext() == ""; i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if c := modelContext(); !strings.Contains(c, "the probe is on the board") {
		t.Fatalf("the App's model context: %q", c)
	}
	e.p.run(`document.querySelector('.ttmcp-app-frame').dataset.probe = 'first';`)
	same := func(step string) {
		t.Helper()
		got := evalJS[string](e.p, `
			await new Promise((r) => setTimeout(r, 300));
			const f = [...document.querySelectorAll('.ttmcp-app-frame')];
			return f.length + ' ' + f.map((x) => (x.dataset.probe || 'new') + ' ' + x.dataset.ttmcpState + ' in ' + x.closest('.mes')?.getAttribute('mesid')).join(', ');`)
		if !strings.HasPrefix(got, "1 first shown") {
			t.Errorf("%s: the App frames: %s", step, got)
		}
		if c := modelContext(); !strings.Contains(c, "the probe is on the board") {
			t.Errorf("%s: the App's model context: %q", step, c)
		}
	}
	// The chat: 0 the user's, 1 the tool message with the App, 2 the reply.
	if n := evalJS[int](e.p, `return stChat.chat.length;`); n != 3 {
		t.Fatalf("the chat has %d messages", n)
	}
	// The reply swiped to a new swipe and back.
	e.llm.script(reply2("Here it is, again."))
	if r := evalJS[string](e.p, `return String(await stChat.swipe('right'));`); r != "done" {
		t.Fatalf("swipe right: %s", r)
	}
	same("the reply swiped right")
	if r := evalJS[string](e.p, `return String(await stChat.swipe('left'));`); r != "true" {
		t.Fatalf("swipe left: %s", r)
	}
	same("the reply swiped back")
	// An earlier message deleted: the App's message is renumbered 1 → 0.
	e.p.run(`await stChat.deleteMessage(0);`)
	same("the user's message deleted")
	// The reply deleted: the App's message is the last. The arrows do not
	// swipe it; /swipe does, and SillyTavern carries its extra.
	e.p.run(`await stChat.deleteMessage(1);`)
	if r := evalJS[string](e.p, `return String(await stChat.swipe('right'));`); r != "false" {
		t.Errorf("the arrows swiped the tool message: %s", r)
	}
	e.llm.script(reply2("A swipe of the tool message."))
	if r := evalJS[string](e.p, `return String(await stChat.swipe('right', { source: 'slash_command' }));`); r != "done" {
		t.Fatalf("/swipe right: %s", r)
	}
	same("the App's message swiped to a new swipe")
	if r := evalJS[string](e.p, `return String(await stChat.swipe('left', { source: 'slash_command' }));`); r != "true" {
		t.Fatalf("/swipe left: %s", r)
	}
	same("the App's message swiped back")
	if n := evalJS[int](e.p, `return stChat.chat[0].swipe_info.filter((s) => (s.extra.ttmcp_apps || []).length === 1).length;`); n != 2 {
		t.Errorf("%d of the App message's swipes keep its record, want both", n)
	}
	// Opened again: drawn from the saved record.
	again := evalJS[string](e.p, `
		await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'again');
		for (let i = 0; i < 400; i++) {
			const f = [...document.querySelectorAll('.ttmcp-app-frame')];
			if (f.length === 1 && !f[0].dataset.probe && f[0].src !== %s && f[0].dataset.ttmcpState === 'shown') return 'drawn again';
			await new Promise((r) => setTimeout(r, 50));
		}
		return 'frames: ' + document.querySelectorAll('.ttmcp-app-frame').length;`, src)
	if again != "drawn again" {
		t.Fatalf("the reopened chat: %s", again)
	}
	src = evalJS[string](e.p, `return document.querySelector('.ttmcp-app-frame').src;`)
	waitInFrame(t, e.p, src, "#result", "shown by show")
	// Its message deleted: the App torn down, nothing of it left.
	e.p.run(`await stChat.deleteMessage(0);`)
	gone := evalJS[string](e.p, `
		for (let i = 0; i < 100; i++) {
			if (!document.querySelector('.ttmcp-app-frame, .ttmcp-app')) return 'gone';
			await new Promise((r) => setTimeout(r, 25));
		}
		return 'left: ' + document.querySelectorAll('.ttmcp-app-frame, .ttmcp-app').length;`)
	if gone != "gone" {
		t.Errorf("after its message was deleted: %s", gone)
	}
	for i := 0; i < 40 && messageListeners(t, e.p) != before; i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if n := messageListeners(t, e.p); n != before {
		t.Errorf("window message listeners after the App's message was deleted: %d, want %d as before it", n, before)
	}
	if c := modelContext(); c != "" {
		t.Errorf("the deleted App's model context is still there: %q", c)
	}
}

// A chat of 50 App messages opened draws only the Apps near the view: each
// App's place has its room before it is drawn, so the observer does not see
// 50 empty places in view, draw them all (50 interface reads) and tear most
// down again. Counted in the audit: about one read of the interface per App
// drawn (before, all 50 were read).
func TestSTAppChatOf50DrawsOnlyNearTheView(t *testing.T) {
	e := newSTEnvWith(t, paintAppHandler(), map[string]string{"board": "allow"})
	e.p.run(appMessagesJS, 50, e.id)
	frames := evalJS[int](e.p, `
		await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'fifty');
		for (let k = 0; k < 600; k++) {
			const frames = [...document.querySelectorAll('.ttmcp-app .ttmcp-app-frame')];
			if (document.querySelectorAll('.ttmcp-app').length === 50 && frames.length > 0 && frames.every((f) => f.style.height === '201px')) {
				await new Promise((r) => setTimeout(r, 500)); // anything else it would draw
				return document.querySelectorAll('.ttmcp-app .ttmcp-app-frame').length;
			}
			await new Promise((r) => setTimeout(r, 20));
		}
		return -1;`)
	reads := 0
	for _, a := range e.audit() {
		if a.Source == jsapi.AuditSourceApp && a.Kind == jsapi.AuditKindResourceRead {
			reads++
		}
	}
	t.Logf("%d Apps drawn, %d interface reads", frames, reads)
	// A drawn App growing to its height may push one past the margin (torn down, read again later).
	if frames <= 0 || frames > 8 || reads < frames || reads > frames+2 {
		t.Errorf("opening the chat of 50 drew %d Apps with %d interface reads; want the few near the view, about one read each", frames, reads)
	}
}

// The test console's App may go fullscreen too: its box over the console's
// modal popup (the top layer, opened later), the exit control reachable.
func TestSTAppFullscreenInTheTestConsole(t *testing.T) {
	u := &uiAppServer{}
	e := newSTEnvWith(t, u.handler(), map[string]string{"show": "allow"})
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document);
		await ui.click('button', 'Test call', document);
		await ui.withText('Test MCP tool');
		await ui.choose('Tool', 'show');
		await ui.click('button', 'Run test');
		await ui.withText('Server responded');`)
	src := evalJS[string](e.p, `
		for (let i = 0; i < 400; i++) {
			const f = document.querySelector('.tt-mcp-test-call .ttmcp-app-frame');
			if (f && f.dataset.ttmcpState === 'shown') return f.src;
			await new Promise((r) => setTimeout(r, 50));
		}
		return '';`)
	if src == "" {
		t.Fatal("the App was not shown in the test console")
	}
	clickInFrame(t, e.p, ".tt-mcp-test-call .ttmcp-app-frame", "#full")
	waitInFrame(t, e.p, src, "#mode", "fullscreen")
	// What is on top at the window's centre and at the exit control: the App's box, not the popup.
	top := evalJS[map[string]string](e.p, `
		const box = document.querySelector('.tt-mcp-test-call .ttmcp-app-box');
		const exit = box.querySelector('.ttmcp-app-exit').getBoundingClientRect();
		const at = (x, y) => { const el = document.elementFromPoint(x, y); return el === box || box.contains(el) ? 'the App' : (el ? el.tagName + '.' + el.className : 'nothing'); };
		return { centre: at(innerWidth / 2, innerHeight / 2), exit: at(exit.left + exit.width / 2, exit.top + exit.height / 2) };`)
	if top["centre"] != "the App" || top["exit"] != "the App" {
		t.Errorf("on top in fullscreen over the console: %v", top)
	}
	ctx, cancel := context.WithTimeout(e.p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".tt-mcp-test-call .ttmcp-app-exit"))); err != nil {
		t.Fatal(err)
	}
	waitInFrame(t, e.p, src, "#mode", "inline")
	if n := evalJS[int](e.p, `return document.querySelectorAll('.tt-mcp-test-call .ttmcp-app-frame').length;`); n != 1 {
		t.Errorf("%d Apps in the console after fullscreen, want it back", n)
	}
}
