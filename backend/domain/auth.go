package domain

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"
)

// Secret is a credential: an access or refresh token, a client secret. It
// never prints: fmt (every verb), slog and encoding/json see "[redacted]",
// so a Secret that reaches a log line, an error message or a DTO by
// mistake leaks nothing. The one way to read it is Reveal, which the code
// that puts it on the wire (an Authorization header, a token request, the
// token file) calls by name.
type Secret string

const redacted = "[redacted]"

// Reveal returns the credential itself.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (s Secret) GoString() string { return redacted }

// Format writes "[redacted]" for every verb (%d, %x and %q included).
func (s Secret) Format(f fmt.State, _ rune) { io.WriteString(f, redacted) }

// LogValue keeps the credential out of structured logs.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON writes "[redacted]": a Secret is never sent as JSON by
// accident (the token file writes Reveal()).
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// AuthState tells where a registration stands with its server's
// authorization (jsapi.Auth*).
type AuthState string

// The auth states.
const (
	// AuthNone: the server never asked for authorization (or the user
	// signed out and it has not asked since).
	AuthNone AuthState = "none"
	// AuthRequired: the server refused a request for want of
	// authorization and no usable sign-in is kept.
	AuthRequired AuthState = "required"
	// AuthSignedIn: a sign-in is kept (an access token, a refresh token,
	// or both).
	AuthSignedIn AuthState = "signed_in"
)

// Challenge is what a server said when it refused a request for want of
// authorization: an HTTP 401 or 403 with a Bearer WWW-Authenticate
// challenge (RFC 6750 §3). Every string comes from the server.
type Challenge struct {
	Status           int      // 401 or 403
	Error            string   // the challenge's error ("invalid_token", "insufficient_scope"), "" when none
	Description      string   // its error_description
	Scopes           []string // its scope, split on spaces
	ResourceMetadata string   // its resource_metadata URL (RFC 9728 §5.1)
	// Header holds the WWW-Authenticate values as received, so a sign-in
	// started later discovers from the very challenge the user saw.
	Header []string
	At     time.Time
}

// InsufficientScope reports whether the server has the token but wants
// more scopes (step-up authorization).
func (c Challenge) InsufficientScope() bool { return c.Error == "insufficient_scope" }

// Token is what a sign-in obtained, with what refreshing it needs: the
// token endpoint, the client the token was issued to and the resource it
// is for. A refresh goes to the same authorization server with the same
// client, never to another one.
type Token struct {
	AccessToken  Secret    // "" once the server refused it (a refresh gets a new one)
	RefreshToken Secret    // "" when none was issued
	ExpiresAt    time.Time // of the access token; zero when the server gave no lifetime
	Scopes       []string  // granted (the token response's scope, else what was requested)

	TokenEndpoint string // where refreshes go
	Resource      string // the resource parameter (RFC 8707) of every token request
	Client        OAuthClient

	SignedInAt  time.Time
	RefreshedAt time.Time // zero until the first refresh
}

// Expired reports whether the access token is missing or expires within
// skew of now.
func (t Token) Expired(now time.Time, skew time.Duration) bool {
	return t.AccessToken == "" || (!t.ExpiresAt.IsZero() && !now.Add(skew).Before(t.ExpiresAt))
}

// Client registration kinds.
const (
	ClientDynamic = "dynamic" // registered by ttmcp (RFC 7591)
	ClientManual  = "manual"  // a client id (and secret) the user entered
)

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthMethodNone  = "none"
	AuthMethodPost  = "client_secret_post"
	AuthMethodBasic = "client_secret_basic"
)

// OAuthClient is the OAuth client a token was issued to.
type OAuthClient struct {
	ID           string
	Secret       Secret // "" for a public client
	AuthMethod   string // AuthMethod*
	Registration string // Client*
}

// Auth is what the backend keeps of a registration's authorization: the
// last challenge the server made, and the sign-in, if any. It is bound to
// the endpoint it was obtained for: a token is never sent to another URL.
type Auth struct {
	RegistrationID RegistrationID
	Endpoint       Endpoint
	Challenge      *Challenge // the last refusal; nil when none since the last sign-in
	Token          *Token     // nil when not signed in
}

// State derives the auth state.
func (a Auth) State() AuthState {
	switch {
	case a.Token != nil:
		return AuthSignedIn
	case a.Challenge != nil:
		return AuthRequired
	}
	return AuthNone
}

// IsZero reports whether a holds nothing worth keeping.
func (a Auth) IsZero() bool { return a.Challenge == nil && a.Token == nil }

// Clone returns a deep copy of a.
func (a Auth) Clone() Auth {
	if a.Challenge != nil {
		c := *a.Challenge
		c.Scopes, c.Header = slices.Clone(c.Scopes), slices.Clone(c.Header)
		a.Challenge = &c
	}
	if a.Token != nil {
		t := *a.Token
		t.Scopes = slices.Clone(t.Scopes)
		a.Token = &t
	}
	return a
}

// AuthorizationResponse is what an authorization server sent to the
// redirect URI (RFC 6749 §4.1.2, RFC 9207).
type AuthorizationResponse struct {
	Code, State, Iss string
}

// SignInRequest configures one sign-in (the authorization code flow).
type SignInRequest struct {
	// RedirectURL is where the authorization server sends the user back:
	// ttmcp's loopback callback.
	RedirectURL string
	// Client is the OAuth client the user entered for this server; nil
	// registers one dynamically.
	Client *OAuthClient
	// Authorize takes the user to authorizationURL and returns what came
	// back to RedirectURL. Its error ends the sign-in as it is.
	Authorize func(ctx context.Context, authorizationURL string) (AuthorizationResponse, error)
}
