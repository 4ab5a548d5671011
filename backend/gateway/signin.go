package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Sign-in: the authorization code flow of MCP's authorization spec, run by
// go-sdk's auth.AuthorizationCodeHandler. It discovers the protected
// resource metadata (from the server's challenge, else the well-known
// paths), then the authorization server's metadata (checking its issuer),
// registers a client dynamically unless the user entered one, sends the
// user to the authorization endpoint with PKCE S256, state and the
// resource parameter, checks the iss of the answer (RFC 9207), and
// exchanges the code. ttmcp asks for refresh tokens (offline_access where
// the server offers it) and keeps what the handler obtained, with the
// client and token endpoint a refresh needs.

// Codes of sign-in failures.
const (
	// CodeAuthFailed: the flow failed (metadata, registration, the
	// authorization server's answer, the token exchange).
	CodeAuthFailed = "mcp.auth_failed"
	// CodeAuthClientRequired: the authorization server offers no dynamic
	// client registration; the user must enter a client id.
	CodeAuthClientRequired = "mcp.auth_client_required"
	// CodeAuthRedirectRefused: the authorization server refused the
	// redirect URI at registration (RFC 7591 invalid_redirect_uri) — most
	// often plain http on a LAN address, which OAuth servers accept only
	// on loopback.
	CodeAuthRedirectRefused = "mcp.auth_redirect_refused"
)

// SignIn runs the authorization code flow for r and keeps the tokens. The
// challenge it starts from is the last one r's server made; without one it
// asks the server (a startup and one tools/list page, without a token).
func (g *Gateway) SignIn(ctx context.Context, r domain.Registration, req domain.SignInRequest) (domain.Auth, error) {
	if req.Authorize == nil || req.RedirectURL == "" {
		return domain.Auth{}, errors.New("gateway: SignIn needs Authorize and RedirectURL")
	}
	before, err := g.auth.load(r)
	if err != nil {
		return domain.Auth{}, err
	}
	ch := before.Challenge
	if ch == nil {
		ch = g.probe(ctx, r)
	}

	var got struct {
		cfg      *oauth2.Config
		tok      *oauth2.Token
		resource string
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: req.RedirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, domain.Errorf(domain.KindUnavailable, CodeAuthFailed, "the authorization endpoint is not an http(s) URL")
			}
			got.resource = u.Query().Get("resource")
			res, err := req.Authorize(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: res.Code, State: res.State, Iss: res.Iss}, nil
		},
		// SEP-2350: a new sign-in (step-up) keeps what was granted before.
		ScopeFilter: func(discovered []string) []string {
			if before.Token == nil {
				return discovered
			}
			return unionScopes(discovered, slices.DeleteFunc(slices.Clone(before.Token.Scopes), func(s string) bool { return s == "offline_access" }))
		},
		RequestRefreshToken: true,
		Client:              g.auth.oauth,
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.tok = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if c := req.Client; c != nil {
		pre := &oauthex.ClientCredentials{ClientID: c.ID}
		if c.Secret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.Secret.Reveal()}
		}
		cfg.PreregisteredClient = pre
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:  []string{req.RedirectURL},
			ClientName:    g.cfg.ClientName,
			GrantTypes:    []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"},
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, CodeAuthFailed, "%v", err)
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Endpoint.String(), nil)
	if err != nil {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, CodeAuthFailed, "%v", err)
	}
	if err := h.Authorize(ctx, httpReq, challengeResponse(ch)); err != nil {
		return domain.Auth{}, signInError(ctx, err, req.RedirectURL)
	}
	if got.tok == nil || got.cfg == nil {
		return domain.Auth{}, domain.Errorf(domain.KindUnavailable, CodeAuthFailed, "the authorization server issued no token")
	}
	tok, err := g.keptToken(got.cfg, got.tok, got.resource, req.Client != nil)
	if err != nil {
		return domain.Auth{}, err
	}

	unlock, err := g.auth.lock(ctx, r.ID)
	if err != nil {
		return domain.Auth{}, err
	}
	defer unlock()
	a := domain.Auth{RegistrationID: r.ID, Endpoint: r.Endpoint, Token: &tok}
	if err := g.auth.save(a); err != nil {
		return domain.Auth{}, err
	}
	g.cfg.Log.Info("signed in to an MCP server", "registration", r.ID, "scopes", strings.Join(tok.Scopes, " "),
		"authorizationServer", hostOf(tok.TokenEndpoint), "refreshable", tok.RefreshToken != "")
	return a, nil
}

// redirectRefused says why the authorization server refused redirect and
// what works instead. Plain http is accepted by OAuth servers only on
// loopback (OAuth 2.1, RFC 8252), so a page opened at a LAN address over
// http has a return address many of them refuse; https (a reverse proxy,
// a tunnel) or a sign-in from the machine itself (its tokens then serve
// the same SillyTavern user on every device) works.
func redirectRefused(redirect, why string) string {
	why = scrub(why)
	if why != "" {
		why = " (" + why + ")"
	}
	u, err := url.Parse(redirect)
	if err == nil && u.Scheme == "http" && !loopbackName(u.Hostname()) {
		return fmt.Sprintf("the authorization server refuses to send you back to %s%s: OAuth servers accept plain http only on localhost. "+
			"Open SillyTavern over https (a reverse proxy or a tunnel) and sign in from there, or sign in once on the machine that runs SillyTavern "+
			"(http://localhost:%s): the sign-in is kept for your SillyTavern user, on every device", redirect, why, cmpPort(u))
	}
	return fmt.Sprintf("the authorization server refused the redirect URI %s%s", redirect, why)
}

