package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ttmcp/ttmcp/plugin"
)

// testPlugin stands in for plugin.Files().
func testPlugin() fstest.MapFS {
	return fstest.MapFS{
		"package.json": {Data: []byte(`{"name":"ttmcp-plugin","type":"module","main":"index.mjs"}`)},
		"index.mjs":    {Data: []byte("export const info = {};")},
	}
}

func pluginConfigJSON(backend, binary, root string, autostart bool) string {
	data, _ := json.MarshalIndent(pluginConfig{BackendURL: backend, Binary: binary, DataRoot: root, Autostart: autostart}, "", "  ")
	return string(data) + "\n"
}

// The plugin goes into plugins/ttmcp/ with config.json (the backend, the
// binary, the data root); an update keeps the user's autostart:false;
// nothing else is left in plugins/ or in the checkout.
func TestInstallPlugin(t *testing.T) {
	st := fakeSillyTavern(t, "1.18.0")
	target := filepath.Join(st, "plugins", "ttmcp")
	o := installOptions{SillyTavern: st, User: "default-user", Binary: "/opt/ttmcp", DataRoot: dataRoot{"/srv/ttmcp-data", "--data-root"}}
	out, err := runInstall(t, o, testExtension())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"package.json": `{"name":"ttmcp-plugin","type":"module","main":"index.mjs"}`,
		"index.mjs":    "export const info = {};",
		"config.json":  pluginConfigJSON("http://127.0.0.1:7878", "/opt/ttmcp", "/srv/ttmcp-data", true),
	}
	if got := tree(t, target); !reflect.DeepEqual(got, want) {
		t.Errorf("plugin files %v; want %v", got, want)
	}
	for _, s := range []string{"Installed the ttmcp server plugin", target, "/opt/ttmcp serve --listen 127.0.0.1:7878 --data-root /srv/ttmcp-data", `"autostart": false`, "Start the backend: ttmcp serve --data-root /srv/ttmcp-data\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// The user turned autostart off; an update with another backend keeps that.
	os.WriteFile(filepath.Join(target, "config.json"), []byte(`{"backendUrl":"http://127.0.0.1:7878","binary":"/opt/ttmcp","autostart":false}`), 0o644)
	o.Backend = "http://localhost:7880"
	out, err = runInstall(t, o, testExtension())
	if err != nil {
		t.Fatal(err)
	}
	want["config.json"] = pluginConfigJSON("http://localhost:7880", "/opt/ttmcp", "/srv/ttmcp-data", false)
	if got := tree(t, target); !reflect.DeepEqual(got, want) {
		t.Errorf("after an update: %v; want %v", got, want)
	}
	if !strings.Contains(out, "Updated the ttmcp server plugin") {
		t.Errorf("update output:\n%s", out)
	}
	if names := dirNames(mustReadDir(t, filepath.Join(st, "plugins"))); !reflect.DeepEqual(names, []string{"ttmcp"}) {
		t.Errorf("plugins/ holds %v; want only ttmcp (SillyTavern loads every folder there)", names)
	}
	for _, e := range mustReadDir(t, st) {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left in the checkout: %s", e.Name())
		}
	}

	// Uninstalling one user's extension keeps the plugin another copy uses.
	if _, err := runInstall(t, installOptions{SillyTavern: st, User: "alice"}, testExtension()); err != nil {
		t.Fatal(err)
	}
	out, err = runInstall(t, installOptions{SillyTavern: st, User: "default-user", Uninstall: true}, testExtension())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil || !strings.Contains(out, "Kept the server plugin") || !strings.Contains(out, filepath.Join(st, "data", "alice", "extensions", "mcp-manager")) {
		t.Errorf("uninstall with alice's copy left: plugin %v\n%s", err, out)
	}
	out, err = runInstall(t, installOptions{SillyTavern: st, User: "alice", Uninstall: true}, testExtension())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, iofs.ErrNotExist) || !strings.Contains(out, "Removed the server plugin") {
		t.Errorf("the last uninstall kept the plugin: %v\n%s", err, out)
	}
	if names := dirNames(mustReadDir(t, filepath.Join(st, "plugins"))); len(names) != 0 {
		t.Errorf("plugins/ after uninstall: %v", names)
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// Another plugin named ttmcp, and a backend the plugin cannot reach, are
// refused with nothing written or removed.
func TestInstallPluginRefusals(t *testing.T) {
	st := fakeSillyTavern(t, "1.18.0")
	foreign := filepath.Join(st, "plugins", "ttmcp")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "package.json"), []byte(`{"name":"someone-elses"}`), 0o644)
	for _, c := range []struct {
		name string
		o    installOptions
		want string
	}{
		{"another plugin", installOptions{SillyTavern: st, User: "default-user"}, `holds another plugin (package "someone-elses")`},
		{"another plugin, uninstall", installOptions{SillyTavern: st, User: "default-user", Uninstall: true}, "left alone"},
		{"a LAN backend", installOptions{SillyTavern: st, User: "default-user", Backend: "http://192.168.1.5:7878"}, "loopback only"},
		{"https backend", installOptions{SillyTavern: st, User: "default-user", Backend: "https://127.0.0.1:7878"}, "loopback only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := runInstall(t, c.o, testExtension()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want %q", err, c.want)
			}
		})
	}
	if got := tree(t, foreign); !reflect.DeepEqual(got, map[string]string{"package.json": `{"name":"someone-elses"}`}) {
		t.Errorf("the other plugin changed: %v", got)
	}
	if _, err := os.Stat(filepath.Join(st, "data", "default-user", "extensions")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("the extension was installed although the plugin was refused: %v", err)
	}
}

