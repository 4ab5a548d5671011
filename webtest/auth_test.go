package webtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/jsapi"
)

// popupBrowser is a headless Chromium of its own with the popup blocker
// on (chromedp turns it off by default, and the package's browser keeps
// that): sign-in must open its window inside the user's click.
func popupBrowser(t *testing.T) context.Context {
	t.Helper()
	bctx, stop, err := launchBrowser(t.TempDir(), chromedp.Flag("disable-popup-blocking", false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return bctx
}

// frameLog keeps WebSocket frames of the page.
type frameLog struct {
	mu     sync.Mutex
	frames []string
}

func (f *frameLog) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.frames...)
}

func (f *frameLog) add(frame string) {
	f.mu.Lock()
	f.frames = append(f.frames, frame)
	f.mu.Unlock()
}

// recordFrames keeps every WebSocket frame the tab of ctx receives and
// sends from now on.
func recordFrames(t *testing.T, ctx context.Context) (received, sent *frameLog) {
	t.Helper()
	received, sent = &frameLog{}, &frameLog{}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventWebSocketFrameReceived:
			received.add(string(e.Response.PayloadData))
		case *network.EventWebSocketFrameSent:
			sent.add(string(e.Response.PayloadData))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return received, sent
}

// The sign-in, end to end in Chromium with the popup blocker on: a server
// behind the demo authorization server needs sign-in after discovery; a
// click signs in (the window opens in the click, the user approves on the
// authorization server's page, the callback closes it); discovery and
// calls then work; once the access token expires, calls go on through the
// refresh token; a revoked sign-in is refused (not_sent) and ends in
// "needs sign-in"; sign-out forgets it. No frame the page receives holds a
// token, and signIn outside a click is refused by the popup blocker.
func TestSignInEndToEnd(t *testing.T) {
	b := newBackend(t)
	as := demo.NewAuthServer(demo.AuthOptions{TokenTTL: 2 * time.Second})
	mcp := newMCPServer(t, as.Handler())

	ctx, cancel := chromedp.NewContext(popupBrowser(t))
	defer cancel()
	p := &page{tb: t, ctx: ctx}
	frames, _ := recordFrames(t, ctx)
	p.navigate(b.url("/webtest/host.html"))
	p.run(`await tt.hostReady;`)
	id := activeServer(t, p, mcp.endpoint(), "auto")

	// Needs sign-in after discovery, with what the server asked for.
	e := evalJS[jsError](p, `return await tt.err(tt.mcp.servers.discover(%s));`, id)
	if e.Code != "mcp.auth_required" || !strings.Contains(e.Message, demo.Scope) {
		t.Fatalf("discover before sign-in: %+v", e)
	}
	type authView struct {
		State       string   `json:"state"`
		Scopes      []string `json:"scopes"`
		Refreshable bool     `json:"refreshable"`
		ExpiresAt   string   `json:"expiresAt"`
		Challenge   *struct {
			Status int      `json:"status"`
			Error  string   `json:"error"`
			Scopes []string `json:"scopes"`
		} `json:"challenge"`
	}
	auth := func() authView {
		return evalJS[authView](p, `return (await tt.mcp.servers.list()).servers.find((s) => s.id === %s).auth;`, id)
	}
	if a := auth(); a.State != "required" || a.Challenge == nil || a.Challenge.Status != 401 {
		t.Fatalf("after discovery: %+v", a)
	}

	// Outside a click the browser blocks the window: nothing starts.
	starts := b.countInvokes(jsapi.CmdStartSignIn)
	if e := evalJS[jsError](p, `return await tt.err(tt.mcp.servers.signIn(%s));`, id); e.Code != "mcp.auth_popup_blocked" {
		t.Fatalf("signIn without a click: %+v", e)
	}
	if n := b.countInvokes(jsapi.CmdStartSignIn); n != starts {
		t.Fatalf("a blocked sign-in reached the backend")
	}

	// In a click: the window opens, the user approves, it closes.
	p.run(`
		const button = document.createElement('button');
		button.id = 'sign-in';
		button.textContent = 'Sign in';
		button.onclick = () => {
			window.signedIn = tt.mcp.servers.signIn(%s).then((s) => ({ ok: true, auth: s.auth }), (e) => ({ ok: false, code: e.code, message: e.message }));
		};
		document.body.append(button);`, id)
	popup := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return info.Type == "page" })
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-in"))); err != nil {
		t.Fatal(err)
	}
	var popupID target.ID
	select {
	case popupID = <-popup:
	case <-time.After(20 * time.Second):
		t.Fatal("no sign-in window opened")
	}
	pctx, pcancel := chromedp.NewContext(ctx, chromedp.WithTargetID(popupID))
	defer pcancel()
	wctx, wcancel := context.WithTimeout(pctx, 30*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		t.Fatalf("approval page: %v", err)
	}
	page, err := chromedp.Run(wctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(wctx, chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "ttmcp") || !strings.Contains(page, demo.Scope) {
		t.Fatalf("approval page: %s", page)
	}
	type signInResult struct {
		OK      bool     `json:"ok"`
		Auth    authView `json:"auth"`
		Code    string   `json:"code"`
		Message string   `json:"message"`
	}
	res := evalJS[signInResult](p, `return await window.signedIn;`)
	if !res.OK || res.Auth.State != "signed_in" || !res.Auth.Refreshable || res.Auth.ExpiresAt == "" {
		t.Fatalf("signIn: %+v", res)
	}
	waitForTargetGone(t, ctx, popupID)

	// Discovery and calls work.
	tools := evalJS[int](p, `return (await tt.mcp.servers.discover(%s)).tools.length;`, id)
	if tools != 5 {
		t.Fatalf("discovered %d tools", tools)
	}
	call := func(text string) jsapi.McpCallOutcome {
		return evalJS[jsapi.McpCallOutcome](p, `return await tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: JSON.stringify({ text: %s }) });`, id, text)
	}
	if o := call("one"); o.Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("call: %+v", o)
	}

	// The access token expires; the next call refreshes it first.
	expires, err := time.Parse(time.RFC3339, auth().ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(expires) + 1100*time.Millisecond) // expiresAt is cut to the second
	if o := call("after expiry"); o.Outcome != jsapi.OutcomeKnownResponse {
		t.Fatalf("call after expiry: %+v", o)
	}
	if n := as.TokenRequests("refresh_token"); n < 1 {
		t.Fatalf("%d refreshes", n)
	}
	if a := auth(); a.State != "signed_in" {
		t.Fatalf("after refresh: %+v", a)
	}

	// A revoked sign-in: refused, never sent; then "needs sign-in".
	as.RevokeAll()
	// The MCP requests (JSON-RPC), not those of the authorization server
	// beside them.
	mcpRequests := func() []mcpRequest {
		return slices.DeleteFunc(mcp.requests(), func(r mcpRequest) bool { return r.Method == "GET" || r.Method == "POST" })
	}
	callsBefore, requestsBefore, refreshesBefore := mcp.count("tools/call"), len(mcpRequests()), as.TokenRequests("refresh_token")
	for range 2 { // the refused token and the refused refresh, in either order (the token may be due for refresh)
		if o := call("revoked"); o.Outcome != jsapi.OutcomeNotSent || o.Code != "mcp.auth_required" {
			t.Fatalf("call after revocation: %+v", o)
		}
	}
	// Nothing retried: of the two calls, one reached the server — on the
	// kept session that is the tools/call itself, refused with 401 (not
	// applied, RFC 9110 §15.5.2) —; the other ended at the refused refresh.
	// No refresh succeeded.
	after := mcpRequests()[requestsBefore:]
	if len(after) != 1 || after[0].Method != "tools/call" || mcp.count("tools/call") != callsBefore+1 {
		t.Fatalf("%d requests reached the MCP server for two refused calls, want the first call alone: %s", len(after), as.Redact(fmt.Sprintf("%+v", after)))
	}
	if n := as.TokenRequests("refresh_token"); n != refreshesBefore {
		t.Fatalf("a revoked sign-in was refreshed")
	}
	if a := auth(); a.State != "required" {
		t.Fatalf("after revocation: %+v", a)
	}

	// Sign-out forgets it.
	if s := evalJS[string](p, `return (await tt.mcp.servers.signOut(%s)).auth.state;`, id); s != "none" {
		t.Fatalf("after sign-out: %s", s)
	}

	all := frames.all()
	if len(all) < 10 {
		t.Fatalf("only %d frames seen: the check would prove nothing", len(all))
	}
	issued := as.Issued()
	if len(issued) < 4 {
		t.Fatalf("the authorization server issued %d credentials", len(issued))
	}
	for _, f := range all {
		for _, secret := range issued {
			if strings.Contains(f, secret) {
				t.Fatalf("a frame the page received holds a credential: %s", as.Redact(f))
			}
		}
	}
}

// waitForTargetGone waits until the sign-in window has closed itself.
func waitForTargetGone(t *testing.T, ctx context.Context, id target.ID) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		open := false
		for _, info := range infos {
			if info.TargetID == id {
				open = true
			}
		}
		if !open {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the sign-in window did not close")
}
