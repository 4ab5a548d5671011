package server

import (
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// get fetches path and returns the response (body read) and its body.
func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// Every page the backend serves refuses to be framed; the playground gets
// a strict policy that still lets it run its scripts, the wasm and the
// WebSocket.
func TestFramingHeaders(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.Pages = map[string]fs.FS{"/webtest/": fstest.MapFS{"host.html": {Data: []byte("<!doctype html><p>host")}}}
		c.Extensions = map[string]fs.FS{"mcp-manager": fstest.MapFS{"manifest.json": {Data: []byte(`{}`)}}}
		c.Assets = fstest.MapFS{"tauritavern-mcp.js": {Data: []byte("export {}")}}
	})
	for _, path := range []string{"/", "/index.html", "/host/main.js", "/webtest/host.html", "/jsapi/tauritavern-mcp.js",
		"/scripts/extensions/third-party/mcp-manager/manifest.json"} {
		resp, _ := get(t, f.url+path)
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", path, resp.StatusCode)
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: X-Frame-Options %q, Content-Security-Policy %q; want DENY and frame-ancestors 'none'",
				path, resp.Header.Get("X-Frame-Options"), csp)
		}
	}
	resp, body := get(t, f.url+"/")
	if !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `id="extensions_settings2"`) {
		t.Fatalf("/ is not the playground: %s %.80s", resp.Header.Get("Content-Type"), body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, directive := range []string{
		"default-src 'self'",
		"script-src 'self' 'wasm-unsafe-eval'", // the shim is WebAssembly
		"connect-src 'self'",                   // /jsapi/session and /ws
		"object-src 'none'",
		"base-uri 'none'",
	} {
		if !strings.Contains(csp, directive) {
			t.Errorf("the playground's policy %q lacks %q", csp, directive)
		}
	}
	if strings.Contains(csp, "'unsafe-eval'") || regexp.MustCompile(`script-src[^;]*'unsafe-inline'`).MatchString(csp) {
		t.Errorf("the playground's policy allows eval or inline scripts: %q", csp)
	}
}

// /playground.json names the extensions to load (as SillyTavern names
// third-party ones) and the demo server, which the page offers to add.
func TestPlaygroundConfig(t *testing.T) {
	manifest := fstest.MapFS{"manifest.json": {Data: []byte(`{"display_name":"X"}`)}}
	f := newFixture(t, func(c *Config) {
		c.Extensions = map[string]fs.FS{"mcp-manager": manifest, "another": manifest}
		c.Demo = &DemoServer{DisplayName: "ttmcp demo", Endpoint: "http://127.0.0.1:7879/mcp"}
	})
	resp, body := get(t, f.url+"/playground.json")
	var got PlaygroundConfig
	if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, body %s (%v)", resp.StatusCode, body, err)
	}
	if strings.Join(got.Extensions, ",") != "third-party/another,third-party/mcp-manager" ||
		got.Demo == nil || *got.Demo != (DemoServer{"ttmcp demo", "http://127.0.0.1:7879/mcp"}) {
		t.Errorf("config %s", body)
	}
	if resp, body := get(t, f.url+"/scripts/extensions/third-party/mcp-manager/manifest.json"); resp.StatusCode != 200 || body != `{"display_name":"X"}` {
		t.Errorf("the extension's manifest: %d %s", resp.StatusCode, body)
	}

	f = newFixture(t, nil)
	if _, body := get(t, f.url+"/playground.json"); body != `{"extensions":[],"demo":null}` {
		t.Errorf("without extensions or demo: %s", body)
	}
}

// Everything the playground's index.html loads is embedded: its modules
// and what `make` copies from npm (jQuery, toastr, Font Awesome 6.5.2).
func TestPlaygroundAssetsEmbedded(t *testing.T) {
	page, _ := fs.Sub(playground, "playground")
	index, err := fs.ReadFile(page, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"/:][^":]*)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 7 {
		t.Fatalf("index.html references only %v", refs)
	}
	for _, ref := range refs {
		if _, err := fs.Stat(page, ref[1]); err != nil {
			t.Errorf("index.html loads /%s, which is not embedded (%v); `make playground-vendor` copies the npm libraries", ref[1], err)
		}
	}
	for _, font := range []string{"fa-solid-900.woff2", "fa-brands-400.woff2"} {
		if _, err := fs.Stat(page, "vendor/fontawesome/webfonts/"+font); err != nil {
			t.Errorf("font %s: %v", font, err)
		}
	}
}

