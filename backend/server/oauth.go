package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"time"
)

// The sign-in callback, GET /oauth/callback: the redirect URI ttmcp
// registers with authorization servers. The user's browser lands here
// (in the window the page opened) with the authorization server's answer;
// the backend hands it to the pending sign-in its state names, once, and
// waits for the token exchange. No Origin check applies (it is a
// navigation from the authorization server), but the Host check does, and
// only a top-level navigation is answered: an image, script or frame
// pointed at the callback gets a bare 403.
//
// The page reveals nothing: the same few words whatever went wrong (the
// page that started the sign-in gets the reason), nothing of the query
// echoed, no caching, no referrer (the URL holds the code), no framing, no
// subresources, and only its own inline script, which closes a window the
// page opened once the sign-in has succeeded.

// callbackWait bounds how long the callback waits for the token exchange
// before answering; the sign-in goes on regardless.
const callbackWait = 30 * time.Second

const closeScript = `window.close()`

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ttmcp sign-in</title>
<style>body{font:16px system-ui,sans-serif;margin:3em auto;max-width:30em;padding:0 1em}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p>{{if .Close}}<script>` + closeScript + `</script>{{end}}</body></html>`))

// callbackCSP allows the page's inline style and, by its hash, the one
// script.
var callbackCSP = func() string {
	sum := sha256.Sum256([]byte(closeScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

func (s *Server) handleOAuthCallback(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", callbackCSP)
	if dest := r.Header.Get("Sec-Fetch-Dest"); dest != "" && dest != "document" {
		http.Error(w, "ttmcp: forbidden", http.StatusForbidden)
		return
	}
	cmds, err := s.commandsFor(CallerOf(r.Context()))
	if err != nil || cmds.signIn == nil {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callbackWait)
	defer cancel()
	known, err := cmds.signIn(ctx, r.URL.Query())
	page := struct {
		Title, Text string
		Close       bool
	}{"Signed in", "You can close this window and return to the page.", true}
	status := http.StatusOK
	switch {
	case !known:
		status = http.StatusBadRequest
		page.Title, page.Text, page.Close = "Sign-in link not valid", "This sign-in is unknown, was already used or has expired. Start it again from the page.", false
	case err != nil:
		page.Title, page.Text, page.Close = "Sign-in not completed", "The page that started the sign-in says why. You can close this window.", false
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	callbackPage.Execute(w, page)
}
