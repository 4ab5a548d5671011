package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Authorization (MCP's OAuth 2.1 profile), the gateway's side of it:
//
//   - Detect, never loop. A request refused for want of authorization (any
//     401; a 403 with a Bearer challenge) fails the operation that sent it
//     with mcp.auth_required, naming what the server asked for. go-sdk's
//     OAuthHandler is never installed: it would re-send the request after
//     running a flow, and a tools/call must never be sent twice. Nothing
//     here starts an interactive flow: only SignIn does (signin.go), and
//     only the user starts that.
//   - Tokens stay here. The access token of a signed-in registration goes
//     into the Authorization header of every request of its sessions; an
//     expired one is refreshed first (refresh.go). Tokens are kept per
//     registration by Auths (the storage's auth file kind) and bound to the
//     endpoint they were obtained for.
//
// Every change of a registration's Auth (a refusal, a refresh, a sign-in,
// a sign-out) runs under that registration's auth lock, so a refresh that
// finishes after a sign-out cannot bring the tokens back, and two
// operations that find the token expired refresh it once.

// Codes of authorization failures.
const (
	// CodeAuthRequired: the server refused a request for want of
	// authorization, or the sign-in cannot be used any more (its refresh
	// was refused). Signing in (again) is the remedy.
	CodeAuthRequired = "mcp.auth_required"
	// CodeAuthRefreshFailed: the authorization server could not be reached
	// to refresh an expired access token; the sign-in is kept.
	CodeAuthRefreshFailed = "mcp.auth_refresh_failed"
	// CodeAuthUnavailable: the backend cannot read or keep authorization
	// state (the auth file).
	CodeAuthUnavailable = "mcp.auth_unavailable"
)

// Auths keeps each registration's authorization; storage.Store implements
// it. LoadAuth reports false when nothing is kept for id at endpoint.
type Auths interface {
	LoadAuth(id domain.RegistrationID, endpoint domain.Endpoint) (domain.Auth, bool, error)
	SaveAuth(a domain.Auth) error
	DeleteAuth(id domain.RegistrationID) error
}

// keeper owns the registrations' Auths: it is the only writer.
type keeper struct {
	store Auths // nil: nothing is kept (no token is ever sent)
	now   func() time.Time
	oauth *http.Client // metadata, registration and token requests
	log   interface {
		Info(string, ...any)
		Warn(string, ...any)
	}
	refreshTimeout time.Duration

	mu    sync.Mutex
	locks map[domain.RegistrationID]chan struct{}
	// gen counts the changes of kept auth states (after each write).
	gen atomic.Uint64
}

// lock takes id's auth lock, or fails when ctx ends first.
func (k *keeper) lock(ctx context.Context, id domain.RegistrationID) (func(), error) {
	k.mu.Lock()
	l, ok := k.locks[id]
	if !ok {
		l = make(chan struct{}, 1)
		k.locks[id] = l
	}
	k.mu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, cancelled(ctx)
	}
}

// load returns what is kept for r (the zero Auth of r when nothing).
func (k *keeper) load(r domain.Registration) (domain.Auth, error) {
	zero := domain.Auth{RegistrationID: r.ID, Endpoint: r.Endpoint}
	if k.store == nil {
		return zero, nil
	}
	a, ok, err := k.store.LoadAuth(r.ID, r.Endpoint)
	if err != nil {
		return zero, &domain.Error{Kind: domain.KindInternal, Code: CodeAuthUnavailable,
			Detail: "the authorization state of this server cannot be read: " + err.Error(), Err: err}
	}
	if !ok {
		return zero, nil
	}
	return a, nil
}

func (k *keeper) save(a domain.Auth) error {
	if k.store == nil {
		return nil
	}
	defer k.gen.Add(1)
	if err := k.store.SaveAuth(a); err != nil {
		return &domain.Error{Kind: domain.KindInternal, Code: CodeAuthUnavailable,
			Detail: "the authorization state of this server cannot be saved: " + err.Error(), Err: err}
	}
	return nil
}

// bearer returns the access token to send to r's server ("" when not
// signed in), refreshing an expired one first.
func (k *keeper) bearer(ctx context.Context, r domain.Registration) (domain.Secret, error) {
	a, err := k.load(r)
	if err != nil || a.Token == nil {
		return "", err
	}
	if !a.Token.Expired(k.now(), refreshSkew(*a.Token)) {
		return a.Token.AccessToken, nil
	}
	if a.Token.RefreshToken == "" {
		// Expired and nothing to refresh it with: send it anyway; the
		// server decides (a clock may be off), and a refusal says
		// mcp.auth_required.
		return a.Token.AccessToken, nil
	}
	return k.refreshFor(ctx, r)
}

