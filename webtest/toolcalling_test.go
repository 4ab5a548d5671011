package webtest

// MCP tools in vanilla SillyTavern (issue 8): the real mcp-manager extension
// in the playground offers the Ask/Allow tools through the playground's
// ToolManager (backend/server/playground/host/tools.js, SillyTavern's
// registry), and a SillyTavern Generate loop (testdata/st-chat.js) drives
// the fake chat-completions server of legacy_test.go. Each test checks what
// the model was sent, what the MCP server received, what the chat saved,
// the toasts, and the audit log.

import (
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp/kb"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/extension"
	"github.com/ttmcp/ttmcp/jsapi"
)

// stEnv is the playground with the extension, the demo MCP server
// registered as "Demo" (active, discovered, perms set), the model, and
// st-chat.js loaded.
type stEnv struct {
	b   *backend
	mcp *mcpServer
	llm *chatServer
	p   *page
	id  string
}

func newSTEnv(t *testing.T, perms map[string]string) *stEnv {
	t.Helper()
	return newSTEnvWith(t, demo.Handler(), perms)
}

// newSTEnvWith is newSTEnv with h as the MCP server.
func newSTEnvWith(t *testing.T, h http.Handler, perms map[string]string) *stEnv {
	t.Helper()
	return newSTEnvAt(t, h, "", perms)
}

