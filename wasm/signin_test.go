//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

// fakeWindow stands in for window.open: it records the opened window and
// what signIn does with it.
type fakeWindow struct {
	obj    js.Value
	opened int
	closed int
}

func fakeOpen(t *testing.T, n *fakeNet, blocked bool) *fakeWindow {
	w := &fakeWindow{obj: jsObject.New()}
	doc := jsObject.New()
	doc.Set("body", jsObject.New())
	w.obj.Set("document", doc)
	w.obj.Set("location", jsObject.New())
	w.obj.Set("opener", global)
	w.obj.Set("closed", false)
	w.obj.Set("close", n.fn(func([]js.Value) any {
		w.closed++
		w.obj.Set("closed", true)
		return nil
	}))
	old := global.Get("open")
	global.Set("open", n.fn(func(a []js.Value) any {
		w.opened++
		if a[0].String() != "about:blank" {
			t.Errorf("opened %s", a[0].String())
		}
		if blocked {
			return js.Null()
		}
		return w.obj
	}))
	t.Cleanup(func() { global.Set("open", old) })
	return w
}

const signedIn = `{"id":"r1","auth":{"state":"signed_in","scopes":["a"],"refreshable":true}}`

// The window opens at once (in the caller's click), loses its opener, is
// sent to the authorization URL once the backend has one, and closes when
// the backend says the sign-in ended.
func TestSignInHappyPath(t *testing.T) {
	b, n, s := openBridge(t)
	w := fakeOpen(t, n, false)
	p := b.signIn(js.ValueOf("r1"), js.Undefined())
	if w.opened != 1 || !w.obj.Get("opener").IsNull() {
		t.Fatalf("opened %d, opener %v", w.opened, w.obj.Get("opener"))
	}
	id, args := s.invoked(t, 1, jsapi.CmdStartSignIn)
	if stringify(args) != `{"dto":{"registrationId":"r1"}}` {
		t.Fatalf("start args %s", stringify(args))
	}
	s.reply(id, `{"signInId":"s1","authorizationUrl":"https://as.example/authorize?state=x","redirectUri":"http://127.0.0.1:7878/oauth/callback","expiresAt":"2026-01-01T00:00:00Z"}`)
	id, args = s.invoked(t, 2, jsapi.CmdFinishSignIn)
	if stringify(args) != `{"dto":{"signInId":"s1"}}` || w.obj.Get("location").Get("href").String() != "https://as.example/authorize?state=x" {
		t.Fatalf("finish args %s, window at %v", stringify(args), w.obj.Get("location").Get("href"))
	}
	s.reply(id, signedIn)
	if v := mustResolve(t, p); stringify(v) != signedIn || w.closed != 1 {
		t.Fatalf("resolved %s, window closed %d times", stringify(v), w.closed)
	}
}

// A client the user entered travels in the dto; the backend's errors
// reject (and close the window); a blocked window rejects at once and
// starts nothing.
func TestSignInErrorsAndClient(t *testing.T) {
	b, n, s := openBridge(t)
	w := fakeOpen(t, n, false)
	input, _ := parseJSON(js.ValueOf(`{"registrationId":"r1","clientId":"c","clientSecret":"sec"}`))
	p := b.signIn(input, js.Undefined())
	id, args := s.invoked(t, 1, jsapi.CmdStartSignIn)
	if stringify(args) != `{"dto":{"registrationId":"r1","clientId":"c","clientSecret":"sec"}}` {
		t.Fatalf("start args %s", stringify(args))
	}
	s.replyError(id, `{"kind":"Unavailable","code":"mcp.auth_client_required","message":"mcp.auth_client_required: x"}`)
	mustReject(t, p, "mcp.auth_client_required", jsapi.KindUnavailable)
	if w.closed != 1 {
		t.Fatalf("window closed %d times", w.closed)
	}

	p = b.signIn(js.ValueOf("r1"), js.Undefined())
	id, _ = s.invoked(t, 2, jsapi.CmdStartSignIn)
	s.reply(id, `{"signInId":"s2","authorizationUrl":"javascript:alert(1)"}`)
	mustReject(t, p, jsapi.CodeHostInternal, jsapi.KindInternal)
	s.invoked(t, 3, jsapi.CmdCancelSignIn) // the backend's flow ends too

	blockedNet, _ := newFakeNet(t)
	fakeOpen(t, blockedNet, true)
	sent := len(s.sent)
	mustReject(t, b.signIn(js.ValueOf("r1"), js.Undefined()), codeAuthPopupBlocked, jsapi.KindConflict)
	mustReject(t, b.signIn(js.ValueOf(42), js.Undefined()), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	if len(s.sent) != sent {
		t.Fatalf("commands were sent: %v", s.sent[sent:])
	}
}

// Aborting the signal cancels the sign-in at the backend (before or after
// its start answered); the backend's answer then rejects.
func TestSignInAbort(t *testing.T) {
	b, n, s := openBridge(t)
	fakeOpen(t, n, false)
	sig := newFakeSignal(n)
	p := b.signIn(js.ValueOf("r1"), obj("signal", sig.obj))
	id, _ := s.invoked(t, 1, jsapi.CmdStartSignIn)
	sig.abort() // before the start answered
	s.reply(id, `{"signInId":"s1","authorizationUrl":"http://127.0.0.1:9/authorize"}`)
	_, args := s.invoked(t, 2, jsapi.CmdCancelSignIn)
	if stringify(args) != `{"dto":{"signInId":"s1"}}` {
		t.Fatalf("cancel args %s", stringify(args))
	}
	id, _ = s.invoked(t, 3, jsapi.CmdFinishSignIn)
	s.replyError(id, `{"kind":"Conflict","code":"mcp.auth_cancelled","message":"mcp.auth_cancelled: the sign-in was cancelled"}`)
	mustReject(t, p, "mcp.auth_cancelled", jsapi.KindConflict)
	if sig.removed != 1 {
		t.Fatalf("listener removed %d times", sig.removed)
	}
}
