package webtest

// The mcp-manager extension end to end (issue 7): the real playground at /
// loads the real extension (extension.Files(), built by `make`) against
// the real backend and the demo MCP server, and the tests drive it as a
// user does — by role, label and text (testdata/ui.js). Screenshots of
// each main screen at 1280 and 390 px go to webtest/results/.

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/extension"
)

// withManager serves the mcp-manager extension as SillyTavern addresses
// it (and at /extension/), and offers demo as the demo server.
func withManager(demo *mcpServer) func(*server.Config) {
	return func(c *server.Config) {
		c.Extensions = map[string]fs.FS{extension.Name: extension.Files()}
		c.Pages["/extension/"] = extension.Files()
		if demo != nil {
			c.Demo = &server.DemoServer{DisplayName: "ttmcp demo", Endpoint: demo.endpoint()}
		}
	}
}

// needBundle fails the test when the extension was not built.
func needBundle(t testing.TB) {
	t.Helper()
	if _, err := fs.Stat(extension.Files(), "dist/index.bundle.js"); err != nil {
		t.Fatalf("the extension's bundle is missing (%v): `make webtest` builds it", err)
	}
}

// loadUI loads testdata/ui.js (window.ui) into the page.
func loadUI(p *page) {
	p.run(`if (!window.ui) await new Promise((resolve, reject) => {
		const s = document.createElement('script');
		s.src = '/webtest/ui.js';
		s.onload = resolve; s.onerror = reject;
		document.head.append(s);
	});`)
}

// openManager opens the playground with the Manager and waits until the
// Manager shows its list (the server count or the empty state).
func openManager(t testing.TB, b *backend) *page {
	t.Helper()
	p := openPlayground(t, b, "")
	loadUI(p)
	p.run(`await ui.withText(/Servers · \d+|No MCP servers yet/, document);`)
	return p
}

// shots takes the screenshot name at both widths, then returns to 1280.
func shots(p *page, name string) {
	p.tb.Helper()
	screenshot(p, name+"-390", 390, 844)
	screenshot(p, name+"-1280", 1280, 800)
}

// regFile returns the registration file whose displayName is name, decoded.
func regFile(t *testing.T, b *backend, name string) map[string]any {
	t.Helper()
	for file, data := range b.regFiles() {
		var reg map[string]any
		if err := json.Unmarshal([]byte(data), &reg); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if reg["displayName"] == name {
			return reg
		}
	}
	return nil
}

