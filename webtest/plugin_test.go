package webtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The SillyTavern plugin path (issue 28) in Chromium: the playground
// opened through a Go stand-in of SillyTavern with its plugin, at another
// origin than the backend's, by a name that is not loopback in the page's
// eyes (st.test, which --host-resolver-rules maps to 127.0.0.1: no real
// LAN address is touched). The stand-in does what SillyTavern's gate and
// the plugin do for the transport: a session cookie, a CSRF token from
// GET /csrf-token required on every POST and DELETE (403 without), then
// the reverse proxy that deletes the page's X-Ttmcp-* headers and adds the
// plugin's. The page lists servers, creates one and lists again over the
// HTTP transport, and the network log shows no request to any other
// origin.
func TestPlaygroundThroughThePlugin(t *testing.T) {
	secret := pluginSecret()
	b := newBackend(t, func(c *server.Config) { c.PluginSecret = secret })
	st := newSillyTavernStandIn(t, b.url(""), secret)
	stOrigin := serveAsSillyTavern(t, st)
	p, requests := sillyTavernPage(t)
	base := stOrigin + "/api/plugins/ttmcp"
	p.navigate(base + "/")

	type outcome struct {
		Backend, State, Error string
		Before, After         int
		Name                  string
	}
	got := evalJS[outcome](p, `
		await import(new URL('jsapi/tauritavern-mcp.js', location.href).href);
		const tt = window.__TAURITAVERN__;
		await tt.ready;
		const out = { backend: tt.mcpBridge.backend, state: tt.mcpBridge.state, error: tt.mcpBridge.error?.message ?? '' };
		if (out.state !== 'open') return out;
		out.before = (await tt.api.mcp.servers.list()).servers.length;
		const created = await tt.api.mcp.servers.create({ displayName: 'Through the plugin', endpoint: 'http://127.0.0.1:9/mcp' });
		const list = await tt.api.mcp.servers.list();
		out.after = list.servers.length;
		out.name = list.servers.find((s) => s.id === created.id)?.displayName ?? '';
		return out;`)
	if got.State != "open" || got.Backend != base {
		t.Logf("requests: %s", strings.Join(requests(), "\n"))
		t.Fatalf("bridge %+v (want open at %s)", got, base)
	}
	if got.Before != 0 || got.After != 1 || got.Name != "Through the plugin" {
		t.Fatalf("list/create/list over the HTTP transport: %+v", got)
	}
	if n := st.posts(); n == 0 {
		t.Fatal("no frame went up through the stand-in's transport route")
	}
	// A restarted backend (a new per-user token): the page hears the close
	// on its stream, reconnects over the plugin as it would over a
	// socket, and its calls work again; nothing was lost.
	b.stop()
	b.start()
	again := evalJS[outcome](p, `
		const tt = window.__TAURITAVERN__;
		// the page must first hear that the old transport closed (the
		// stopped backend ended its stream); until then it still says open
		for (let i = 0; i < 200 && tt.mcpBridge.state === 'open'; i++) await new Promise((r) => setTimeout(r, 25));
		for (let i = 0; i < 100 && tt.mcpBridge.state !== 'open'; i++) await tt.mcpBridge.reconnect();
		const out = { backend: tt.mcpBridge.backend, state: tt.mcpBridge.state, error: tt.mcpBridge.error?.message ?? '' };
		if (out.state === 'open') out.after = (await tt.api.mcp.servers.list()).servers.length;
		return out;`)
	if again.State != "open" || again.After != 1 {
		t.Fatalf("after a restart: %+v", again)
	}
	seen := requests()
	for _, r := range seen {
		u := strings.SplitN(r, " ", 2)[1]
		if !strings.HasPrefix(u, stOrigin+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("a request to another origin: %s", r)
		}
	}
	var sawStream bool
	for _, r := range seen {
		sawStream = sawStream || strings.HasPrefix(r, "GET "+base+jsapi.PathTransport+"/")
		if strings.Contains(r, b.origin()) || strings.Contains(r, "/ws") {
			t.Errorf("the page reached for the backend itself: %s", r)
		}
	}
	if !sawStream {
		t.Errorf("no transport stream in the network log: %v", seen)
	}
}