// A file asked for by its content version (?v=, the URLs the loader names)
// is immutable; by its plain URL, or by a version it no longer has (a page
// holding the loader of an older build), it is revalidated by its ETag,
// which a rebuilt file changes.
func TestVersionedFilesCache(t *testing.T) {
	build := func(wasm string) (*fixture, string) {
		f := newFixture(t, func(c *Config) {
			c.Assets = fstest.MapFS{"tauritavern-mcp.wasm": {Data: []byte(wasm)}}
		})
		return f, jsapi.ContentVersion([]byte(wasm))
	}
	check := func(what string, resp *http.Response, body, wantBody, wantCache string) {
		t.Helper()
		if resp.StatusCode != 200 || body != wantBody || resp.Header.Get("Cache-Control") != wantCache ||
			resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: %d %q, Cache-Control %q, Access-Control-Allow-Origin %q; want 200 %q, %q, *", what,
				resp.StatusCode, body, resp.Header.Get("Cache-Control"), resp.Header.Get("Access-Control-Allow-Origin"),
				wantBody, wantCache)
		}
	}
	old, v1 := build("build 1")
	resp, body := get(t, old.url+"/jsapi/tauritavern-mcp.wasm?v="+v1)
	check("versioned", resp, body, "build 1", "public, max-age=31536000, immutable")
	if resp.Header.Get("ETag") != `"`+v1+`"` {
		t.Errorf("ETag %q; want the content version %q", resp.Header.Get("ETag"), v1)
	}
	resp, body = get(t, old.url+"/jsapi/tauritavern-mcp.wasm")
	check("plain", resp, body, "build 1", "no-cache")
	tag := resp.Header.Get("ETag")

	rebuilt, v2 := build("build 2")
	if v1 == v2 {
		t.Fatal("two contents, one version")
	}
	resp, body = get(t, rebuilt.url+"/jsapi/tauritavern-mcp.wasm?v="+v1)
	check("the old version after a rebuild", resp, body, "build 2", "no-cache")
	resp, body = get(t, rebuilt.url+"/jsapi/tauritavern-mcp.wasm?v="+v2)
	check("the new version", resp, body, "build 2", "public, max-age=31536000, immutable")
	for _, u := range []string{"/jsapi/tauritavern-mcp.wasm", "/jsapi/tauritavern-mcp.wasm?v=" + v1} {
		req, _ := http.NewRequest("GET", rebuilt.url+u, nil)
		req.Header.Set("If-None-Match", tag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		check(u+" revalidated with the old ETag", resp, string(b), "build 2", "no-cache")
	}
	for _, u := range []string{"/jsapi/tauritavern-mcp.wasm?v=", "/jsapi/tauritavern-mcp.wasm?v=" + `"` + v2 + `"`, "/jsapi/missing.wasm?v=" + v2} {
		if resp, _ := get(t, rebuilt.url+u); strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: Cache-Control %q; want it revalidated", u, resp.Header.Get("Cache-Control"))
		}
	}
}

// The loader the backend serves names the shim's files by the versions
// the backend answers as immutable.
func TestServedLoaderNamesImmutableURLs(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Assets = jsapi.Assets() })
	_, loader := get(t, f.url+"/jsapi/"+jsapi.LoaderName)
	urls := regexp.MustCompile(`'\./([a-z_.-]+)\?v=([0-9a-f]+)'`).FindAllStringSubmatch(loader, -1)
	// Every file the loader loads is named by version — the shim's two only
	// once they are built (make test runs the Go tests before it builds them).
	want := []string{"bridge-transport.js", "extension-store.js", "http-socket.js"}
	for _, name := range []string{"tauritavern-mcp.wasm", "wasm_exec.js"} {
		if _, err := fs.Stat(jsapi.Assets(), name); err == nil {
			want = append(want, name)
		}
	}
	var named []string
	for _, u := range urls {
		named = append(named, u[1])
	}
	slices.Sort(want)
	slices.Sort(named)
	if !slices.Equal(named, want) {
		t.Fatalf("the served loader names %v by version; want %v", named, want)
	}
	for _, u := range urls {
		resp, _ := get(t, f.url+"/jsapi/"+u[1]+"?v="+u[2])
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("%s?v=%s: %d, Cache-Control %q", u[1], u[2], resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	}
	if resp, _ := get(t, f.url+"/jsapi/"+jsapi.LoaderName); resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("the loader is %q; want no-cache (it names the others)", resp.Header.Get("Cache-Control"))
	}
}
