package webtest

// Servers that ask the user (elicitation, issue 20) in the real extension:
// go-sdk MCP servers started here ask during a call — a 2025-11-25 server
// (stateful Streamable HTTP; the tool calls req.Session.Elicit while it
// runs) and a 2026-07-28 server (stateless; the tool answers
// input_required with InputRequests and reads req.Params.InputResponses
// when the call comes again) — and the extension's popup answers, from the
// test console and from the model's tool calls in the playground's
// Generate stand-in. Each test checks what the user saw, what the server
// received (and never received), the outcome and the audit log.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/jsapi"
)

// askingServer is a go-sdk MCP server whose tools ask the user, in one
// era. heard keeps every answer that reached a tool ("<tool> <action>
// <content JSON>"), so a test can say what the server received.
type askingServer struct {
	visitURL string // the page the tool visit asks the user to open

	mu    sync.Mutex
	heard []string
}

func (a *askingServer) answers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.heard)
}

// The questions of the tools.
const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"How the greeting calls you","minLength":2}},"required":["name"]}`
	mailSchema    = `{"type":"object","properties":{"email":{"type":"string","title":"E-mail","format":"email"}},"required":["email"]}`
	confirmSchema = `{"type":"object","properties":{"sure":{"type":"boolean","title":"Delete them?"}},"required":["sure"]}`
)

// handler serves the tools greet (a name), mail (an e-mail address, whose
// format only the backend checks), remove (a confirmation) and visit (a
// page to open, URL mode); stateless: the 2026-07-28 way, else 2025's.
func (a *askingServer) handler(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	add := func(name, title string, q *mcp.ElicitParams, done func(*mcp.ElicitResult) string) {
		answered := func(r *mcp.ElicitResult) *mcp.CallToolResult {
			content, _ := json.Marshal(r.Content)
			a.mu.Lock()
			a.heard = append(a.heard, name+" "+r.Action+" "+string(content))
			a.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: done(r)}}}
		}
		s.AddTool(&mcp.Tool{Name: name, Title: title, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if stateless {
					r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult)
					if !ok {
						return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": q}}, nil
					}
					return answered(r), nil
				}
				r, err := req.Session.Elicit(ctx, q)
				if err != nil {
					return nil, err
				}
				return answered(r), nil
			})
	}
	add("greet", "Greet", &mcp.ElicitParams{Mode: "form", Message: "What is your name?\nI use it once, in the greeting.", RequestedSchema: json.RawMessage(nameSchema)},
		func(r *mcp.ElicitResult) string {
			if r.Action != "accept" {
				return "no greeting: the user chose " + r.Action
			}
			return fmt.Sprintf("hello %v", r.Content["name"])
		})
	add("mail", "Mail", &mcp.ElicitParams{Mode: "form", Message: "Where should the report go?", RequestedSchema: json.RawMessage(mailSchema)},
		func(r *mcp.ElicitResult) string { return fmt.Sprintf("the report goes to %v", r.Content["email"]) })
	add("remove", "Remove files", &mcp.ElicitParams{Mode: "form", Message: "Delete the 3 files in /tmp/report?", RequestedSchema: json.RawMessage(confirmSchema)},
		func(r *mcp.ElicitResult) string {
			if r.Action == "accept" && r.Content["sure"] == true {
				return "deleted 3 files"
			}
			return "nothing deleted: the user chose " + r.Action
		})
	add("visit", "Visit", &mcp.ElicitParams{Mode: "url", Message: "Confirm the order on the shop's page.", URL: a.visitURL, ElicitationID: "order-7"},
		func(r *mcp.ElicitResult) string { return "visited: " + r.Action })
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// askingEras: a call that asks once takes one request in 2025 and two
// (input_required, then the call with the answer) in 2026.
var askingEras = []struct {
	name, protocol string
	stateless      bool
	rounds         string
}{
	{"2025", jsapi.Protocol20251125, false, "1 request"},
	{"2026", jsapi.Protocol20260728, true, "2 requests"},
}

// registerAsker registers endpoint as "Asker" at protocol, activates it and
// makes the Manager list again.
func registerAsker(p *page, endpoint, protocol string) string {
	return evalJS[string](p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Asker', endpoint: %s, protocolVersion: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		window.dispatchEvent(new Event('ttmcp:registrations-changed'));
		// the Manager is told of each change and may list between the two: wait for the active row
		await ui.get('.tt-mcp-state-active', undefined, await ui.row('Asker'));
		return s.id;`, endpoint, protocol)
}

