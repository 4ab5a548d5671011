//go:build unix

package webtest

// Stdio servers in the page (issue 10): a server added on the backend's
// machine (`ttmcp stdio add`, here its use case) shows up in the Manager
// as stdio with its command line, is activated there (the confirmation
// shows the command), discovered, allowed and test-called; a crash shows
// the process's stderr in the Manager; and the page can neither create one
// nor change its command.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
)

// withStdio serves the commands over the registry of root (registration
// and stdio files) with a gateway that runs stdio servers, as `ttmcp
// serve` does.
func withStdio(root string, gw *gateway.Gateway) func(*server.Config) {
	return func(c *server.Config) {
		store := storage.Open(root)
		c.Commands = server.NewCommands(service.New(service.Config{
			Registrations:  store.Registry(),
			Catalogs:       store,
			Gateway:        gw,
			Processes:      gw,
			ExtensionStore: storage.OpenExtensionStore(root),
		}), nil)
	}
}

func TestManagerStdioServer(t *testing.T) {
	needBundle(t)
	b := newBackend(t, withManager(nil))
	gw := gateway.New(gateway.Config{ClientVersion: "webtest", StdioStopGrace: 200 * time.Millisecond})
	t.Cleanup(func() { gw.Close() })
	b.configure = append(b.configure, withStdio(b.root, gw))
	b.stop()
	b.start()

	pids := t.TempDir()
	cfg := stdiotest.Stdio(t, "tools", pids)
	cfg.Env["API_KEY"] = "never-shown-to-the-page"
	cli := service.New(service.Config{Registrations: storage.Open(b.root).Registry(), Catalogs: storage.Open(b.root)})
	added, err := cli.AddStdio(context.Background(), "Local tools", cfg)
	if err != nil {
		t.Fatal(err)
	}
	line := cfg.Command

	p := openManager(t, b)
	p.run(`const row = await ui.row('Local tools');
		await ui.withText('stdio', row, '.tt-mcp-chip-stdio');
		await ui.withText(%s, row, 'code');
		await ui.get('button', 'Paused', row);`, line)
	shots(p, "manager-stdio-list")
	if html := evalJS[string](p, `return document.body.innerHTML;`); strings.Contains(html, "never-shown-to-the-page") {
		t.Fatal("an environment value reached the page")
	}

	// Activate: the confirmation shows the command and the environment's names.
	p.run(`await ui.click('button', 'Paused', await ui.row('Local tools'));
		await ui.withText('Activate this MCP server?');
		await ui.withText(%s, undefined, 'code');
		await ui.withText('API_KEY', undefined, 'code');
		await ui.withText('Activation lets the backend run this command on its own machine');`, line)
	shots(p, "manager-stdio-activate")
	if n := len(stdiotest.Pids(t, pids, "tools")); n != 0 {
		t.Fatal("a paused server was started")
	}
	p.run(`await ui.click('button', 'Activate');
		const row = await ui.row('Local tools');
		await ui.get('button', 'Active', row);
		await ui.click('button', 'Show or hide tools', row);
		await ui.withText('9 tools', row);
		await ui.withText('running', row);`)
	shots(p, "manager-stdio-tools")

	// Allow echo, then a test call from the page.
	p.run(`const group = await ui.get('radiogroup', 'Permission for echo', await ui.row('Local tools'));
		(await ui.get('radio', 'Allow', group)).click();`)
	waitStdio(t, b.root, added.ID, func(r domain.Registration) bool { return r.PermissionFor("echo") == domain.PermissionAllow })
	out := evalJS[map[string]any](p, `return await window.__TAURITAVERN__.api.mcp.tools.testCall(
		{ registrationId: %s, nativeName: 'echo', argumentsJson: '{"n":9007199254740993}' });`, string(added.ID))
	if resp, _ := out["response"].(map[string]any); out["outcome"] != "known_response" || !strings.Contains(fmt.Sprint(resp), `9007199254740993`) {
		t.Fatalf("test call: %v", out)
	}

	// The page cannot give it another command, nor create one.
	errText := evalJS[string](p, `try {
			await window.__TAURITAVERN__.api.mcp.servers.update({ registrationId: %s, displayName: 'x', endpoint: 'stdio:/bin/sh', headers: {}, protocolVersion: 'auto' });
			return 'updated';
		} catch (e) { return e.code + ' ' + e.message; }`, string(added.ID))
	if !strings.HasPrefix(errText, "mcp.stdio_config_readonly ") || !strings.Contains(errText, "ttmcp stdio add") {
		t.Fatalf("update with a command: %s", errText)
	}
	errText = evalJS[string](p, `try {
			await window.__TAURITAVERN__.invoke.safeInvoke('create_mcp_server', { dto: { displayName: 'x', endpoint: 'http://127.0.0.1:9/', command: '/bin/sh' } });
			return 'created';
		} catch (e) { return e.code; }`)
	if errText != "mcp.stdio_config_readonly" {
		t.Fatalf("create with a command: %s", errText)
	}

	// A crash mid-call: outcome unknown, and the Manager shows the stderr.
	out = evalJS[map[string]any](p, `return await window.__TAURITAVERN__.api.mcp.tools.testCall(
		{ registrationId: %s, nativeName: 'crash', argumentsJson: '{}' });`, string(added.ID))
	if out["outcome"] != "outcome_unknown" || out["code"] != gateway.CodeStdioProcessExited {
		t.Fatalf("crash: %v", out)
	}
	p.run(`const row = await ui.row('Local tools');
		await ui.click('button', 'Check the process again', row);
		await ui.withText('panic: the tool crashed the server', row, 'pre');
		await ui.withText('mcp.stdio_process_exited', row, 'code');`)
	shots(p, "manager-stdio-crashed")

	// Pause stops the process.
	p.run(`await ui.click('button', 'Active', await ui.row('Local tools'));
		await ui.get('button', 'Paused', await ui.row('Local tools'));`)
	stdiotest.WaitGone(t, stdiotest.Pids(t, pids, "tools")...)
}

