package webtest

// Tool sets and readable results in vanilla SillyTavern (issue 19): the
// real extension in the playground, whose host (chat.js) gives it
// SillyTavern 1.18's chat members (characters, characterId, chatMetadata,
// CHAT_CHANGED) and the wand menu beside the chat input, and the Generate
// stand-in (testdata/st-chat.js) driving the fake model of legacy_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/demo"
)

// openChat opens a playground chat: of the character at index i, or none (-1).
func openChat(e *stEnv, i int) {
	if i < 0 {
		e.p.run(`await (await import('/host/chat.js')).openChat({});`)
		return
	}
	e.p.run(`await (await import('/host/chat.js')).openChat({ character: %s });`, i)
}

// menuItem opens the wand menu and returns the tool set item's text.
func menuItem(e *stEnv) string {
	return evalJS[string](e.p, `
		const item = await new Promise((r) => { const c = () => { const i = document.getElementById('mcp_manager_tool_set_menu'); i ? r(i) : setTimeout(c, 20); }; c(); });
		const button = document.getElementById('extensionsMenuButton');
		if (getComputedStyle(button).display === 'none') throw new Error('the wand button is hidden although the menu has an item');
		if (document.getElementById('extensionsMenu').style.display === 'none') button.click();
		return item.textContent;`)
}

// waitMenuItem waits until the item's text matches want.
func waitMenuItem(e *stEnv, want string) string {
	return evalJS[string](e.p, `
		const want = %s;
		const item = document.getElementById('mcp_manager_tool_set_menu');
		const end = Date.now() + 10000;
		while (item.textContent !== want && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
		return item.textContent;`, want)
}

