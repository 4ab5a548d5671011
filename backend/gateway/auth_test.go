package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
)

// clock is a test clock shared by the demo authorization server and the
// gateway, so token lifetimes pass without waiting.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// authFixture is the demo MCP server behind the demo authorization
// server, a registration of it, and a gateway keeping auth files in a
// temporary data root, logging at debug level into logs.
type authFixture struct {
	as    *demo.AuthServer
	rec   *recorder
	store *storage.Store
	gw    *Gateway
	r     domain.Registration
	clock *clock
	logs  *bytes.Buffer
}

func newAuthFixture(t *testing.T, protocol domain.Protocol) *authFixture {
	t.Helper()
	f := &authFixture{clock: newClock(), logs: &bytes.Buffer{}}
	f.as = demo.NewAuthServer(demo.AuthOptions{TokenTTL: time.Minute, Now: f.clock.now})
	var ts *httptest.Server
	ts, f.rec = serve(t, f.as.Handler())
	f.store = storage.Open(t.TempDir())
	f.gw = newGateway(t, Config{StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second,
		CloseTimeout: 200 * time.Millisecond, Auths: f.store, Now: f.clock.now,
		Log: slog.New(slog.NewTextHandler(&syncWriter{w: f.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	f.r = registration(t, ts.URL+"/mcp", protocol, nil)
	t.Cleanup(func() { f.noLeaks(t) })
	return f
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// approve is the user approving on the demo page.
func approve(yes bool) func(context.Context, string) (domain.AuthorizationResponse, error) {
	return func(ctx context.Context, u string) (domain.AuthorizationResponse, error) {
		back, err := demo.Approve(ctx, u, yes)
		if err != nil {
			return domain.AuthorizationResponse{}, err
		}
		q := back.Query()
		if e := q.Get("error"); e != "" {
			return domain.AuthorizationResponse{}, domain.Errorf(domain.KindUnavailable, "mcp.auth_denied", "%s", e)
		}
		return domain.AuthorizationResponse{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

func (f *authFixture) signIn(t *testing.T) domain.Auth {
	t.Helper()
	a, err := f.gw.SignIn(context.Background(), f.r, domain.SignInRequest{RedirectURL: "http://127.0.0.1:7950/oauth/callback", Authorize: approve(true)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *authFixture) state(t *testing.T) domain.Auth {
	t.Helper()
	a, err := f.gw.AuthState(f.r)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// noLeaks checks that no token or client secret the authorization server
// handed out appears in a log line.
func (f *authFixture) noLeaks(t *testing.T) {
	for _, secret := range f.as.Issued() {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("a log line holds a credential:\n%s", f.as.Redact(f.logs.String()))
			return
		}
	}
}

// mcpAuthorizations returns the Authorization headers of the MCP requests
// the server saw from the from-th request on.
func (f *authFixture) mcpAuthorizations(from int) []string {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	var out []string
	for i, h := range f.rec.headers[from:] {
		i += from
		if m := f.rec.methods[i]; m != "GET" && m != "POST" && !strings.HasPrefix(m, "grant") {
			out = append(out, h.Get("Authorization"))
		}
	}
	return out
}

// Before sign-in, discovery fails with mcp.auth_required naming the
// server's scope, and the refusal is kept as "needs sign-in".
func TestAuthRequiredBeforeSignIn(t *testing.T) {
	f := newAuthFixture(t, domain.ProtocolAuto)
	_, err := f.gw.Discover(context.Background(), f.r)
	if domain.CodeOf(err) != CodeAuthRequired || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), demo.Scope) {
		t.Fatalf("discover: %v", err)
	}
	a := f.state(t)
	if a.State() != domain.AuthRequired || a.Challenge.Status != 401 || !slices.Equal(a.Challenge.Scopes, []string{demo.Scope}) ||
		!strings.Contains(a.Challenge.ResourceMetadata, "/.well-known/oauth-protected-resource/mcp") || len(a.Challenge.Header) != 1 {
		t.Fatalf("state %+v %+v", a.State(), a.Challenge)
	}
	o := f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeAuthRequired)
	if n := f.rec.count("tools/call"); n != 0 {
		t.Fatalf("%d tools/call reached the server", n)
	}
	// Nothing is sent after a refusal: go-sdk's fallback from
	// server/discover to initialize would repeat the refused request.
	if seen := f.rec.seen(); !slices.Equal(seen, []string{"server/discover", "server/discover"}) {
		t.Fatalf("the server saw %v: one refused request per operation, nothing after it", seen)
	}
}

// Sign-in (dynamic registration, approval, PKCE, resource) keeps the
// tokens; discovery and calls then send the access token; once it
// expires, the refresh token gets a new one and calls go on without
// another sign-in.
func TestSignInDiscoverCallRefresh(t *testing.T) {
	for _, p := range []domain.Protocol{domain.Protocol20260728, domain.Protocol20250618} {
		t.Run(string(p), func(t *testing.T) {
			f := newAuthFixture(t, p)
			a := f.signIn(t)
			mark := len(f.rec.seen())
			if a.State() != domain.AuthSignedIn || !slices.Contains(a.Token.Scopes, demo.Scope) || !slices.Contains(a.Token.Scopes, "offline_access") ||
				a.Token.RefreshToken == "" || a.Token.Client.Registration != domain.ClientDynamic || a.Token.Resource != f.r.Endpoint.String() ||
				a.Token.ExpiresAt.Sub(f.clock.now()) != time.Minute {
				t.Fatalf("signed in: %+v", a.Token)
			}
			if kept := f.state(t); kept.Token == nil || kept.Token.AccessToken != a.Token.AccessToken {
				t.Fatal("the sign-in was not kept")
			}
			cat, err := f.gw.Discover(context.Background(), f.r)
			if err != nil || len(cat.Tools) != 5 {
				t.Fatalf("discover: %v %d", err, len(cat.Tools))
			}
			wantOutcome(t, f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}), domain.OutcomeKnownResponse, "")
			first := "Bearer " + a.Token.AccessToken.Reveal()
			for _, h := range f.mcpAuthorizations(mark) {
				if h != first {
					t.Fatalf("a request carried %q", f.as.Redact(h))
				}
			}

			f.clock.add(time.Minute)
			wantOutcome(t, f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"again"}`)}), domain.OutcomeKnownResponse, "")
			if n := f.as.TokenRequests("refresh_token"); n != 1 {
				t.Fatalf("%d refreshes", n)
			}
			b := f.state(t)
			if b.Token.AccessToken == a.Token.AccessToken || b.Token.RefreshToken == a.Token.RefreshToken || b.Token.RefreshedAt.IsZero() {
				t.Fatalf("after refresh: %+v", b.Token)
			}
			auths := f.mcpAuthorizations(mark)
			if last := auths[len(auths)-1]; last != "Bearer "+b.Token.AccessToken.Reveal() {
				t.Fatalf("last request carried %q", f.as.Redact(last))
			}
			// Still fresh: no second refresh.
			wantOutcome(t, f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"3"}`)}), domain.OutcomeKnownResponse, "")
			if n := f.as.TokenRequests("refresh_token"); n != 1 {
				t.Fatalf("%d refreshes", n)
			}
		})
	}
}

// Concurrent operations that find the token expired refresh it once: the
// demo rotates refresh tokens, so a second refresh with the old one would
// end the sign-in.
func TestRefreshOnce(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	f.signIn(t)
	f.clock.add(2 * time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := f.gw.Discover(context.Background(), f.r); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.as.TokenRequests("refresh_token"); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
}

// A revoked token: the call is refused (not_sent, never re-sent); the
// access token is dropped and the refresh token kept, so the next
// operation refreshes first; the authorization server refuses that too,
// which ends the sign-in: mcp.auth_required and "needs sign-in".
func TestRevokedToken(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	f.signIn(t)
	f.as.RevokeAll()
	o := f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeAuthRequired)
	if !strings.Contains(o.Message, "invalid_token") {
		t.Fatalf("message %q", o.Message)
	}
	a := f.state(t)
	if a.State() != domain.AuthSignedIn || a.Token.AccessToken != "" || a.Token.RefreshToken == "" || a.Challenge.Error != "invalid_token" {
		t.Fatalf("after the refusal: %s %+v %+v", a.State(), a.Token, a.Challenge)
	}
	o = f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	wantOutcome(t, o, domain.OutcomeNotSent, CodeAuthRequired)
	if !strings.Contains(o.Message, "invalid_grant") {
		t.Fatalf("message %q", o.Message)
	}
	if a := f.state(t); a.State() != domain.AuthRequired || a.Token != nil {
		t.Fatalf("after the refused refresh: %s %+v", a.State(), a.Token)
	}
	if n := f.rec.count("tools/call"); n != 0 {
		t.Fatalf("%d tools/call reached the MCP server", n)
	}
	// Signing in again works.
	f.signIn(t)
	wantOutcome(t, f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}), domain.OutcomeKnownResponse, "")
}