// refreshSkew is how long before its expiry an access token is refreshed:
// 10 s, or a quarter of its lifetime when that is shorter (the demo's
// tokens live seconds in tests).
func refreshSkew(t domain.Token) time.Duration {
	skew := 10 * time.Second
	issued := t.SignedInAt
	if !t.RefreshedAt.IsZero() {
		issued = t.RefreshedAt
	}
	if life := t.ExpiresAt.Sub(issued); !t.ExpiresAt.IsZero() && life > 0 && life/4 < skew {
		skew = life / 4
	}
	return skew
}

// refreshFor refreshes r's access token under its auth lock, unless
// another operation did so meanwhile. The exchange runs detached from ctx
// (bounded by refreshTimeout): an authorization server that rotates
// refresh tokens has invalidated the old one once it answers, so the
// answer must be kept even when the caller has gone.
func (k *keeper) refreshFor(ctx context.Context, r domain.Registration) (domain.Secret, error) {
	type result struct {
		tok domain.Secret
		err error
	}
	done := make(chan result, 1)
	go func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.refreshTimeout)
		defer cancel()
		tok, err := k.refreshLocked(rctx, r)
		done <- result{tok, err}
	}()
	select {
	case res := <-done:
		return res.tok, res.err
	case <-ctx.Done():
		return "", cancelled(ctx)
	}
}

func (k *keeper) refreshLocked(ctx context.Context, r domain.Registration) (domain.Secret, error) {
	unlock, err := k.lock(ctx, r.ID)
	if err != nil {
		return "", err
	}
	defer unlock()
	a, err := k.load(r)
	if err != nil || a.Token == nil {
		return "", err
	}
	if !a.Token.Expired(k.now(), refreshSkew(*a.Token)) {
		return a.Token.AccessToken, nil // refreshed by another operation
	}
	next, err := k.refresh(ctx, *a.Token, r.Endpoint)
	var refused *refreshRefused
	switch {
	case errors.As(err, &refused):
		// The sign-in is over: drop it and say so, as the server would.
		a.Token = nil
		a.Challenge = &domain.Challenge{Status: http.StatusUnauthorized, Error: "invalid_token",
			Description: "the authorization server refused the refresh token (" + refused.code + ")", At: k.now()}
		if err := k.save(a); err != nil {
			return "", err
		}
		k.log.Info("MCP sign-in ended: the refresh token was refused", "registration", r.ID, "error", refused.code)
		return "", domain.Errorf(domain.KindUnavailable, CodeAuthRequired,
			"the sign-in to this server has expired: the authorization server refused to refresh it (%s); sign in again", refused.describe())
	case err != nil:
		return "", &domain.Error{Kind: domain.KindUnavailable, Code: CodeAuthRefreshFailed,
			Detail: "the access token expired and could not be refreshed: " + scrub(err.Error()) + "; try again later or sign in again", Err: err}
	}
	a.Token = &next
	if err := k.save(a); err != nil {
		return "", err
	}
	return next.AccessToken, nil
}

// refused records that r's server refused a request that carried sent
// (maybe ""), and returns the operation's error. A refused access token
// is dropped (a refresh token, if any, is kept: the next operation
// refreshes first); an insufficient_scope refusal keeps the token, which
// is good for what it was granted.
func (k *keeper) refused(r domain.Registration, sent domain.Secret, ch domain.Challenge) error {
	failure := authRequired(ch, sent != "")
	ctx, cancel := context.WithTimeout(context.Background(), k.refreshTimeout)
	defer cancel()
	unlock, err := k.lock(ctx, r.ID)
	if err != nil {
		return failure
	}
	defer unlock()
	a, err := k.load(r)
	if err != nil {
		k.log.Warn("cannot record an MCP authorization refusal", "registration", r.ID, "err", err)
		return failure
	}
	a.Challenge = &ch
	if t := a.Token; t != nil && sent != "" && t.AccessToken == sent && !ch.InsufficientScope() {
		t.AccessToken = ""
		if t.RefreshToken == "" {
			a.Token = nil
		}
	}
	if err := k.save(a); err != nil {
		k.log.Warn("cannot record an MCP authorization refusal", "registration", r.ID, "err", err)
	}
	return failure
}

// authRequired is the error of an operation refused for want of
// authorization, naming what the server said.
func authRequired(ch domain.Challenge, withToken bool) error {
	var said []string
	said = append(said, fmt.Sprintf("HTTP %d", ch.Status))
	if ch.Error != "" {
		e := ch.Error
		if ch.Description != "" {
			e += ": " + ch.Description
		}
		said = append(said, e)
	}
	if len(ch.Scopes) > 0 {
		said = append(said, "scopes: "+strings.Join(ch.Scopes, " "))
	}
	remedy := "sign in to this server"
	switch {
	case ch.InsufficientScope():
		remedy = "sign in again to grant the scopes it names"
	case withToken:
		remedy = "the next request refreshes the sign-in if it can; otherwise sign in again"
	}
	return domain.Errorf(domain.KindUnavailable, CodeAuthRequired,
		"the server requires authorization (%s); %s", strings.Join(said, ", "), remedy)
}

