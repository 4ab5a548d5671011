package service

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

const redirect = "http://127.0.0.1:7951/oauth/callback"

// authWorld is a service over the demo MCP server behind the demo
// authorization server.
type authWorld struct {
	t     *testing.T
	as    *demo.AuthServer
	url   string
	store *storage.Store
	svc   *Service
	id    string
}

func newAuthWorld(t *testing.T, timeout time.Duration) *authWorld {
	t.Helper()
	w := &authWorld{t: t, as: demo.NewAuthServer(demo.AuthOptions{})}
	ts := httptest.NewServer(w.as.Handler())
	t.Cleanup(ts.Close)
	w.url = ts.URL + "/mcp"
	w.store = storage.Open(t.TempDir())
	w.svc = New(Config{Registrations: w.store, Catalogs: w.store, RedirectURL: redirect, SignInTimeout: timeout,
		Gateway: gateway.New(gateway.Config{Auths: w.store, StartupTimeout: 5 * time.Second, ListTimeout: 5 * time.Second, CallWait: 5 * time.Second})})
	ctx := context.Background()
	srv, err := w.svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "Demo", Endpoint: w.url})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: srv.ID, State: jsapi.StateActive}); err != nil {
		t.Fatal(err)
	}
	w.id = srv.ID
	return w
}

func (w *authWorld) server() jsapi.McpServer {
	w.t.Helper()
	list, err := w.svc.List(context.Background())
	if err != nil || len(list.Servers) != 1 {
		w.t.Fatalf("list: %v %+v", err, list)
	}
	return list.Servers[0]
}

func (w *authWorld) start() jsapi.McpSignInStarted {
	w.t.Helper()
	st, err := w.svc.StartSignIn(context.Background(), jsapi.StartMcpSignInDto{RegistrationID: w.id})
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// browse is the user in the popup: the approval page, then the callback.
func (w *authWorld) browse(st jsapi.McpSignInStarted, approve bool) (bool, error) {
	w.t.Helper()
	back, err := demo.Approve(context.Background(), st.AuthorizationURL, approve)
	if err != nil {
		w.t.Fatal(err)
	}
	if !strings.HasPrefix(back.String(), redirect+"?") {
		w.t.Fatalf("sent back to %s", back)
	}
	return w.svc.CompleteSignIn(context.Background(), back.Query())
}

// The whole sign-in as the page and the callback drive it: needs sign-in
// after discovery, start, approve, finish; then discovery and calls work.
// No DTO carries a token.
func TestSignInUseCase(t *testing.T) {
	w := newAuthWorld(t, time.Minute)
	ctx := context.Background()
	if a := w.server().Auth; a == nil || a.State != jsapi.AuthNone || *a.RedirectURI != redirect {
		t.Fatalf("before: %+v", a)
	}
	_, err := w.svc.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id})
	if domain.CodeOf(err) != gateway.CodeAuthRequired {
		t.Fatalf("discover: %v", err)
	}
	a := w.server().Auth
	if a.State != jsapi.AuthRequired || a.Challenge == nil || a.Challenge.Status != 401 || !slices.Equal(a.Challenge.Scopes, []string{demo.Scope}) {
		t.Fatalf("after discovery: %+v", a)
	}

	st := w.start()
	u, _ := url.Parse(st.AuthorizationURL)
	if q := u.Query(); q.Get("redirect_uri") != redirect || q.Get("code_challenge_method") != "S256" || q.Get("resource") != w.url || st.RedirectURI != redirect {
		t.Fatalf("authorization URL %s", st.AuthorizationURL)
	}
	done := make(chan jsapi.McpServer, 1)
	go func() {
		srv, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID})
		if err != nil {
			t.Error(err)
		}
		done <- srv
	}()
	if known, err := w.browse(st, true); !known || err != nil {
		t.Fatalf("callback: %v %v", known, err)
	}
	srv := <-done
	if srv.Auth.State != jsapi.AuthSignedIn || !srv.Auth.Refreshable || srv.Auth.ExpiresAt == nil || *srv.Auth.ClientRegistration != "dynamic" ||
		!slices.Contains(srv.Auth.Scopes, demo.Scope) || srv.Auth.Challenge != nil {
		t.Fatalf("signed in: %+v", srv.Auth)
	}
	res, err := w.svc.Discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id})
	if err != nil || len(res.Tools) != 5 {
		t.Fatalf("discover: %v", err)
	}
	w.noTokens(srv, w.server(), res)

	// The callback's state is single use: a replay finds nothing.
	if known, _ := w.svc.CompleteSignIn(ctx, u.Query()); known {
		t.Fatal("the state was accepted twice")
	}
	if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeSignInNotFound {
		t.Fatalf("second finish: %v", err)
	}

	out, err := w.svc.SignOut(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id})
	if err != nil || out.Auth.State != jsapi.AuthNone {
		t.Fatalf("sign out: %v %+v", err, out.Auth)
	}
	if _, err := os.Stat(w.store.AuthPath(domain.RegistrationID(w.id))); !os.IsNotExist(err) {
		t.Fatalf("auth file after sign-out: %v", err)
	}
}