// The whole flow on the demo server: add → activate → expand (discover) →
// Allow → edit description → test calls (a result, isError, Stop waiting
// on the slow tool) → pause → remove.
func TestManagerEndToEnd(t *testing.T) {
	needBundle(t)
	demo := newDemoServer(t)
	b := newBackend(t, withManager(demo))
	p := openManager(t, b)
	p.run(`await ui.row('Exa Search');`) // the recommended entry, created once, paused
	shots(p, "manager-list")

	// Add.
	p.run(`await ui.click('button', 'Add server', document);`)
	p.run(`await ui.get('dialog', undefined, document); await ui.withText('Add MCP server');
		await ui.type('Name', 'Demo'); await ui.type('Endpoint', %s);`, demo.endpoint())
	shots(p, "manager-add")
	p.run(`await ui.click('button', 'Add server');`)
	p.run(`const row = await ui.row('Demo'); await ui.get('button', 'Paused', row);`)
	reg := regFile(t, b, "Demo")
	if reg == nil || reg["state"] != "paused" || reg["endpoint"] != demo.endpoint() {
		t.Fatalf("after Add: registration %v", reg)
	}

	// Activate (confirmation; the demo is on loopback: no unencrypted-HTTP warning).
	p.run(`await ui.click('button', 'Paused', await ui.row('Demo'));
		await ui.withText('Activate this MCP server?'); await ui.withText('Activation allows manual discovery and test calls to this exact endpoint');`)
	if evalJS[bool](p, `return document.querySelector('dialog.popup').innerText.includes('unencrypted');`) {
		t.Error("the loopback demo's activation warns of unencrypted HTTP on the network")
	}
	shots(p, "manager-activate")
	p.run(`await ui.click('button', 'Activate');
		await ui.get('button', 'Active', await ui.row('Demo'));`)
	if reg := regFile(t, b, "Demo"); reg["state"] != "active" {
		t.Fatalf("after Activate: %v", reg)
	}

	// Expand: discovery runs by itself.
	p.run(`const row = await ui.row('Demo');
		await ui.click('button', 'Show or hide tools', row);
		await ui.withText('5 tools', row);
		await ui.get('radiogroup', 'Permission for Echo', row);`)
	shots(p, "manager-tools")

	// Allow on Echo.
	p.run(`const group = await ui.get('radiogroup', 'Permission for Echo', await ui.row('Demo'));
		(await ui.get('radio', 'Allow', group)).click();
		await ui.gone(() => !group.querySelector('input[type=radio]:checked') || ui.nameOf(group.querySelector('input[type=radio]:checked')) !== 'Allow', 'Allow checked');`)
	waitFile(t, b, "Demo", func(reg map[string]any) bool {
		perms, _ := reg["toolPermissions"].(map[string]any)
		return perms["echo"] == "allow"
	}, "echo allowed")

	// Edit Echo's description.
	p.run(`const group = await ui.get('radiogroup', 'Permission for Echo', await ui.row('Demo'));
		const item = group.closest('li') ?? group.parentElement;
		await ui.click('button', 'Edit description', item);
		await ui.type('Custom description', 'Echo the text back, verbatim.');`)
	shots(p, "manager-description")
	p.run(`await ui.click('button', 'Save');
		const row = await ui.row('Demo');
		await ui.withText('Echo the text back, verbatim.', row);
		await ui.withText('Custom', row);`)
	waitFile(t, b, "Demo", func(reg map[string]any) bool {
		overrides, _ := reg["toolDescriptionOverrides"].(map[string]any)
		echo, _ := overrides["echo"].(map[string]any)
		return echo["description"] == "Echo the text back, verbatim."
	}, "echo's description override")

	// Test calls.
	p.run(`await ui.click('button', 'Test call', document);
		await ui.withText('Test MCP tool');
		await ui.choose('Tool', 'Echo');
		await ui.type(/^text\b/, 'hello from the test');
		await ui.click('button', 'Run test');
		await ui.withText('Server responded');
		await ui.withText('hello from the test', undefined, 'pre');`)
	shots(p, "manager-test-call")
	p.run(`await ui.choose('Tool', 'Fail');
		await ui.click('button', 'Run test');
		await ui.withText('Tool returned an error');
		await ui.withText('the demo tool failed on purpose', undefined, 'pre');`)
	p.run(`await ui.choose('Tool', 'Slow');
		await ui.type(/^ms\b/, '60000');
		await ui.click('button', 'Run test');
		await ui.withText('Waiting for server…');`)
	// Stop once the server has the call (before, it is "Not sent").
	for i := 0; !slices.ContainsFunc(demo.requests(), func(r mcpRequest) bool { return r.Tool == "slow" }); i++ {
		if i == 800 {
			t.Fatalf("the demo server never received the slow call: %+v", demo.requests())
		}
		time.Sleep(25 * time.Millisecond)
	}
	p.run(`await ui.click('button', 'Stop waiting');
		await ui.withText('Outcome unknown');
		await ui.withText('may have executed');`)
	shots(p, "manager-test-stopped")
	p.run(`await ui.click('button', 'Close'); await ui.gone(() => document.querySelector('dialog[open]'), 'the console');`)

	// Pause (no confirmation), then remove.
	p.run(`const row = await ui.row('Demo');
		await ui.click('button', 'Active', row);
		await ui.get('button', 'Paused', row);`)
	if reg := regFile(t, b, "Demo"); reg["state"] != "paused" {
		t.Fatalf("after Pause: %v", reg)
	}
	p.run(`await ui.click('button', 'Remove', await ui.row('Demo'));
		await ui.withText('Remove this MCP server?');`)
	shots(p, "manager-remove")
	p.run(`await ui.click('button', 'Remove');
		await ui.gone(() => [...document.querySelectorAll('li')].some((li) => ui.text(li).includes('Demo')), 'the Demo row');`)
	if reg := regFile(t, b, "Demo"); reg != nil {
		t.Fatalf("after Remove the registration is still there: %v", reg)
	}
}