// newSTEnvAt is newSTEnvWith with Demo registered at a protocol version ("": auto).
func newSTEnvAt(t testing.TB, h http.Handler, protocol string, perms map[string]string) *stEnv {
	t.Helper()
	e := &stEnv{mcp: newMCPServer(t, h), llm: newChatServer(t)}
	e.b = newBackend(t, func(c *server.Config) {
		c.Extensions = map[string]fs.FS{extension.Name: extension.Files()}
	})
	e.p = openPlayground(t, e.b, "")
	loadSTChat(e.p, e.llm)
	e.id = evalJS[string](e.p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Demo', endpoint: %s, protocolVersion: %s || undefined });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		for (const [nativeName, permission] of Object.entries(%s)) {
			await mcp.tools.setPermission({ registrationId: s.id, nativeName, permission });
		}
		await mcp.servers.discover(s.id);
		return s.id;`, e.mcp.endpoint(), protocol, perms)
	return e
}

// loadSTChat loads st-chat.js (SillyTavern's Generate loop) into p once
// the API is ready, with llm as the model, and records the toasts.
func loadSTChat(p *page, llm *chatServer) {
	p.run(`
		await (window.__TAURITAVERN__?.ready ?? new Promise((r) => {
			const c = () => window.__TAURITAVERN__?.ready ? window.__TAURITAVERN__.ready.then(r) : setTimeout(c, 20);
			c();
		}));`)
	loadSTChatNow(p, llm)
}

// loadSTChatNow is loadSTChat without waiting for the API (a page whose
// backend is not running).
func loadSTChatNow(p *page, llm *chatServer) {
	p.run(`
		await import('/webtest/st-chat.js');
		stChat.endpoint = %s;
		window.toasts = [];
		for (const level of ['info', 'success', 'warning', 'error']) {
			const real = toastr[level].bind(toastr);
			toastr[level] = (text, title, options) => {
				toasts.push({ level, text: String(text ?? ''), title: String(title ?? ''), options: options ?? {} });
				return real(text, title, options);
			};
		}`, llm.URL)
}

// stResult is how a send ended, as st-chat.js reports it.
type stResult struct {
	Status string
	Error  string
	Chat   []struct {
		IsUser   bool   `json:"is_user"`
		IsSystem bool   `json:"is_system"`
		Mes      string `json:"mes"`
		Extra    struct {
			ToolInvocations []struct {
				ID, Name, DisplayName, Parameters, Result string
			} `json:"tool_invocations"`
		} `json:"extra"`
	}
}

func (e *stEnv) send(text string, stream bool) stResult {
	return evalJS[stResult](e.p, `return await stChat.send(%s, { stream: %s });`, text, stream)
}

func (e *stEnv) start(text string) {
	e.p.run(`window.pending = stChat.send(%s);`, text)
}

func (e *stEnv) finish() stResult {
	return evalJS[stResult](e.p, `return await window.pending;`)
}

// audit returns the registration's audit entries, newest first.
func (e *stEnv) audit() []jsapi.McpAuditEntry {
	return evalJS[jsapi.McpAuditList](e.p, `return await window.__TAURITAVERN__.api.mcp.audit.list({ registrationId: %s });`, e.id).Entries
}

type stToast struct {
	Level, Text, Title string
	Options            map[string]any
}

func (e *stEnv) toasts(level string) []stToast {
	var out []stToast
	for _, ts := range evalJS[[]stToast](e.p, `return toasts;`) {
		if ts.Level == level {
			out = append(out, ts)
		}
	}
	return out
}

// answerPopup answers the Ask popup once it shows (a button's caption, or
// "Escape" for the key); it returns the popup's text.
func (e *stEnv) answerPopup(button string) string {
	text := evalJS[string](e.p, `
		const dlg = await new Promise((resolve) => {
			const c = () => { const d = document.querySelector('dialog.popup .tt-mcp-approval'); d ? resolve(d.closest('dialog')) : setTimeout(c, 20); };
			c();
		});
		dlg.focus();
		return dlg.querySelector('.tt-mcp-approval').innerText;`)
	if button == "Escape" {
		e.p.keys(kb.Escape)
	} else {
		e.p.run(`[...document.querySelectorAll('dialog.popup .popup-controls .menu_button')].find((b) => b.textContent.trim() === %s).click();`, button)
	}
	return text
}

// reach presses the Manager's "Check again" and returns what it says.
func (e *stEnv) reach() string {
	return evalJS[string](e.p, `
		const section = await new Promise((r) => { const c = () => { const s = document.querySelector('.tt-mcp-reach'); s ? r(s) : setTimeout(c, 20); }; c(); });
		const idle = () => new Promise((r) => { const c = () => section.querySelector('button').disabled ? setTimeout(c, 20) : r(); c(); });
		// a check already under way (a backend event's) ignores the click: wait it out first
		await idle();
		section.querySelector('button').click();
		await new Promise((r) => setTimeout(r, 20));
		await idle();
		const p = section.querySelector('[data-reach]');
		return p.dataset.reach + ': ' + p.textContent;`)
}

func wantAudit(t *testing.T, got []jsapi.McpAuditEntry, want ...string) {
	t.Helper()
	var rows []string
	for _, a := range got {
		rows = append(rows, strings.Join([]string{a.NativeName, a.Permission, a.Approval, a.Outcome, a.Code}, " "))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("audit (newest first):\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// The model is offered the Allow and Ask tools under their aliases (Off
// not) and the reader tool, calls one, gets its result as the text it is
// (not ttmcp's outcome JSON) in the second request — also what the chat's
// tool-call record shows —, and the answer ends the loop — without and
// with streaming. The audit log holds
// each call, and the Manager says the tools reach the model.
func TestSTToolCallReachesTheModel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newSTEnv(t, map[string]string{"echo": "allow", "add": "ask", "fail": "off"})
			e.llm.script(calls(toolCall{"c1", "mcp__Demo__echo", `{"text":"hello"}`}), reply{Text: "It said hello."})
			r := e.send("Use echo", stream)
			if r.Status != "done" {
				t.Fatalf("ended %s: %s", r.Status, r.Error)
			}
			reqs := e.llm.requests()
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests; want 2", len(reqs))
			}
			for i, q := range reqs {
				if names := q.toolNames(); !slices.Equal(names, []string{"mcp__Demo__add", "mcp__Demo__echo", "ttmcp_read_result"}) || q.ToolChoice != "auto" {
					t.Errorf("request %d offered %v (%v); want add, echo and the reader, not fail", i+1, names, q.ToolChoice)
				}
			}
			if got := reqs[1].toolMessages()["c1"]; got != "hello" {
				t.Errorf("the tool message is %q; want the text itself", got)
			}
			if mc := e.mcp.toolCalls(); len(mc) != 1 || mc[0].Tool != "echo" || !strings.Contains(mc[0].Body, `"arguments":{"text":"hello"}`) {
				t.Errorf("the MCP server got %+v", mc)
			}
			if n := len(r.Chat); n != 3 || !r.Chat[1].IsSystem || r.Chat[1].Extra.ToolInvocations[0].DisplayName != "Echo (Demo)" ||
				r.Chat[1].Extra.ToolInvocations[0].Result != "hello" || r.Chat[2].Mes != "It said hello." {
				t.Errorf("chat %+v", r.Chat)
			}
			wantAudit(t, e.audit(), "echo allow none known_response ")
			if info := e.toasts("info"); len(info) != 1 || info[0].Text != "Invoking MCP tool: Echo (Demo)" {
				t.Errorf("progress toasts %+v", info)
			}
			if reach := e.reach(); !strings.HasPrefix(reach, "ready: MCP tools reach the model: the next generation offers 2 tools from 1 server.") {
				t.Errorf("the Manager says %q", reach)
			}
		})
	}
}

// The Manager says why tools do not reach the model: function calling off,
// then nothing allowed; and the request offers no MCP tool then.
func TestSTToolReachReasons(t *testing.T) {
	e := newSTEnv(t, map[string]string{})
	reach := func() string { return strings.SplitN(e.reach(), ":", 2)[0] }
	if got := reach(); got != "nothing_allowed" {
		t.Errorf("nothing permitted: %s", got)
	}
	e.p.run(`SillyTavern.getContext().chatCompletionSettings.function_calling = false;`)
	if got := reach(); got != "function_calling_off" {
		t.Errorf("function calling off: %s", got)
	}
	e.llm.script(reply{Text: "plain"})
	if r := e.send("hi", false); r.Status != "done" || e.llm.requests()[0].Tools != nil {
		t.Errorf("with function calling off the request offered %v", e.llm.requests()[0].toolNames())
	}
}

// A change made behind the Manager's back — here a script calling api.mcp,
// as much as another tab — reaches its "Tools for the model" line without
// a click or a focus: the backend tells every page.
func TestSTReachFollowsAChangeMadeElsewhere(t *testing.T) {
	e := newSTEnv(t, map[string]string{"echo": "allow"})
	says := func(want string) string {
		return evalJS[string](e.p, `
			const text = () => document.querySelector('.tt-mcp-reach [data-reach]')?.textContent ?? '';
			const end = Date.now() + 10000;
			while (!text().includes(%s) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
			return text();`, want)
	}
	if got := says("offers 1 tool from 1 server"); !strings.Contains(got, "offers 1 tool from 1 server") {
		t.Fatalf("before: %q", got)
	}
	e.p.run(`await window.__TAURITAVERN__.api.mcp.tools.setPermission({ registrationId: %s, nativeName: 'add', permission: 'allow' });`, e.id)
	if got := says("offers 2 tools from 1 server"); !strings.Contains(got, "offers 2 tools from 1 server") {
		t.Fatalf("after the script's change the line says %q", got)
	}
	shots(e.p, "st-reach-followed")
}

// Ask: the popup shows the server, the tool and the arguments; "Allow
// once" runs the call, "Always allow" sets Allow and runs it, "Deny" and
// Escape answer the model not_sent mcp.call_denied_by_user without a call.
// Each answer is in the audit log, and the Manager shows the Allow that
// "Always allow" set at once, without a reload.
func TestSTAskApproval(t *testing.T) {
	e := newSTEnv(t, map[string]string{"echo": "ask"})
	// The Manager lists again when the window regains focus (Demo was
	// created behind its back); its Echo shows Ask.
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document);
		window.dispatchEvent(new Event('focus'));
		const row = await ui.row('Demo');
		await ui.click('button', 'Show or hide tools', row);
		window.echoGroup = await ui.get('radiogroup', 'Permission for Echo', row);
		await ui.gone(() => ui.nameOf(echoGroup.querySelector('input[type=radio]:checked') ?? document.body) !== 'Ask', 'Echo at Ask');`)
	cases := []struct {
		button, wantOutcome string
		calls               int
	}{
		{"Allow once", "a1", 1},
		// the model and the chat read the tool by its title, as the Ask prompt showed it
		{"Deny", "The MCP tool `Echo` (Demo) was not called (mcp.call_denied_by_user): The user denied the call to MCP tool `Echo`; it was not sent.", 0},
		{"Escape", "The MCP tool `Echo` (Demo) was not called (mcp.call_denied_by_user): The user denied the call to MCP tool `Echo`; it was not sent.", 0},
		{"Always allow", "a4", 1},
	}
	for i, c := range cases {
		id := fmt.Sprintf("a%d", i+1)
		before := len(e.mcp.toolCalls())
		e.llm.script(calls(toolCall{id, "mcp__Demo__echo", `{"text":"` + id + `"}`}), reply{Text: "ok"})
		e.start("Echo " + id)
		text := e.answerPopup(c.button)
		if !strings.Contains(text, "Demo") || !strings.Contains(text, "Echo") || !strings.Contains(text, `"text": "`+id+`"`) {
			t.Errorf("%s: the popup said %q", c.button, text)
		}
		if r := e.finish(); r.Status != "done" {
			t.Fatalf("%s: ended %s: %s", c.button, r.Status, r.Error)
		}
		reqs := e.llm.requests()
		if got := reqs[len(reqs)-1].toolMessages()[id]; got != c.wantOutcome {
			t.Errorf("%s's tool message:\n%s\nwant\n%s", c.button, got, c.wantOutcome)
		}
		if n := len(e.mcp.toolCalls()) - before; n != c.calls {
			t.Errorf("%s: the MCP server got %d calls; want %d", c.button, n, c.calls)
		}
	}
	perm := evalJS[string](e.p, `return (await window.__TAURITAVERN__.api.mcp.servers.list()).servers.find((s) => s.id === %s).toolPermissions.echo;`, e.id)
	if perm != "allow" {
		t.Errorf("after Always allow the permission is %q", perm)
	}
	// The Manager shows it (nothing else made it list again: no focus, no reload).
	shown := evalJS[string](e.p, `
		const checked = () => ui.nameOf(echoGroup.querySelector('input[type=radio]:checked') ?? document.body);
		try { await ui.gone(() => checked() !== 'Allow', 'Echo at Allow'); } catch {}
		return checked();`)
	if shown != "Allow" {
		t.Errorf("after Always allow the Manager shows Echo at %q; want Allow", shown)
	}
	wantAudit(t, e.audit(),
		"echo allow always known_response ",
		"echo ask denied not_sent mcp.call_denied_by_user",
		"echo ask denied not_sent mcp.call_denied_by_user",
		"echo ask once known_response ")
	// Allow now runs without asking.
	e.llm.script(calls(toolCall{"a5", "mcp__Demo__echo", `{"text":"a5"}`}), reply{Text: "ok"})
	if r := e.send("again", false); r.Status != "done" || evalJS[bool](e.p, `return !!document.querySelector('dialog.popup .tt-mcp-approval');`) {
		t.Errorf("an Allow tool asked, or the generation ended %s", r.Status)
	}
}

