package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ttmcp/ttmcp/extension"
)

// fakeSillyTavern makes a scratch folder shaped like a SillyTavern
// checkout of version that has been started once (data/default-user).
func fakeSillyTavern(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"package.json":                    `{"name": "sillytavern", "version": "` + version + `", "dependencies": {}}`,
		"server.js":                       "// SillyTavern",
		"public/scripts/extensions.js":    "// extensions",
		"data/default-user/settings.json": "{}",
		"data/alice/settings.json":        "{}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testExtension stands in for extension.Files().
func testExtension() fstest.MapFS {
	return fstest.MapFS{
		"manifest.json":        {Data: []byte(`{"display_name": "MCP", "js": "dist/index.bundle.js", "css": "style.css", "author": "ttmcp", "version": "0.1.0"}`)},
		"style.css":            {Data: []byte("/* style */")},
		"i18n/zh-cn.json":      {Data: []byte("{}")},
		"i18n/zh-tw.json":      {Data: []byte("{}")},
		"dist/index.bundle.js": {Data: []byte("export {}")},
		"dist/.gitkeep":        {Data: []byte("")},
	}
}

// tree lists the files under dir (slash paths) with their contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func installed(ext fstest.MapFS, extra map[string]string) map[string]string {
	want := map[string]string{}
	for name, f := range ext {
		if !strings.HasPrefix(filepath.Base(name), ".") {
			want[name] = string(f.Data)
		}
	}
	for k, v := range extra {
		want[k] = v
	}
	return want
}

func runInstall(t *testing.T, o installOptions, files iofs.FS) (string, error) {
	t.Helper()
	if o.Plugin == nil {
		o.Plugin = testPlugin()
	}
	if o.Binary == "" {
		o.Binary = "/opt/ttmcp/bin/ttmcp"
	}
	if o.DataRoot.path == "" {
		o.DataRoot = dataRoot{"/home/u/.local/share/ttmcp", "the per-user default"}
	}
	var out bytes.Buffer
	err := install(o, files, &out)
	return out.String(), err
}

// defaultJSON is the ttmcp.json the extension ships: the page asks for the
// file on every load, so it is always there.
const defaultJSON = `{"backendUrl":"http://127.0.0.1:7878"}` + "\n"

// installedJSON is the ttmcp.json of an install without --backend: the
// default, and that the plugin came with it.
const installedJSON = `{"backendUrl":"http://127.0.0.1:7878","plugin":true}` + "\n"