// waitFile waits until the registration named name satisfies ok.
func waitFile(t *testing.T, b *backend, name string, ok func(map[string]any) bool, what string) {
	t.Helper()
	for range 200 {
		if reg := regFile(t, b, name); reg != nil && ok(reg) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("registration %q never showed %s: %v", name, what, regFile(t, b, name))
}

// JSON mode imports one server, headers included.
func TestManagerJSONImport(t *testing.T) {
	needBundle(t)
	demo := newDemoServer(t)
	b := newBackend(t, withManager(demo))
	p := openManager(t, b)
	config := `{"mcpServers": {"demo-json": {"type": "streamable-http", "url": "` + demo.endpoint() + `", "headers": {"x-api-key": "k-123"}}}}`
	p.run(`await ui.click('button', 'Add server', document);
		await ui.click('radio', 'JSON');
		await ui.type('MCP JSON', %s);`, config)
	shots(p, "manager-json")
	p.run(`await ui.click('button', 'Add server');
		await ui.row('demo-json');`)
	reg := regFile(t, b, "demo-json")
	headers, _ := reg["headers"].(map[string]any)
	if reg == nil || reg["endpoint"] != demo.endpoint() || headers["x-api-key"] != "k-123" || reg["state"] != "paused" {
		t.Fatalf("imported registration: %v", reg)
	}
}

// The Exa Search recommendation is offered once per data root: removed,
// it stays removed across a backend restart (its marker is in the
// extension store on disk).
func TestManagerExaMarkerSurvivesRestart(t *testing.T) {
	needBundle(t)
	b := newBackend(t, withManager(nil))
	p := openManager(t, b)
	p.run(`await ui.row('Exa Search');
		await ui.click('button', 'Remove', await ui.row('Exa Search'));
		await ui.click('button', 'Remove');
		await ui.withText('No MCP servers yet', document);`)
	marker := filepath.Join(b.root, "_tauritavern", "extension-store")
	if found := findFile(marker, "exa-search-recommendation-handled"); found == "" {
		t.Errorf("no marker file under %s", marker)
	}
	b.stop()
	b.start()
	p.navigate(b.url("/"))
	waitHostReady(p)
	loadUI(p)
	p.run(`await ui.withText(/Servers · \d+|No MCP servers yet/, document);`)
	if text := evalJS[string](p, `return ui.text(document.body);`); strings.Contains(text, "Exa Search") {
		t.Errorf("after a restart the Exa entry is back: %s", text)
	}
	if n := len(b.regFiles()); n != 0 {
		t.Errorf("%d registrations after the restart; want none", n)
	}
}

// findFile returns the first file under root whose path contains part.
func findFile(root, part string) string {
	found := ""
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, part) && found == "" {
			found = p
		}
		return nil
	})
	return found
}

// The playground's one click: "Add the demo server", and the Manager lists
// it, paused.
func TestManagerAddTheDemoServer(t *testing.T) {
	needBundle(t)
	demo := newDemoServer(t)
	b := newBackend(t, withManager(demo))
	p := openManager(t, b)
	p.run(`window.beforeReload = true; await ui.click('button', 'Add the demo server', document);`)
	waitReloaded(p)
	loadUI(p)
	p.run(`const row = await ui.row('ttmcp demo');
		await ui.get('button', 'Paused', row);
		await ui.withText('Demo server added', document);`)
	if reg := regFile(t, b, "ttmcp demo"); reg == nil || reg["endpoint"] != demo.endpoint() {
		t.Fatalf("registration %v", reg)
	}
}

// The extension runs in a host that gives it only what SillyTavern 1.12
// gives (testdata/bare): the MCP drawer mounts, a server is added,
// activated and discovered through 1.12's Popup.
func TestManagerInBareSillyTavern112(t *testing.T) {
	needBundle(t)
	demo := newDemoServer(t)
	b := newBackend(t, withManager(nil))
	p := openBareHost(t, b)
	loadUI(p)
	p.run(`const header = await ui.withText('MCP', document.getElementById('extensions_settings2'), '.inline-drawer-toggle');
		header.click();
		await ui.withText(/Servers · \d+|No MCP servers yet/, document);
		await ui.click('button', 'Add server', document);
		await ui.type('Name', 'Demo'); await ui.type('Endpoint', %s);
		await ui.click('button', 'Add server');
		const row = await ui.row('Demo');
		await ui.click('button', 'Paused', row);
		await ui.click('button', 'Activate');
		await ui.get('button', 'Active', row);
		await ui.click('button', 'Show or hide tools', row);
		await ui.withText('5 tools', row);`, demo.endpoint())
	screenshot(p, "bare-112-1280", 1280, 800)
	if reg := regFile(t, b, "Demo"); reg == nil || reg["state"] != "active" {
		t.Fatalf("registration %v", reg)
	}
}