// pluginSecret is a fresh plugin secret, as ttmcp serve makes one.
func pluginSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// serveAsSillyTavern serves h on a loopback port and returns its origin by
// the name st.test, which the page does not take for loopback
// (sillyTavernPage's Chromium resolves it to 127.0.0.1).
func serveAsSillyTavern(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://st.test:" + port
}

// sillyTavernPage is a tab of a Chromium of its own that maps st.test to
// 127.0.0.1 (no real LAN address is touched); requests returns every
// request the page has made so far, as "METHOD URL".
func sillyTavernPage(t *testing.T) (p *page, requests func() []string) {
	t.Helper()
	bctx, stop, err := launchBrowser(t.TempDir(), chromedp.Flag("host-resolver-rules", "MAP st.test 127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return logTab(t, bctx, false)
}

// logTab opens a tab of the browser bctx — in a browser context of its
// own (its own cookies and storage) when apart — and logs every request
// it makes; requests returns them so far, as "METHOD URL".
func logTab(t testing.TB, bctx context.Context, apart bool) (p *page, requests func() []string) {
	t.Helper()
	var opts []chromedp.ContextOption
	if apart {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	ctx, cancel := chromedp.NewContext(bctx, opts...)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			seen = append(seen, e.Request.Method+" "+e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return &page{tb: t, ctx: ctx}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// sillyTavernStandIn is SillyTavern's gate (a session cookie, CSRF on
// state-changing requests) and the plugin (a reverse proxy with the
// plugin's headers) in Go.
type sillyTavernStandIn struct {
	proxy *httputil.ReverseProxy
	csrf  string

	mu         sync.Mutex
	framePosts int
}

func newSillyTavernStandIn(t *testing.T, backend, secret string) *sillyTavernStandIn {
	target, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	st := &sillyTavernStandIn{csrf: "csrf-" + hex.EncodeToString([]byte(time.Now().String()))[:16]}
	st.proxy = &httputil.ReverseProxy{
		FlushInterval: -1,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, "/api/plugins/ttmcp")
			pr.Out.URL.RawPath = ""
			pr.Out.Host = target.Host
			for name := range pr.Out.Header {
				if strings.HasPrefix(strings.ToLower(name), "x-ttmcp-") {
					pr.Out.Header.Del(name)
				}
			}
			for _, h := range []string{"Cookie", "Authorization", "X-Csrf-Token"} {
				pr.Out.Header.Del(h)
			}
			pr.Out.Header.Set(jsapi.HeaderPluginSecret, secret)
			pr.Out.Header.Set(jsapi.HeaderPluginUser, jsapi.DefaultUser)
			pr.Out.Header.Set(jsapi.HeaderPluginAdmin, "0")
			pr.Out.Header.Set(jsapi.HeaderPluginOrigin, "http://"+pr.In.Host)
			pr.Out.Header.Set(jsapi.HeaderPluginPrefix, "/api/plugins/ttmcp")
		},
	}
	return st
}

func (st *sillyTavernStandIn) posts() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.framePosts
}

func (st *sillyTavernStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie("st-session"); err != nil {
		// the first request opens the session (SillyTavern's login page
		// would come here with user accounts)
		http.SetCookie(w, &http.Cookie{Name: "st-session", Value: "1", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		if r.Method != http.MethodGet {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
	}
	if r.URL.Path == "/csrf-token" {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"token":"` + st.csrf + `"}`))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get("X-CSRF-Token") != st.csrf {
		http.Error(w, "Invalid CSRF token", http.StatusForbidden)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/plugins/ttmcp/") {
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/plugins/ttmcp"+jsapi.PathTransport+"/") {
		st.mu.Lock()
		st.framePosts++
		st.mu.Unlock()
	}
	st.proxy.ServeHTTP(w, r)
}
