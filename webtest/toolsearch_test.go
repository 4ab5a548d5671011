package webtest

// Tool search in vanilla SillyTavern (issue 31): 300 real tools (the
// tool-search fixtures of fourteen npm MCP servers, backend/domain/testdata/
// toolsearch) on one go-sdk server, a tool set in search mode, and the fake
// model searching, reading details and calling through the constant set.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/storage/storagetest"
)

// fixtureServer serves the first 300 distinct tool names of the fixtures
// (files in name order) with their real schemas; each call is recorded
// and answered "<name> ran".
func fixtureServer(t *testing.T) (http.Handler, map[string]string, func() []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "backend", "domain", "testdata", "toolsearch", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	s := mcp.NewServer(&mcp.Implementation{Name: "fixtures", Version: "1"}, &mcp.ServerOptions{PageSize: 100})
	perms := map[string]string{}
	var mu sync.Mutex
	var called []string
	for _, f := range files {
		if strings.HasSuffix(f, "requests.json") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tools []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools {
			if _, dup := perms[tl.Name]; dup || len(perms) == 300 {
				continue
			}
			perms[tl.Name] = "allow"
			name := tl.Name
			s.AddTool(&mcp.Tool{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					mu.Lock()
					called = append(called, name)
					mu.Unlock()
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
				})
		}
	}
	if len(perms) != 300 {
		t.Fatalf("%d tools in the fixtures, want 300", len(perms))
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	return h, perms, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(called) }
}

