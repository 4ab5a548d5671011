package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Approve plays the user on the demo's approval page without a browser:
// it opens authorizationURL, answers the page (approve or deny) and
// returns where the authorization server sends the user back (the
// redirect URI with code, state and iss, or error). Tests and scripted
// demos use it; people use the page.
func Approve(ctx context.Context, authorizationURL string, approve bool) (*url.URL, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizationURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther {
		return resp.Location() // an error answered at once
	}
	m := requestField.FindSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		return nil, fmt.Errorf("demo approval page: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(page)))
	}
	decision := "deny"
	if approve {
		decision = "approve"
	}
	form := url.Values{"request": {string(m[1])}, "decision": {decision}}
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL.Scheme+"://"+req.URL.Host+"/authorize", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(post)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, errors.New("demo approval: " + strings.TrimSpace(string(body)))
	}
	return resp.Location()
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)