// Install for a user, update in place (stale files and leftovers gone,
// --backend writes its URL to ttmcp.json, no --backend the default),
// install globally, uninstall.
func TestInstallExtension(t *testing.T) {
	st := fakeSillyTavern(t, "1.12.6")
	ext := testExtension()
	target := filepath.Join(st, "data", "default-user", "extensions", "mcp-manager")

	out, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user"}, ext)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, target), installed(ext, map[string]string{"ttmcp.json": installedJSON}); !reflect.DeepEqual(got, want) {
		t.Errorf("installed files %v; want %v", got, want)
	}
	for _, s := range []string{"Installed the MCP extension", target, "user default-user", "backend: http://127.0.0.1:7878 (the default, in ttmcp.json;", "ttmcp serve\n", "Reload SillyTavern", "--allow-origin"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// A stale file in the folder, and what an interrupted run left beside it.
	os.WriteFile(filepath.Join(target, "dist", "old.bundle.js"), []byte("stale"), 0o644)
	leftover := filepath.Join(filepath.Dir(target), stagingPrefix+"0123456789ab")
	os.MkdirAll(filepath.Join(leftover, "dist"), 0o755)
	out, err = runInstall(t, installOptions{SillyTavern: st, User: "default-user", Backend: "http://127.0.0.1:7880/"}, ext)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, target), installed(ext, map[string]string{"ttmcp.json": `{"backendUrl":"http://127.0.0.1:7880","plugin":true}` + "\n"}); !reflect.DeepEqual(got, want) {
		t.Errorf("after the update: %v; want %v", got, want)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("the interrupted run's folder is still there: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(target)); len(entries) != 1 {
		t.Errorf("the extensions folder holds %v; want only mcp-manager", entries)
	}
	for _, s := range []string{"Updated the MCP extension", "backend: http://127.0.0.1:7880 (in ttmcp.json)", "ttmcp serve --listen 127.0.0.1:7880"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// the shipped ttmcp.json (the embedded files have one) is replaced, not copied twice
	shipped := testExtension()
	shipped["ttmcp.json"] = &fstest.MapFile{Data: []byte(`{"backendUrl":"http://shipped:1"}`)}
	if _, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user"}, shipped); err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, target), installed(ext, map[string]string{"ttmcp.json": installedJSON}); !reflect.DeepEqual(got, want) {
		t.Errorf("an update without --backend: %v; want %v (the default in ttmcp.json)", got, want)
	}

	global := filepath.Join(st, "public", "scripts", "extensions", "third-party", "mcp-manager")
	out, err = runInstall(t, installOptions{SillyTavern: st, Global: true}, ext)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, global), installed(ext, map[string]string{"ttmcp.json": installedJSON}); !reflect.DeepEqual(got, want) {
		t.Errorf("global install: %v; want %v", got, want)
	}
	if !strings.Contains(out, "for all SillyTavern users") || !strings.Contains(out, "Warning: SillyTavern 1.12.6 loads third-party extensions only from data/<user>/extensions/") {
		t.Errorf("global install on 1.12.6 output:\n%s", out)
	}

	for _, o := range []installOptions{{SillyTavern: st, User: "default-user", Uninstall: true}, {SillyTavern: st, Global: true, Uninstall: true}} {
		out, err := runInstall(t, o, ext)
		if err != nil || !strings.Contains(out, "Removed ") {
			t.Fatalf("uninstall %+v: %v\n%s", o, err, out)
		}
	}
	for _, dir := range []string{target, global} {
		if _, err := os.Stat(dir); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("%s after uninstall: %v", dir, err)
		}
	}
	out, err = runInstall(t, installOptions{SillyTavern: st, User: "default-user", Uninstall: true}, ext)
	if err != nil || !strings.Contains(out, "Nothing to remove") {
		t.Errorf("uninstall twice: %v\n%s", err, out)
	}
	if got := tree(t, filepath.Join(st, "data", "alice")); !reflect.DeepEqual(got, map[string]string{"settings.json": "{}"}) {
		t.Errorf("another user's folder changed: %v", got)
	}
}

// What install refuses, each with a message that says why, and nothing
// written.
func TestInstallExtensionRefusals(t *testing.T) {
	st := fakeSillyTavern(t, "1.13.0")
	notST := t.TempDir()
	os.WriteFile(filepath.Join(notST, "package.json"), []byte(`{"name": "something-else"}`), 0o644)
	foreign := fakeSillyTavern(t, "1.13.0")
	foreignDir := filepath.Join(foreign, "data", "default-user", "extensions", "mcp-manager")
	os.MkdirAll(foreignDir, 0o755)
	os.WriteFile(filepath.Join(foreignDir, "manifest.json"), []byte(`{"display_name": "MCP", "author": "TauriTavern"}`), 0o644)
	noBundle := testExtension()
	delete(noBundle, "dist/index.bundle.js")

	for _, c := range []struct {
		name  string
		o     installOptions
		files iofs.FS
		want  string
	}{
		{"not a folder", installOptions{SillyTavern: filepath.Join(st, "nope"), User: "default-user"}, testExtension(), "does not look like a SillyTavern checkout (not a folder)"},
		{"no package.json", installOptions{SillyTavern: t.TempDir(), User: "default-user"}, testExtension(), "(no package.json)"},
		{"another package", installOptions{SillyTavern: notST, User: "default-user"}, testExtension(), `package.json does not name "sillytavern"`},
		{"unknown user", installOptions{SillyTavern: st, User: "bob"}, testExtension(), `SillyTavern has no user "bob"`},
		{"user escaping", installOptions{SillyTavern: st, User: "../x"}, testExtension(), "is not a SillyTavern user handle"},
		{"backend with a path", installOptions{SillyTavern: st, User: "default-user", Backend: "http://127.0.0.1:7878/jsapi"}, testExtension(), "--backend"},
		{"another extension", installOptions{SillyTavern: foreign, User: "default-user"}, testExtension(), `holds another extension (author "TauriTavern")`},
		{"another extension, uninstall", installOptions{SillyTavern: foreign, User: "default-user", Uninstall: true}, testExtension(), "left alone"},
		{"no bundle", installOptions{SillyTavern: st, User: "default-user"}, noBundle, "built without the extension's bundle (dist/index.bundle.js)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runInstall(t, c.o, c.files)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want it to contain %q", err, c.want)
			}
		})
	}
	if got := tree(t, filepath.Join(st, "data")); len(got) != 2 {
		t.Errorf("refusals wrote into the checkout: %v", got)
	}
	if got := tree(t, foreignDir); !reflect.DeepEqual(got, map[string]string{"manifest.json": `{"display_name": "MCP", "author": "TauriTavern"}`}) {
		t.Errorf("the other extension changed: %v", got)
	}
}

