package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A Secret never prints: every fmt verb, %+v of a struct holding one,
// error wrapping, slog (text and JSON) and encoding/json all see
// "[redacted]".
func TestSecretNeverPrints(t *testing.T) {
	const raw = "tok-3f9a"
	s := Secret(raw)
	tok := Token{AccessToken: s, RefreshToken: s, Client: OAuthClient{ID: "c", Secret: s}}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%T %v"} {
		out = append(out, fmt.Sprintf(verb, s), fmt.Sprintf(verb, tok), fmt.Sprintf(verb, &tok))
	}
	out = append(out, fmt.Errorf("refresh failed: %v", s).Error(), fmt.Sprint(s, tok), fmt.Sprintln(Auth{Token: &tok}))
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		slog.New(h).Info("x", "secret", s, "token", tok, "auth", Auth{Token: &tok})
	}
	out = append(out, logs.String())
	j, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(j))
	for _, o := range out {
		if strings.Contains(o, raw) || strings.Contains(o, fmt.Sprintf("%x", raw)) {
			t.Errorf("leaked: %s", o)
		}
	}
	if !strings.Contains(logs.String(), "[redacted]") || s.Reveal() != raw {
		t.Fatalf("logs %s / reveal %q", logs.String(), s.Reveal())
	}
}

func TestTokenExpired(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		tok  Token
		want bool
	}{
		{"no access token", Token{RefreshToken: "r"}, true},
		{"no lifetime", Token{AccessToken: "a"}, false},
		{"valid", Token{AccessToken: "a", ExpiresAt: now.Add(time.Minute)}, false},
		{"within skew", Token{AccessToken: "a", ExpiresAt: now.Add(5 * time.Second)}, true},
		{"expired", Token{AccessToken: "a", ExpiresAt: now.Add(-time.Second)}, true},
	}
	for _, tt := range tests {
		if got := tt.tok.Expired(now, 10*time.Second); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
}

func TestAuthState(t *testing.T) {
	tok, ch := &Token{AccessToken: "a"}, &Challenge{Status: 401}
	for _, tt := range []struct {
		a    Auth
		want AuthState
	}{
		{Auth{}, AuthNone},
		{Auth{Challenge: ch}, AuthRequired},
		{Auth{Token: tok}, AuthSignedIn},
		{Auth{Token: tok, Challenge: &Challenge{Status: 403, Error: "insufficient_scope"}}, AuthSignedIn},
	} {
		if got := tt.a.State(); got != tt.want {
			t.Errorf("%+v: %s", tt.a, got)
		}
	}
	a := Auth{Token: &Token{Scopes: []string{"x"}}, Challenge: &Challenge{Scopes: []string{"y"}}}
	c := a.Clone()
	c.Token.Scopes[0], c.Challenge.Scopes[0] = "changed", "changed"
	if a.Token.Scopes[0] != "x" || a.Challenge.Scopes[0] != "y" {
		t.Fatal("Clone shares slices")
	}
}
