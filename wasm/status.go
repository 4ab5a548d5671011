//go:build js && wasm

package main

import "syscall/js"

// Bridge states, as in window.__TAURITAVERN__.mcpBridge.state (contract C2).
const (
	stateConnecting = "connecting" // a connection attempt is in progress; calls wait for it
	stateOpen       = "open"       // handshake done; calls are sent at once
	stateClosed     = "closed"     // the last attempt failed; calls reject at once, retries continue
	stateRefused    = "refused"    // the backend refused this page's origin; no automatic attempts
)

// stateEvent is dispatched on window at every state change.
const stateEvent = "tauritavern-mcp:state"

// newStatus makes the mcpBridge object (contract C2): {state, backend,
// error?, reconnect()}. The bridge keeps it current from then on: error is
// {code, message}, why the last attempt failed or the connection dropped,
// and is absent while open.
func (b *bridge) newStatus() js.Value {
	status := jsObject.New()
	status.Set("state", b.state)
	status.Set("backend", b.origin)
	if b.errCode != "" {
		status.Set("error", b.statusError())
	}
	status.Set("reconnect", guard("mcpBridge.reconnect", func([]js.Value) js.Value {
		return b.reconnect()
	}))
	b.status = status
	return status
}

// setError records why the bridge is not open, in mcpBridge.error; code ""
// removes it. command, when set, is the refusal's restart command
// (error.command).
func (b *bridge) setError(code, message, command string) {
	b.errCode, b.errMessage, b.errCommand = code, message, command
	if b.status.Type() != js.TypeObject {
		return
	}
	if code == "" {
		b.status.Delete("error")
		return
	}
	b.status.Set("error", b.statusError())
}

func (b *bridge) statusError() js.Value {
	e := jsObject.New()
	e.Set("code", b.errCode)
	e.Set("message", b.errMessage)
	if b.errCommand != "" {
		e.Set("command", b.errCommand)
	}
	return e
}

// setState records a state, mirrors it into mcpBridge and tells the page.
func (b *bridge) setState(s string) {
	if b.state == s {
		return
	}
	b.state = s
	if b.status.Type() == js.TypeObject {
		b.status.Set("state", s)
	}
	dispatchState(s)
}

// dispatchState dispatches CustomEvent(stateEvent, {detail: {state}}) on
// window where there is one (not under node).
func dispatchState(s string) {
	dispatch := global.Get("dispatchEvent")
	ce := global.Get("CustomEvent")
	if dispatch.Type() != js.TypeFunction || ce.Type() != js.TypeFunction {
		return
	}
	detail := jsObject.New()
	detail.Set("state", s)
	init := jsObject.New()
	init.Set("detail", detail)
	_, err := tryCall(func() js.Value {
		return dispatch.Call("call", global, ce.New(stateEvent, init))
	})
	if err != nil {
		logError("ttmcp bridge: dispatching " + stateEvent + " failed: " + err.Error())
	}
}

// firstSettle tells the loader, once, that the first connection attempt
// has settled (opened or failed): `ready` resolves.
func (b *bridge) firstSettle() {
	if b.settled {
		return
	}
	b.settled = true
	if b.onFirstSettle != nil {
		b.onFirstSettle()
	}
}