// The command line resolves the data root as serve does (absolute, for the
// plugin that runs in SillyTavern's folder) and records this executable.
func TestInstallPluginCommandLine(t *testing.T) {
	if _, err := iofs.Stat(plugin.Files(), "index.mjs"); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  string
		want func(cwd string) string
	}{
		{"--data-root, relative", []string{"--data-root", "rel/root"}, "", func(cwd string) string { return filepath.Join(cwd, "rel", "root") }},
		{"TTMCP_DATA_ROOT", nil, "/from/env", func(string) string { return "/from/env" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("POSIX paths")
			}
			st := fakeSillyTavern(t, "1.18.0")
			t.Setenv(envDataRoot, c.env)
			cwd, _ := os.Getwd()
			args := append([]string{"install-extension", "--sillytavern", st}, c.args...)
			if err := run(context.Background(), args, io.Discard); err != nil {
				t.Fatal(err)
			}
			var cfg pluginConfig
			data, _ := os.ReadFile(filepath.Join(st, "plugins", "ttmcp", "config.json"))
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			if want := (pluginConfig{BackendURL: defaultBackend, Binary: exe, DataRoot: c.want(cwd), Autostart: true}); cfg != want {
				t.Errorf("config.json %+v; want %+v", cfg, want)
			}
			pkg, _ := os.ReadFile(filepath.Join(st, "plugins", "ttmcp", "package.json"))
			if !strings.Contains(string(pkg), `"main": "index.mjs"`) {
				t.Errorf("the real plugin's package.json: %s", pkg)
			}
		})
	}
}

// enableServerPlugins changes the one line's value and keeps every other
// byte, including comments, a commented-out key, a trailing comment and
// CRLF line endings; the old file is config.yaml.bak.
func TestEnableServerPluginsKeepsEveryOtherByte(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"SillyTavern's default",
			"# -- SERVER PLUGIN CONFIGURATION --\nenableServerPlugins: false\n# Attempt to automatically update server plugins on startup\nenableServerPluginsAutoUpdate: true\n",
			"# -- SERVER PLUGIN CONFIGURATION --\nenableServerPlugins: true\n# Attempt to automatically update server plugins on startup\nenableServerPluginsAutoUpdate: true\n"},
		{"a commented-out key first, a trailing comment, nested keys alike",
			"# enableServerPlugins: true\nsso:\n  enableServerPlugins: false\nenableServerPlugins:   false   # off for now\nport: 8000",
			"# enableServerPlugins: true\nsso:\n  enableServerPlugins: false\nenableServerPlugins:   true   # off for now\nport: 8000"},
		{"CRLF",
			"listen: true\r\nenableServerPlugins: false\r\nport: 8000\r\n",
			"listen: true\r\nenableServerPlugins: true\r\nport: 8000\r\n"},
		{"quoted",
			"enableServerPlugins: 'false' # quoted\n",
			"enableServerPlugins: true # quoted\n"},
		{"empty value",
			"enableServerPlugins:\nport: 8000\n",
			"enableServerPlugins: true\nport: 8000\n"},
		{"empty value, a comment",
			"enableServerPlugins: # later\n",
			"enableServerPlugins: true # later\n"},
		{"no line: added at the end, CRLF kept",
			"listen: false\r\nport: 8000",
			"listen: false\r\nport: 8000\r\nenableServerPlugins: true\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			os.WriteFile(path, []byte(c.in), 0o640)
			if err := enableServerPlugins(path); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != c.want {
				t.Errorf("config.yaml\n%q\nwant\n%q", got, c.want)
			}
			if bak, _ := os.ReadFile(path + ".bak"); string(bak) != c.in {
				t.Errorf("config.yaml.bak %q; want the old file %q", bak, c.in)
			}
			if info, _ := os.Stat(path); runtime.GOOS != "windows" && info.Mode().Perm() != 0o640 {
				t.Errorf("mode %v; want 0640 kept", info.Mode().Perm())
			}
			if entries := mustReadDir(t, filepath.Dir(path)); len(entries) != 2 {
				t.Errorf("beside config.yaml: %v; want only config.yaml.bak", dirNames(entries))
			}
		})
	}
}

