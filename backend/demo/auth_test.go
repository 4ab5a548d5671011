package demo_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/demo"
)

const callback = "http://127.0.0.1:7952/oauth/callback"

type demoAS struct {
	t      *testing.T
	as     *demo.AuthServer
	base   string
	client string
	now    time.Time
	mu     sync.Mutex
}

func newDemoAS(t *testing.T, clientName string) *demoAS {
	d := &demoAS{t: t, now: time.Now()}
	d.as = demo.NewAuthServer(demo.AuthOptions{TokenTTL: time.Minute, Now: func() time.Time { d.mu.Lock(); defer d.mu.Unlock(); return d.now }})
	ts := httptest.NewServer(d.as.Handler())
	t.Cleanup(ts.Close)
	d.base = ts.URL
	var reg struct {
		ClientID string `json:"client_id"`
	}
	d.post("/register", "application/json", `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","client_name":`+jsonString(clientName)+`}`, 201, &reg)
	d.client = reg.ClientID
	return d
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func (d *demoAS) post(path, ctype, body string, status int, out any) {
	d.t.Helper()
	resp, err := http.Post(d.base+path, ctype, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		d.t.Fatalf("POST %s: %d %s, want %d", path, resp.StatusCode, b, status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatal(err)
		}
	}
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeURL is an authorization request of the test's client.
func (d *demoAS) authorizeURL(verifier, resource, scope string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {d.client}, "redirect_uri": {callback}, "state": {"st"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource}, "scope": {scope}}
	return d.base + "/authorize?" + q.Encode()
}

func (d *demoAS) code(verifier string) string {
	d.t.Helper()
	back, err := demo.Approve(context.Background(), d.authorizeURL(verifier, d.base+"/mcp", demo.Scope+" offline_access"), true)
	if err != nil {
		d.t.Fatal(err)
	}
	if back.Query().Get("state") != "st" || back.Query().Get("iss") != d.base {
		d.t.Fatalf("sent back to %s", back)
	}
	return back.Query().Get("code")
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Error        string `json:"error"`
}

func (d *demoAS) token(form url.Values, status int) tokens {
	d.t.Helper()
	form.Set("client_id", d.client)
	var out tokens
	d.post("/token", "application/x-www-form-urlencoded", form.Encode(), status, &out)
	return out
}

func (d *demoAS) exchange(code, verifier string, status int) tokens {
	return d.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"redirect_uri": {callback}, "resource": {d.base + "/mcp"}}, status)
}

// mcpStatus is the status of an MCP request carrying tok.
func (d *demoAS) mcpStatus(tok string) int {
	d.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, d.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const verifier = "a-verifier-of-more-than-forty-three-characters-0123456789"

// The authorization code grant: PKCE S256 checked, a code used once, the
// access token good for the resource until it expires.
func TestDemoCodeGrant(t *testing.T) {
	d := newDemoAS(t, "t")
	code := d.code(verifier)
	if got := d.exchange(code, strings.Replace(verifier, "a", "b", 1), 400); got.Error != "invalid_grant" {
		t.Fatalf("wrong verifier: %+v", got)
	}
	code = d.code(verifier)
	tok := d.exchange(code, verifier, 200)
	if !strings.HasPrefix(tok.AccessToken, "dat_") || !strings.HasPrefix(tok.RefreshToken, "drt_") {
		t.Fatalf("tokens %+v", tok)
	}
	if got := d.exchange(code, verifier, 400); got.Error != "invalid_grant" {
		t.Fatalf("code reused: %+v", got)
	}
	// Tests look for leaks of everything handed out, codes included.
	for _, c := range []string{code, tok.AccessToken, tok.RefreshToken} {
		if !slices.Contains(d.as.Issued(), c) {
			t.Fatalf("Issued() lacks %q", c)
		}
		if got := d.as.Redact("<" + c + ">"); got != "<[credential]>" {
			t.Fatalf("Redact: %q", got)
		}
	}
	if s := d.mcpStatus(tok.AccessToken); s != 200 {
		t.Fatalf("with the token: %d", s)
	}
	if s := d.mcpStatus("dat_forged"); s != 401 {
		t.Fatalf("forged token: %d", s)
	}
	d.mu.Lock()
	d.now = d.now.Add(time.Minute)
	d.mu.Unlock()
	if s := d.mcpStatus(tok.AccessToken); s != 401 {
		t.Fatalf("expired token: %d", s)
	}
}

// Refresh tokens rotate: the old one is refused once used; revoking ends
// both tokens.
func TestDemoRefreshAndRevoke(t *testing.T) {
	d := newDemoAS(t, "t")
	first := d.exchange(d.code(verifier), verifier, 200)
	second := d.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}, "resource": {d.base + "/mcp"}}, 200)
	if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken || second.RefreshToken == "" {
		t.Fatalf("refresh: %+v", second)
	}
	if got := d.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}, 400); got.Error != "invalid_grant" {
		t.Fatalf("old refresh token: %+v", got)
	}
	if n := d.as.TokenRequests("refresh_token"); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
	d.as.RevokeAll()
	if s := d.mcpStatus(second.AccessToken); s != 401 {
		t.Fatalf("revoked token: %d", s)
	}
	if got := d.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.RefreshToken}}, 400); got.Error != "invalid_grant" {
		t.Fatalf("revoked refresh token: %+v", got)
	}
}

// Bad authorization requests go back to the client with an error (the
// redirect URI being registered), or stop on the page when the redirect
// URI cannot be trusted; the client's name is shown escaped.
func TestDemoAuthorizationRequests(t *testing.T) {
	d := newDemoAS(t, `<script>alert(1)</script>`)
	back, err := demo.Approve(context.Background(), d.authorizeURL(verifier, "http://elsewhere.example/mcp", demo.Scope), true)
	if err != nil || back.Query().Get("error") != "invalid_target" {
		t.Fatalf("wrong resource: %v %v", back, err)
	}
	back, err = demo.Approve(context.Background(), d.authorizeURL(verifier, d.base+"/mcp", demo.Scope), false)
	if err != nil || back.Query().Get("error") != "access_denied" || back.Query().Get("state") != "st" {
		t.Fatalf("denied: %v %v", back, err)
	}
	resp, err := http.Get(strings.Replace(d.authorizeURL(verifier, d.base+"/mcp", demo.Scope), url.QueryEscape(callback), url.QueryEscape("http://evil.example/cb"), 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("unregistered redirect: %d", resp.StatusCode)
	}
	resp, err = http.Get(d.authorizeURL(verifier, d.base+"/mcp", demo.Scope))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(page), "<script>") || !strings.Contains(string(page), "&lt;script&gt;") {
		t.Fatalf("the client name is not escaped:\n%s", page)
	}
	d.post("/register", "application/json", `{"redirect_uris":["http://evil.example/cb"]}`, 400, nil)
}
