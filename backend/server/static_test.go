package server

import (
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-json-experiment/json"
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
	refs := regexp.MustCompile(`(?:src|href)="/([^"]+)"`).FindAllStringSubmatch(string(index), -1)
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
