package webtest

// Resources and prompts end to end (issue 18): the real mcp-manager in the
// playground against the real backend — the Manager's Tools, Resources and
// Prompts tabs against @modelcontextprotocol/server-everything over HTTP
// (skipped without TTMCP_NODE_TOOLS; `make webtest` sets it) and against
// a go-sdk server with resources and prompts; a resource attached to a
// chat reaching the fake model's chat-completion request at the chosen
// place, and gone once removed; `/mcp-prompt` putting a prompt into the
// chat; a server without resources or prompts showing no empty tabs.
// Screenshots at 1280 and 390 px go to webtest/results/.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startEverythingHTTP runs `server-everything streamableHttp` (the pinned
// Node of tools/node) on a free port and returns its MCP endpoint; the
// process group is killed when the test ends.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	return startNodeMCP(t, "server-everything", "streamableHttp")
}

// startNodeMCP runs the npm MCP server pkg of tools/node
// (@modelcontextprotocol/<pkg>, dist/index.js with args) on a free port
// (PORT) and returns its MCP endpoint; the process group is killed when the
// test ends.
func startNodeMCP(t *testing.T, pkg string, args ...string) string {
	t.Helper()
	dir := nodeTools(t)
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var out bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			mu.Lock()
			t.Logf("%s output:\n%s", pkg, out.String())
			mu.Unlock()
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited before listening: %v", pkg, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within 30 s", pkg, addr)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The texts of resourceServer's resources.
const (
	introText  = "The guide's introduction: tides rise and fall twice a day."
	wavesText  = "Chapter waves: wind makes waves."
	bigURI     = "docs://big/1mib.txt"
	bigTextLen = 1 << 20
)