// noTokens checks the JSON the page would get.
func (w *authWorld) noTokens(values ...any) {
	w.t.Helper()
	for _, v := range values {
		b, _ := json.Marshal(v)
		for _, secret := range w.as.Issued() {
			if strings.Contains(string(b), secret) {
				w.t.Fatalf("a DTO holds a credential: %s", w.as.Redact(string(b)))
			}
		}
	}
}

func TestSignInDeniedCancelledExpired(t *testing.T) {
	ctx := context.Background()
	t.Run("denied", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		st := w.start()
		if known, err := w.browse(st, false); !known || domain.CodeOf(err) != CodeAuthDenied {
			t.Fatalf("callback: %v %v", known, err)
		}
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthDenied {
			t.Fatalf("finish: %v", err)
		}
		if a := w.server().Auth; a.State == jsapi.AuthSignedIn {
			t.Fatal("signed in after a denial")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		st := w.start()
		w.svc.CancelSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID})
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthCancelled {
			t.Fatalf("finish: %v", err)
		}
		if known, _ := w.browse(st, true); known {
			t.Fatal("a cancelled sign-in took the callback")
		}
	})
	t.Run("replaced", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		first := w.start()
		second := w.start()
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: first.SignInID}); domain.CodeOf(err) != CodeAuthCancelled {
			t.Fatalf("first: %v", err)
		}
		if known, err := w.browse(second, true); !known || err != nil {
			t.Fatalf("second: %v %v", known, err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		w := newAuthWorld(t, 300*time.Millisecond)
		st := w.start()
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthExpired {
			t.Fatalf("finish: %v", err)
		}
		if known, _ := w.browse(st, true); known {
			t.Fatal("an expired sign-in took the callback")
		}
	})
	t.Run("removed meanwhile", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		st := w.start()
		if err := w.svc.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthCancelled {
			t.Fatalf("finish: %v", err)
		}
	})
	t.Run("signed out meanwhile", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		st := w.start()
		if _, err := w.svc.SignOut(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthCancelled {
			t.Fatalf("finish: %v", err)
		}
		if known, _ := w.browse(st, true); known {
			t.Fatal("a sign-in cancelled by sign-out took the callback")
		}
	})
	t.Run("endpoint changed meanwhile", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		st := w.start()
		srv := w.server()
		if _, err := w.svc.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: w.id, DisplayName: srv.DisplayName, Endpoint: srv.Endpoint + "/v2",
			Headers: map[string]string{}, ProtocolVersion: jsapi.ProtocolAuto}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.FinishSignIn(ctx, jsapi.McpSignInIdDto{SignInID: st.SignInID}); domain.CodeOf(err) != CodeAuthCancelled {
			t.Fatalf("finish: %v", err)
		}
		if _, err := os.Stat(w.store.AuthPath(domain.RegistrationID(w.id))); !os.IsNotExist(err) {
			t.Fatalf("auth file after the endpoint changed: %v", err)
		}
	})
	t.Run("paused", func(t *testing.T) {
		w := newAuthWorld(t, time.Minute)
		w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: w.id, State: jsapi.StatePaused})
		if _, err := w.svc.StartSignIn(ctx, jsapi.StartMcpSignInDto{RegistrationID: w.id}); domain.CodeOf(err) != CodeServerPaused {
			t.Fatalf("start: %v", err)
		}
	})
}

// signedIn signs the world's server in.
func (w *authWorld) signedIn() {
	w.t.Helper()
	st := w.start()
	if known, err := w.browse(st, true); !known || err != nil {
		w.t.Fatalf("callback: %v %v", known, err)
	}
}