// A set "Coding" of one server's tools, made in the Manager and bound to a
// character from the chat's wand menu: that character's chats offer
// exactly its tools (and the reader), another character's chat offers
// every allowed tool; the model reads each result as its text. The choice
// is kept in SillyTavern's settings by the character's avatar; the chat's
// own metadata is not touched.
func TestSTToolSetPerCharacter(t *testing.T) {
	e := newSTEnv(t, map[string]string{"echo": "allow", "add": "ask", "fail": "off"})
	other := newMCPServer(t, demo.Handler())
	e.p.run(`
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Web', endpoint: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await mcp.tools.setPermission({ registrationId: s.id, nativeName: 'echo', permission: 'allow' });
		await mcp.servers.discover(s.id);`, other.endpoint())
	loadUI(e.p)
	// The Manager: a new tool set "Coding" with all of Demo's allowed tools.
	e.p.run(`
		await ui.withText(/Servers · \d+/, document);
		window.dispatchEvent(new Event('focus')); // the servers were made behind the Manager's back
		await ui.withText('Tool sets · 0', document);
		await ui.click('button', 'New tool set', document);
		await ui.type('Name', 'Coding');
		(await ui.get('checkbox', 'All tools of Demo that you allow')).click();
		await ui.withText('All tools of Demo');`)
	shots(e.p, "toolset-editor")
	e.p.run(`
		await ui.click('button', 'Save');
		await ui.gone(() => document.querySelector('dialog[open] .tt-mcp-toolset-form'), 'the editor');
		await ui.withText('Tool sets · 1', document);
		await ui.withText('This chat uses every tool you allow (no tool set applies).', document);`)
	shots(e.p, "toolsets-manager")

	// The chat with Seraphina: the wand menu names what it uses; bind the set to her.
	openChat(e, 0)
	if got := waitMenuItem(e, "MCP: every allowed tool · 3 tools"); got != "MCP: every allowed tool · 3 tools" {
		t.Errorf("the menu item says %q", got)
	}
	e.p.run(`document.querySelector('#extensions-settings-button .drawer-toggle').click();`) // the drawer covers the chat
	menuItem(e)
	shots(e.p, "toolset-wand-menu")
	e.p.run(`document.getElementById('mcp_manager_tool_set_menu').click();
		await ui.choose('The character Seraphina', 'Coding');
		await ui.withText('This chat uses the tool set “Coding” (chosen for Seraphina).');`)
	shots(e.p, "toolset-binding")
	e.p.run(`await ui.click('button', 'Save');`)
	if got := waitMenuItem(e, "MCP: Coding · 2 tools"); got != "MCP: Coding · 2 tools" {
		t.Errorf("after the choice the menu item says %q", got)
	}
	e.llm.script(calls(toolCall{"c1", "mcp__Demo__echo", `{"text":"in the set"}`}), reply{Text: "ok"})
	r := e.send("Use echo", false)
	if r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if names := reqs[0].toolNames(); !slices.Equal(names, []string{"mcp__Demo__add", "mcp__Demo__echo", "ttmcp_read_result"}) {
		t.Errorf("Seraphina's chat offered %v; want Demo's tools and the reader, not Web's", names)
	}
	if got := reqs[1].toolMessages()["c1"]; got != "in the set" {
		t.Errorf("the model read %q; want the text", got)
	}
	if inv := r.Chat[1].Extra.ToolInvocations; len(inv) != 1 || inv[0].Result != "in the set" {
		t.Errorf("the chat's tool-call record %+v; want the readable text", inv)
	}
	// The other character's chat: the default (none), every allowed tool.
	openChat(e, 1)
	e.p.run(`stChat.reset();`)
	e.llm.script(reply{Text: "hi"})
	e.send("Hello", false)
	reqs = e.llm.requests()
	if names := reqs[len(reqs)-1].toolNames(); !slices.Equal(slices.Sorted(slices.Values(names)), []string{"mcp__Demo__add", "mcp__Demo__echo", "mcp__Web__echo", "ttmcp_read_result"}) {
		t.Errorf("Coding Assistant's chat offered %v; want every allowed tool", names)
	}
	if got := waitMenuItem(e, "MCP: every allowed tool · 3 tools"); got != "MCP: every allowed tool · 3 tools" {
		t.Errorf("in the other chat the menu item says %q", got)
	}
	// Where the choice is kept.
	kept := evalJS[string](e.p, `
		await new Promise((r) => setTimeout(r, 700)); // saveSettingsDebounced
		const s = JSON.parse(localStorage.getItem('ttmcp.playground.extension_settings')).mcp_manager.toolSets;
		const set = (await window.__TAURITAVERN__.api.mcp.toolSets.list()).toolSets[0];
		return JSON.stringify({ seraphina: s.characters['Seraphina.png'] === set.id, others: Object.keys(s.characters), meta: SillyTavern.getContext().chatMetadata });`)
	if kept != `{"seraphina":true,"others":["Seraphina.png"],"meta":{}}` {
		t.Errorf("kept %s", kept)
	}
	// The reach line of Seraphina's chat names the set.
	openChat(e, 0)
	if reach := e.reach(); !strings.Contains(reach, "2 tools from 1 server") || !strings.Contains(reach, `Tool set “Coding” (this character).`) {
		t.Errorf("the Manager says %q", reach)
	}
	// The set removed: Seraphina's choice shows as a removed set, what that
	// means said below it (a narrow select cuts a long option off).
	gone := evalJS[string](e.p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		await mcp.toolSets.remove((await mcp.toolSets.list()).toolSets[0].id);
		document.getElementById('mcp_manager_tool_set_menu').click();
		const select = await ui.get('combobox', 'The character Seraphina');
		return select.selectedOptions[0].textContent + ' | ' + document.getElementById(select.getAttribute('aria-describedby')).textContent;`)
	if gone != "A removed tool set | The tool set chosen here no longer exists: it is skipped, and the next choice applies. Keep it, or choose another." {
		t.Errorf("the binding to the removed set shows %q", gone)
	}
	shots(e.p, "toolset-binding-gone")
}

// pageServer is an MCP server with a tool "page" that returns n characters
// of numbered 80-character lines, and echo.
func pageServer(n int) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "pages", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "page", Title: "Fetch page", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: longText(n)}}}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// longText is n characters in lines of 80 (79 and a newline), numbered,
// without trailing white space.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		line := "line " + strconv.Itoa(i) + " "
		b.WriteString(line + strings.Repeat("x", 79-len(line)) + "\n")
	}
	return strings.TrimSpace(b.String()[:n])
}

var (
	keptAs   = regexp.MustCompile("kept by ttmcp as result `([0-9a-f-]{36})`")
	pageHead = regexp.MustCompile(`^Result ([0-9a-f-]{36}), lines (\d+)–(\d+) of (\d+):\n\n`)
	nextAt   = regexp.MustCompile(`"startLine": (\d+)\}\.$`)
)

// A 200,000-character result reaches the model as the note and its
// preview; the model reads the rest through ttmcp_read_result, page after
// page, and what it read is the whole result; the user opens it in full
// from Recent calls.
func TestSTLongResultReadBack(t *testing.T) {
	e := newSTEnvWith(t, pageServer(200_000), map[string]string{"page": "allow"})
	want := longText(200_000)
	e.p.run(`SillyTavern.getContext().ToolManager.RECURSE_LIMIT = 30;`) // SillyTavern 1.18: tool_call_recurse_limit, up to 50
	var pages []string
	var resultID string
	read := func(req chatRequest) reply {
		// the last tool message is the note, or the last page
		var last string
		for _, m := range req.Messages {
			if m.Role == "tool" && m.Content != nil {
				last = *m.Content
			}
		}
		if m := keptAs.FindStringSubmatch(last); m != nil && resultID == "" {
			resultID = m[1]
			if !strings.HasPrefix(last, "This MCP result is too large to include here (199999 characters; inline limit 50000).") ||
				!strings.Contains(last, "## Prefix preview") || !strings.Contains(last, want[:3000]) || strings.Contains(last, want[:3001]) {
				t.Errorf("the note:\n%.800s", last)
			}
			return calls(toolCall{"r1", "ttmcp_read_result", fmt.Sprintf(`{"resultId":%q,"startLine":1,"lineCount":500}`, resultID)})
		}
		h := pageHead.FindStringSubmatchIndex(last)
		if h == nil {
			t.Errorf("not a page of the reader: %.300s", last)
			return reply{Text: "I could not read it."}
		}
		body := last[h[1]:]
		tail := strings.LastIndex(body, "\n\n")
		pages = append(pages, body[:tail])
		if m := nextAt.FindStringSubmatch(body[tail+2:]); m != nil {
			return calls(toolCall{fmt.Sprint("r", len(pages)+1), "ttmcp_read_result", fmt.Sprintf(`{"resultId":%q,"startLine":%s,"lineCount":500}`, resultID, m[1])})
		}
		if body[tail+2:] != "This is the end of the result." {
			t.Errorf("the page ends %q", body[tail+2:])
		}
		return reply{Text: "I read all of it."}
	}
	script := []reply{calls(toolCall{"p", "mcp__Demo__page", `{}`})}
	for range 25 {
		script = append(script, reply{From: read})
	}
	e.llm.script(script...)
	r := e.send("Read the page", false)
	if r.Status != "done" || r.Chat[len(r.Chat)-1].Mes != "I read all of it." {
		t.Fatalf("ended %s (%s); chat %+v", r.Status, r.Error, r.Chat[len(r.Chat)-1])
	}
	if got := strings.Join(pages, "\n"); got != want {
		t.Errorf("the model read %d characters in %d pages; want the %d of the result", len(got), len(pages), len(want))
	}
	if len(pages) < 10 {
		t.Errorf("%d pages: a page holds at most 20,000 characters", len(pages))
	}
	// The audit names the kept result; Recent calls opens it in full.
	entries := e.audit()
	if len(entries) != 1 || entries[0].ResultID == nil || *entries[0].ResultID != resultID {
		t.Fatalf("audit %+v; want the page call naming result %s", entries, resultID)
	}
	loadUI(e.p)
	shown := evalJS[int](e.p, `
		await ui.withText(/Servers · \d+/, document);
		window.dispatchEvent(new Event('focus'));
		const row = await ui.row('Demo');
		await ui.click('button', 'Show or hide tools', row);
		(await ui.withText('Recent calls', row, 'summary')).click();
		await ui.click('button', /Full result/, row);
		const pre = await ui.get('.tt-mcp-result-text', 'Full tool result');
		await ui.withText(/199,999 characters, 2500 lines/);
		return pre.textContent.length;`)
	if shown != len(want) {
		t.Errorf("the dialog shows %d characters; want %d", shown, len(want))
	}
	e.p.run(`toastr.remove();`)
	shots(e.p, "toolset-full-result")
}

// With 300 allowed tools and no tool set, no request carries more than
// 128 tools: the first 127 by the listing's order and the reader; the
// reach line says so before sending, and the generation says which were
// left out.
func TestST128ToolLimit(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, &mcp.ServerOptions{PageSize: 100})
	perms := map[string]string{}
	for i := range 300 {
		name := fmt.Sprintf("t%03d", i)
		perms[name] = "allow"
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	e := newSTEnvWith(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}), perms)
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document); window.dispatchEvent(new Event('focus'));`)
	if reach := e.reach(); !strings.Contains(reach, "127 tools from 1 server") ||
		!strings.Contains(reach, "This source takes at most 128 tools and SillyTavern has 0 of its own, so 173 of the 300 MCP tools are left out") {
		t.Errorf("before sending the Manager says %q", reach)
	}
	e.llm.script(reply{Text: "fine"})
	if r := e.send("Hi", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	q := e.llm.requests()[0]
	names := q.toolNames()
	if len(names) != 128 || names[0] != "mcp__Demo__t000" || names[126] != "mcp__Demo__t126" || names[127] != "ttmcp_read_result" {
		t.Errorf("the request carried %d tools: %v … %v", len(names), names[:min(3, len(names))], names[max(0, len(names)-3):])
	}
	w := e.toasts("warning")
	if len(w) != 1 || w[0].Title != "MCP tools left out" ||
		!strings.Contains(w[0].Text, "127 of 300 MCP tools are offered. Left out (the last in order): t127 (Demo), t128 (Demo)") ||
		!strings.HasSuffix(w[0].Text, "and 165 more.") {
		t.Errorf("the generation said %+v", w)
	}
}
