//go:build unix

package webtest

// Stdio servers in the page (issue 10): a server added on the backend's
// machine (`ttmcp stdio add`, here its use case) shows up in the Manager
// as stdio with its command line, is activated there (the confirmation
// shows the command), discovered, allowed and test-called; a crash shows
// the process's stderr in the Manager; and the page can neither create one
// nor change its command.

import (
	"context"
	"fmt"
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
		await ui.withText('7 tools', row);
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