// An unknown outcome ends the tool loop: the persistent warning, the rest
// of the batch not called, no further request to the model, nothing
// retried. Here the MCP server drops the connection of a sent call.
func TestSTOutcomeUnknownEndsTheLoop(t *testing.T) {
	env := newSTEnvWith(t, dyingOn("slow"), map[string]string{"echo": "allow", "slow": "allow"})
	env.llm.script(calls(toolCall{"s", "mcp__Demo__slow", `{}`}, toolCall{"e", "mcp__Demo__echo", `{"text":"after"}`}))
	r := env.send("Break it", false)
	if n := len(env.llm.requests()); n != 1 {
		t.Errorf("the model got %d requests; want 1 (the loop ends)", n)
	}
	if mc := env.mcp.toolCalls(); len(mc) != 1 || mc[0].Tool != "slow" {
		t.Errorf("the MCP server got %+v; want the slow call only (echo not called, nothing retried)", mc)
	}
	w := env.toasts("warning")
	if len(w) != 1 || w[0].Title != "MCP tool result unknown" || !strings.Contains(w[0].Text, "may have run") ||
		w[0].Options["timeOut"] != 0.0 || w[0].Options["closeButton"] != true {
		t.Errorf("warnings %+v; want the persistent one", w)
	}
	if len(r.Chat) < 2 {
		t.Fatalf("chat %+v", r.Chat)
	}
	inv := r.Chat[1].Extra.ToolInvocations
	if len(inv) != 2 || !strings.Contains(inv[0].Result, "The MCP tool `Slow` (Demo) may have run, but its result is unknown (mcp.call_response_failed)") ||
		!strings.Contains(inv[1].Result, "The MCP tool `Echo` (Demo) was not called (mcp.call_skipped_after_unknown)") {
		t.Errorf("saved invocations %+v", inv)
	}
	// two sentences: the backend's (which ends without a full stop), then ours
	if len(inv) > 0 && !strings.Contains(inv[0].Result, `may have executed. It was not retried, and the tool loop ends here.`) {
		t.Errorf("the unknown outcome's message: %s", inv[0].Result)
	}
	wantAudit(t, env.audit(), "slow allow none outcome_unknown mcp.call_response_failed")
}

