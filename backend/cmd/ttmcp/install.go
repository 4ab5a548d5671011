package main

// ttmcp install-extension: puts the mcp-manager extension where a
// SillyTavern checkout loads it (SPEC §8, contract C1/C7), and the ttmcp
// server plugin into its plugins/ (issue 28; install_plugin.go).

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/extension"
	"github.com/ttmcp/ttmcp/plugin"
)

// backendFile is where the extension reads its backend URL, beside
// manifest.json (C7): --backend's, else defaultBackend. It is always
// written, because the extension asks for it on every page load and a
// missing file is a red 404 in the browser's console.
const backendFile = "ttmcp.json"

// backendConfig is ttmcp.json as install-extension writes it. Plugin says
// that the server plugin was installed with it, so the extension asks the
// plugin's status route first (extension/src/host/backend.ts); the shipped
// file has no plugin member, and the extension then asks nothing.
type backendConfig struct {
	BackendURL string `json:"backendUrl"`
	Plugin     bool   `json:"plugin,omitempty"`
}

// defaultBackend is the backend URL of a plain `ttmcp serve`.
const defaultBackend = "http://127.0.0.1:7878"

// stagingPrefix names the sibling folders an install writes before it
// swaps them in; a run that was interrupted leaves one, the next removes it.
const stagingPrefix = "." + extension.Name + ".ttmcp-"

type installOptions struct {
	SillyTavern string // the checkout (the folder with server.js)
	User        string // data/<user>/extensions (per user), unless Global
	Global      bool   // public/scripts/extensions/third-party
	Backend     string // written to ttmcp.json and the plugin's config.json ("": defaultBackend)
	Uninstall   bool

	// The plugin (issue 28).
	Plugin        iofs.FS  // plugin.Files()
	Binary        string   // the running ttmcp, absolute: the plugin starts it
	DataRoot      dataRoot // resolved as serve resolves it: the plugin passes it to serve
	EnablePlugins bool     // --enable-server-plugins: change config.yaml's line
}

func installExtension(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("install-extension", flag.ContinueOnError)
	fs.SetOutput(out)
	var o installOptions
	fs.StringVar(&o.SillyTavern, "sillytavern", "", "the SillyTavern checkout (the folder that holds server.js)")
	fs.StringVar(&o.User, "user", "default-user", "install for this SillyTavern user: data/<user>/extensions/")
	fs.BoolVar(&o.Global, "global", false, "install for all users: public/scripts/extensions/third-party/ (newer SillyTavern; 1.12 loads only per-user extensions)")
	fs.StringVar(&o.Backend, "backend", "", "the ttmcp backend URL the extension uses (written to ttmcp.json; default http://127.0.0.1:7878)")
	fs.BoolVar(&o.Uninstall, "uninstall", false, "remove the extension (and the server plugin, when no other copy of the extension uses it) instead")
	rootFlag := fs.String("data-root", "", "the data root the plugin starts ttmcp serve with, as serve's --data-root; default: "+envDataRoot+", else the per-user data folder")
	fs.BoolVar(&o.EnablePlugins, "enable-server-plugins", false, "turn server plugins on in SillyTavern's config.yaml (that one line; the old file kept as config.yaml.bak)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("install-extension: unexpected argument %q", fs.Arg(0))
	}
	userSet := false
	fs.Visit(func(f *flag.Flag) { userSet = userSet || f.Name == "user" })
	if o.Global && userSet {
		return errors.New("install-extension: --global installs for all users; drop --user")
	}
	if o.SillyTavern == "" {
		return errors.New("install-extension: --sillytavern DIR is required (the SillyTavern folder that holds server.js)")
	}
	root, err := resolveDataRoot(*rootFlag, flagGiven(fs, "data-root"), thisPlatform())
	if err != nil {
		return err
	}
	if root.path, err = filepath.Abs(root.path); err != nil {
		return err
	}
	o.DataRoot = root
	if o.Binary, err = os.Executable(); err != nil {
		return fmt.Errorf("install-extension: where this ttmcp is (the plugin starts it): %v", err)
	}
	o.Plugin = plugin.Files()
	return install(o, extension.Files(), out)
}