// A refresh that cannot reach the authorization server keeps the sign-in.
func TestRefreshUnreachable(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	a := f.signIn(t)
	a.Token.TokenEndpoint = "http://127.0.0.1:1/token"
	if err := f.store.SaveAuth(a); err != nil {
		t.Fatal(err)
	}
	f.clock.add(time.Hour)
	_, err := f.gw.Discover(context.Background(), f.r)
	if domain.CodeOf(err) != CodeAuthRefreshFailed {
		t.Fatalf("discover: %v", err)
	}
	if b := f.state(t); b.Token == nil || b.Token.RefreshToken != a.Token.RefreshToken {
		t.Fatalf("the sign-in was lost: %+v", b.Token)
	}
	wantOutcome(t, f.gw.Call(context.Background(), f.r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{}`)}), domain.OutcomeNotSent, CodeAuthRefreshFailed)
}

// The user denying the request ends the sign-in with Authorize's error,
// and nothing is kept.
func TestSignInDenied(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	_, err := f.gw.SignIn(context.Background(), f.r, domain.SignInRequest{RedirectURL: "http://127.0.0.1:7950/oauth/callback", Authorize: approve(false)})
	if domain.CodeOf(err) != "mcp.auth_denied" {
		t.Fatalf("got %v", err)
	}
	if a := f.state(t); a.Token != nil {
		t.Fatal("a token was kept")
	}
}

// An authorization server that refuses the redirect URI at registration
// (the demo, as OAuth 2.1 servers do, takes plain http only on loopback)
// ends the sign-in with its own code; for a page opened at a LAN address
// over http the message says why and what works instead. Nothing is kept
// and the user was never sent to the authorization page.
func TestSignInRedirectRefused(t *testing.T) {
	for _, c := range []struct {
		redirect string
		want     []string
	}{
		{"http://192.0.2.2:8000/api/plugins/ttmcp/oauth/callback", []string{"http://192.0.2.2:8000/api/plugins/ttmcp/oauth/callback", "plain http only on localhost", "over https", "http://localhost:8000"}},
		{"http://st.home.arpa/api/plugins/ttmcp/oauth/callback", []string{"plain http only on localhost", "http://localhost:80"}},
	} {
		f := newAuthFixture(t, domain.Protocol20250618)
		asked := false
		_, err := f.gw.SignIn(context.Background(), f.r, domain.SignInRequest{RedirectURL: c.redirect, Authorize: func(ctx context.Context, u string) (domain.AuthorizationResponse, error) {
			asked = true
			return approve(true)(ctx, u)
		}})
		if domain.CodeOf(err) != CodeAuthRedirectRefused {
			t.Fatalf("%s: got %v; want %s", c.redirect, err, CodeAuthRedirectRefused)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the message %q does not say %q", c.redirect, err, w)
			}
		}
		if asked {
			t.Errorf("%s: the user was sent to the authorization page", c.redirect)
		}
		if a := f.state(t); a.Token != nil {
			t.Errorf("%s: a token was kept", c.redirect)
		}
	}
}

// Signing out deletes everything, even while a refresh runs.
func TestSignOut(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	f.signIn(t)
	if err := f.gw.SignOut(context.Background(), f.r.ID); err != nil {
		t.Fatal(err)
	}
	if a := f.state(t); !a.IsZero() {
		t.Fatalf("after sign-out: %+v", a)
	}
	if _, err := os.Stat(f.store.AuthPath(f.r.ID)); !os.IsNotExist(err) {
		t.Fatalf("auth file: %v", err)
	}
	_, err := f.gw.Discover(context.Background(), f.r)
	if domain.CodeOf(err) != CodeAuthRequired {
		t.Fatalf("discover after sign-out: %v", err)
	}
}

// A user-entered client (here: registered beforehand with the demo) is
// used instead of dynamic registration.
func TestSignInManualClient(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	base := strings.TrimSuffix(f.r.Endpoint.String(), "/mcp")
	resp, err := http.Post(base+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:7950/oauth/callback"],"token_endpoint_auth_method":"client_secret_post","client_name":"by hand"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct{ ClientID, ClientSecret string }
	json.NewDecoder(resp.Body).Decode(&struct {
		ClientID     *string `json:"client_id"`
		ClientSecret *string `json:"client_secret"`
	}{&reg.ClientID, &reg.ClientSecret})
	resp.Body.Close()
	a, err := f.gw.SignIn(context.Background(), f.r, domain.SignInRequest{RedirectURL: "http://127.0.0.1:7950/oauth/callback", Authorize: approve(true),
		Client: &domain.OAuthClient{ID: reg.ClientID, Secret: domain.Secret(reg.ClientSecret)}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Token.Client.ID != reg.ClientID || a.Token.Client.Registration != domain.ClientManual || a.Token.Client.AuthMethod != domain.AuthMethodPost {
		t.Fatalf("client %+v", a.Token.Client)
	}
	f.clock.add(time.Hour) // the refresh authenticates the same way
	if _, err := f.gw.Discover(context.Background(), f.r); err != nil {
		t.Fatal(err)
	}
}

// authServer is a hand-written MCP server that lets startup and tools/list
// through and answers tools/call with refuse.
func refusingCalls(t *testing.T, refuse func(w http.ResponseWriter)) (*httptest.Server, *recorder) {
	f := &fake{version: "2025-06-18", list: func(string) any { return page("", rawTool("t", `{"type":"object"}`)) },
		onCall: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte) { refuse(w) }}
	return serve(t, f)
}

// A tools/call answered 401 or Bearer 403 was written but not run:
// not_sent mcp.auth_required with what the server named, sent once. A 403
// without a Bearer challenge is not an authorization refusal: the outcome
// stays unknown.
func TestCallRefusedIsNotSent(t *testing.T) {
	tests := []struct {
		name, header, body string
		status             int
		outcome            domain.Outcome
		code, msg          string
	}{
		{"401 with challenge", `Bearer error="invalid_token", scope="files:read"`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"no"}}`, 401,
			domain.OutcomeNotSent, CodeAuthRequired, "scopes: files:read"},
		{"401 bare", "", "unauthorized", 401, domain.OutcomeNotSent, CodeAuthRequired, "HTTP 401"},
		{"403 insufficient scope", `Bearer error="insufficient_scope", scope="files:write", error_description="need write"`, "", 403,
			domain.OutcomeNotSent, CodeAuthRequired, "insufficient_scope: need write, scopes: files:write"},
		{"403 without challenge", "", "forbidden", 403, domain.OutcomeUnknown, CodeCallResponseFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, rec := refusingCalls(t, func(w http.ResponseWriter) {
				if tt.header != "" {
					w.Header().Set("WWW-Authenticate", tt.header)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			})
			store := storage.Open(t.TempDir())
			gw := newGateway(t, Config{StartupTimeout: 5 * time.Second, CallWait: 5 * time.Second, CloseTimeout: 200 * time.Millisecond, Auths: store})
			r := registration(t, ts.URL, domain.Protocol20250618, nil)
			o := gw.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`)})
			wantOutcome(t, o, tt.outcome, tt.code)
			if !strings.Contains(o.Message, tt.msg) {
				t.Fatalf("message %q lacks %q", o.Message, tt.msg)
			}
			if n := rec.count("tools/call"); n != 1 {
				t.Fatalf("tools/call sent %d times", n)
			}
			a, err := gw.AuthState(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.outcome == domain.OutcomeNotSent; (a.State() == domain.AuthRequired) != want {
				t.Fatalf("state %s", a.State())
			}
		})
	}
}

// A step-up refusal (403 insufficient_scope) keeps the token, which is
// good for what was granted; a new sign-in asks for the union of the
// granted scopes and the challenged ones.
func TestStepUp(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	before := f.signIn(t)
	ch := domain.Challenge{Status: 403, Error: "insufficient_scope", Scopes: []string{"demo:more"},
		Header: []string{`Bearer error="insufficient_scope", scope="demo:tools demo:more"`}}
	f.gw.auth.refused(f.r, before.Token.AccessToken, ch)
	a := f.state(t)
	if a.Token == nil || a.Token.AccessToken != before.Token.AccessToken || a.Challenge.Error != "insufficient_scope" {
		t.Fatalf("after step-up refusal: %+v %+v", a.Token, a.Challenge)
	}
	var asked string
	_, err := f.gw.SignIn(context.Background(), f.r, domain.SignInRequest{RedirectURL: "http://127.0.0.1:7950/oauth/callback",
		Authorize: func(ctx context.Context, u string) (domain.AuthorizationResponse, error) {
			asked = u
			return domain.AuthorizationResponse{}, errors.New("stop")
		}})
	u, perr := url.Parse(asked)
	if err == nil || perr != nil {
		t.Fatalf("asked %s (%v)", asked, err)
	}
	scopes := strings.Fields(u.Query().Get("scope"))
	slices.Sort(scopes)
	if !slices.Equal(scopes, []string{"demo:more", "demo:tools", "offline_access"}) {
		t.Fatalf("asked for %v", scopes)
	}
}

// Without a kept challenge, sign-in asks the server first.
func TestSignInProbes(t *testing.T) {
	f := newAuthFixture(t, domain.Protocol20250618)
	f.signIn(t)
	if n := f.rec.count("initialize"); n != 1 {
		t.Fatalf("%d probes", n)
	}
	if a := f.state(t); a.Challenge != nil {
		t.Fatalf("challenge kept after sign-in: %+v", a.Challenge)
	}
}

func TestChallengeOf(t *testing.T) {
	resp := func(status int, values ...string) *http.Response {
		h := http.Header{}
		for _, v := range values {
			h.Add("WWW-Authenticate", v)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	tests := []struct {
		name   string
		resp   *http.Response
		ok     bool
		err    string
		scopes []string
	}{
		{"200", resp(200, `Bearer`), false, "", nil},
		{"401 bare", resp(401), true, "", nil},
		{"401 basic", resp(401, `Basic realm="x"`), true, "", nil},
		{"401 bearer", resp(401, `Basic realm="x", Bearer error="invalid_token", scope="a  b"`), true, "invalid_token", []string{"a", "b"}},
		{"401 malformed", resp(401, `Bearer error="unterminated`), true, "", nil},
		{"403 bearer", resp(403, `Bearer error="insufficient_scope", scope="w"`), true, "insufficient_scope", []string{"w"}},
		{"403 plain", resp(403), false, "", nil},
		{"403 basic", resp(403, `Basic`), false, "", nil},
		{"huge value dropped", resp(401, `Bearer error="`+strings.Repeat("x", 5000)+`"`), true, "", nil},
	}
	for _, tt := range tests {
		ch, ok := challengeOf(tt.resp, time.Now)
		if ok != tt.ok || ch.Error != tt.err || !slices.Equal(ch.Scopes, tt.scopes) && len(tt.scopes)+len(ch.Scopes) > 0 {
			t.Errorf("%s: %v %+v", tt.name, ok, ch)
		}
		if len(ch.Header) > maxChallengeValues {
			t.Errorf("%s: %d header values", tt.name, len(ch.Header))
		}
	}
}

func TestClean(t *testing.T) {
	if got := clean("need\x01 write\u202e"); got != "need write" {
		t.Errorf("clean: %q", got)
	}
	if got := clean(strings.Repeat("é", 400)); len(got) > maxChallengeText+len("…") {
		t.Errorf("clean kept %d bytes", len(got))
	}
}

func TestScrub(t *testing.T) {
	in := `failed to decode successful registration response: x ({"client_id":"c1","client_secret":"s3cr3t","access_token": "at9", "x":1}) refresh_token=rt7&code=cd5`
	out := scrub(in)
	for _, secret := range []string{"s3cr3t", "at9", "rt7", "cd5"} {
		if strings.Contains(out, secret) {
			t.Errorf("%s left in %s", secret, out)
		}
	}
	if !strings.Contains(out, `"client_id":"c1"`) {
		t.Errorf("too much removed: %s", out)
	}
}
