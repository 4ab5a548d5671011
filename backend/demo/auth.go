package demo

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The demo authorization server: `ttmcp demo-server --auth` puts the demo
// MCP server behind it, so the whole MCP authorization flow can be tried
// by hand and tested end to end. It is small but not a toy: protected
// resource metadata (RFC 9728), authorization server metadata (RFC 8414)
// with the iss response parameter (RFC 9207), dynamic client registration
// (RFC 7591), an approval page, the authorization code grant with PKCE
// S256 only and the resource indicator (RFC 8707) checked, refresh tokens
// that rotate, revocation (RFC 7009), and short-lived access tokens so
// that refreshing is exercised within minutes. Everything is in memory.
//
//	/mcp                                        the demo MCP server, Bearer tokens only
//	/.well-known/oauth-protected-resource[/mcp] protected resource metadata
//	/.well-known/oauth-authorization-server     authorization server metadata
//	/register /authorize /token /revoke         the authorization server
//	/                                           what was issued, and "revoke every token"

// Scope is the scope the demo MCP server requires.
const Scope = "demo:tools"

// AuthOptions configure an AuthServer; zero values take the defaults.
type AuthOptions struct {
	// Issuer is the server's base URL ("http://127.0.0.1:7879"); empty:
	// taken from each request's Host.
	Issuer string
	// TokenTTL is the lifetime of an access token (default 2 minutes).
	TokenTTL time.Duration
	// Now is the clock (tests move it); default time.Now.
	Now func() time.Time
	// AutoApprove skips the approval page: an authorization request is
	// approved at once, as the conformance suite's servers do (scripted
	// runs and tests of headless clients).
	AutoApprove bool
}

// AuthServer is the demo authorization server and the protected demo MCP
// server behind it.
type AuthServer struct {
	opts AuthOptions
	mcp  http.Handler

	mu       sync.Mutex
	clients  map[string]*client
	pending  map[string]*authRequest // approval page requests, by id
	codes    map[string]*grant       // authorization codes
	access   map[string]*grant       // access tokens
	refresh  map[string]*grant       // refresh tokens
	issued   []string                // every code, token and secret handed out, for tests
	requests map[string]int          // token requests by grant type, for tests
}

type client struct {
	ID, Secret, Name, AuthMethod string
	RedirectURIs                 []string
	Registered                   time.Time
}

// authRequest is an authorization request waiting on the approval page.
type authRequest struct {
	client                                  *client
	redirectURI, state, challenge, resource string
	scopes                                  []string
	expires                                 time.Time
}

// grant is what a code, an access token or a refresh token stands for.
type grant struct {
	client      *client
	scopes      []string
	resource    string
	redirectURI string
	challenge   string // codes only
	expires     time.Time
}

// NewAuthServer returns the demo authorization server with the demo MCP
// server behind it.
func NewAuthServer(opts AuthOptions) *AuthServer {
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = 2 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &AuthServer{
		opts: opts, mcp: Handler(),
		clients: map[string]*client{}, pending: map[string]*authRequest{},
		codes: map[string]*grant{}, access: map[string]*grant{}, refresh: map[string]*grant{},
		requests: map[string]int{},
	}
}

// Handler serves the protected MCP server and the authorization server.
func (a *AuthServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.protect(a.mcp))
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", a.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", a.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.serverMetadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /authorize", a.decide)
	mux.HandleFunc("POST /token", a.token)
	mux.HandleFunc("POST /revoke", a.revoke)
	mux.HandleFunc("POST /revoke-all", func(w http.ResponseWriter, r *http.Request) {
		a.RevokeAll()
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /{$}", a.status)
	return mux
}

// RevokeAll invalidates every access and refresh token issued so far.
func (a *AuthServer) RevokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
	clear(a.refresh)
}

// Issued returns every authorization code, access token, refresh token and
// client secret the server has handed out (tests check that none leaks).
func (a *AuthServer) Issued() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.issued)
}