// install installs (or with o.Uninstall removes) files as the extension
// folder of the SillyTavern checkout o.SillyTavern.
func install(o installOptions, files iofs.FS, out io.Writer) error {
	st, err := checkSillyTavern(o.SillyTavern)
	if err != nil {
		return err
	}
	if o.Backend != "" {
		if err := server.CheckOrigin(o.Backend); err != nil {
			return fmt.Errorf("--backend: %v", err)
		}
		o.Backend = strings.TrimSuffix(o.Backend, "/")
		if err := checkLoopbackBackend(o.Backend); err != nil {
			return fmt.Errorf("--backend: %v", err)
		}
	}
	parent, err := extensionsDir(st, o)
	if err != nil {
		return err
	}
	target := filepath.Join(parent, extension.Name)
	if err := removeStaging(parent, stagingPrefix); err != nil {
		return err
	}
	if err := removeStaging(st.dir, pluginStagingPrefix); err != nil {
		return err
	}
	if err := checkOurs(target); err != nil {
		return err
	}
	if err := checkPluginOurs(pluginDir(st)); err != nil {
		return err
	}
	if o.Uninstall {
		if err := uninstall(target, out); err != nil {
			return err
		}
		return uninstallPlugin(st, target, out)
	}

	manifest, err := readManifest(files)
	if err != nil {
		return err
	}
	if _, err := iofs.Stat(files, manifest.JS); err != nil {
		return fmt.Errorf("this ttmcp was built without the extension's bundle (%s); build it with `make`", manifest.JS)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	backendJSON, _ := json.Marshal(backendConfig{BackendURL: cmp.Or(o.Backend, defaultBackend), Plugin: true})
	staged, n, err := stage(parent, stagingPrefix, files, map[string][]byte{backendFile: append(backendJSON, '\n')})
	if err != nil {
		return err
	}
	updated, err := swapIn(parent, staged, target)
	if err != nil {
		os.RemoveAll(staged)
		return err
	}

	verb := "Installed"
	if updated {
		verb = "Updated"
	}
	who := "for SillyTavern user " + o.User
	if o.Global {
		who = "for all SillyTavern users"
	}
	fmt.Fprintf(out, "%s the %s extension (%s %s) %s:\n  %s (%d files)\n", verb, manifest.DisplayName, extension.Name, manifest.Version, who, target, n)
	if o.Backend != "" {
		fmt.Fprintf(out, "  backend: %s (in %s)\n", o.Backend, backendFile)
	} else {
		fmt.Fprintf(out, "  backend: %s (the default, in %s; --backend URL changes it)\n", defaultBackend, backendFile)
	}
	if o.Global && st.olderThan(1, 13) {
		fmt.Fprintf(out, "Warning: SillyTavern %s loads third-party extensions only from data/<user>/extensions/; install without --global.\n", st.version)
	}

	pluginUpdated, err := installPlugin(st, o.Plugin, pluginConfig{
		BackendURL: cmp.Or(o.Backend, defaultBackend), Binary: o.Binary, DataRoot: o.DataRoot.path, Autostart: true,
	})
	if err != nil {
		return fmt.Errorf("the server plugin: %v", err)
	}
	verb = "Installed"
	if pluginUpdated {
		verb = "Updated"
	}
	fmt.Fprintf(out, "%s the ttmcp server plugin (for all SillyTavern users; it carries the extension's traffic when SillyTavern is opened from another device):\n  %s\n  it starts %s serve --listen %s --data-root %s when no backend answers (\"autostart\": false in %s turns that off)\n",
		verb, pluginDir(st), o.Binary, strings.TrimPrefix(cmp.Or(o.Backend, defaultBackend), "http://"), o.DataRoot.path, pluginConfigFile)
	pluginsOn, err := reportServerPlugins(st, o.EnablePlugins, out)
	if err != nil {
		return err
	}
	if pluginsOn {
		fmt.Fprintf(out, `Next:
  1. Restart SillyTavern: it loads the plugin, which starts ttmcp (or uses the one already running).
  2. Reload SillyTavern in the browser, on this machine or any other: the "MCP" drawer is in the Extensions panel.
`)
		return nil
	}
	fmt.Fprintf(out, `Next:
  1. Start the backend: ttmcp serve%s
  2. Reload SillyTavern in the browser: the "MCP" drawer is in the Extensions panel.
SillyTavern's default origins (http://localhost:8000, http://127.0.0.1:8000) are allowed. If SillyTavern
runs on another port or host, allow the address you open it at, e.g.
  ttmcp serve --allow-origin http://127.0.0.1:8001
`, listenHint(o.Backend)+dataRootHint(o.DataRoot))
	return nil
}

// dataRootHint is the --data-root flag for the data root the plugin was
// given, when the command line chose it (serve finds the others itself).
func dataRootHint(root dataRoot) string {
	if root.source != "--data-root" {
		return ""
	}
	return " --data-root " + shellQuote(root.path, runtime.GOOS)
}

// listenHint is the --listen flag matching a non-default backend URL.
func listenHint(backend string) string {
	host := strings.TrimPrefix(strings.TrimPrefix(backend, "http://"), "https://")
	if backend == "" || host == "127.0.0.1:7878" {
		return ""
	}
	return " --listen " + host
}

func uninstall(target string, out io.Writer) error {
	if _, err := os.Lstat(target); errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintf(out, "Nothing to remove: %s does not exist.\n", target)
		return nil
	}
	if err := os.RemoveAll(target); err != nil {
		return err
	}
	fmt.Fprintf(out, "Removed %s.\nReload SillyTavern in the browser; the MCP drawer is gone. Your MCP servers stay in ttmcp's data root.\n", target)
	return nil
}