// Bounds on what a challenge keeps: it is the server's text, shown to the
// user and kept in the auth file.
const (
	maxChallengeValues = 4
	maxChallengeValue  = 2048
	maxChallengeText   = 300
)

// challengeOf reads an authorization refusal from a response: any 401 (RFC
// 9110: the request has not been applied for want of valid credentials),
// or a 403 with a Bearer challenge (RFC 6750 §3.1: insufficient_scope and
// the like). A 403 without one is some other refusal.
func challengeOf(resp *http.Response, now func() time.Time) (domain.Challenge, bool) {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return domain.Challenge{}, false
	}
	values := resp.Header.Values("WWW-Authenticate")
	ch := domain.Challenge{Status: resp.StatusCode, Scopes: []string{}, Header: []string{}, At: now()}
	for i, v := range values {
		if i == maxChallengeValues {
			break
		}
		if len(v) > maxChallengeValue {
			continue // cut, it would no longer parse
		}
		ch.Header = append(ch.Header, v)
	}
	parsed, _ := oauthex.ParseWWWAuthenticate(ch.Header)
	bearer := false
	for _, c := range parsed {
		if c.Scheme != "bearer" {
			continue
		}
		bearer = true
		ch.Error = clean(c.Params["error"])
		ch.Description = clean(c.Params["error_description"])
		ch.ResourceMetadata = clean(c.Params["resource_metadata"])
		ch.Scopes = strings.Fields(clean(c.Params["scope"]))
		break
	}
	if resp.StatusCode == http.StatusForbidden && !bearer {
		return domain.Challenge{}, false
	}
	return ch, true
}

// clean keeps a server's string printable and short.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, s)
	if len(s) > maxChallengeText {
		s = strings.ToValidUTF8(s[:maxChallengeText], "") + "…"
	}
	return s
}

// secretParams matches credentials in the text of an OAuth error (a token
// or registration response quoted by go-sdk or x/oauth2): JSON members and
// form values.
var secretParams = regexp.MustCompile(`(?i)("?(?:access_token|refresh_token|id_token|client_secret|code_verifier|code)"?\s*[:=]\s*"?)([^"&,\s}]+)`)

// scrub removes credentials from an error text and bounds it.
func scrub(s string) string {
	s = secretParams.ReplaceAllString(s, "${1}[redacted]")
	if len(s) > 600 {
		s = strings.ToValidUTF8(s[:600], "") + "…"
	}
	return s
}

// refusal is a refused request seen by a session's transport.
type refusal struct {
	method string // the JSON-RPC method of the refused request; "" for a GET or DELETE
	ch     domain.Challenge
}

// authFailure returns the operation's error when the session's server
// refused a request for want of authorization, and records the refusal.
func (g *Gateway) authFailure(r domain.Registration, tr *transport) (error, bool) {
	ref := tr.refused.Load()
	if ref == nil {
		return nil, false
	}
	return g.auth.refused(r, tr.sentBearer(), ref.ch), true
}

// AuthState returns what is kept of r's authorization (the zero Auth of r
// when nothing). It never refreshes.
func (g *Gateway) AuthState(r domain.Registration) (domain.Auth, error) {
	return g.auth.load(r)
}

// SignOut forgets r's sign-in and challenge. It waits for a refresh in
// progress, so the tokens it saves are deleted too.
func (g *Gateway) SignOut(ctx context.Context, id domain.RegistrationID) error {
	unlock, err := g.auth.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if g.auth.store == nil {
		return nil
	}
	defer g.auth.gen.Add(1)
	if err := g.auth.store.DeleteAuth(id); err != nil {
		return &domain.Error{Kind: domain.KindInternal, Code: CodeAuthUnavailable, Detail: "the sign-in cannot be deleted: " + err.Error(), Err: err}
	}
	return nil
}

// AuthGeneration changes after every change of a kept auth state made
// through the gateway (which is the only writer of the auth files).
func (g *Gateway) AuthGeneration() uint64 { return g.auth.gen.Load() }

// unionScopes returns a followed by the scopes of b it lacks.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// oauthClient is the HTTP client of metadata, registration and token
// requests over base (the HTTP profile of the MCP sessions: connect
// timeout, proxy, TLS settings), refusing redirects as the MCP client
// does: a token request is never re-sent elsewhere (go-sdk's discovery
// uses this client's redirect policy too). Response sizes are bounded by
// go-sdk, x/oauth2 and refresh.go, 1 MiB each.
func oauthClient(base http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: base,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("redirect to %s refused", req.URL.Redacted())
		},
	}
}