// toolsBytes is the size of a request's tools array as sent, and the array itself.
func toolsBytes(t *testing.T, r chatRequest) (int, string) {
	t.Helper()
	b, err := json.Marshal(r.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return len(b), string(b)
}

// A chat whose tool set (every tool of the server, 300 of them) is in
// search mode: each request carries the constant set (and the reader)
// only, always the same array; the model searches for a request in words,
// reads the found tool's details and calls it through ttmcp_call_tool; the
// tool runs once, Ask asks naming the real tool, the audit line and
// SillyTavern's record show the real tool. Then the same set in "all"
// mode, for the figures: bytes per request and the array's stability over
// ten requests in each mode (docs/BENCHMARKS.md).
func TestSTToolSearchMode(t *testing.T) {
	h, perms, called := fixtureServer(t)
	perms["validate_ci_lint"] = "ask"
	e := newSTEnvWith(t, h, perms)
	setID := evalJS[string](e.p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const set = await mcp.toolSets.save({ name: 'Everything', tools: ['mcp/' + %s + ':*'], toolMode: 'search' });
		const ctx = SillyTavern.getContext();
		ctx.extensionSettings.mcp_manager ??= {};
		ctx.extensionSettings.mcp_manager.toolSets = { default: set.id, characters: {}, groups: {} };
		return set.id;`, e.id)
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document); window.dispatchEvent(new Event('focus'));`)
	if reach := e.reach(); !strings.Contains(reach, "through search: it can find 300 tools from 1 server") ||
		!strings.Contains(reach, "The next request carries 4 of ttmcp’s tool definitions") {
		t.Errorf("before sending the Manager says %q", reach)
	}
	// the reach line and the default's search settings, for a person to look at (and the contrast check)
	e.p.run(`document.querySelector('.tt-mcp-default-search summary').click(); document.querySelector('.tt-mcp-reach').scrollIntoView();`)
	screenshot(e.p, "toolsearch-reach", 1000, 900)
	constant := []string{"ttmcp_search_tools", "ttmcp_tool_details", "ttmcp_call_tool", "ttmcp_read_result"}
	const alias = "mcp__Demo__validate_ci_lint"
	e.llm.script(
		calls(toolCall{"s1", "ttmcp_search_tools", `{"query":"check whether my CI yaml config is valid"}`}),
		calls(toolCall{"d1", "ttmcp_tool_details", `{"name":"` + alias + `"}`}),
		calls(toolCall{"c1", "ttmcp_call_tool", `{"name":"` + alias + `","arguments":{"project_id":"grp/app","content":"stages: [test]"}}`}),
		reply{Text: "Your CI file is valid."},
	)
	e.start("Is my .gitlab-ci.yml valid?")
	popup := e.answerPopup("Allow once")
	if !strings.Contains(popup, "Demo") || !strings.Contains(popup, "validate_ci_lint") || !strings.Contains(popup, `"project_id": "grp/app"`) || strings.Contains(popup, "ttmcp_call_tool") {
		t.Errorf("the Ask popup said %q", popup)
	}
	r := e.finish()
	if r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests to the model, want 4", len(reqs))
	}
	_, first := toolsBytes(t, reqs[0])
	for i, q := range reqs {
		if names := q.toolNames(); !slices.Equal(names, constant) {
			t.Errorf("request %d carried %v; want the constant set %v", i+1, names, constant)
		}
		if _, arr := toolsBytes(t, q); arr != first {
			t.Errorf("request %d's tools array differs from the first's", i+1)
		}
	}
	found := reqs[1].toolMessages()["s1"]
	if !strings.Contains(found, "- "+alias+" — ") || !strings.HasPrefix(found, "10 MCP tools for ") {
		t.Errorf("the search answered:\n%s", found)
	}
	if details := reqs[2].toolMessages()["d1"]; !strings.Contains(details, `"name": "`+alias+`"`) || !strings.Contains(details, `"project_id"`) {
		t.Errorf("the details answered:\n%s", details)
	}
	if got := reqs[3].toolMessages()["c1"]; got != "validate_ci_lint ran" {
		t.Errorf("the call's tool message: %q", got)
	}
	if c := called(); !slices.Equal(c, []string{"validate_ci_lint"}) {
		t.Errorf("the MCP server ran %v; want validate_ci_lint once", c)
	}
	wantAudit(t, e.audit(), "validate_ci_lint ask once known_response ")
	var record []string
	for _, m := range r.Chat {
		for _, inv := range m.Extra.ToolInvocations {
			record = append(record, inv.Name+" / "+inv.DisplayName)
		}
		if m.IsSystem && strings.Contains(m.Mes, "ttmcp_call_tool") {
			t.Errorf("the chat's record message still names the call tool: %q", m.Mes)
		}
	}
	wantRecord := []string{"ttmcp_search_tools / Search MCP tools", "ttmcp_tool_details / Read an MCP tool’s parameters", "ttmcp_call_tool / validate_ci_lint (Demo)"}
	if !slices.Equal(record, wantRecord) {
		t.Errorf("SillyTavern's record: %q; want %q", record, wantRecord)
	}

	// The figures: ten requests in each mode, each mode's arrays identical.
	searchBytes, _ := toolsBytes(t, reqs[0])
	stable := func(mode string) (int, int) {
		before := len(e.llm.requests())
		for range 10 {
			e.llm.script(reply{Text: "ok"})
			if r := e.send("Hi", false); r.Status != "done" {
				t.Fatalf("%s: ended %s: %s", mode, r.Status, r.Error)
			}
		}
		qs := e.llm.requests()[before:]
		n, arr := toolsBytes(t, qs[0])
		for i, q := range qs {
			if _, a := toolsBytes(t, q); a != arr {
				t.Errorf("%s: request %d of 10 carried another tools array", mode, i+1)
			}
		}
		return n, len(qs[0].toolNames())
	}
	n, count := stable("search")
	if n != searchBytes {
		t.Errorf("search mode: %d bytes of tools after the loop, %d in it", n, searchBytes)
	}
	evalJS[bool](e.p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const set = (await mcp.toolSets.list()).toolSets.find((s) => s.id === %s);
		await mcp.toolSets.save({ ...set, toolMode: 'all' });
		return true;`, setID)
	allBytes, allCount := stable("all")
	if allCount != 128 {
		t.Errorf("all mode carried %d tools; want the provider's 128", allCount)
	}
	t.Logf("tools array per request: search mode %d tools, %d bytes; all mode %d tools, %d bytes (%.0f×); ten requests each, one array per mode",
		count, n, allCount, allBytes, float64(allBytes)/float64(n))
}

// The default's pins (chats without a tool set): chosen in the Manager's
// default search settings, saved in SillyTavern's extension settings, and
// carried by the next request after the constant set, in the order pinned.
func TestSTDefaultSearchPins(t *testing.T) {
	h, perms, called := fixtureServer(t)
	e := newSTEnvWith(t, h, perms)
	loadUI(e.p)
	e.p.run(`await ui.withText(/Servers · \d+/, document); window.dispatchEvent(new Event('focus'));`)
	e.p.run(`
		document.querySelector('.tt-mcp-default-search summary').click();
		await ui.choose('How the tools reach the model', /^Search/, document);
		(await ui.withText(/^Always offered with search \(0 pinned\)$/, document, 'summary')).click();
		await ui.type('Filter tools', 'validate_ci', document);
		(await ui.field(/^validate_ci_lint \(Demo\)$/, document)).click();
		await ui.type('Filter tools', 'list_issues', document);
		(await ui.field(/^list_issues \(Demo\)$/, document)).click();
		await ui.withText(/^Always offered with search \(2 pinned\)$/, document, 'summary');
		document.querySelector('.tt-mcp-default-pins').scrollIntoView();`)
	screenshot(e.p, "toolsearch-default-pins", 1000, 900)
	saved := evalJS[string](e.p, `return JSON.stringify(SillyTavern.getContext().extensionSettings.mcp_manager.toolSearch);`)
	want := `{"mode":"search","maxTools":40,"contextPercent":10,"pinned":["mcp/` + e.id + `:validate_ci_lint","mcp/` + e.id + `:list_issues"]}`
	if saved != want {
		t.Errorf("the default's settings: %s; want %s", saved, want)
	}
	if reach := e.reach(); !strings.Contains(reach, "The next request carries 6 of ttmcp’s tool definitions") {
		t.Errorf("the Manager says %q", reach)
	}
	e.llm.script(reply{Text: "ok"})
	if r := e.send("Hi", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	wantNames := []string{"ttmcp_search_tools", "ttmcp_tool_details", "ttmcp_call_tool", "mcp__Demo__validate_ci_lint", "mcp__Demo__list_issues", "ttmcp_read_result"}
	if names := reqs[len(reqs)-1].toolNames(); !slices.Equal(names, wantNames) {
		t.Errorf("the request carried %v; want %v", names, wantNames)
	}
	if c := called(); len(c) != 0 {
		t.Errorf("the MCP server ran %v; nothing was called", c)
	}
}

// The page keeps a large model listing and lists it again only when the
// backend's digest changed (issue 31, "big catalogs stay cheap";
// jsapi/bridge-transport.js): three roots of an unchanged listing carry it
// twice (the second to learn its digest) and then not again; every caller
// gets a value of its own, also when it was parsed ahead in idle time (the
// spare) and the caller before changed what it got; and each kind of
// change is in the very next listing although a spare waits: a
// permission, a catalog (a server's tools changed, refreshed), a
// registration file another program rewrote, a tool set.
func TestLegacyListingKeptWhileUnchanged(t *testing.T) {
	be := newBackend(t)
	store := storage.Open(be.root)
	ids, err := storagetest.Servers(store, 5, 100)
	if err != nil {
		t.Fatal(err)
	}
	live := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "1"}, nil)
	for _, name := range []string{"alpha", "beta"} {
		live.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	srv := newMCPServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return live }, &mcp.StreamableHTTPOptions{Stateless: true}))
	p := be.openHost(t)
	type listing struct {
		Tools  int
		IDs    []string // the toolIds of the live server and of tool.007 and tool.010 of every server
		Frames []int    // characters of each frame the page received
		Same   bool     // the same value as the last listing with these arguments, of the caller's own
	}
	liveID := evalJS[string](p, `
		for (const id of %s) await tt.mcp.servers.discover(id);
		const s = await tt.mcp.servers.create({ displayName: 'Live', endpoint: %s });
		await tt.mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await tt.mcp.servers.discover(s.id);
		for (const nativeName of ['alpha', 'beta']) await tt.mcp.tools.setPermission({ registrationId: s.id, nativeName, permission: 'allow' });
		// every frame the page's socket receives, by size
		tt.frames = [];
		tt.last = {};
		tt.listing = async (args) => {
			// idle time first: a spare waiting for it is made (idle callbacks run in order)
			await new Promise((r) => requestIdleCallback(r, { timeout: 5000 }));
			tt.frames.length = 0;
			const v = await window.__TAURITAVERN__.invoke.safeInvoke('list_legacy_mcp_tools', args);
			const key = JSON.stringify(args ?? null), text = JSON.stringify(v), last = tt.last[key];
			const same = last !== undefined && last.text === text && last.v !== v && last.v.tools[0] !== v.tools[0] &&
				last.v.tools[0].inputSchema !== v.tools[0].inputSchema;
			const ids = v.tools.map((t) => t.toolId).filter((id) => id.includes(s.id) || /:tool\.0(07|10)$/.test(id));
			const tools = v.tools.length;
			// a caller may change what it got; no other caller sees it
			v.tools[0].inputSchema.changedByTheCaller = true;
			v.tools[0].description = 'changed';
			v.tools.pop();
			tt.last[key] = { v, text };
			return { tools, ids, frames: [...tt.frames], same };
		};
		return s.id;`, ids, srv.URL+"/mcp")
	// count the frames through the socket's own event: wrap MessageEvent data reads
	p.run(`
		const get = Object.getOwnPropertyDescriptor(MessageEvent.prototype, 'data').get;
		Object.defineProperty(MessageEvent.prototype, 'data', { configurable: true, get() { const d = get.call(this); if (typeof d === 'string' && tt.frames) tt.frames.push(d.length); return d; } });`)
	big := func(l listing) int {
		n := 0
		for _, f := range l.Frames {
			if f > 256*1024 {
				n++
			}
		}
		return n
	}
	has := func(l listing, id string) bool { return slices.Contains(l.IDs, id) }
	tool := func(i int, name string) string { return "mcp/" + string(ids[i]) + ":" + name }
	list := func(what string, args any, tools, frames int, same bool) listing {
		t.Helper()
		l := evalJS[listing](p, `return await tt.listing(%s);`, args)
		if l.Tools != tools || big(l) != frames || l.Same != same {
			t.Fatalf("%s: %d tools, %d large frames, same %v; want %d, %d, %v (%+v)", what, l.Tools, big(l), l.Same, tools, frames, same, l)
		}
		return l
	}
	var none any
	list("the first listing", none, 502, 1, false)
	list("the second: its digest learnt", none, 502, 1, true)
	for i := range 3 {
		list(fmt.Sprintf("unchanged %d", i+1), none, 502, 0, true)
	}
	p.run(`await tt.mcp.tools.setPermission({ registrationId: %s, nativeName: 'tool.007', permission: 'off' });`, ids[0])
	if l := list("after a permission change", none, 501, 1, false); has(l, tool(0, "tool.007")) || !has(l, tool(1, "tool.007")) {
		t.Fatalf("after a permission change: %v", l.IDs)
	}
	list("unchanged again", none, 501, 0, true)
	live.RemoveTools("beta")
	p.run(`await tt.mcp.servers.refresh(%s);`, liveID)
	if l := list("after the catalog changed", none, 500, 1, false); has(l, "mcp/"+liveID+":beta") || !has(l, "mcp/"+liveID+":alpha") {
		t.Fatalf("after the catalog changed: %v", l.IDs)
	}
	list("unchanged again", none, 500, 0, true)
	// another program (TauriTavern on the same data root) turns a tool off in its file
	r, ok, err := store.Load(ids[1])
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	delete(r.Permissions, "tool.010") // Off: left out of the file
	if err := store.Save(r); err != nil {
		t.Fatal(err)
	}
	if l := list("after the file changed", none, 499, 1, false); has(l, tool(1, "tool.010")) || !has(l, tool(2, "tool.010")) {
		t.Fatalf("after the file changed: %v", l.IDs)
	}
	list("unchanged again", none, 499, 0, true)
	// a tool set's listing is kept apart; a change of the set is in its next listing
	all := []string{}
	for i := range 5 {
		all = append(all, "mcp/"+string(ids[i])+":*")
	}
	setID := evalJS[string](p, `return (await tt.mcp.toolSets.save({ name: 'Five', tools: %s })).id;`, all)
	args := map[string]any{"dto": map[string]any{"toolSetId": setID}}
	list("the set's first listing", args, 498, 1, false)
	list("the set's second", args, 498, 1, true)
	list("the set unchanged", args, 498, 0, true)
	p.run(`
		const set = (await tt.mcp.toolSets.list()).toolSets.find((s) => s.id === %s);
		await tt.mcp.toolSets.save({ ...set, tools: set.tools.slice(0, 4) });`, setID)
	if l := list("after the set changed", args, 398, 1, false); has(l, tool(4, "tool.007")) || !has(l, tool(3, "tool.007")) {
		t.Fatalf("after the set changed: %v", l.IDs)
	}
	list("the set unchanged again", args, 398, 0, true)
	list("the upstream listing, unchanged", none, 499, 0, true)
}
