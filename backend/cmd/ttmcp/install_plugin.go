package main

// The SillyTavern server plugin's part of install-extension (issue 28): the
// plugin's files into <ST>/plugins/ttmcp/ with config.json, its removal,
// and what the user must change in config.yaml for SillyTavern to load it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ttmcp/ttmcp/extension"
	"github.com/ttmcp/ttmcp/plugin"
)

// pluginConfigFile is the plugin's config.json, beside its index.mjs.
const pluginConfigFile = "config.json"

// pluginPackageName is the "name" of the plugin's package.json: a folder
// plugins/ttmcp whose package.json names anything else is not ours.
const pluginPackageName = "ttmcp-plugin"

// pluginStagingPrefix names the plugin's staging folders. They are made in
// the checkout's folder, not in plugins/: SillyTavern's loader imports
// every folder of plugins/, hidden ones included.
const pluginStagingPrefix = "." + plugin.Name + "-plugin.ttmcp-"

// pluginConfig is config.json (read by plugin/index.mjs readConfig).
type pluginConfig struct {
	BackendURL string `json:"backendUrl"`
	Binary     string `json:"binary"`
	DataRoot   string `json:"dataRoot,omitempty"`
	Autostart  bool   `json:"autostart"`
}

// pluginDir is where SillyTavern loads the plugin from.
func pluginDir(st *sillyTavern) string { return filepath.Join(st.dir, "plugins", plugin.Name) }

// checkLoopbackBackend refuses a backend URL the plugin cannot use: it
// reaches the backend from SillyTavern's machine, and ttmcp listens on
// loopback only.
func checkLoopbackBackend(backend string) error {
	u, err := url.Parse(backend)
	if err != nil {
		return err
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme != "http" || !(host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return fmt.Errorf("%s is not http://<loopback address>:<port>; ttmcp listens on loopback only, and the SillyTavern plugin reaches it from SillyTavern's machine", backend)
	}
	return nil
}

// checkPluginOurs refuses to replace or remove a plugins/ttmcp folder that
// holds another plugin.
func checkPluginOurs(target string) error {
	data, err := os.ReadFile(filepath.Join(target, "package.json"))
	if errors.Is(err, iofs.ErrNotExist) {
		if entries, err := os.ReadDir(target); err == nil && len(entries) > 0 {
			return fmt.Errorf("%s exists without a package.json; it is not ttmcp's plugin, so it is left alone (remove it yourself)", target)
		}
		return nil
	}
	if err != nil {
		return err
	}
	var pkg struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(data, &pkg) != nil || pkg.Name != pluginPackageName {
		return fmt.Errorf("%s holds another plugin (package %q); it is left alone (remove it yourself)", target, pkg.Name)
	}
	return nil
}

// installPlugin writes the plugin into plugins/ttmcp/ (whole-folder swap,
// as the extension) with config.json; an autostart:false the user set in
// the old config.json is kept.
func installPlugin(st *sillyTavern, files iofs.FS, cfg pluginConfig) (updated bool, err error) {
	target := pluginDir(st)
	if old, err := os.ReadFile(filepath.Join(target, pluginConfigFile)); err == nil {
		var prev struct {
			Autostart *bool `json:"autostart"`
		}
		if json.Unmarshal(old, &prev) == nil && prev.Autostart != nil && !*prev.Autostart {
			cfg.Autostart = false
		}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return false, err
	}
	staged, _, err := stage(st.dir, pluginStagingPrefix, files, map[string][]byte{pluginConfigFile: append(data, '\n')})
	if err != nil {
		return false, err
	}
	updated, err = swapIn(filepath.Dir(target), staged, target)
	if err != nil {
		os.RemoveAll(staged)
	}
	return updated, err
}

// otherExtensionCopies lists where else in the checkout our extension is
// installed (other users, or global), which the plugin still serves.
func otherExtensionCopies(st *sillyTavern, except string) []string {
	var dirs []string
	for _, u := range listUsers(st.dataRoot) {
		dirs = append(dirs, filepath.Join(st.dataRoot, u, "extensions", extension.Name))
	}
	dirs = append(dirs, filepath.Join(st.dir, "public", "scripts", "extensions", "third-party", extension.Name))
	var found []string
	for _, d := range dirs {
		if d == except {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "manifest.json")); err == nil && checkOurs(d) == nil {
			found = append(found, d)
		}
	}
	return found
}

// uninstallPlugin removes plugins/ttmcp/ unless another copy of the
// extension still uses it.
func uninstallPlugin(st *sillyTavern, extensionTarget string, out io.Writer) error {
	target := pluginDir(st)
	if _, err := os.Lstat(target); errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	if others := otherExtensionCopies(st, extensionTarget); len(others) > 0 {
		fmt.Fprintf(out, "Kept the server plugin %s: the extension is still installed in\n  %s\n(uninstall those too to remove the plugin).\n", target, strings.Join(others, "\n  "))
		return nil
	}
	if err := os.RemoveAll(target); err != nil {
		return err
	}
	fmt.Fprintf(out, "Removed the server plugin %s. Restart SillyTavern to unload it (a ttmcp it started stops with it).\n", target)
	return nil
}

// reportServerPlugins says whether SillyTavern will load the plugin and,
// when not, exactly what to change; with enable, it changes it.
func reportServerPlugins(st *sillyTavern, enable bool, out io.Writer) (on bool, err error) {
	pc, err := readPluginsConfig(st.dir)
	if err != nil {
		return false, err
	}
	switch {
	case pc.enabled && pc.missing:
		fmt.Fprintf(out, "Server plugins: on in %s (SillyTavern makes config.yaml from it at its first start).\n", pc.from)
	case pc.enabled:
		fmt.Fprintf(out, "Server plugins: on (%s: %s).\n", pc.path, pc.line)
	case pc.missing:
		fmt.Fprintf(out, `Server plugins: off. SillyTavern has no config.yaml yet (it writes %s at its first start).
  Start SillyTavern once, stop it, and run this command again with --enable-server-plugins;
  or start SillyTavern with the environment variable %s=true (Docker: add it to the container's environment).
`, pc.path, envServerPlugins)
	case enable:
		if err := enableServerPlugins(pc.path); err != nil {
			return false, err
		}
		after, err := readPluginsConfig(st.dir)
		if err != nil {
			return false, err
		}
		if !after.enabled {
			return false, fmt.Errorf("%s: server plugins are still off after the change; please set %s: true by hand", pc.path, keyServerPlugins)
		}
		was := "no " + keyServerPlugins + " line (added at the end)"
		if pc.line != "" {
			was = "was " + pc.line
		}
		fmt.Fprintf(out, "Server plugins: turned on in %s (%s: %s; %s; the old file is %s.bak).\n", pc.path, keyServerPlugins, "true", was, pc.path)
		pc = after
	default:
		now := "has no " + keyServerPlugins + " line (off by default)"
		if pc.line != "" {
			now = "says " + pc.line
		}
		fmt.Fprintf(out, `Server plugins: off — SillyTavern will not load the plugin. %s %s. To turn them on:
  - change that line to   %s: true   (or run this command again with --enable-server-plugins, which changes only that line), or
  - Docker or no config.yaml edits: start SillyTavern with the environment variable %s=true.
`, pc.path, now, keyServerPlugins, envServerPlugins)
	}
	on = pc.enabled
	if on && pc.autoUpdate {
		fmt.Fprintf(out, "  (%s is on: at each start SillyTavern git-pulls the plugin folders that are git clones; plugins/%s is not one, so it is left alone — update it with this command.)\n", keyAutoUpdate, plugin.Name)
	}
	return on, nil
}