// Removing a server or changing its endpoint deletes its tokens; other
// edits keep them.
func TestTokensFollowTheEndpoint(t *testing.T) {
	ctx := context.Background()
	path := func(w *authWorld) string { return w.store.AuthPath(domain.RegistrationID(w.id)) }
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	w := newAuthWorld(t, time.Minute)
	w.signedIn()
	srv := w.server()
	if _, err := w.svc.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: w.id, DisplayName: "Renamed", Endpoint: srv.Endpoint,
		Headers: map[string]string{"X-Extra": "1"}, ProtocolVersion: jsapi.Protocol20250618}); err != nil {
		t.Fatal(err)
	}
	if !exists(path(w)) || w.server().Auth.State != jsapi.AuthSignedIn {
		t.Fatal("a name/header/protocol edit dropped the sign-in")
	}
	if _, err := w.svc.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: w.id, DisplayName: "Moved", Endpoint: srv.Endpoint + "/v2",
		Headers: map[string]string{}, ProtocolVersion: jsapi.ProtocolAuto}); err != nil {
		t.Fatal(err)
	}
	if exists(path(w)) || w.server().Auth.State != jsapi.AuthNone {
		t.Fatal("an endpoint change kept the sign-in")
	}

	w = newAuthWorld(t, time.Minute)
	w.signedIn()
	if err := w.svc.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id}); err != nil {
		t.Fatal(err)
	}
	if exists(path(w)) {
		t.Fatal("removal kept the sign-in")
	}
}

// A test call and a model call refused for want of authorization are
// not_sent mcp.auth_required.
func TestCallsNeedSignIn(t *testing.T) {
	w := newAuthWorld(t, time.Minute)
	ctx := context.Background()
	if _, err := w.svc.StartTestCall(ctx, jsapi.McpTestCallIdDto{CallID: "c1"}); err != nil {
		t.Fatal(err)
	}
	o, err := w.svc.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "c1", RegistrationID: w.id, NativeName: "echo", ArgumentsJSON: `{"text":"x"}`})
	if err != nil || o.Outcome != jsapi.OutcomeNotSent || o.Code != gateway.CodeAuthRequired {
		t.Fatalf("test call: %v %+v", err, o)
	}
	if _, err := w.svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: w.id, NativeName: "echo", Permission: jsapi.PermissionAllow}); err != nil {
		t.Fatal(err)
	}
	tool, _ := domain.NewToolID(domain.RegistrationID(w.id), "echo")
	w.svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: "m1"})
	o, err = w.svc.CallLegacyTool(ctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: "m1", ToolID: string(tool), ArgumentsJSON: `{"text":"x"}`})
	if err != nil || o.Outcome != jsapi.OutcomeNotSent || o.Code != gateway.CodeAuthRequired {
		t.Fatalf("model call: %v %+v", err, o)
	}
	w.signedIn()
	if _, err := w.svc.StartTestCall(ctx, jsapi.McpTestCallIdDto{CallID: "c2"}); err != nil {
		t.Fatal(err)
	}
	o, err = w.svc.TestCall(ctx, jsapi.TestMcpToolCallDto{CallID: "c2", RegistrationID: w.id, NativeName: "echo", ArgumentsJSON: `{"text":"x"}`})
	if err != nil || o.Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("test call after sign-in: %v %+v", err, o)
	}
}

// A backend without a callback cannot sign in.
func TestSignInUnavailable(t *testing.T) {
	store := storage.Open(t.TempDir())
	svc := New(Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{Auths: store})})
	srv, _ := svc.Create(context.Background(), jsapi.CreateMcpServerDto{DisplayName: "x", Endpoint: "http://127.0.0.1:9/mcp"})
	if _, err := svc.StartSignIn(context.Background(), jsapi.StartMcpSignInDto{RegistrationID: srv.ID}); domain.CodeOf(err) != CodeSignInUnavailable {
		t.Fatalf("start: %v", err)
	}
	if srv.Auth == nil || srv.Auth.RedirectURI != nil {
		t.Fatalf("auth %+v", srv.Auth)
	}
}