func TestEnableServerPluginsAlreadyOnOrTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	os.WriteFile(path, []byte("enableServerPlugins: true\n"), 0o644)
	if err := enableServerPlugins(path); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(mustReadDir(t, dir)); !reflect.DeepEqual(names, []string{"config.yaml"}) {
		t.Errorf("already on: wrote %v", names)
	}
	os.WriteFile(path, []byte("enableServerPlugins: false\nenableServerPlugins: false\n"), 0o644)
	if err := enableServerPlugins(path); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("a duplicated key: %v", err)
	}
}

// truthy follows SillyTavern's getConfigValue(…, 'boolean') on what the
// yaml package parses.
func TestTruthy(t *testing.T) {
	for v, want := range map[string]bool{
		"true": true, "True": true, "TRUE": true, "false": false, "False": false, "": false, "~": false, "null": false,
		`"true"`: true, `'TRUE '`: true, `"false"`: false, `' False'`: false, `""`: false,
		"yes": true, "no": true, "0": false, "1": true, "0.0": false, "false#x": true,
	} {
		if got := truthy(v); got != want {
			t.Errorf("truthy(%q) = %v; want %v", v, got, want)
		}
	}
}

// What the installer says about server plugins, for each state of
// config.yaml; --enable-server-plugins changes the line.
func TestInstallReportsServerPlugins(t *testing.T) {
	write := func(st, name, data string) {
		os.MkdirAll(filepath.Dir(filepath.Join(st, name)), 0o755)
		os.WriteFile(filepath.Join(st, name), []byte(data), 0o644)
	}
	for _, c := range []struct {
		name   string
		files  map[string]string
		enable bool
		want   []string
		yaml   string // config.yaml afterwards ("": as written)
	}{
		{"no config.yaml yet", map[string]string{"default/config.yaml": "enableServerPlugins: false\n"}, true,
			[]string{"Server plugins: off. SillyTavern has no config.yaml yet", "Start SillyTavern once", "SILLYTAVERN_ENABLESERVERPLUGINS=true", "ttmcp serve"}, ""},
		{"off", map[string]string{"config.yaml": "port: 8000\nenableServerPlugins: false # plugins\n"}, false,
			[]string{"Server plugins: off — SillyTavern will not load the plugin.", "says enableServerPlugins: false # plugins", "change that line to   enableServerPlugins: true", "--enable-server-plugins", "SILLYTAVERN_ENABLESERVERPLUGINS=true", "Start the backend: ttmcp serve"}, ""},
		{"off, enabled", map[string]string{"config.yaml": "port: 8000\nenableServerPlugins: false # plugins\n"}, true,
			[]string{"Server plugins: turned on in", "was enableServerPlugins: false # plugins", "config.yaml.bak", "enableServerPluginsAutoUpdate is on", "is not one, so it is left alone", "Restart SillyTavern: it loads the plugin, which starts ttmcp"},
			"port: 8000\nenableServerPlugins: true # plugins\n"},
		{"on, no auto-update", map[string]string{"config.yaml": "enableServerPlugins: true\nenableServerPluginsAutoUpdate: false\n"}, false,
			[]string{"Server plugins: on (", "enableServerPlugins: true)", "Restart SillyTavern"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := fakeSillyTavern(t, "1.18.0")
			for name, data := range c.files {
				write(st, name, data)
			}
			out, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user", EnablePlugins: c.enable}, testExtension())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if c.name == "on, no auto-update" && strings.Contains(out, "git-pulls") {
				t.Errorf("auto-update is off, yet:\n%s", out)
			}
			if c.yaml != "" {
				if got, _ := os.ReadFile(filepath.Join(st, "config.yaml")); string(got) != c.yaml {
					t.Errorf("config.yaml %q; want %q", got, c.yaml)
				}
			} else if data, ok := c.files["config.yaml"]; ok {
				if got, _ := os.ReadFile(filepath.Join(st, "config.yaml")); string(got) != data {
					t.Errorf("config.yaml changed without --enable-server-plugins: %q", got)
				}
			}
			if _, err := os.Stat(filepath.Join(st, "config.yaml")); c.name == "no config.yaml yet" && !errors.Is(err, iofs.ErrNotExist) {
				t.Errorf("config.yaml was created: %v", err)
			}
		})
	}
}
