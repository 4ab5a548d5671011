package service

import (
	"context"
	"crypto/rand"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Sign-in (SPEC §10), the use cases: the page starts a sign-in for a
// registration, opens the authorization URL in a window it opened for the
// user's click, and waits; the authorization server sends the user back to
// the backend's loopback callback (/oauth/callback), which hands the
// answer to the pending sign-in its state names. A pending sign-in is
// bound to one registration and one state, answers once, and expires
// after SignInTimeout (10 minutes): whatever arrives later finds nothing.
// The flow itself (discovery, registration, PKCE, the token exchange) is
// the gateway's; tokens never leave the backend.

// Codes of the sign-in use cases.
const (
	// CodeSignInUnavailable: this backend has no callback to sign in with.
	CodeSignInUnavailable = "mcp.auth_sign_in_unavailable"
	// CodeSignInNotFound: no pending sign-in has this id (finished and
	// collected, expired, or never started).
	CodeSignInNotFound = "mcp.auth_sign_in_not_found"
	// CodeAuthDenied: the user (or the authorization server) refused.
	CodeAuthDenied = "mcp.auth_denied"
	// CodeAuthCancelled: the page cancelled the sign-in, a newer one for
	// the same server replaced it, or the server was removed or changed.
	CodeAuthCancelled = "mcp.auth_cancelled"
	// CodeAuthExpired: the user did not finish within SignInTimeout.
	CodeAuthExpired = "mcp.auth_expired"
	// CodeAuthFailed: the authorization server answered with an error.
	CodeAuthFailed = "mcp.auth_failed"
)

// keepFinished is how long a finished sign-in waits for its page to
// collect the result.
const keepFinished = time.Minute

// signIns are the pending sign-ins, by id, by state and by registration.
type signIns struct {
	mu      sync.Mutex
	byID    map[string]*signIn
	byState map[string]*signIn
	byReg   map[domain.RegistrationID]*signIn
}

type signIn struct {
	id      string
	reg     domain.RegistrationID
	expires time.Time
	cancel  context.CancelCauseFunc

	ready chan struct{} // closed once url is set
	url   string
	state string
	// answer receives what came back to the callback (one value).
	answer chan url.Values

	done chan struct{} // closed once auth and err are set
	auth domain.Auth
	err  error
}

func newSignIns() *signIns {
	return &signIns{byID: map[string]*signIn{}, byState: map[string]*signIn{}, byReg: map[domain.RegistrationID]*signIn{}}
}

// cancelFor cancels the pending sign-in of id, if any.
func (s *signIns) cancelFor(id domain.RegistrationID, why string) {
	s.mu.Lock()
	p := s.byReg[id]
	s.mu.Unlock()
	if p != nil {
		p.cancel(domain.Errorf(domain.KindConflict, CodeAuthCancelled, "%s", why))
	}
}

// forget removes p once its result was collected or has waited long
// enough.
func (s *signIns) forget(p *signIn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[p.id] == p {
		delete(s.byID, p.id)
	}
	if s.byState[p.state] == p {
		delete(s.byState, p.state)
	}
	if s.byReg[p.reg] == p {
		delete(s.byReg, p.reg)
	}
}

type redirectKey struct{}

// WithRedirectURL returns ctx carrying the sign-in callback through which
// the calling page reaches the backend: a page that comes through
// SillyTavern's server plugin is sent back by the authorization server to
// SillyTavern's origin (its origin + the plugin's prefix +
// /oauth/callback), not to the backend's loopback address, which is
// another machine's for a phone. Without it, Config.RedirectURL.
func WithRedirectURL(ctx context.Context, u string) context.Context {
	return context.WithValue(ctx, redirectKey{}, u)
}

// redirectFor is the sign-in callback of a sign-in started in ctx.
func (s *Service) redirectFor(ctx context.Context) string {
	if u, ok := ctx.Value(redirectKey{}).(string); ok && u != "" {
		return u
	}
	return s.redirectURL
}

// StartSignIn starts a sign-in of an active registration and returns the
// authorization URL once the flow has one (after the server's metadata
// and the client registration), or the flow's error. The flow goes on
// without the caller, until the callback answers, it is cancelled, or it
// expires.
func (s *Service) StartSignIn(ctx context.Context, dto jsapi.StartMcpSignInDto) (jsapi.McpSignInStarted, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpSignInStarted{}, err
	}
	redirectURL := s.redirectFor(ctx)
	if redirectURL == "" {
		return jsapi.McpSignInStarted{}, domain.Errorf(domain.KindUnavailable, CodeSignInUnavailable, "this backend serves no sign-in callback")
	}
	var client *domain.OAuthClient
	switch {
	case dto.ClientID != nil && strings.TrimSpace(*dto.ClientID) != "":
		client = &domain.OAuthClient{ID: strings.TrimSpace(*dto.ClientID)}
		if dto.ClientSecret != nil {
			client.Secret = domain.Secret(*dto.ClientSecret)
		}
	case dto.ClientSecret != nil && *dto.ClientSecret != "":
		return jsapi.McpSignInStarted{}, domain.Errorf(domain.KindBadRequest, jsapi.CodeArgsInvalid, "a client secret needs its client ID")
	}
	r, err := s.active(id)
	if err != nil {
		return jsapi.McpSignInStarted{}, err
	}
	if r.Stdio != nil {
		return jsapi.McpSignInStarted{}, domain.Errorf(domain.KindBadRequest, CodeStdioNoSignIn,
			"`%s` is a stdio server: it has no sign-in; its credentials go in its environment (ttmcp stdio add --env)", r.DisplayName)
	}
	s.signIns.cancelFor(id, "a newer sign-in to this server replaced this one")

	fctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	fctx, stop := context.WithTimeoutCause(fctx, s.signInTimeout,
		domain.Errorf(domain.KindUnavailable, CodeAuthExpired, "the sign-in was not finished within %s", s.signInTimeout))
	p := &signIn{id: newSignInID(), reg: id, expires: time.Now().Add(s.signInTimeout), cancel: cancel,
		ready: make(chan struct{}), answer: make(chan url.Values, 1), done: make(chan struct{})}
	s.signIns.mu.Lock()
	s.signIns.byID[p.id] = p
	s.signIns.byReg[id] = p
	s.signIns.mu.Unlock()

	go func() {
		defer stop()
		auth, err := s.gateway.SignIn(fctx, r, domain.SignInRequest{RedirectURL: redirectURL, Client: client, Authorize: s.authorizer(p)})
		if err == nil {
			err = s.keepSignIn(r)
		}
		if err != nil && fctx.Err() != nil {
			err = context.Cause(fctx)
		}
		p.auth, p.err = auth, err
		close(p.done)
		cancel(nil)
		if err != nil {
			s.log.Info("MCP sign-in did not complete", "registration", id, "code", domain.CodeOf(err))
		}
		time.AfterFunc(keepFinished, func() { s.signIns.forget(p) })
	}()

	select {
	case <-p.ready:
		return jsapi.McpSignInStarted{SignInID: p.id, AuthorizationURL: p.url, RedirectURI: redirectURL,
			ExpiresAt: p.expires.UTC().Format(time.RFC3339)}, nil
	case <-p.done:
		s.signIns.forget(p)
		return jsapi.McpSignInStarted{}, p.err
	case <-ctx.Done():
		p.cancel(domain.Errorf(domain.KindUnavailable, CodeAuthCancelled, "the page went away"))
		return jsapi.McpSignInStarted{}, cancelledErr(ctx)
	}
}