// Redact returns s with every credential the server has handed out
// replaced by "[credential]", so a test that found one can show where
// without printing it.
func (a *AuthServer) Redact(s string) string {
	for _, c := range a.Issued() {
		s = strings.ReplaceAll(s, c, "[credential]")
	}
	return s
}

// TokenRequests returns how many token requests of grantType
// ("authorization_code", "refresh_token") were answered with a token.
func (a *AuthServer) TokenRequests(grantType string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[grantType]
}

func (a *AuthServer) issuer(r *http.Request) string {
	if a.opts.Issuer != "" {
		return strings.TrimSuffix(a.opts.Issuer, "/")
	}
	return "http://" + r.Host
}

func (a *AuthServer) resource(r *http.Request) string { return a.issuer(r) + "/mcp" }

// protect lets through requests with a valid access token for this
// resource and answers the others 401 with the challenge that leads a
// client to the metadata (RFC 6750 §3, RFC 9728 §5.1).
func (a *AuthServer) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="%s"`, a.issuer(r), Scope)
		auth := r.Header.Get("Authorization")
		if auth == "" {
			w.Header().Set("WWW-Authenticate", challenge)
			oauthError(w, http.StatusUnauthorized, "invalid_request", "this MCP server requires a Bearer token")
			return
		}
		scheme, tok, _ := strings.Cut(auth, " ")
		a.mu.Lock()
		g, ok := a.access[tok]
		valid := ok && strings.EqualFold(scheme, "bearer") && a.opts.Now().Before(g.expires) && g.resource == a.resource(r)
		a.mu.Unlock()
		if !valid {
			w.Header().Set("WWW-Authenticate", challenge+`, error="invalid_token", error_description="the access token is unknown, revoked or expired"`)
			oauthError(w, http.StatusUnauthorized, "invalid_token", "the access token is unknown, revoked or expired")
			return
		}
		if !slices.Contains(g.scopes, Scope) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, Scope, a.issuer(r)))
			oauthError(w, http.StatusForbidden, "insufficient_scope", "the token lacks "+Scope)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *AuthServer) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	resource := a.resource(r)
	if r.URL.Path == "/.well-known/oauth-protected-resource" {
		resource = a.issuer(r)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{a.issuer(r)},
		"scopes_supported":         []string{Scope},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "ttmcp demo",
	})
}

func (a *AuthServer) serverMetadata(w http.ResponseWriter, r *http.Request) {
	iss := a.issuer(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"registration_endpoint":                          iss + "/register",
		"revocation_endpoint":                            iss + "/revoke",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"scopes_supported":                               []string{Scope, "offline_access"},
		"authorization_response_iss_parameter_supported": true,
	})
}

// register is dynamic client registration (RFC 7591): redirect URIs must
// be https or loopback http; the token endpoint auth method defaults to
// client_secret_basic, as the RFC says.
func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not client metadata: "+err.Error())
		return
	}
	if len(req.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required")
		return
	}
	for _, u := range req.RedirectURIs {
		if !redirectAllowed(u) {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect URIs must be https or loopback http: "+u)
			return
		}
	}
	if req.AuthMethod == "" {
		req.AuthMethod = "client_secret_basic"
	}
	if req.AuthMethod != "none" && req.AuthMethod != "client_secret_basic" && req.AuthMethod != "client_secret_post" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unsupported token_endpoint_auth_method "+req.AuthMethod)
		return
	}
	if req.ClientName == "" {
		req.ClientName = "(unnamed client)"
	}
	c := &client{ID: "client-" + randomText(), Name: req.ClientName, AuthMethod: req.AuthMethod,
		RedirectURIs: req.RedirectURIs, Registered: a.opts.Now()}
	if req.AuthMethod != "none" {
		c.Secret = "dcs_" + randomText()
	}
	a.mu.Lock()
	a.clients[c.ID] = c
	if c.Secret != "" {
		a.issued = append(a.issued, c.Secret)
	}
	a.mu.Unlock()
	out := map[string]any{
		"client_id": c.ID, "client_id_issued_at": c.Registered.Unix(), "client_name": c.Name,
		"redirect_uris": c.RedirectURIs, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": c.AuthMethod,
	}
	if c.Secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = c.Secret, 0
	}
	writeJSON(w, http.StatusCreated, out)
}

func redirectAllowed(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Fragment != "" || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "::1" || h == "localhost"
	}
	return false
}

var approvalPage = template.Must(template.New("approve").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ttmcp demo — sign in</title>
<style>body{font:16px system-ui,sans-serif;max-width:34em;margin:3em auto;padding:0 1em}button{font-size:1em;padding:.5em 1.5em;margin-right:1em}code{background:#eee;padding:0 .2em}</style></head>
<body><h1>ttmcp demo authorization server</h1>
<p><strong>{{.Client}}</strong> asks to use the demo MCP server <code>{{.Resource}}</code> with the scopes <code>{{.Scopes}}</code>.</p>
<p>After you answer, this window returns to <code>{{.Redirect}}</code>.</p>
<form method="post" action="/authorize"><input type="hidden" name="request" value="{{.ID}}">
<button id="approve" name="decision" value="approve">Approve</button><button id="deny" name="decision" value="deny">Deny</button></form>
</body></html>`))

