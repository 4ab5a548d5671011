//go:build !js

package jsapi_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The loader source names each file it loads exactly once, as './<name>',
// so VersionLoader can rewrite it; a missed or doubled literal would leave
// a file unversioned (or a URL half rewritten).
func TestLoaderNamesVersionedFilesOnce(t *testing.T) {
	src, err := os.ReadFile(jsapi.LoaderName)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range jsapi.Versioned {
		if n := bytes.Count(src, []byte("'./"+name+"'")); n != 1 {
			t.Errorf("%s names '%s' %d times; want once", jsapi.LoaderName, "./"+name, n)
		}
	}
}

// VersionLoader names each file by its content: a rebuilt file gets a new
// URL, an unchanged one keeps its URL, and a missing one its plain URL.
func TestVersionLoader(t *testing.T) {
	src := []byte(`import { a } from './bridge-transport.js';
import './extension-store.js';
const w = new URL('./tauritavern-mcp.wasm', import.meta.url);
import(new URL('./wasm_exec.js', import.meta.url).href); // wasm_exec.js
`)
	files := fstest.MapFS{
		"tauritavern-mcp.wasm": {Data: []byte("\x00asm v1")},
		"wasm_exec.js":         {Data: []byte("globalThis.Go = class {};")},
		"bridge-transport.js":  {Data: []byte("export const a = 1;")},
	}
	v1 := string(jsapi.VersionLoader(src, files))
	for _, name := range []string{"tauritavern-mcp.wasm", "wasm_exec.js", "bridge-transport.js"} {
		want := "'./" + name + "?v=" + jsapi.ContentVersion(files[name].Data) + "'"
		if !strings.Contains(v1, want) {
			t.Errorf("the versioned loader lacks %s:\n%s", want, v1)
		}
	}
	if !strings.Contains(v1, "import './extension-store.js';") || !strings.Contains(v1, "// wasm_exec.js\n") {
		t.Errorf("a missing file or a comment was rewritten:\n%s", v1)
	}

	files["tauritavern-mcp.wasm"] = &fstest.MapFile{Data: []byte("\x00asm v2")}
	v2 := string(jsapi.VersionLoader(src, files))
	if v1 == v2 || !strings.Contains(v2, "?v="+jsapi.ContentVersion([]byte("\x00asm v2"))) {
		t.Errorf("a rebuilt wasm kept its URL:\n%s", v2)
	}
	if !strings.Contains(v2, "'./wasm_exec.js?v="+jsapi.ContentVersion(files["wasm_exec.js"].Data)+"'") {
		t.Errorf("an unchanged file changed its URL:\n%s", v2)
	}
}

// Assets serves the versioned loader, whole and seekable (http.FileServer
// needs both), and the files it names.
func TestAssetsServeVersionedLoader(t *testing.T) {
	f, err := jsapi.Assets().Open(jsapi.LoaderName)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	served, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != int64(len(served)) || st.IsDir() || st.Name() != jsapi.LoaderName {
		t.Fatalf("Stat: %v %v", st, err)
	}
	if _, ok := f.(io.Seeker); !ok {
		t.Fatal("the loader file cannot seek")
	}
	for _, name := range jsapi.Versioned {
		data, err := fs.ReadFile(jsapi.Assets(), name)
		if err != nil {
			t.Logf("%s is not built; its URL stays plain", name)
			continue
		}
		if want := "'./" + name + "?v=" + jsapi.ContentVersion(data) + "'"; !bytes.Contains(served, []byte(want)) {
			t.Errorf("the served loader does not name %s", want)
		}
	}
}
