package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// authFixture is a backend whose sign-in callback is its own loopback
// address, and the demo MCP server behind the demo authorization server.
func newAuthBackend(t *testing.T) (*fixture, *demo.AuthServer, string) {
	t.Helper()
	as := demo.NewAuthServer(demo.AuthOptions{})
	mcp := httptest.NewServer(as.Handler())
	t.Cleanup(mcp.Close)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	store := storage.Open(root)
	svc := service.New(service.Config{Registrations: store, Catalogs: store, RedirectURL: "http://" + ln.Addr().String() + jsapi.PathOAuthCallback,
		Gateway: gateway.New(gateway.Config{Auths: store})})
	f := &fixture{srv: New(Config{Commands: NewCommands(svc, nil), Version: "test", HandshakeTimeout: 2 * time.Second}), root: root}
	ts := httptest.NewUnstartedServer(f.srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	f.url = ts.URL
	t.Cleanup(func() { f.srv.Close(); ts.Close() })
	return f, as, mcp.URL + "/mcp"
}

// browser is the popup: it follows the authorization server's redirect to
// the callback as a top-level navigation.
func browserGet(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// Over the socket and the callback route, as a page and its popup do it:
// needs sign-in, start, approve, the callback, finish, discovery works.
// No frame the page receives holds a token, and the callback page echoes
// nothing of its query.
func TestSignInOverTheWire(t *testing.T) {
	f, as, endpoint := newAuthBackend(t)
	c := f.connect(t)
	var frames []string
	call := func(command string, args any) result {
		r := c.call(command, args)
		frames = append(frames, string(r.raw))
		return r
	}
	var srv jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Demo", "endpoint": endpoint}), &srv)
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)
	if r := call(jsapi.CmdDiscoverTools, dto(map[string]any{"registrationId": srv.ID})); r.OK || r.Error.Code != gateway.CodeAuthRequired {
		t.Fatalf("discover: %s", r.raw)
	}
	r := call(jsapi.CmdStartSignIn, dto(map[string]any{"registrationId": srv.ID}))
	var st jsapi.McpSignInStarted
	if !r.OK || jsonInto(r, &st) != nil || !strings.HasPrefix(st.RedirectURI, f.url) {
		t.Fatalf("start: %s", r.raw)
	}
	back, err := demo.Approve(context.Background(), st.AuthorizationURL, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(back.String(), f.url+jsapi.PathOAuthCallback+"?") {
		t.Fatalf("sent back to %s", back)
	}
	resp, page := browserGet(t, back.String())
	if resp.StatusCode != 200 || !strings.Contains(page, "Signed in") || !strings.Contains(page, "window.close()") {
		t.Fatalf("callback page %d: %s", resp.StatusCode, page)
	}
	for _, leak := range []string{back.Query().Get("code"), back.Query().Get("state"), back.Query().Get("iss"), endpoint} {
		if strings.Contains(page, leak) {
			t.Fatalf("the callback page shows %q:\n%s", leak, page)
		}
	}
	for name, want := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q", name, got)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") {
		t.Errorf("CSP %q", csp)
	}
	r = call(jsapi.CmdFinishSignIn, dto(map[string]any{"signInId": st.SignInID}))
	if !r.OK || !strings.Contains(string(r.Value), `"state":"signed_in"`) {
		t.Fatalf("finish: %s", r.raw)
	}
	if r := call(jsapi.CmdDiscoverTools, dto(map[string]any{"registrationId": srv.ID})); !r.OK {
		t.Fatalf("discover after sign-in: %s", r.raw)
	}
	call(jsapi.CmdListServers, nil)

	// The used link again: not valid, nothing shown.
	resp, page = browserGet(t, back.String())
	if resp.StatusCode != 400 || !strings.Contains(page, "not valid") || strings.Contains(page, back.Query().Get("code")) {
		t.Fatalf("replayed callback %d: %s", resp.StatusCode, page)
	}
	for _, frame := range frames {
		for _, secret := range as.Issued() {
			if strings.Contains(frame, secret) {
				t.Fatalf("a frame holds a credential: %s", as.Redact(frame))
			}
		}
	}
	if len(as.Issued()) < 2 {
		t.Fatalf("issued %d credentials: the check saw nothing", len(as.Issued()))
	}

	r = call(jsapi.CmdSignOut, dto(map[string]any{"registrationId": srv.ID}))
	if !r.OK || !strings.Contains(string(r.Value), `"state":"none"`) {
		t.Fatalf("sign out: %s", r.raw)
	}
}

// Only a top-level navigation gets an answer; a subresource pointed at the
// callback gets a bare 403, and a foreign Host the DNS-rebinding 403.
func TestCallbackRefusesSubresources(t *testing.T) {
	f, _, _ := newAuthBackend(t)
	for _, dest := range []string{"image", "script", "iframe", "empty"} {
		req, _ := http.NewRequest(http.MethodGet, f.url+jsapi.PathOAuthCallback+"?state=x&code=y", nil)
		req.Header.Set("Sec-Fetch-Dest", dest)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d", dest, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.url+jsapi.PathOAuthCallback+"?state=x", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign host: %d", resp.StatusCode)
	}
	resp, page := browserGet(t, f.url+jsapi.PathOAuthCallback+"?state=unknown&code=c0de&error_description=<b>x</b>")
	if resp.StatusCode != 400 || strings.Contains(page, "c0de") || strings.Contains(page, "<b>") {
		t.Fatalf("unknown state %d: %s", resp.StatusCode, page)
	}
}

func jsonInto(r result, v any) error { return json.Unmarshal(r.Value, v) }