// waitStdio waits until the stdio server id's file satisfies ok.
func waitStdio(t *testing.T, root string, id domain.RegistrationID, ok func(domain.Registration) bool) {
	t.Helper()
	for range 200 {
		if r, found, err := storage.Open(root).LoadStdio(id); err == nil && found && ok(r) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the stdio server's file never changed as expected")
}

// nodeTools returns tools/node (`make node-tools`: Node 22 and
// server-everything), or skips the test when it is not installed and
// TTMCP_NODE_TOOLS is unset (make webtest sets it, so the test runs there).
func nodeTools(t testing.TB) string {
	t.Helper()
	dir := cmp.Or(os.Getenv("TTMCP_NODE_TOOLS"), filepath.Join("..", "tools", "node"))
	dir, err := filepath.Abs(dir)
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything"))
	}
	switch {
	case err != nil && os.Getenv("TTMCP_NODE_TOOLS") != "":
		t.Fatalf("TTMCP_NODE_TOOLS names no server-everything install: %v", err) // make webtest sets it: never skip there
	case err != nil:
		t.Skipf("server-everything is not installed under tools/node (`make node-tools`): %v", err)
	}
	return dir
}

// stdioEverythingBackend is a backend whose gateway runs stdio servers,
// with server-everything added as the user would add it
// (`ttmcp stdio add everything -- npx -y @modelcontextprotocol/server-everything`),
// paused.
func stdioEverythingBackend(t *testing.T) (*backend, service.StdioServer) {
	t.Helper()
	tools := nodeTools(t)
	// The backend's PATH has Node 22 (npx itself may be the system's).
	t.Setenv("PATH", filepath.Join(tools, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	b := newBackend(t, withManager(nil))
	gw := gateway.New(gateway.Config{ClientVersion: "webtest", StartupTimeout: time.Minute, ListTimeout: 20 * time.Second,
		CallWait: 20 * time.Second, StdioStopGrace: 500 * time.Millisecond})
	t.Cleanup(func() { gw.Close() })
	b.configure = append(b.configure, func(c *server.Config) {
		store := storage.Open(b.root)
		c.Commands = server.NewCommands(service.New(service.Config{Registrations: store.Registry(), Catalogs: store,
			Gateway: gw, Processes: gw, Audit: b.audit, ExtensionStore: storage.OpenExtensionStore(b.root)}), nil)
	})
	b.stop()
	b.start()
	cli := service.New(service.Config{Registrations: storage.Open(b.root).Registry(), Catalogs: storage.Open(b.root)})
	added, err := cli.AddStdio(context.Background(), "everything", domain.Stdio{Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"npm_config_offline": "true"}, Cwd: tools})
	if err != nil {
		t.Fatal(err)
	}
	return b, added
}

// Issue 10's acceptance in the page, with the real programs: the user ran
// `ttmcp stdio add everything -- npx -y @modelcontextprotocol/server-everything`
// (here its use case); in the Manager the row shows that command line, the
// user activates the server (the confirmation shows the command), its tools
// are discovered and get-sum is allowed; a test call from the page, then
// SillyTavern's Generate loop (st-chat.js) lets the model call it, and the
// audit log holds both calls.
func TestSTStdioEverything(t *testing.T) {
	needBundle(t)
	b, added := stdioEverythingBackend(t)
	const line = "npx -y @modelcontextprotocol/server-everything"

	p := openManager(t, b)
	p.run(`const row = await ui.row('everything');
		await ui.withText('stdio', row, '.tt-mcp-chip-stdio');
		await ui.withText(%s, row, 'code');
		await ui.click('button', 'Paused', row);
		await ui.withText('Activate this MCP server?');
		await ui.withText(%s, undefined, 'code');
		await ui.click('button', 'Activate');
		await ui.get('button', 'Active', await ui.row('everything'));
		await ui.click('button', 'Show or hide tools', await ui.row('everything'));
		const group = await ui.get('radiogroup', /^Permission for .*sum/i, await ui.row('everything'));
		(await ui.get('radio', 'Allow', group)).click();`, line, line)
	waitStdio(t, b.root, added.ID, func(r domain.Registration) bool { return r.PermissionFor("get-sum") == domain.PermissionAllow })
	shots(p, "manager-stdio-everything")

	out := evalJS[map[string]any](p, `return await window.__TAURITAVERN__.api.mcp.tools.testCall(
		{ registrationId: %s, nativeName: 'get-sum', argumentsJson: '{"a":2,"b":3}' });`, string(added.ID))
	if out["outcome"] != "known_response" || !strings.Contains(fmt.Sprint(out["response"]), "The sum of 2 and 3 is 5.") {
		t.Fatalf("test call: %v", out)
	}

	e := &stEnv{b: b, llm: newChatServer(t), p: p, id: string(added.ID)}
	loadSTChat(p, e.llm)
	e.llm.script(calls(toolCall{"c1", "mcp__everything__get-sum", `{"a":40,"b":2}`}), reply{Text: "42."})
	if r := e.send("Add 40 and 2", false); r.Status != "done" {
		t.Fatalf("ended %s: %s", r.Status, r.Error)
	}
	reqs := e.llm.requests()
	if len(reqs) != 2 || !slices.Contains(reqs[0].toolNames(), "mcp__everything__get-sum") {
		t.Fatalf("the model got %d requests, the first offering %v", len(reqs), reqs[0].toolNames())
	}
	if msg := reqs[1].toolMessages()["c1"]; !strings.Contains(msg, "The sum of 40 and 2 is 42.") {
		t.Fatalf("the tool message: %s", msg)
	}
	wantAudit(t, e.audit(), "get-sum allow none known_response ", "get-sum allow manual known_response ")
}
