//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// servers.signIn(registrationId | {registrationId, clientId?, clientSecret?}, {signal}?)
// (SPEC §10, ttmcp's addition): sign in to a server that asks for it.
//
// The authorization page must open in a window the page opened while
// handling the user's click, or popup blockers stop it; the URL is only
// known after a round trip to the backend (and from there to the server's
// metadata). So signIn opens a blank window at once, synchronously, in
// the caller's click, severs its opener (the authorization server's pages
// get no handle on the page), then asks the backend to start the sign-in
// (start_mcp_server_sign_in), sends the window to the authorization URL,
// and waits for the backend to say how it ended
// (finish_mcp_server_sign_in): the authorization server sends the window
// to the backend's own callback, never to the page. The promise resolves
// with the server (its auth state signed_in) or rejects with the backend's
// error (mcp.auth_denied, mcp.auth_expired, ...). The window is closed
// when it ends, if the callback page did not close it. No token ever
// reaches the page.
//
// An aborted signal cancels the sign-in (cancel_mcp_server_sign_in), so a
// page can offer Cancel while the user is in the other window.

const codeAuthPopupBlocked = "mcp.auth_popup_blocked"

// signIn starts servers.signIn.
func (b *bridge) signIn(input, options js.Value) js.Value {
	dto := input
	if input.Type() == js.TypeString {
		dto = jsObject.New()
		dto.Set("registrationId", input)
	}
	if !isObject(dto) {
		return rejected(newError(jsapi.CodeArgsInvalid, jsapi.KindBadRequest,
			jsapi.CodeArgsInvalid+": signIn takes a registration id or {registrationId, clientId?, clientSecret?}"))
	}
	wrap := jsObject.New()
	wrap.Set("dto", dto)
	args, err := stringifyJSON(wrap)
	if err != nil {
		return rejected(argsError(err))
	}
	signal := js.Undefined()
	if isObject(options) {
		signal = options.Get("signal")
	}
	if aborted(signal) {
		return rejected(signInCancelled())
	}
	w, err := tryCall(func() js.Value { return global.Call("open", "about:blank", "_blank", "popup,width=520,height=720") })
	if err != nil || !isObject(w) {
		return rejected(newError(codeAuthPopupBlocked, jsapi.KindConflict,
			codeAuthPopupBlocked+": the browser did not open the sign-in window; call signIn while handling a click (popup blockers allow windows opened then)"))
	}
	tryCall(func() js.Value {
		w.Set("opener", js.Null())
		doc := w.Get("document")
		doc.Set("title", "Signing in…")
		doc.Get("body").Set("textContent", "Connecting to the sign-in page…")
		return js.Undefined()
	})
	p, resolve, reject := newPromise()
	si := &signInRun{b: b, resolve: resolve, reject: reject, window: w, signal: signal}
	si.listen()
	b.invoke(jsapi.CmdStartSignIn, args, (*signInStart)(si))
	return p
}

// signInRun is one servers.signIn in progress.
type signInRun struct {
	b               *bridge
	resolve, reject js.Value
	window          js.Value
	signal          js.Value
	id              string // the backend's sign-in id, once started
	onAbort         js.Func
	listening       bool
	aborted         bool
	ended           bool
}

func signInCancelled() js.Value {
	return newError("mcp.auth_cancelled", jsapi.KindConflict, "mcp.auth_cancelled: the sign-in was cancelled")
}

func (si *signInRun) listen() {
	if !isObject(si.signal) || si.signal.Get("addEventListener").Type() != js.TypeFunction {
		return
	}
	si.onAbort = callback("signIn abort", func([]js.Value) { si.abort() })
	opts := jsObject.New()
	opts.Set("once", true)
	si.signal.Call("addEventListener", "abort", si.onAbort, opts)
	si.listening = true
}

// abort cancels the sign-in at the backend once it has an id (finish then
// rejects with mcp.auth_cancelled); before that, the start's answer does.
func (si *signInRun) abort() {
	if si.aborted || si.ended {
		return
	}
	si.aborted = true
	if si.id != "" {
		si.b.invoke(jsapi.CmdCancelSignIn, signInIDArgs(si.id), cancelHandler{})
	}
}

// end settles the promise once: the listener goes, the window closes.
func (si *signInRun) end(settle js.Value, v js.Value) {
	if si.ended {
		return
	}
	si.ended = true
	if si.listening {
		si.listening = false
		si.signal.Call("removeEventListener", "abort", si.onAbort)
		si.onAbort.Release()
	}
	tryCall(func() js.Value {
		if !si.window.Get("closed").Truthy() {
			si.window.Call("close")
		}
		return js.Undefined()
	})
	settle.Invoke(v)
}

func signInIDArgs(id string) js.Value {
	return js.ValueOf(`{"dto":{"signInId":` + quoteJSON(id) + `}}`)
}

// signInStart handles start_mcp_server_sign_in.
type signInStart signInRun

func (s *signInStart) resolved(v js.Value) {
	si := (*signInRun)(s)
	url, id := js.Undefined(), js.Undefined()
	if isObject(v) {
		url, id = v.Get("authorizationUrl"), v.Get("signInId")
	}
	if url.Type() != js.TypeString || id.Type() != js.TypeString || !httpURL(url.String()) {
		if id.Type() == js.TypeString {
			si.b.invoke(jsapi.CmdCancelSignIn, signInIDArgs(id.String()), cancelHandler{})
		}
		si.end(si.reject, newError(jsapi.CodeHostInternal, jsapi.KindInternal,
			jsapi.CodeHostInternal+": the backend started a sign-in without an http(s) authorization URL"))
		return
	}
	si.id = id.String()
	if si.aborted {
		si.aborted = false
		si.abort()
	} else if _, err := tryCall(func() js.Value { si.window.Get("location").Set("href", url); return js.Undefined() }); err != nil {
		si.abort() // the window is gone: nobody can answer
	}
	si.b.invoke(jsapi.CmdFinishSignIn, signInIDArgs(si.id), (*signInFinish)(si))
}

func (s *signInStart) rejected(err js.Value)     { (*signInRun)(s).end(s.reject, err) }
func (s *signInStart) lost(_ bool, err js.Value) { (*signInRun)(s).end(s.reject, err) }

// signInFinish handles finish_mcp_server_sign_in.
type signInFinish signInRun

func (s *signInFinish) resolved(v js.Value)       { (*signInRun)(s).end(s.resolve, v) }
func (s *signInFinish) rejected(err js.Value)     { (*signInRun)(s).end(s.reject, err) }
func (s *signInFinish) lost(_ bool, err js.Value) { (*signInRun)(s).end(s.reject, err) }

// httpURL reports whether u is an absolute http(s) URL: nothing else is
// loaded into the window (a javascript: URL would run in it).
func httpURL(u string) bool {
	return len(u) > 8 && (u[:8] == "https://" || u[:7] == "http://")
}