// Stop during a call: the call is cancelled (outcome unknown: it was sent),
// the warning shows, and SillyTavern's next round is stopped before its
// request. The recursion limit: at RECURSE_LIMIT the calls are not run.
func TestSTStopAndRecursionLimit(t *testing.T) {
	env := newSTEnv(t, map[string]string{"echo": "allow", "slow": "allow"})
	env.llm.script(calls(toolCall{"w", "mcp__Demo__slow", `{"ms":30000}`}))
	env.start("Wait")
	waitUntil(t, "the slow tools/call at the MCP server", func() bool { return len(env.mcp.toolCalls()) == 1 })
	env.p.run(`stChat.stop();`)
	env.finish()
	if n := len(env.llm.requests()); n != 1 {
		t.Errorf("after Stop the model got %d requests; want 1", n)
	}
	if w := env.toasts("warning"); len(w) != 1 || w[0].Title != "MCP tool stopped" || !strings.Contains(w[0].Text, "You stopped Slow (Demo) after ttmcp had sent it") {
		t.Errorf("warnings %+v", w)
	}
	wantAudit(t, env.audit(), "slow allow none outcome_unknown mcp.call_cancelled")

	env.p.run(`stChat.reset(); SillyTavern.getContext().ToolManager.RECURSE_LIMIT = 2;`)
	env.llm.script(
		calls(toolCall{"d0", "mcp__Demo__echo", `{"text":"d0"}`}),
		calls(toolCall{"d1", "mcp__Demo__echo", `{"text":"d1"}`}),
		reply{Text: "at the limit", Calls: []toolCall{{"d2", "mcp__Demo__echo", `{"text":"d2"}`}}},
	)
	before := len(env.mcp.toolCalls())
	if r := env.send("Recurse", true); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	if n := len(env.mcp.toolCalls()) - before; n != 2 {
		t.Errorf("%d calls ran; want 2 (depth 0 and 1)", n)
	}
	reqs := env.llm.requests()[1:]
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3", len(reqs))
	}
	var roles []string
	for _, m := range reqs[2].Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "assistant", "tool", "assistant", "tool"}) {
		t.Errorf("the third request's messages %v", roles)
	}
}