// consoleWithPopups opens the Manager in a browser whose popup blocker is
// on (a page may open only within a click), registers endpoint as "Asker"
// and opens the test console.
func consoleWithPopups(t *testing.T, endpoint, protocol string) *page {
	b := newBackend(t, withManager(nil))
	ctx, cancel := chromedp.NewContext(popupBrowser(t))
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab on ctx itself (a first Do on a derived context would close it with that context)
		t.Fatal(err)
	}
	p := &page{tb: t, ctx: ctx}
	p.navigate(b.url("/"))
	waitHostReady(p)
	loadUI(p)
	p.run(`await ui.withText(/Servers · \d+|No MCP servers yet/, document);`)
	registerAsker(p, endpoint, protocol)
	p.run(`await ui.click('button', 'Test call', document); await ui.withText('Test MCP tool');`)
	return p
}

// runTest picks tool in the open test console and runs it.
func runTest(p *page, tool string) {
	p.run(`await ui.choose('Tool', %s); await ui.click('button', 'Run test');`, tool)
}

// question is the open elicitation popup as the user sees it.
type question struct {
	Text        string // the popup's content
	Buttons     []string
	OKAvailable bool
}

// waitQuestion waits for the elicitation popup (one saying want).
func waitQuestion(p *page, want string) question {
	return evalJS[question](p, `
		await ui.withText(%s, () => ui.top().querySelector('.tt-mcp-elicit'));
		const dlg = ui.top();
		await ui.gone(() => dlg.hasAttribute('opening'), 'the opening animation'); // a real click lands where the button stays
		return {
			text: dlg.querySelector('.tt-mcp-elicit').innerText,
			buttons: [...dlg.querySelectorAll('.popup-controls .menu_button')].filter(ui.visible).map(ui.text),
			okAvailable: dlg.querySelector('.popup-button-ok').getAttribute('aria-disabled') !== 'true',
		};`, want)
}

// noQuestion waits until no elicitation popup is open.
func noQuestion(p *page) {
	p.run(`await ui.gone(() => document.querySelector('dialog[open]:not([closing]) .tt-mcp-elicit'), 'the question');`)
}