// failingFS fails to read one file, as a disk error mid-copy would.
type failingFS struct {
	fstest.MapFS
	bad string
}

func (f failingFS) Open(name string) (iofs.File, error) {
	if name == f.bad {
		return nil, errors.New("read error")
	}
	return f.MapFS.Open(name)
}

func (f failingFS) ReadFile(name string) ([]byte, error) {
	if name == f.bad {
		return nil, errors.New("read error")
	}
	return f.MapFS.ReadFile(name)
}

// A copy that fails half-way leaves the installed extension as it was and
// no half-copied folder behind.
func TestInstallExtensionFailureKeepsTheOldOne(t *testing.T) {
	st := fakeSillyTavern(t, "1.12.6")
	ext := testExtension()
	if _, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user"}, ext); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(st, "data", "default-user", "extensions", "mcp-manager")
	before := tree(t, target)
	newer := testExtension()
	newer["dist/index.bundle.js"] = &fstest.MapFile{Data: []byte("export const v = 2")}
	_, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user"}, failingFS{newer, "style.css"})
	if err == nil {
		t.Fatal("install succeeded with a failing read")
	}
	if got := tree(t, target); !reflect.DeepEqual(got, before) {
		t.Errorf("after a failed update: %v; want the old %v", got, before)
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if names := dirNames(entries); !slices.Equal(names, []string{"mcp-manager"}) {
		t.Errorf("extensions folder after a failed update: %v", names)
	}
}

func dirNames(entries []os.DirEntry) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// SillyTavern's config.yaml may move the data root.
func TestInstallExtensionHonoursDataRoot(t *testing.T) {
	st := fakeSillyTavern(t, "1.12.6")
	os.WriteFile(filepath.Join(st, "config.yaml"), []byte("# config\nlisten: false\ndataRoot: \"./elsewhere\" # moved\nport: 8000\n"), 0o644)
	os.MkdirAll(filepath.Join(st, "elsewhere", "default-user"), 0o755)
	if _, err := runInstall(t, installOptions{SillyTavern: st, User: "default-user"}, testExtension()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(st, "elsewhere", "default-user", "extensions", "mcp-manager", "manifest.json")); err != nil {
		t.Errorf("not installed under the configured data root: %v", err)
	}
}

// The command line: what is required and what cannot go together.
func TestInstallExtensionFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"install-extension"}, "--sillytavern DIR is required"},
		{[]string{"install-extension", "--sillytavern", ".", "--global", "--user", "alice"}, "drop --user"},
		{[]string{"install-extension", "--sillytavern", ".", "extra"}, `unexpected argument "extra"`},
	} {
		err := run(context.Background(), c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.args, err, c.want)
		}
	}
}

// The extension ships ttmcp.json naming the default backend, so a copy made
// by hand (or from a clone) has the file the page asks for, as an install
// by this command does.
func TestShippedBackendFile(t *testing.T) {
	data, err := iofs.ReadFile(extension.Files(), backendFile)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		BackendURL string `json:"backendUrl"`
	}
	if err := json.Unmarshal(data, &c); err != nil || c.BackendURL != defaultBackend || string(data) != defaultJSON {
		t.Errorf("the shipped %s is %q (%v); want %q", backendFile, data, err, defaultJSON)
	}
}