// loopbackName: "localhost" or a loopback address.
func loopbackName(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
}

// cmpPort is u's port, or its scheme's default.
func cmpPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// probe asks r's server what it wants: a startup and one tools/list page
// (many servers let startup through and refuse the listing), whose
// refusal is recorded. It returns the challenge, or nil when the server
// refused nothing (the handler then looks at the well-known paths).
func (g *Gateway) probe(ctx context.Context, r domain.Registration) *domain.Challenge {
	s, err := g.open(ctx, r, sessionOptions{}) // its own: a probe is no operation of the live connection
	if err == nil {
		lctx, cancel := context.WithTimeout(ctx, g.cfg.ListTimeout)
		s.cs.ListTools(lctx, &mcp.ListToolsParams{})
		cancel()
		g.authFailure(r, s.tr)
		s.close()
	}
	a, _ := g.auth.load(r)
	return a.Challenge
}

// challengeResponse is the refused response the handler starts from: the
// server's challenge as received. Its status is 401 unless the server
// asked for more scopes (the handler acts on a 403 only for
// insufficient_scope).
func challengeResponse(ch *domain.Challenge) *http.Response {
	resp := &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}
	if ch == nil {
		return resp
	}
	if ch.InsufficientScope() {
		resp.StatusCode = http.StatusForbidden
	}
	for _, v := range ch.Header {
		resp.Header.Add("WWW-Authenticate", v)
	}
	return resp
}

// keptToken turns what the handler obtained into what ttmcp keeps.
func (g *Gateway) keptToken(c *oauth2.Config, t *oauth2.Token, resource string, manual bool) (domain.Token, error) {
	if tt := t.TokenType; tt != "" && !strings.EqualFold(tt, "bearer") {
		return domain.Token{}, domain.Errorf(domain.KindUnavailable, CodeAuthFailed,
			"the authorization server issued a %q token; ttmcp sends only Bearer tokens", clean(tt))
	}
	if t.AccessToken == "" {
		return domain.Token{}, domain.Errorf(domain.KindUnavailable, CodeAuthFailed, "the authorization server issued no access token")
	}
	now := g.auth.now()
	tok := domain.Token{
		AccessToken: domain.Secret(t.AccessToken), RefreshToken: domain.Secret(t.RefreshToken),
		Scopes: slices.Clone(c.Scopes), TokenEndpoint: c.Endpoint.TokenURL, Resource: resource,
		Client:     domain.OAuthClient{ID: c.ClientID, Secret: domain.Secret(c.ClientSecret), AuthMethod: authMethod(c), Registration: domain.ClientDynamic},
		SignedInAt: now,
	}
	if manual {
		tok.Client.Registration = domain.ClientManual
	}
	if s, ok := t.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		tok.Scopes = strings.Fields(s)
	}
	if tok.Scopes == nil {
		tok.Scopes = []string{}
	}
	switch {
	case t.ExpiresIn > 0:
		tok.ExpiresAt = now.Add(time.Duration(t.ExpiresIn) * time.Second)
	case !t.Expiry.IsZero():
		tok.ExpiresAt = now.Add(time.Until(t.Expiry))
	}
	return tok, nil
}

// authMethod names how the client authenticates at the token endpoint, as
// the handler chose it.
func authMethod(c *oauth2.Config) string {
	switch {
	case c.ClientSecret == "":
		return domain.AuthMethodNone
	case c.Endpoint.AuthStyle == oauth2.AuthStyleInParams:
		return domain.AuthMethodPost
	}
	return domain.AuthMethodBasic // in the header, or undecided: RFC 7591's default
}

// signInError words a failed flow. Errors of Authorize (ours: denied,
// cancelled, expired) are kept as they are.
func signInError(ctx context.Context, err error, redirect string) error {
	var de *domain.Error
	var refused *oauthex.ClientRegistrationError
	switch {
	case errors.As(err, &de):
		return de
	case ctx.Err() != nil:
		return cancelled(ctx)
	case errors.As(err, &refused) && refused.ErrorCode == "invalid_redirect_uri":
		return domain.Errorf(domain.KindUnavailable, CodeAuthRedirectRefused, "%s", redirectRefused(redirect, refused.ErrorDescription))
	case strings.Contains(err.Error(), "no configured client registration methods are supported"):
		return domain.Errorf(domain.KindUnavailable, CodeAuthClientRequired,
			"the authorization server offers no dynamic client registration; register a client for the redirect URI %s and enter its client ID", redirect)
	}
	return &domain.Error{Kind: domain.KindUnavailable, Code: CodeAuthFailed, Detail: fmt.Sprintf("sign-in failed: %s", scrub(err.Error())), Err: err}
}