// A test call of a tool that asks for a value shows the form; Accept is
// unavailable until the form fits (a required name of 2 or more
// characters); the server's answer uses the value. An answer the browser
// cannot judge (an e-mail address) that the backend refuses comes back as
// the same question with the backend's reason and what the user typed;
// the server never sees the refused answer. The test console shows the
// rounds and the answers, and so do Recent calls.
func TestElicitationFromTheTestConsole(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			srv := &askingServer{}
			mcpSrv := newMCPServer(t, srv.handler(era.stateless))
			b := newBackend(t, withManager(nil))
			p := openManager(t, b)
			registerAsker(p, mcpSrv.endpoint(), era.protocol)
			p.run(`await ui.click('button', 'Test call', document); await ui.withText('Test MCP tool');`)

			runTest(p, "Greet")
			q := waitQuestion(p, "Asker asks you")
			for _, want := range []string{"Server\nAsker", "Tool\ngreet", "Asked during\nyour test call", "What is your name?\nI use it once, in the greeting.",
				"Name *", "How the greeting calls you", "Enter at least 2 characters.", "What you enter goes to Asker."} {
				if !strings.Contains(q.Text, want) {
					t.Errorf("the question does not say %q:\n%s", want, q.Text)
				}
			}
			if !slices.Equal(q.Buttons, []string{"Accept", "Decline", "Cancel"}) || q.OKAvailable {
				t.Errorf("buttons %q, Accept available %v; want Accept (unavailable while the name is empty), Decline, Cancel", q.Buttons, q.OKAvailable)
			}
			p.run(`await ui.type(/^Name/, 'O');`)
			if q := waitQuestion(p, "Asker asks you"); q.OKAvailable {
				t.Error("Accept is available with a one-character name")
			}
			p.run(`await ui.type(/^Name/, 'Octo');`)
			if era.name == "2025" {
				shots(p, "elicit-form")
			}
			p.run(`await ui.click('button', 'Accept');
				await ui.withText('Server responded');
				await ui.withText('hello Octo', undefined, 'pre');`)
			asked := evalJS[string](p, `return (await ui.get('.tt-mcp-asked', 'The server asked you')).innerText;`)
			if !strings.Contains(asked, era.rounds) || !strings.Contains(asked, "A form: answered") {
				t.Errorf("the console says %q; want %s and the answer", asked, era.rounds)
			}
			if era.name == "2026" {
				shots(p, "elicit-test-console")
			}

			// An answer the backend refuses is asked again with its reason.
			runTest(p, "Mail")
			waitQuestion(p, "Where should the report go?")
			p.run(`await ui.type(/^E-mail/, 'octo-at-example'); await ui.click('button', 'Accept');`)
			again := waitQuestion(p, "Your answer was not accepted")
			if !strings.Contains(again.Text, "email: expected an e-mail address") {
				t.Errorf("the re-ask says:\n%s", again.Text)
			}
			if typed := evalJS[string](p, `return (await ui.field(/^E-mail/)).value;`); typed != "octo-at-example" {
				t.Errorf("the re-ask's field holds %q; want what the user typed", typed)
			}
			shots(p, "elicit-reask")
			p.run(`await ui.type(/^E-mail/, 'octo@example.com'); await ui.click('button', 'Accept');
				await ui.withText('the report goes to octo@example.com', undefined, 'pre');`)
			if got := srv.answers(); !slices.Equal(got, []string{`greet accept {"name":"Octo"}`, `mail accept {"email":"octo@example.com"}`}) {
				t.Errorf("the server received %q", got)
			}
			for _, r := range mcpSrv.requests() {
				if strings.Contains(r.Body, "octo-at-example") {
					t.Errorf("the refused answer reached the server: %s", r.Body)
				}
			}

			// Decline: the server hears the choice and no content.
			runTest(p, "Greet")
			waitQuestion(p, "What is your name?")
			p.run(`await ui.type(/^Name/, 'Not sent'); await ui.click('button', 'Decline');
				await ui.withText('no greeting: the user chose decline', undefined, 'pre');
				await ui.withText('A form: declined');`)
			if got := srv.answers(); len(got) != 3 || got[2] != "greet decline null" {
				t.Errorf("after Decline the server received %q", got)
			}

			// Recent calls: the questions and their answers, never the content.
			p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the console');`)
			chips := evalJS[[]string](p, `
				const row = await ui.row('Asker');
				await ui.click('button', 'Show or hide tools', row);
				(await ui.withText('Recent calls', row, 'summary')).click();
				await ui.withText('Asked ·', row);
				row.querySelector('.tt-mcp-recent').scrollIntoView({ block: 'center' });
				return [...row.querySelectorAll('.tt-mcp-call')].map((li) => li.querySelector('.tt-mcp-chip-asked')?.textContent ?? '');`)
			want := []string{"Asked · A form: declined", "Asked · A form: answered", "Asked · A form: answered"}
			if era.name == "2026" {
				// the refused answer was the backend's to judge: one question, asked twice, one call of three requests
				want = []string{"Asked · A form: declined · 2 requests", "Asked · A form: answered · 2 requests", "Asked · A form: answered · 2 requests"}
			}
			if !slices.Equal(chips, want) {
				t.Errorf("Recent calls say %q; want %q", chips, want)
			}
			shots(p, "elicit-recent-calls")
			for _, line := range b.auditFileLines(t) {
				if strings.Contains(line, "Octo") || strings.Contains(line, "octo@") {
					t.Errorf("what the user entered reached the audit log: %s", line)
				}
			}
		})
	}
}