// resourceServer is a go-sdk MCP server (stateless) with resources, a
// template, a prompt with arguments, completion, and one tool.
func resourceServer() http.Handler {
	big := strings.Repeat("abcdefghijklmnopqrstuvwxyz01234\n", bigTextLen/32)
	complete := func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		var all []string
		switch {
		case req.Params.Ref.Type == "ref/resource" && req.Params.Argument.Name == "chapter":
			all = []string{"tides", "waves", "currents"}
		case req.Params.Ref.Type == "ref/prompt" && req.Params.Argument.Name == "style":
			all = []string{"brief", "detailed"}
		}
		values := []string{}
		for _, v := range all {
			if strings.HasPrefix(v, req.Params.Argument.Value) {
				values = append(values, v)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values}}, nil
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1.0.0"}, &mcp.ServerOptions{CompletionHandler: complete})
	mcp.AddTool(s, &mcp.Tool{Name: "noop", Description: "Does nothing."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	text := func(uri, mime, body string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: "docs://guide/intro.md", Name: "intro.md", Title: "Introduction", MIMEType: "text/markdown", Size: int64(len(introText)),
		Description: "Where the guide starts."}, text("docs://guide/intro.md", "text/markdown", introText))
	s.AddResource(&mcp.Resource{URI: "docs://data/settings.json", Name: "settings.json", MIMEType: "application/json"},
		text("docs://data/settings.json", "application/json", `{"tide":{"high":"06:12","low":"12:25"}}`))
	s.AddResource(&mcp.Resource{URI: bigURI, Name: "1mib.txt", MIMEType: "text/plain", Size: int64(len(big))}, text(bigURI, "text/plain", big))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "docs://guide/{chapter}", Name: "Guide chapter", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain",
				Text: "Chapter " + strings.TrimPrefix(req.Params.URI, "docs://guide/") + ": wind makes waves."}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Title: "Summarize", Description: "Summarize a topic.",
		Arguments: []*mcp.PromptArgument{{Name: "topic", Description: "What to summarize", Required: true}, {Name: "style"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			style := req.Params.Arguments["style"]
			if style == "" {
				style = "plain"
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Summarize " + req.Params.Arguments["topic"] + " in a " + style + " style."}},
				{Role: "assistant", Content: &mcp.TextContent{Text: "Which sources should I use?"}},
			}}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// addActive registers endpoint as name, activates it, and makes the
// Manager list again; it returns the registration id.
func addActive(p *page, name, endpoint string) string {
	return evalJS[string](p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: %s, endpoint: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		window.dispatchEvent(new Event('ttmcp:registrations-changed'));
		// the Manager is told of each change and may list between the two: wait for the active row
		await ui.get('.tt-mcp-state-active', undefined, await ui.row(%s));
		return s.id;`, name, endpoint, name)
}

// expandRow expands a server's row in the Manager and waits for its console.
func expandRow(p *page, name string) {
	p.run(`const row = await ui.row(%s);
		await ui.click('button', 'Show or hide tools', row);
		await ui.get('.tt-mcp-console', undefined, row);`, name)
}

// The Manager on server-everything: Tools, Resources and Prompts tabs; its
// static documents listed with their mime types, one previewed; a
// template filled with the server's completion and read; the blob
// template's text; a prompt with a required argument refused until it is
// given, then its messages, and "Put in the input box"; completion of a
// prompt argument that depends on another; resources turned off (the tab
// says so, the backend refuses with its code) and on again.
func TestManagerResourcesAndPrompts(t *testing.T) {
	needBundle(t)
	endpoint := startEverythingHTTP(t)
	b := newBackend(t, withManager(nil))
	p := openManager(t, b)
	id := addActive(p, "Everything", endpoint)
	expandRow(p, "Everything")
	tabs := evalJS[[]string](p, `
		const row = await ui.row('Everything');
		const list = await ui.get('[role=tablist]', 'What Everything offers', row);
		return [...list.querySelectorAll('[role=tab]')].map((t) => t.textContent + ' ' + t.getAttribute('aria-selected'));`)
	if !slices.Equal(tabs, []string{"Tools true", "Resources false", "Prompts false"}) {
		t.Fatalf("tabs %q", tabs)
	}

	// Resources: the documents, then one previewed.
	listed := evalJS[[]string](p, `
		const row = await ui.row('Everything');
		await ui.click('[role=tab]', 'Resources', row);
		const list = await ui.get('ul', 'Resources', row);
		await ui.withText('features.md', list);
		return [...list.querySelectorAll(':scope > li')].map((li) => [li.querySelector('.tt-mcp-tool-title'), li.querySelector('.tt-mcp-chips'), li.querySelector('.tt-mcp-uri')].map(ui.text).join(' | '));`)
	if !slices.Contains(listed, "features.md | text/markdown | demo://resource/static/document/features.md") {
		t.Errorf("resources %q", listed)
	}
	shots(p, "manager-resources")
	preview := evalJS[string](p, `
		await ui.click('button', 'Open features.md', await ui.row('Everything'));
		const dialog = await ui.get('dialog', undefined, document);
		const region = await ui.get('[aria-label="What the server returned"]', undefined, dialog);
		await ui.withText('1 content', region);
		return ui.text(region.querySelector('pre'));`)
	if !strings.Contains(preview, "Features") {
		t.Errorf("the preview of features.md: %.200q", preview)
	}
	shots(p, "manager-resource-preview")
	p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)

	// A template, with the server's suggestions.
	read := evalJS[map[string]any](p, `
		await ui.click('button', 'Open template Dynamic Text Resource', await ui.row('Everything'));
		const dialog = await ui.get('dialog', undefined, document);
		const field = await ui.type('resourceId', '7', dialog);
		const list = document.getElementById(field.getAttribute('list'));
		await ui.gone(() => list.querySelectorAll('option').length === 0, 'suggestions');
		const suggestions = [...list.querySelectorAll('option')].map((o) => o.value);
		const uri = ui.text(await ui.withText('demo://resource/dynamic/text/7', dialog, 'code'));
		await ui.click('button', 'Read', dialog);
		const pre = await ui.withText('Resource 7:', dialog, 'pre');
		return { suggestions, uri, text: ui.text(pre) };`)
	if fmt.Sprint(read["suggestions"]) != "[7]" || read["uri"] != "demo://resource/dynamic/text/7" || !strings.HasPrefix(read["text"].(string), "Resource 7: This is a plaintext resource") {
		t.Errorf("template read %v", read)
	}
	shots(p, "manager-resource-template")
	p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)

	// Prompts: a required argument, the messages, the input box.
	p.run(`
		const row = await ui.row('Everything');
		await ui.click('[role=tab]', 'Prompts', row);
		await ui.click('button', 'Use prompt Arguments Prompt', row);
		const dialog = await ui.get('dialog', undefined, document);
		await ui.click('button', 'Get prompt', dialog);
		await ui.withText('Required.', dialog);`)
	got := evalJS[map[string]any](p, `
		const dialog = await ui.get('dialog', undefined, document);
		await ui.type(/^city/, 'Paris', dialog);
		await ui.click('button', 'Get prompt', dialog);
		const messages = await ui.get('[aria-label="The prompt’s messages"]', undefined, dialog);
		await ui.withText('What\'s weather in Paris?', messages);
		const roles = [...messages.querySelectorAll('.tt-mcp-role')].map((r) => r.textContent);
		await ui.click('button', 'Put in the input box', dialog);
		await ui.withText('Put 24 characters in the input box.', dialog);
		return { roles, input: document.getElementById('send_textarea').value };`)
	if fmt.Sprint(got["roles"]) != "[User]" || got["input"] != "What's weather in Paris?" {
		t.Errorf("prompt %v", got)
	}
	shots(p, "manager-prompt")
	p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)

	// Completion of an argument given the one before it.
	names := evalJS[[]string](p, `
		await ui.click('button', 'Use prompt Team Management', await ui.row('Everything'));
		const dialog = await ui.get('dialog', undefined, document);
		await ui.type(/^department/, 'Engineering', dialog);
		const field = await ui.type(/^name/, '', dialog);
		field.dispatchEvent(new FocusEvent('focus'));
		field.focus();
		const list = document.getElementById(field.getAttribute('list'));
		await ui.gone(() => list.querySelectorAll('option').length === 0, 'suggestions');
		const values = [...list.querySelectorAll('option')].map((o) => o.value);
		await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');
		return values;`)
	if !slices.Equal(names, []string{"Alice", "Bob", "Charlie"}) {
		t.Errorf("name suggestions for Engineering: %q", names)
	}

	// Resources off: shown as off; the backend refuses.
	off := evalJS[map[string]any](p, `
		const row = await ui.row('Everything');
		await ui.click('[role=tab]', 'Resources', row);
		await ui.click('button[aria-pressed]', 'Resources from this server', row);
		await ui.withText('Resources are off for this server', row);
		const sw = await ui.get('button[aria-pressed]', 'Resources from this server', row);
		let code = '';
		try { await window.__TAURITAVERN__.api.mcp.resources.list(%s); } catch (e) { code = e.code; }
		return { checked: sw.getAttribute('aria-pressed'), alerts: row.querySelectorAll('[role=alert]').length, code };`, id)
	if off["checked"] != "false" || off["alerts"] != float64(0) || off["code"] != "mcp.resources_disabled" {
		t.Errorf("resources off: %v", off)
	}
	shots(p, "manager-resources-off")
	p.run(`
		const row = await ui.row('Everything');
		await ui.click('button[aria-pressed]', 'Resources from this server', row);
		await ui.get('ul', 'Resources', row);`)

	// A tool result's resource links, in the test console: listed, and one
	// opened reads it from the server (the resource dialog over the console).
	linked := evalJS[map[string]any](p, `
		await ui.click('button', 'Test call', document);
		await ui.withText('Test MCP tool');
		await ui.choose('Tool', 'Get Resource Links Tool');
		await ui.type(/^count/, '2');
		await ui.click('button', 'Run test');
		const console = ui.top();
		await ui.withText('2 resources in the result', console);
		const items = [...console.querySelectorAll('.tt-mcp-result-resources li')].map(ui.text);
		await ui.click('button', 'Open Text Resource 2', console);
		await ui.gone(() => ui.top() === console, 'the resource dialog');
		const dialog = ui.top();
		const pre = await ui.withText('Resource 2:', dialog, 'pre');
		return { items, text: ui.text(pre), uri: ui.text(dialog.querySelector('.tt-mcp-uri')) };`)
	items, _ := linked["items"].([]any)
	if len(items) != 2 || !strings.Contains(fmt.Sprint(items[1]), "demo://resource/dynamic/text/2") || linked["uri"] != "demo://resource/dynamic/text/2" ||
		!strings.HasPrefix(fmt.Sprint(linked["text"]), "Resource 2: This is a plaintext resource") {
		t.Errorf("a result's resource links: %v", linked)
	}
	shots(p, "test-call-resource-link")
}

// A server that offers only tools (the demo) shows no tabs: its console is
// the tools, as before.
func TestManagerNoEmptyTabs(t *testing.T) {
	needBundle(t)
	demo := newDemoServer(t)
	b := newBackend(t, withManager(nil))
	p := openManager(t, b)
	addActive(p, "Demo", demo.endpoint())
	expandRow(p, "Demo")
	got := evalJS[map[string]any](p, `
		const row = await ui.row('Demo');
		await ui.withText('echo', row, 'code');
		// the capabilities are asked for once the console opens; give them their turn
		await new Promise((r) => setTimeout(r, 300));
		return { tablists: row.querySelectorAll('[role=tablist]').length, tabs: row.querySelectorAll('[role=tab]').length,
			caps: await window.__TAURITAVERN__.api.mcp.servers.capabilities((await window.__TAURITAVERN__.api.mcp.servers.list()).servers.find((s) => s.displayName === 'Demo').id) };`)
	if got["tablists"] != float64(0) || got["tabs"] != float64(0) {
		t.Errorf("a tools-only server shows tabs: %v", got)
	}
	adv, _ := got["caps"].(map[string]any)["advertised"].(map[string]any)
	if adv["tools"] != true || adv["resources"] != false || adv["prompts"] != false {
		t.Errorf("the demo advertises %v", adv)
	}
	shots(p, "manager-tools-only")
}

// messagesOf lists a request's messages as "role: content".
func messagesOf(r chatRequest) []string { return r.roles() }

// resourceIn reports where the message holding text is in a request: its
// index and role, or -1.
func resourceIn(r chatRequest, text string) (int, string) {
	for i, m := range r.Messages {
		if m.Content != nil && strings.Contains(*m.Content, text) {
			return i, m.Role
		}
	}
	return -1, ""
}

// openResourcesMenu opens the wand menu's "MCP resources" item (its dialog).
func openResourcesMenu(e *stEnv) {
	e.p.run(`
		const item = await new Promise((r) => { const c = () => { const i = document.getElementById('mcp_manager_resources_menu'); i ? r(i) : setTimeout(c, 20); }; c(); });
		const button = document.getElementById('extensionsMenuButton');
		if (document.getElementById('extensionsMenu').style.display === 'none') button.click();
		item.click();
		await ui.withText('MCP resources in the chat with', await ui.get('dialog', undefined, document));`)
}

// Issue 18's acceptance: a resource attached to a chat from the wand
// menu's picker, at depth 1 as a system message, is in the model's next
// request exactly there (and stays there, a snapshot, request after
// request, and after the chat is opened again), is kept in the chat's
// metadata; one attached from the Manager's preview before the main prompt
// comes first; the wand menu counts them; once removed, the next request
// has neither, and TauriTavern's registration and catalog files are as
// before.
func TestSTAttachResource(t *testing.T) {
	needBundle(t)
	e := newSTEnvWith(t, resourceServer(), map[string]string{})
	loadUI(e.p)
	before := e.b.regFiles()
	openChat(e, 0)
	openResourcesMenu(e)
	shots(e.p, "st-attachments-empty")
	e.p.run(`
		const dialog = await ui.get('dialog', undefined, document);
		const picker = await ui.get('[aria-label="Attach a resource"]', undefined, dialog);
		const list = await ui.get('ul', 'Resources of Demo', picker);
		await ui.type('Depth', '1', picker);
		await ui.click('button', 'Attach Introduction', list);
		await ui.withText('Attached to the chat with Seraphina: in the chat at depth 1, as system.', list);
		await ui.withText('1 attachment · The chat’s attachments: 58 of 100,000 characters.', dialog);`)
	shots(e.p, "st-attachments")
	e.p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)
	if label := evalJS[string](e.p, `return document.getElementById('mcp_manager_resources_menu').textContent;`); label != "MCP resources · 1 (58 characters)" {
		t.Errorf("the wand menu item says %q", label)
	}

	e.llm.script(reply{Text: "r1"}, reply{Text: "r2"}, reply{Text: "r3"}, reply{Text: "r4"})
	for _, text := range []string{"first", "second"} {
		if r := e.send(text, false); r.Status != "done" {
			t.Fatalf("send %s: %s %s", text, r.Status, r.Error)
		}
	}
	reqs := e.llm.requests()
	wantBlock := `<mcp_resource name="Introduction" server="Demo" uri="docs://guide/intro.md">` + "\n" + introText + "\n</mcp_resource>"
	for i, r := range reqs {
		at, role := resourceIn(r, introText)
		msgs := messagesOf(r)
		// depth 1: right before the last chat message (the user's new one)
		if at != len(r.Messages)-2 || role != "system" || *r.Messages[at].Content != wantBlock {
			t.Errorf("request %d: the resource at %d as %q; messages %q", i+1, at, role, msgs)
		}
	}
	stored := evalJS[map[string]any](e.p, `return SillyTavern.getContext().chatMetadata.mcp_manager_attachments;`)
	items, _ := stored["items"].([]any)
	if len(items) != 1 || fmt.Sprint(items[0].(map[string]any)["uri"]) != "docs://guide/intro.md" {
		t.Errorf("chat metadata %v", stored)
	}

	// Another chat has none; this chat again has it.
	openChat(e, 1)
	if r := e.send("elsewhere", false); r.Status != "done" {
		t.Fatal(r.Error)
	}
	if at, _ := resourceIn(e.llm.requests()[2], introText); at >= 0 {
		t.Errorf("another chat's request has the resource at %d", at)
	}
	openChat(e, 0)

	// Before the main prompt, from the Manager's preview.
	e.p.run(`stChat.mainPrompt = 'MAIN PROMPT';
		window.dispatchEvent(new Event('ttmcp:registrations-changed'));
		const row = await ui.row('Demo');
		await ui.click('button', 'Show or hide tools', row);
		await ui.click('[role=tab]', 'Resources', row);
		await ui.click('button', 'Open settings.json', row);
		const dialog = await ui.get('dialog', undefined, document);
		const panel = await ui.get('[aria-label="Attach to this chat"]', undefined, dialog);
		await ui.choose('Position', 'Before the main prompt', panel);
		await ui.click('button', 'Attach', panel);
		await ui.withText('Attached to the chat with Seraphina: before the main prompt, as system.', panel);`)
	shots(e.p, "manager-resource-attach")
	e.p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)
	if r := e.send("third", false); r.Status != "done" {
		t.Fatal(r.Error)
	}
	r := e.llm.requests()[3]
	if at, _ := resourceIn(r, `"high":"06:12"`); at != 0 || *r.Messages[1].Content != "MAIN PROMPT" {
		t.Errorf("the settings resource at %d; messages %q", at, messagesOf(r))
	}

	// Removed: the next request has neither.
	openResourcesMenu(e)
	e.p.run(`
		const dialog = await ui.get('dialog', undefined, document);
		await ui.click('button', 'Remove Introduction', dialog);
		await ui.click('button', 'Remove settings.json', dialog);
		await ui.withText('0 attachments', dialog);
		await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the dialog');`)
	e.llm.script(reply{Text: "r5"})
	if r := e.send("fourth", false); r.Status != "done" {
		t.Fatal(r.Error)
	}
	last := e.llm.requests()[4]
	if at, _ := resourceIn(last, introText); at >= 0 {
		t.Errorf("after removal the resource is still at %d: %q", at, messagesOf(last))
	}
	if at, _ := resourceIn(last, "06:12"); at >= 0 {
		t.Errorf("after removal the settings are still at %d", at)
	}
	if after := e.b.regFiles(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the registration files changed:\nbefore %v\nafter  %v", before, after)
	}
	// every read is in the audit log, with its URI and never its content
	var reads []string
	for _, a := range e.audit() {
		if a.Kind == "resource_read" {
			reads = append(reads, deref(a.URI)+" "+a.Outcome)
		}
	}
	if !slices.Equal(reads, []string{"docs://data/settings.json known_response", "docs://guide/intro.md known_response"}) {
		t.Errorf("audited reads %q", reads)
	}
}

// `/mcp-prompt` with arguments puts the rendered prompt into the chat:
// typed in the chat input and piped to /send, its user text is the chat's
// new message (the assistant message it also has is named in a toast, not
// sent), and /trigger sends it to the model. Its server and prompt
// arguments autocomplete.
func TestSTMcpPromptCommand(t *testing.T) {
	needBundle(t)
	e := newSTEnvWith(t, resourceServer(), map[string]string{})
	openChat(e, 0)

	// SillyTavern asks the enum providers synchronously: on a fresh page
	// their lists are read while the command is typed, so the first ask
	// (here, once the read the typing started is answered) has them
	first := evalJS[map[string][]string](e.p, `
		const p = window.__TAURITAVERN__.api.mcp.prompts;
		const list = p.list;
		let listed;
		const read = new Promise((resolve) => (listed = resolve));
		p.list = async (...a) => { try { return await list.apply(p, a); } finally { setTimeout(listed, 0); } };
		const box = document.getElementById('send_textarea');
		box.value = '/mcp-prompt ';
		box.dispatchEvent(new Event('input', { bubbles: true }));
		await Promise.race([read, new Promise((r) => setTimeout(r, 10000))]);
		p.list = list;
		box.value = '';
		const args = SillyTavern.getContext().SlashCommandParser.commands['mcp-prompt'].namedArgumentList;
		const values = (arg, executor) => arg.enumProvider(executor, null).map((x) => x.value);
		return { servers: values(args[0], {}), prompts: values(args[1], { namedArgumentList: [{ name: 'server', value: 'Demo' }] }) };`)
	if !slices.Equal(first["servers"], []string{"Demo"}) || !slices.Equal(first["prompts"], []string{"summarize"}) {
		t.Errorf("the first ask offered %v", first)
	}

	e.llm.script(reply{Text: "A brief summary."})
	e.p.run(`
		const box = document.getElementById('send_textarea');
		box.value = '/mcp-prompt server=Demo name=summarize topic="the tides" style=brief | /send | /trigger';
		box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
		const end = Date.now() + 20000;
		while (stChat.lastTrigger === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 25));`)
	chat := evalJS[[]map[string]any](e.p, `return stChat.chat;`)
	if len(chat) != 2 || chat[0]["mes"] != "Summarize the tides in a brief style." || chat[0]["is_user"] != true || chat[1]["mes"] != "A brief summary." {
		t.Fatalf("chat %v (trigger: %v)", chat, evalJS[any](e.p, `return stChat.lastTrigger ?? null;`))
	}
	reqs := e.llm.requests()
	if len(reqs) != 1 || !slices.Contains(messagesOf(reqs[0]), "user: Summarize the tides in a brief style.") {
		t.Errorf("the model got %d requests: %q", len(reqs), messagesOf(reqs[0]))
	}
	warnings := e.toasts("warning")
	if len(warnings) != 1 || warnings[0].Title != "Parts of summarize left out" || warnings[0].Text != "An assistant message: “Which sources should I use?”" {
		t.Errorf("warnings %+v", warnings)
	}

	// the autocomplete: SillyTavern calls the enum providers as the user types
	values := evalJS[map[string][]string](e.p, `
		const args = SillyTavern.getContext().SlashCommandParser.commands['mcp-prompt'].namedArgumentList;
		const ask = async (arg, executor) => {
			const end = Date.now() + 10000;
			for (;;) {
				const v = arg.enumProvider(executor, null).map((x) => x.value + (x.description ? ' — ' + x.description : ''));
				if (v.length > 0 || Date.now() > end) return v;
				await new Promise((r) => setTimeout(r, 50));
			}
		};
		return { servers: await ask(args[0], {}), prompts: await ask(args[1], { namedArgumentList: [{ name: 'server', value: 'Demo' }] }) };`)
	if len(values["servers"]) != 1 || !strings.HasPrefix(values["servers"][0], "Demo — http://") ||
		!slices.Equal(values["prompts"], []string{"summarize — Summarize · arguments: topic*, style"}) {
		t.Errorf("autocomplete %v", values)
	}

	// a missing required argument is refused before anything is sent, in a toast
	e.p.run(`await SillyTavern.getContext().executeSlashCommandsWithOptions('/mcp-prompt server=Demo name=summarize | /send', { handleExecutionErrors: true });`)
	errs := e.toasts("error")
	if len(errs) != 1 || !strings.Contains(errs[0].Text, "mcp.prompt_argument_missing") {
		t.Errorf("errors %+v", errs)
	}
	if n := len(evalJS[[]any](e.p, `return stChat.chat;`)); n != 2 {
		t.Errorf("the failed command changed the chat: %d messages", n)
	}
	shots(e.p, "st-mcp-prompt")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