// authorize checks an authorization request and shows the approval page.
// Errors about the client or its redirect URI are shown here (the URI
// cannot be trusted); the others go back to the client (RFC 6749 §4.1.2.1).
func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	c := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	if c == nil {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.RedirectURIs, redirect) {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		params.Set("iss", a.issuer(r))
		if s := q.Get("state"); s != "" {
			params.Set("state", s)
		}
		http.Redirect(w, r, withQuery(redirect, params), http.StatusSeeOther)
	}
	fail := func(code, desc string) { back(url.Values{"error": {code}, "error_description": {desc}}) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only the authorization code flow is supported")
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE with S256 is required")
		return
	case q.Get("resource") != a.resource(r):
		fail("invalid_target", "resource must be "+a.resource(r))
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if len(scopes) == 0 {
		scopes = []string{Scope}
	}
	for _, s := range scopes {
		if s != Scope && s != "offline_access" {
			fail("invalid_scope", "unknown scope "+s)
			return
		}
	}
	req := &authRequest{client: c, redirectURI: redirect, state: q.Get("state"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: scopes, expires: a.opts.Now().Add(10 * time.Minute)}
	id := randomText()
	a.mu.Lock()
	a.pending[id] = req
	a.mu.Unlock()
	if a.opts.AutoApprove {
		a.answer(w, r, id, true)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Type", "text/html; charset=utf-8")
	approvalPage.Execute(w, map[string]string{"Client": c.Name, "Resource": req.resource, "Scopes": strings.Join(scopes, " "),
		"Redirect": redirect, "ID": id})
}

// decide answers the approval page: a code, or access_denied.
func (a *AuthServer) decide(w http.ResponseWriter, r *http.Request) {
	a.answer(w, r, r.PostFormValue("request"), r.PostFormValue("decision") == "approve")
}

// answer sends the user back with a code or access_denied.
func (a *AuthServer) answer(w http.ResponseWriter, r *http.Request, id string, approved bool) {
	a.mu.Lock()
	req := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if req == nil || a.opts.Now().After(req.expires) {
		http.Error(w, "this authorization request is unknown or has expired; start again from the application", http.StatusBadRequest)
		return
	}
	params := url.Values{"iss": {a.issuer(r)}}
	if req.state != "" {
		params.Set("state", req.state)
	}
	if !approved {
		params.Set("error", "access_denied")
		params.Set("error_description", "the user denied the request")
	} else {
		code := "dac_" + randomText()
		a.mu.Lock()
		a.codes[code] = &grant{client: req.client, scopes: req.scopes, resource: req.resource, redirectURI: req.redirectURI,
			challenge: req.challenge, expires: a.opts.Now().Add(time.Minute)}
		a.issued = append(a.issued, code)
		a.mu.Unlock()
		params.Set("code", code)
	}
	http.Redirect(w, r, withQuery(req.redirectURI, params), http.StatusSeeOther)
}

// token is the token endpoint: authorization_code (PKCE S256, the same
// redirect URI and resource) and refresh_token (rotated on every use).
func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	c, ok := a.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="ttmcp demo"`)
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	grantType := r.PostForm.Get("grant_type")
	now := a.opts.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	var g *grant
	switch grantType {
	case "authorization_code":
		code := r.PostForm.Get("code")
		g = a.codes[code]
		delete(a.codes, code) // single use
		switch {
		case g == nil || g.client != c || now.After(g.expires):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used, expired or not this client's")
			return
		case r.PostForm.Get("redirect_uri") != g.redirectURI:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		case !pkceMatches(r.PostForm.Get("code_verifier"), g.challenge):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code challenge")
			return
		case r.PostForm.Get("resource") != g.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		g = a.refresh[rt]
		if g == nil || g.client != c {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, revoked or not this client's")
			return
		}
		if res := r.PostForm.Get("resource"); res != "" && res != g.resource {
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the grant's")
			return
		}
		delete(a.refresh, rt) // rotation: a refresh token is used once
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "unsupported grant_type "+grantType)
		return
	}
	access := "dat_" + randomText()
	a.access[access] = &grant{client: c, scopes: g.scopes, resource: g.resource, expires: now.Add(a.opts.TokenTTL)}
	a.issued = append(a.issued, access)
	out := map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(a.opts.TokenTTL / time.Second), "scope": strings.Join(g.scopes, " ")}
	if slices.Contains(g.scopes, "offline_access") {
		rt := "drt_" + randomText()
		a.refresh[rt] = &grant{client: c, scopes: g.scopes, resource: g.resource}
		a.issued = append(a.issued, rt)
		out["refresh_token"] = rt
	}
	a.requests[grantType]++
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// authenticate finds the client of a token or revocation request by its
// registered method.
func (a *AuthServer) authenticate(r *http.Request) (*client, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	a.mu.Lock()
	c := a.clients[id]
	a.mu.Unlock()
	if c == nil {
		return nil, false
	}
	switch c.AuthMethod {
	case "none":
		return c, !basic && secret == ""
	case "client_secret_basic":
		return c, basic && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) == 1
	default:
		return c, !basic && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) == 1
	}
}

// revoke is token revocation (RFC 7009): an unknown token is not an error.
func (a *AuthServer) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	if _, ok := a.authenticate(r); !ok {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	tok := r.PostForm.Get("token")
	a.mu.Lock()
	delete(a.access, tok)
	delete(a.refresh, tok)
	a.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

var statusPage = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ttmcp demo authorization server</title>
<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}td,th{padding:.2em .8em;text-align:left}</style></head>
<body><h1>ttmcp demo authorization server</h1>
<p>Register <code>{{.Resource}}</code> in ttmcp; it asks you to sign in. Access tokens live {{.TTL}}.</p>
<table><tr><th>Client</th><th>Registered</th></tr>{{range .Clients}}<tr><td>{{.Name}}</td><td>{{.Registered.Format "15:04:05"}}</td></tr>{{end}}</table>
<p>{{.Access}} access token(s) and {{.Refresh}} refresh token(s) are valid.</p>
<form method="post" action="/revoke-all"><button>Revoke every token</button></form>
</body></html>`))

// status shows what was issued (never the tokens themselves).
func (a *AuthServer) status(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	clients := make([]client, 0, len(a.clients))
	for _, c := range a.clients {
		clients = append(clients, *c)
	}
	live := 0
	for _, g := range a.access {
		if a.opts.Now().Before(g.expires) {
			live++
		}
	}
	data := map[string]any{"Resource": a.resource(r), "TTL": a.opts.TokenTTL.String(), "Clients": clients,
		"Access": live, "Refresh": len(a.refresh)}
	a.mu.Unlock()
	slices.SortFunc(clients, func(x, y client) int { return x.Registered.Compare(y.Registered) })
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	statusPage.Execute(w, data)
}

func pkceMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

func withQuery(raw string, params url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // maps of strings, numbers and lists
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func randomText() string { return strings.ToLower(rand.Text()) }