// askingSTEnv is the playground with srv as "Demo" at protocol, once the
// Manager is connected (its elicitation handler set).
func askingSTEnv(t *testing.T, srv *askingServer, protocol string, stateless bool, perms map[string]string) *stEnv {
	t.Helper()
	e := newSTEnvAt(t, srv.handler(stateless), protocol, perms)
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document);`)
	return e
}

// A model tool call (Ask, then Allow once) whose server needs a
// confirmation shows the popup naming the model's call; Decline gives the
// model a readable result saying the user declined; the server hears the
// decline with no content — not even on the wire.
func TestElicitationDeclinedInAModelCall(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			srv := &askingServer{}
			e := askingSTEnv(t, srv, era.protocol, era.stateless, map[string]string{"remove": "ask"})
			e.llm.script(calls(toolCall{"c1", "mcp__Demo__remove", `{}`}), reply{Text: "I did not delete them."})
			e.start("Clean up the report")
			if text := e.answerPopup("Allow once"); !strings.Contains(text, "Remove files") {
				t.Errorf("the Ask popup said %q", text)
			}
			q := waitQuestion(e.p, "Demo asks you")
			for _, want := range []string{"Asked during\nthe model’s tool call", "Tool\nremove", "Delete the 3 files in /tmp/report?", "Delete them? *"} {
				if !strings.Contains(q.Text, want) {
					t.Errorf("the question does not say %q:\n%s", want, q.Text)
				}
			}
			if era.name == "2025" {
				shots(e.p, "elicit-model-call")
			}
			e.p.run(`await ui.click('radio', 'Yes'); await ui.click('button', 'Decline');`)
			noQuestion(e.p)
			r := e.finish()
			if r.Status != "done" {
				t.Fatalf("ended %s: %s", r.Status, r.Error)
			}
			reqs := e.llm.requests()
			got := reqs[len(reqs)-1].toolMessages()["c1"]
			if !strings.HasPrefix(got, "nothing deleted: the user chose decline") ||
				!strings.Contains(got, "## The user was asked\n\n- The server asked the user to fill in a form; the user declined.") {
				t.Errorf("the model read:\n%s", got)
			}
			if heard := srv.answers(); !slices.Equal(heard, []string{"remove decline null"}) {
				t.Errorf("the server received %q", heard)
			}
			for _, req := range e.mcp.requests() {
				if strings.Contains(req.Body, `"sure"`) && !strings.Contains(req.Body, `"requestedSchema"`) {
					t.Errorf("content the user did not accept reached the server: %s", req.Body)
				}
			}
			entries := e.audit()
			if len(entries) != 1 || entries[0].Approval != "once" || len(entries[0].Elicitations) != 1 || entries[0].Elicitations[0].Action != "decline" {
				t.Errorf("audit %+v", entries)
			}
		})
	}
}

// Stop while the popup is open closes it and the answer is dropped. The
// popup is modal, so SillyTavern's Stop button cannot be reached under it:
// the popup's own Stop generation is SillyTavern's Stop (the context's
// stopGeneration, as the Stop button calls it). 2025: the server is
// mid-call — the outcome is unknown (the persistent warning, the loop
// ends). 2026: the server answered input_required and holds nothing —
// nothing more is sent.
func TestElicitationStoppedInAModelCall(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			srv := &askingServer{}
			e := askingSTEnv(t, srv, era.protocol, era.stateless, map[string]string{"greet": "allow"})
			e.llm.script(calls(toolCall{"c1", "mcp__Demo__greet", `{}`}), reply{Text: "ok"})
			e.start("Greet me")
			waitQuestion(e.p, "Demo asks you")
			e.p.run(`await ui.type(/^Name/, 'Never sent'); await ui.click('button', 'Stop generation');`)
			noQuestion(e.p)
			e.finish()
			for _, got := range srv.answers() {
				if strings.Contains(got, "Never sent") || strings.Contains(got, "accept") {
					t.Errorf("an answer given before Stop reached the server: %q", got)
				}
			}
			for _, req := range e.mcp.requests() {
				if strings.Contains(req.Body, "Never sent") {
					t.Errorf("what the user typed reached the server: %s", req.Body)
				}
			}
			entries := e.audit()
			if len(entries) != 1 || len(entries[0].Elicitations) != 1 || entries[0].Elicitations[0].Action != "cancel" {
				t.Fatalf("audit %+v", entries)
			}
			a := entries[0]
			if era.name == "2025" {
				if a.Outcome != jsapi.OutcomeOutcomeUnknown || a.Code != "mcp.call_cancelled" {
					t.Errorf("2025 Stop: %s %s; want outcome_unknown mcp.call_cancelled", a.Outcome, a.Code)
				}
				// the warning says what happened: the user stopped while the server asked
				if w := e.toasts("warning"); len(w) != 1 || w[0].Title != "MCP tool stopped" || !strings.Contains(w[0].Text, "while its server was asking you a question") {
					t.Errorf("warnings %+v", w)
				}
			} else {
				if a.Outcome != jsapi.OutcomeKnownResponse || a.ResponseKind != jsapi.ResponseUnsupported {
					t.Errorf("2026 Stop: %s %s %s; want a known unsupported response", a.Outcome, a.Code, a.ResponseKind)
				}
				if n := len(e.mcp.toolCalls()); n != 1 {
					t.Errorf("the server got %d tools/call requests; want 1 (nothing more after Stop)", n)
				}
			}
			if n := len(e.llm.requests()); n != 1 {
				t.Errorf("after Stop the model got %d requests; want 1", n)
			}
		})
	}
}

// URL mode: the popup shows the whole URL and its host apart; nothing is
// opened until the user clicks Open page — with the popup blocker on, so
// the page must open inside that click —, it opens in a new tab that
// cannot reach this page (noopener), and the popup then says the server
// goes on once the user is done there; the server hears accept.
func TestElicitationURLMode(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			var mu sync.Mutex
			var visits []string
			shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				visits = append(visits, r.URL.RequestURI())
				mu.Unlock()
				fmt.Fprint(w, "<!doctype html><title>Shop</title><p>Order 7 confirmed.")
			}))
			t.Cleanup(shop.Close)
			visited := func() []string {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(visits)
			}
			srv := &askingServer{visitURL: shop.URL + "/checkout?order=7"}
			mcpSrv := newMCPServer(t, srv.handler(era.stateless))
			p := consoleWithPopups(t, mcpSrv.endpoint(), era.protocol)
			ctx := p.ctx
			runTest(p, "Visit")
			q := waitQuestion(p, "Asker asks you to open a page")
			host := strings.TrimPrefix(shop.URL, "http://")
			shown := evalJS[[]string](p, `const d = ui.top(); return [d.querySelector('.tt-mcp-elicit-host').textContent, d.querySelector('.tt-mcp-elicit-href').textContent];`)
			if !slices.Equal(shown, []string{host, srv.visitURL}) || !slices.Equal(q.Buttons, []string{"Open page", "Decline", "Cancel"}) ||
				!strings.Contains(q.Text, "Go there only if you trust "+host) || !strings.Contains(q.Text, "Confirm the order on the shop's page.") {
				t.Errorf("the popup shows %q, buttons %q:\n%s", shown, q.Buttons, q.Text)
			}
			if era.name == "2025" {
				shots(p, "elicit-url")
			}
			if v := visited(); len(v) != 0 {
				t.Fatalf("the page was visited before the click: %q", v)
			}
			opened := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return info.Type == "page" })
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`dialog.popup:has(.tt-mcp-elicit) .popup-button-ok`))); err != nil {
				t.Fatal(err)
			}
			var tab target.ID
			select {
			case tab = <-opened:
			case <-time.After(20 * time.Second):
				t.Fatal("no tab opened on the click")
			}
			waitUntil(t, "the shop's page to be requested", func() bool { return len(visited()) > 0 })
			if v := visited(); v[0] != "/checkout?order=7" {
				t.Errorf("the tab asked for %q", v)
			}
			infos, err := chromedp.Targets(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, info := range infos {
				if info.TargetID == tab && info.CanAccessOpener {
					t.Errorf("the opened tab can reach this page (no noopener): %+v", info)
				}
			}
			note := evalJS[string](p, `return (await ui.withText('Continue on the page', undefined, 'h3')).closest('.tt-mcp-elicit-opened').innerText;`)
			if !strings.Contains(note, "The page on "+host+" opened in a new tab. Asker continues once you are done there.") {
				t.Errorf("after the click the popup says %q", note)
			}
			p.run(`await ui.click('button', 'Close'); await ui.withText('visited: accept', undefined, 'pre');`)
			if got := srv.answers(); !slices.Equal(got, []string{"visit accept null"}) {
				t.Errorf("the server received %q", got)
			}
		})
	}
}

// server-everything, an independent peer (the TypeScript SDK), asks for
// every field kind of the requested-schema subset: its defaults are in the
// form and nothing else; the user fills the rest through the popup and the
// server reports exactly what was entered, typed as the schema says.
func TestElicitationEverythingPeer(t *testing.T) {
	needBundle(t)
	endpoint := startEverythingHTTP(t)
	b := newBackend(t, withManager(nil))
	p := openManager(t, b)
	registerAsker(p, endpoint, jsapi.Protocol20251125)
	p.run(`await ui.click('button', 'Test call', document); await ui.withText('Test MCP tool');`)
	runTest(p, "Trigger Elicitation Request Tool")
	waitQuestion(p, "Please provide inputs for the following fields:")
	defaults := evalJS[map[string]any](p, `
		const v = async (label) => (await ui.field(label)).value;
		const checked = (group) => [...group.querySelectorAll('input:checked')].map((i) => ui.text(i.closest('label')));
		return {
			name: await v(/^String \*$/), firstLine: await v('String with default'), email: await v('String with email format'),
			integer: await v('Integer'), number: await v('Number in range 1-1000'),
			friend: (await ui.field('Untitled Single Select Enum')).selectedOptions[0].text,
			hero: (await ui.field('Titled Single Select Enum')).selectedOptions[0].text,
			pet: (await ui.field('Legacy Titled Single Select Enum')).selectedOptions[0].text,
			check: checked(await ui.get('radiogroup', 'Boolean')),
			instruments: checked(await ui.get('group', 'Untitled Multiple Select Enum')),
			fish: checked(await ui.get('group', 'Titled Multiple Select Enum')),
		};`)
	want := map[string]any{"name": "", "firstLine": "It was a dark and stormy night.", "email": "", "integer": "42", "number": "3.14",
		"friend": "Monica", "hero": "Superman", "pet": "Cats", "check": []any{"Not set"}, "instruments": []any{"Guitar"}, "fish": []any{"Tuna"}}
	if fmt.Sprint(defaults) != fmt.Sprint(want) {
		t.Errorf("the form starts with\n%v\nwant the schema's defaults only\n%v", defaults, want)
	}
	shots(p, "elicit-everything")
	p.run(`
		await ui.type(/^String \*$/, 'Ada Lovelace');
		await ui.click('radio', 'Yes', await ui.get('radiogroup', 'Boolean'));
		await ui.type('String with email format', 'ada@example.com');
		await ui.type('String with uri format', 'https://ada.example/');
		await ui.type('String with date format', '1815-12-10');
		await ui.type('Integer', '7');
		await ui.choose('Titled Single Select Enum', 'Wonder Woman');
		await ui.choose('Legacy Titled Single Select Enum', 'Dogs');
		await ui.click('checkbox', 'Piano', await ui.get('group', 'Untitled Multiple Select Enum'));
		await ui.click('button', 'Accept');
		await ui.withText('User provided the requested information', undefined, 'pre');`)
	raw := evalJS[string](p, `return [...ui.top().querySelectorAll('pre')].map(ui.text).find((t) => t.startsWith('Raw result:'));`)
	var got struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(raw, "Raw result:")), &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	wantContent := map[string]any{"name": "Ada Lovelace", "check": true, "firstLine": "It was a dark and stormy night.", "email": "ada@example.com",
		"homepage": "https://ada.example/", "birthdate": "1815-12-10", "integer": 7.0, "number": 3.14, "untitledSingleSelectEnum": "Monica",
		"untitledMultipleSelectEnum": []any{"Guitar", "Piano"}, "titledSingleSelectEnum": "hero-3", "titledMultipleSelectEnum": []any{"fish-1"},
		"legacyTitledEnum": "pet-2"}
	if got.Action != "accept" || fmt.Sprint(got.Content) != fmt.Sprint(wantContent) {
		t.Errorf("the server received %s %v\nwant accept %v", got.Action, got.Content, wantContent)
	}
}