// sillyTavern is a checkout that passed checkSillyTavern.
type sillyTavern struct {
	dir      string
	version  string // package.json "version"
	dataRoot string // absolute
}

// checkSillyTavern refuses a folder that is not a SillyTavern checkout,
// so that a mistyped path never gets an extension folder dropped into it.
func checkSillyTavern(dir string) (*sillyTavern, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	notST := func(why string) error {
		return fmt.Errorf("%s does not look like a SillyTavern checkout (%s); pass the folder that holds SillyTavern's server.js and package.json", abs, why)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, notST("not a folder")
	}
	data, err := os.ReadFile(filepath.Join(abs, "package.json"))
	if err != nil {
		return nil, notST("no package.json")
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil || pkg.Name != "sillytavern" {
		return nil, notST(`package.json does not name "sillytavern"`)
	}
	if _, err := os.Stat(filepath.Join(abs, "public", "scripts", "extensions.js")); err != nil {
		return nil, notST("no public/scripts/extensions.js")
	}
	st := &sillyTavern{dir: abs, version: pkg.Version, dataRoot: filepath.Join(abs, "data")}
	if root := configDataRoot(filepath.Join(abs, "config.yaml")); root != "" {
		if !filepath.IsAbs(root) {
			root = filepath.Join(abs, root)
		}
		st.dataRoot = filepath.Clean(root)
	}
	return st, nil
}

// configDataRoot reads the top-level dataRoot of SillyTavern's config.yaml
// (a plain scalar, the only form SillyTavern writes), or "".
func configDataRoot(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "dataRoot:")
		if !ok {
			continue
		}
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
		return strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return ""
}

