package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The refresh token grant (RFC 6749 §6), written here rather than taken
// from x/oauth2, whose refresh cannot carry the resource parameter: MCP
// clients send it in every token request (RFC 8707), and the refresh goes
// to the token endpoint, with the client, that issued the token.

// refreshRefused is an authorization server's refusal of a refresh (an
// OAuth error answer, e.g. invalid_grant): the sign-in cannot be used any
// more. Other failures (unreachable, 5xx, a garbled answer) leave it
// usable later.
type refreshRefused struct {
	code, description string
}

func (e *refreshRefused) Error() string { return "refresh refused: " + e.describe() }

func (e *refreshRefused) describe() string {
	if e.description == "" {
		return e.code
	}
	return e.code + ": " + e.description
}

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 1 << 20

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1, §5.2).
type tokenResponse struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	ExpiresIn        json.Number `json:"expires_in"`
	RefreshToken     string      `json:"refresh_token"`
	Scope            string      `json:"scope"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
}

// refresh exchanges t's refresh token for a new access token. The new
// token keeps t's refresh token unless the server rotated it, and t's
// scopes unless the server named others.
func (k *keeper) refresh(ctx context.Context, t domain.Token, endpoint domain.Endpoint) (domain.Token, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken.Reveal()}}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.TokenEndpoint, nil)
	if err != nil {
		return domain.Token{}, fmt.Errorf("token endpoint %q: %v", t.TokenEndpoint, err)
	}
	switch t.Client.AuthMethod {
	case domain.AuthMethodBasic:
		// RFC 6749 §2.3.1: both parts form-encoded first.
		req.SetBasicAuth(url.QueryEscape(t.Client.ID), url.QueryEscape(t.Client.Secret.Reveal()))
	case domain.AuthMethodPost:
		form.Set("client_id", t.Client.ID)
		form.Set("client_secret", t.Client.Secret.Reveal())
	default:
		form.Set("client_id", t.Client.ID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := k.oauth.Do(req)
	if err != nil {
		return domain.Token{}, fmt.Errorf("token endpoint %s: %v", hostOf(t.TokenEndpoint), scrub(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return domain.Token{}, fmt.Errorf("token endpoint %s: reading the answer: %v", hostOf(t.TokenEndpoint), err)
	}
	if len(raw) > maxTokenResponse {
		return domain.Token{}, fmt.Errorf("token endpoint %s: the answer exceeds %d bytes", hostOf(t.TokenEndpoint), maxTokenResponse)
	}
	var tr tokenResponse
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	decodeErr := json.Unmarshal(raw, &tr)
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && decodeErr == nil && tr.Error != "" {
		return domain.Token{}, &refreshRefused{code: clean(tr.Error), description: clean(tr.ErrorDescription)}
	}
	if resp.StatusCode != http.StatusOK {
		return domain.Token{}, fmt.Errorf("token endpoint %s answered HTTP %d", hostOf(t.TokenEndpoint), resp.StatusCode)
	}
	if decodeErr != nil || (mt != "application/json" && mt != "") {
		return domain.Token{}, fmt.Errorf("token endpoint %s: the answer is not a JSON token response", hostOf(t.TokenEndpoint))
	}
	if tr.AccessToken == "" {
		return domain.Token{}, fmt.Errorf("token endpoint %s: the answer has no access_token", hostOf(t.TokenEndpoint))
	}
	if tt := tr.TokenType; tt != "" && !strings.EqualFold(tt, "bearer") {
		return domain.Token{}, fmt.Errorf("token endpoint %s issued a %q token; only Bearer tokens are supported", hostOf(t.TokenEndpoint), clean(tt))
	}
	now := k.now()
	next := t
	next.AccessToken = domain.Secret(tr.AccessToken)
	next.RefreshedAt = now
	next.ExpiresAt = time.Time{}
	if secs, err := tr.ExpiresIn.Int64(); err == nil && secs > 0 {
		next.ExpiresAt = now.Add(time.Duration(secs) * time.Second)
	}
	if tr.RefreshToken != "" {
		next.RefreshToken = domain.Secret(tr.RefreshToken)
	}
	if s := strings.Fields(tr.Scope); len(s) > 0 {
		next.Scopes = s
	}
	return next, nil
}

// hostOf names a URL's host for messages.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "(invalid URL)"
}