// keepSignIn checks, after a sign-in, that its registration still exists
// at the same endpoint; otherwise the tokens just kept are deleted.
func (s *Service) keepSignIn(signedIn domain.Registration) error {
	r, ok, err := s.regs.Load(signedIn.ID)
	if err == nil && ok && r.Endpoint == signedIn.Endpoint {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.gateway.SignOut(ctx, signedIn.ID); err != nil {
		s.log.Warn("cannot delete a sign-in of a removed or changed registration", "registration", signedIn.ID, "err", err)
	}
	return domain.Errorf(domain.KindConflict, CodeAuthCancelled, "the server was removed or its endpoint changed during the sign-in")
}

// authorizer is the sign-in's Authorize: it publishes the authorization
// URL (StartSignIn returns it) under the URL's state and waits for the
// callback.
func (s *Service) authorizer(p *signIn) func(context.Context, string) (domain.AuthorizationResponse, error) {
	return func(ctx context.Context, authURL string) (domain.AuthorizationResponse, error) {
		u, err := url.Parse(authURL)
		state := ""
		if err == nil {
			state = u.Query().Get("state")
		}
		if state == "" {
			return domain.AuthorizationResponse{}, domain.Errorf(domain.KindInternal, CodeAuthFailed, "the authorization URL carries no state")
		}
		s.signIns.mu.Lock()
		select {
		case <-p.ready: // a second authorization in one flow: not ours
			s.signIns.mu.Unlock()
			return domain.AuthorizationResponse{}, domain.Errorf(domain.KindInternal, CodeAuthFailed, "the flow asked for a second authorization")
		default:
		}
		p.url, p.state = authURL, state
		s.signIns.byState[state] = p
		close(p.ready)
		s.signIns.mu.Unlock()

		select {
		case q := <-p.answer:
			return answerOf(q)
		case <-ctx.Done():
			return domain.AuthorizationResponse{}, context.Cause(ctx)
		}
	}
}

// answerOf reads the authorization response (RFC 6749 §4.1.2, §4.1.2.1).
func answerOf(q url.Values) (domain.AuthorizationResponse, error) {
	if e := q.Get("error"); e != "" {
		detail := clip(e)
		if d := q.Get("error_description"); d != "" {
			detail += ": " + clip(d)
		}
		if e == "access_denied" {
			return domain.AuthorizationResponse{}, domain.Errorf(domain.KindConflict, CodeAuthDenied, "the authorization was refused (%s)", detail)
		}
		return domain.AuthorizationResponse{}, domain.Errorf(domain.KindUnavailable, CodeAuthFailed, "the authorization server answered %s", detail)
	}
	if q.Get("code") == "" {
		return domain.AuthorizationResponse{}, domain.Errorf(domain.KindUnavailable, CodeAuthFailed, "the authorization server sent neither a code nor an error")
	}
	return domain.AuthorizationResponse{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// clip keeps a string from the callback's query short and printable.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// CompleteSignIn is the callback: it hands the authorization server's
// answer (the callback's query) to the pending sign-in its state names, at
// most once, and waits (within ctx) for the flow to finish. It reports
// false when no pending sign-in has that state.
func (s *Service) CompleteSignIn(ctx context.Context, q url.Values) (bool, error) {
	state := q.Get("state")
	s.signIns.mu.Lock()
	p := s.signIns.byState[state]
	if p != nil {
		delete(s.signIns.byState, state) // single use
	}
	s.signIns.mu.Unlock()
	if p == nil || state == "" {
		return false, nil
	}
	select {
	case p.answer <- q:
	default:
	}
	select {
	case <-p.done:
		return true, p.err
	case <-ctx.Done():
		return true, cancelledErr(ctx)
	}
}

// FinishSignIn waits for a sign-in to finish and returns its server as the
// page sees it (with its auth), or the sign-in's error.
func (s *Service) FinishSignIn(ctx context.Context, dto jsapi.McpSignInIdDto) (jsapi.McpServer, error) {
	s.signIns.mu.Lock()
	p := s.signIns.byID[dto.SignInID]
	s.signIns.mu.Unlock()
	if p == nil {
		return jsapi.McpServer{}, domain.Errorf(domain.KindNotFound, CodeSignInNotFound, "no pending sign-in `%s`", clip(dto.SignInID))
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return jsapi.McpServer{}, cancelledErr(ctx)
	}
	s.signIns.forget(p)
	if p.err != nil {
		return jsapi.McpServer{}, p.err
	}
	r, err := s.load(p.reg)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	return s.serverDTO(ctx, r), nil
}

// CancelSignIn cancels a pending sign-in; an unknown id is a no-op.
func (s *Service) CancelSignIn(_ context.Context, dto jsapi.McpSignInIdDto) (any, error) {
	s.signIns.mu.Lock()
	p := s.signIns.byID[dto.SignInID]
	s.signIns.mu.Unlock()
	if p != nil {
		p.cancel(domain.Errorf(domain.KindConflict, CodeAuthCancelled, "the sign-in was cancelled"))
	}
	return nil, nil
}

// SignOut forgets a registration's sign-in (tokens, client, challenge)
// and cancels a pending one. The authorization server is not told: its
// tokens expire on their own.
func (s *Service) SignOut(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	r, err := s.load(id)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	s.signIns.cancelFor(id, "the server was signed out")
	if err := s.gateway.SignOut(ctx, id); err != nil {
		return jsapi.McpServer{}, err
	}
	return s.serverDTO(ctx, r), nil
}

// forgetAuth deletes a registration's sign-in after its removal or an
// endpoint change; a failure is only logged (the auth file is bound to
// the endpoint, so a leftover is never used for another URL).
func (s *Service) forgetAuth(id domain.RegistrationID, why string) {
	s.signIns.cancelFor(id, why)
	if s.gateway == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.gateway.SignOut(ctx, id); err != nil {
		s.log.Warn("cannot delete the sign-in of an MCP registration", "registration", id, "err", err)
	}
}

// authedList is a list view's servers with their sign-in states and
// capabilities, as of one generation of them (listGen), and its encoding:
// lists share it until either changes, so a list of many registrations
// reads their auth and allowlist files once per change, not once per
// list.
type authedList struct {
	gen     listGen
	list    jsapi.McpServerList
	encOnce sync.Once
	enc     []byte

	forMu       sync.Mutex
	forRedirect map[string][]byte // encodings by callback (encodedFor)
	encErr      error
}

// authed returns res with the sign-in states.
func (s *Service) authed(res *viewResult) *authedList {
	gen := s.listGeneration() // before reading: a change meanwhile makes the next list read again
	if a := res.auth.Load(); a != nil && a.gen == gen {
		return a
	}
	base := res.serverList()
	a := &authedList{gen: gen, list: jsapi.McpServerList{Servers: make([]jsapi.McpServer, len(base.Servers)), StorageIssues: base.StorageIssues}}
	for i, srv := range base.Servers {
		srv.Auth = s.authDTO(res.regs[i])
		srv.Capabilities = s.capabilitiesDTO(res.regs[i])
		a.list.Servers[i] = srv
	}
	res.auth.Store(a)
	return a
}

// encodedFor is the encoding of the list as pages whose sign-ins come
// back to redirect see it (WithRedirectURL), kept beside the shared one
// for a few such callbacks (one per origin SillyTavern is opened at).
func (a *authedList) encodedFor(redirect string, encode func() ([]byte, error)) ([]byte, error) {
	a.forMu.Lock()
	defer a.forMu.Unlock()
	if b, ok := a.forRedirect[redirect]; ok {
		return b, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	if a.forRedirect == nil {
		a.forRedirect = map[string][]byte{}
	}
	if len(a.forRedirect) < maxRedirectEncodings {
		a.forRedirect[redirect] = b
	}
	return b, nil
}

// maxRedirectEncodings bounds the encodings kept per list by callback.
const maxRedirectEncodings = 8

func (a *authedList) encoded(encode func(any) ([]byte, error)) ([]byte, error) {
	a.encOnce.Do(func() { a.enc, a.encErr = encode(a.list) })
	return a.enc, a.encErr
}

// listGen is what the servers' decorations depend on beside the
// registrations: every sign-in state (the gateway counts their changes),
// what servers advertised (counted too), the allowlists written here and
// the allowlist folder (a file changed by hand).
type listGen struct {
	auth, advertised, allow uint64
	folder                  domain.FileStamp
}

func (s *Service) listGeneration() listGen {
	g := listGen{allow: s.allowGen.Load()}
	if s.gateway != nil {
		g.auth, g.advertised = s.gateway.AuthGeneration(), s.gateway.CapabilitiesGeneration()
	}
	if s.capabilities != nil {
		g.folder = s.capabilities.CapabilitiesFolderStamp()
	}
	return g
}

// serverDTO projects a registration with its sign-in state and
// capabilities.
// Its auth.redirectUri is the callback of a sign-in started in ctx (the
// plugin's path for a page through SillyTavern), as in the list.
func (s *Service) serverDTO(ctx context.Context, r domain.Registration) jsapi.McpServer {
	out := ServerDTO(r)
	out.Auth = s.authDTO(r)
	if u := s.redirectFor(ctx); out.Auth != nil && u != s.redirectURL {
		out.Auth.RedirectURI = &u
	}
	out.Capabilities = s.capabilitiesDTO(r)
	return out
}

// authDTO projects a registration's sign-in state: never a token.
func (s *Service) authDTO(r domain.Registration) *jsapi.McpServerAuth {
	if s.gateway == nil || r.Stdio != nil { // a stdio server has no sign-in
		return nil
	}
	out := &jsapi.McpServerAuth{State: jsapi.AuthNone, Scopes: []string{}}
	if s.redirectURL != "" {
		out.RedirectURI = &s.redirectURL
	}
	a, err := s.gateway.AuthState(r)
	if err != nil {
		msg := err.Error()
		out.Issue = &msg
		return out
	}
	out.State = string(a.State())
	stamp := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		v := t.UTC().Format(time.RFC3339)
		return &v
	}
	if t := a.Token; t != nil {
		out.Scopes = slices.Clone(t.Scopes)
		if t.AccessToken != "" {
			out.ExpiresAt = stamp(t.ExpiresAt)
		}
		out.Refreshable = t.RefreshToken != ""
		host := hostOf(t.TokenEndpoint)
		out.AuthorizationServer = &host
		reg := t.Client.Registration
		out.ClientRegistration = &reg
		out.SignedInAt = stamp(t.SignedInAt)
	}
	if c := a.Challenge; c != nil {
		ch := &jsapi.McpAuthChallenge{Status: c.Status, Scopes: slices.Clone(c.Scopes), At: c.At.UTC().Format(time.RFC3339)}
		if c.Error != "" {
			ch.Error = &c.Error
		}
		if c.Description != "" {
			ch.Description = &c.Description
		}
		if ch.Scopes == nil {
			ch.Scopes = []string{}
		}
		out.Challenge = ch
	}
	return out
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// newSignInID returns a random sign-in id (it names a sign-in to the page
// that started it; the callback uses the flow's own state instead).
func newSignInID() string { return strings.ToLower(rand.Text()) }

func cancelledErr(ctx context.Context) error {
	return domain.Errorf(domain.KindUnavailable, jsapi.CodeRequestCancelled, "the request was cancelled: %v", context.Cause(ctx))
}
