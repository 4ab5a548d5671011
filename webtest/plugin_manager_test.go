package webtest

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ttmcp/ttmcp/backend/server"
)

// The extension's own choice of route (issue 28) in Chromium: SillyTavern
// at st.test (a name the page does not take for loopback; mapped to
// 127.0.0.1 by --host-resolver-rules), serving the playground and the
// extension as its own files, with the install's ttmcp.json saying the
// plugin was installed (and naming a direct URL nothing answers), the
// plugin's status route, and the plugin's path (newSillyTavernStandIn). The
// drawer must find the plugin, load the API through it, list the servers
// and say which route it uses; the page makes no request to another origin.
func TestManagerChoosesThePlugin(t *testing.T) {
	secret := pluginSecret()
	needBundle(t)
	b := newBackend(t, withManager(nil), func(c *server.Config) { c.PluginSecret = secret })
	target, err := url.Parse(b.url(""))
	if err != nil {
		t.Fatal(err)
	}
	plugin := newSillyTavernStandIn(t, b.url(""), secret)
	// SillyTavern's own files: here, what the backend serves at its root
	files := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = target.Host
	}}
	var statusAsked int
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/plugins/ttmcp/_plugin/status", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		statusAsked++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"plugin":"ttmcp","version":"test","backend":"up","user":"default-user"}`))
	})
	mux.Handle("/api/plugins/ttmcp/", plugin)
	mux.Handle("GET /csrf-token", plugin)
	mux.HandleFunc("GET /scripts/extensions/third-party/mcp-manager/ttmcp.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"backendUrl":"http://127.0.0.1:1","plugin":true}`))
	})
	mux.Handle("/", files)

	stOrigin := serveAsSillyTavern(t, mux)
	p, requests := sillyTavernPage(t)
	p.navigate(stOrigin + "/")
	waitHostReady(p)
	loadUI(p)
	p.run(`await ui.withText(/No MCP servers yet|Servers · \d+/, document);`)
	route := evalJS[string](p, `return (await ui.withText(/Through SillyTavern/, document)).textContent;`)
	if !strings.Contains(route, "Through SillyTavern (its ttmcp plugin): this works from any device") {
		t.Errorf("the drawer's route: %q", route)
	}
	backend := evalJS[string](p, `return window.__TAURITAVERN__.mcpBridge.backend;`)
	if backend != stOrigin+"/api/plugins/ttmcp" {
		t.Errorf("the bridge's backend %q; want SillyTavern's plugin path", backend)
	}
	shots(p, "manager-plugin-route")
	if n := plugin.posts(); n == 0 {
		t.Error("no frame went up through the plugin's transport")
	}
	mu.Lock()
	asked := statusAsked
	mu.Unlock()
	if asked == 0 {
		t.Error("the plugin's status was never asked")
	}
	for _, r := range requests() {
		u := strings.SplitN(r, " ", 2)[1]
		if !strings.HasPrefix(u, stOrigin+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("a request to another origin: %s", r)
		}
	}
}