// olderThan reports whether the checkout's version is below major.minor.
func (st *sillyTavern) olderThan(major, minor int) bool {
	parts := strings.SplitN(st.version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}

// extensionsDir is the folder that holds the extension's folder.
func extensionsDir(st *sillyTavern, o installOptions) (string, error) {
	if o.Global {
		return filepath.Join(st.dir, "public", "scripts", "extensions", "third-party"), nil
	}
	if o.User == "" || o.User != filepath.Base(o.User) || strings.HasPrefix(o.User, ".") {
		return "", fmt.Errorf("--user %q is not a SillyTavern user handle", o.User)
	}
	userDir := filepath.Join(st.dataRoot, o.User)
	if _, err := os.Stat(userDir); err != nil && (o.User != "default-user" || o.Uninstall) {
		// default-user is created by SillyTavern's first start; any other
		// user must exist, or a typo would install for nobody.
		users := listUsers(st.dataRoot)
		return "", fmt.Errorf("SillyTavern has no user %q (no %s); users found: %s", o.User, userDir, strings.Join(users, ", "))
	}
	return filepath.Join(userDir, "extensions"), nil
}

func listUsers(dataRoot string) []string {
	entries, _ := os.ReadDir(dataRoot)
	var users []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
			users = append(users, e.Name())
		}
	}
	if len(users) == 0 {
		return []string{"none (start SillyTavern once)"}
	}
	return users
}

type manifest struct {
	DisplayName string `json:"display_name"`
	JS          string `json:"js"`
	Author      string `json:"author"`
	Version     string `json:"version"`
}

func readManifest(files iofs.FS) (manifest, error) {
	var m manifest
	data, err := iofs.ReadFile(files, "manifest.json")
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err == nil && m.JS == "" {
		err = errors.New("no js entry")
	}
	if err != nil {
		return m, fmt.Errorf("the embedded extension's manifest.json: %v", err)
	}
	return m, nil
}

// checkOurs refuses to replace or remove a folder of the same name that
// holds another extension.
func checkOurs(target string) error {
	data, err := os.ReadFile(filepath.Join(target, "manifest.json"))
	if errors.Is(err, iofs.ErrNotExist) {
		if _, err := os.Lstat(target); errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
		if entries, _ := os.ReadDir(target); len(entries) == 0 {
			return nil
		}
		return fmt.Errorf("%s exists without a manifest.json; it is not ttmcp's extension, so it is left alone (remove it yourself)", target)
	}
	if err != nil {
		return err
	}
	var m manifest
	if json.Unmarshal(data, &m) != nil || m.Author != "ttmcp" {
		return fmt.Errorf("%s holds another extension (author %q); it is left alone (remove it yourself)", target, m.Author)
	}
	return nil
}

// stage writes files, with extra's files instead of any of the same name
// (ttmcp.json, the plugin's config.json), into a new hidden folder
// parent/<prefix><random> and returns it and the file count.
func stage(parent, prefix string, files iofs.FS, extra map[string][]byte) (string, int, error) {
	suffix := make([]byte, 6)
	rand.Read(suffix)
	dir := filepath.Join(parent, prefix+hex.EncodeToString(suffix))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", 0, err
	}
	n := 0
	err := iofs.WalkDir(files, ".", func(name string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name != "." && strings.HasPrefix(d.Name(), ".") { // .gitkeep
			if d.IsDir() {
				return iofs.SkipDir
			}
			return nil
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if _, ok := extra[name]; ok {
			return nil // written below
		}
		data, err := iofs.ReadFile(files, name)
		if err != nil {
			return err
		}
		n++
		return writeSynced(dst, data)
	})
	for name, data := range extra {
		if err == nil {
			err = writeSynced(filepath.Join(dir, filepath.FromSlash(name)), data)
			n++
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", 0, err
	}
	return dir, n, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// swapIn replaces target with the complete staged folder: the old folder
// is renamed aside first, so target is always either the old or the new
// extension, never half of one. It reports whether an old one was there.
func swapIn(parent, staged, target string) (bool, error) {
	old := ""
	if _, err := os.Lstat(target); err == nil {
		old = staged + ".old"
		if err := os.Rename(target, old); err != nil {
			return false, err
		}
	}
	if err := os.Rename(staged, target); err != nil {
		if old != "" {
			os.Rename(old, target) // put the old one back
		}
		return false, err
	}
	if d, err := os.Open(parent); err == nil {
		d.Sync()
		d.Close()
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return old != "", nil
}

// removeStaging removes what an interrupted run left in parent.
func removeStaging(parent, stagingPrefix string) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil // no folder yet: nothing left over
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) {
			if err := os.RemoveAll(filepath.Join(parent, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