// A sign-in started with WithRedirectURL (a page through SillyTavern's
// plugin) sends the user back there: the authorization URL and the
// started answer name it, and the callback arriving there completes it.
func TestSignInRedirectPerRequest(t *testing.T) {
	w := newAuthWorld(t, time.Minute)
	const via = "https://st.example/api/plugins/ttmcp/oauth/callback"
	st, err := w.svc.StartSignIn(WithRedirectURL(context.Background(), via), jsapi.StartMcpSignInDto{RegistrationID: w.id})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(st.AuthorizationURL)
	if u.Query().Get("redirect_uri") != via || st.RedirectURI != via {
		t.Fatalf("authorization URL %s, redirect %s", st.AuthorizationURL, st.RedirectURI)
	}
	back, err := demo.Approve(context.Background(), st.AuthorizationURL, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(back.String(), via+"?") {
		t.Fatalf("sent back to %s", back)
	}
	if known, err := w.svc.CompleteSignIn(context.Background(), back.Query()); !known || err != nil {
		t.Fatalf("callback: %v %v", known, err)
	}
	// a sign-in without it keeps the backend's own callback
	if st := w.start(); st.RedirectURI != redirect {
		t.Fatalf("default redirect %s", st.RedirectURI)
	}
}

// The list a page whose sign-ins come back elsewhere reads names that
// callback as each server's redirectUri; other pages' lists keep the
// backend's own, and the shared list is not changed.
func TestListRedirectPerRequest(t *testing.T) {
	w := newAuthWorld(t, time.Minute)
	const via = "https://st.example/api/plugins/ttmcp/oauth/callback"
	ctx := WithRedirectURL(context.Background(), via)
	for name, list := range map[string]func() (jsapi.McpServerList, error){
		"List": func() (jsapi.McpServerList, error) { return w.svc.List(ctx) },
		"ListEncoded": func() (jsapi.McpServerList, error) {
			var l jsapi.McpServerList
			b, err := w.svc.ListEncoded(ctx, func(v any) ([]byte, error) { return json.Marshal(v) })
			if err == nil {
				err = json.Unmarshal(b, &l)
			}
			return l, err
		},
	} {
		l, err := list()
		if err != nil || len(l.Servers) != 1 || l.Servers[0].Auth == nil || *l.Servers[0].Auth.RedirectURI != via {
			t.Fatalf("%s: %+v (%v)", name, l, err)
		}
		if a := w.server().Auth; *a.RedirectURI != redirect {
			t.Fatalf("after %s, the backend's own list says %s", name, *a.RedirectURI)
		}
	}
}

// The answers that carry one server (create, update, state, permission,
// description, capabilities, sign-out) name the callback of the page that
// asked, as its list does: a page through SillyTavern never reads the
// backend's loopback callback as the one to register.
func TestServerAnswersRedirectPerRequest(t *testing.T) {
	w := newAuthWorld(t, time.Minute)
	const via = "https://st.example/api/plugins/ttmcp/oauth/callback"
	ctx := WithRedirectURL(context.Background(), via)
	answers := map[string]func(context.Context) (jsapi.McpServer, error){
		"Create": func(ctx context.Context) (jsapi.McpServer, error) {
			return w.svc.Create(ctx, jsapi.CreateMcpServerDto{DisplayName: "Other", Endpoint: w.url})
		},
		"Update": func(ctx context.Context) (jsapi.McpServer, error) {
			return w.svc.Update(ctx, jsapi.UpdateMcpServerDto{RegistrationID: w.id, DisplayName: "Demo", Endpoint: w.url, Headers: map[string]string{}, ProtocolVersion: "auto"})
		},
		"SetState": func(ctx context.Context) (jsapi.McpServer, error) {
			return w.svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: w.id, State: jsapi.StateActive})
		},
		"SignOut": func(ctx context.Context) (jsapi.McpServer, error) {
			return w.svc.SignOut(ctx, jsapi.McpRegistrationIdDto{RegistrationID: w.id})
		},
	}
	for name, answer := range answers {
		for _, c := range []struct {
			ctx  context.Context
			want string
		}{{ctx, via}, {context.Background(), redirect}} {
			srv, err := answer(c.ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if srv.Auth == nil || srv.Auth.RedirectURI == nil || *srv.Auth.RedirectURI != c.want {
				t.Errorf("%s: auth %+v; want redirectUri %s", name, srv.Auth, c.want)
			}
		}
	}
	list, err := w.svc.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range list.Servers {
		if *srv.Auth.RedirectURI != redirect {
			t.Fatalf("afterwards the backend's own list says %s", *srv.Auth.RedirectURI)
		}
	}
}
