//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// testCall runs tools.testCall(input, {signal}) where the data plane
// (jsapi/bridge-transport.js) does not: while no socket is open (the call
// is queued until one is), for a signal aborted already, or for arguments
// too large for its fast path. One run_mcp_test_call carries reference
// §1.5's start and test_mcp_tool_call (issue 31: one frame each way;
// DECISIONS "Test calls"), with cancel_mcp_test_call on abort: a rejected
// start rejects with its error, else the call's outcome is returned.
// options.onProgress (ttmcp's, issue 29) takes the call's progress: the
// invoke asks for it, and the transport hands it the frames until the
// result.
func (b *bridge) testCall(input, options js.Value) js.Value {
	p, resolve, reject := newPromise()
	signal, progress := js.Undefined(), js.Undefined()
	if isObject(options) {
		signal = options.Get("signal")
		progress = options.Get("onProgress")
	}
	if aborted(signal) {
		resolve.Invoke(localNotSent())
		return p
	}
	if b.refusedNow() {
		resolve.Invoke(refusedOutcome(b.refusedError()))
		return p
	}

	// Capture the input before anything asynchronous: dto =
	// Object.assign({}, input, {callId}), serialised at once.
	callID := randomUUID()
	id := jsObject.New()
	id.Set("callId", callID)
	wrap := jsObject.New()
	wrap.Set("dto", jsObject.Get("assign").Invoke(jsObject.New(), input, id))
	args, err := stringifyJSON(wrap)
	if err != nil {
		reject.Invoke(argsError(err))
		return p
	}
	limit := jsapi.MaxInboundFrame - maxEnvelope(jsapi.CmdRunTestCall)
	if n := utf8Size(args, limit); n > limit {
		reject.Invoke(tooLargeError(n + maxEnvelope(jsapi.CmdRunTestCall)))
		return p
	}

	tc := &testCall{b: b, resolve: resolve, reject: reject, signal: signal, callID: callID}
	tc.listen()
	tc.run = b.invokeProgress(jsapi.CmdRunTestCall, args, progress, tc)
	return p
}

// testCall is one tools.testCall in progress.
type testCall struct {
	b               *bridge
	resolve, reject js.Value
	signal          js.Value
	callID          string
	run             *call // its invoke, sent or queued
	onAbort         js.Func
	listening       bool
	cancelled       bool
	settled         bool
}

func callIDArgs(callID string) js.Value {
	return js.ValueOf(`{"dto":{"callId":` + quoteJSON(callID) + `}}`)
}

func aborted(signal js.Value) bool {
	return isObject(signal) && truthy(signal.Get("aborted"))
}

// localNotSent is the outcome of a test call aborted before it was sent.
func localNotSent() js.Value {
	return outcome(jsapi.OutcomeNotSent, jsapi.CodeCallCancelledBeforeSend, jsapi.MessageCallCancelledBeforeSend)
}

// connectionLostOutcome is the outcome of a test call whose socket dropped:
// outcome_unknown once run_mcp_test_call was written, else not_sent.
func connectionLostOutcome(sent bool) js.Value {
	if sent {
		return outcome(jsapi.OutcomeOutcomeUnknown, jsapi.CodeHostConnectionLost,
			"The connection to the ttmcp backend dropped after the tool request was sent; the remote tool may have executed")
	}
	return outcome(jsapi.OutcomeNotSent, jsapi.CodeHostConnectionLost,
		"The connection to the ttmcp backend dropped before the tool request was sent")
}

func outcome(kind, code, message string) js.Value {
	o := jsObject.New()
	o.Set("outcome", kind)
	o.Set("code", code)
	o.Set("message", message)
	return o
}

// settle ends the test call with fn (resolve or reject), once, and removes
// the abort listener.
func (tc *testCall) settle(fn func()) {
	if tc.settled {
		return
	}
	tc.settled = true
	tc.unlisten()
	fn()
}

// listen adds the abort listener.
func (tc *testCall) listen() {
	if !isObject(tc.signal) || typeOf(tc.signal.Get("addEventListener")) != js.TypeFunction {
		return
	}
	tc.onAbort = callback("testCall abort", func([]js.Value) {
		tc.abort()
	})
	opts := jsObject.New()
	opts.Set("once", true)
	tc.signal.Call("addEventListener", "abort", tc.onAbort, opts)
	tc.listening = true
}

// unlisten removes the abort listener and releases it.
func (tc *testCall) unlisten() {
	if !tc.listening {
		return
	}
	tc.listening = false
	tc.signal.Call("removeEventListener", "abort", tc.onAbort)
	tc.onAbort.Release()
}

// abort: while the call waits for a connection, nothing was sent: it is
// taken back and is not_sent. Once written, the backend is asked to
// cancel, and its outcome is awaited (a cancel the backend reads while
// the start still runs makes the call not_sent; later, it stops the call).
func (tc *testCall) abort() {
	if tc.settled {
		return
	}
	if tc.run != nil && tc.b.unqueue(tc.run) {
		tc.settle(func() { tc.resolve.Invoke(localNotSent()) })
		return
	}
	tc.cancel()
}

// cancel fires cancel_mcp_test_call, once, without waiting; only on the
// connection the call was written to (a dropped socket already cancelled
// everything it had started).
func (tc *testCall) cancel() {
	if tc.cancelled {
		return
	}
	tc.cancelled = true
	b := tc.b
	if tc.run == nil || tc.run.epoch == 0 || b.openEpoch() != tc.run.epoch {
		return
	}
	b.invoke(jsapi.CmdCancelTestCall, callIDArgs(tc.callID), cancelHandler{})
}

// refusedOutcome is the outcome of a test call while the backend refuses
// this page's origin: not_sent, with the refusal's code and message.
func refusedOutcome(err js.Value) js.Value {
	return outcome(jsapi.OutcomeNotSent, jsapi.CodeOriginNotAllowed, err.Get("message").String())
}

// resolved: the backend's outcome is returned as-is, even when the signal
// aborted after dispatch.
func (tc *testCall) resolved(v js.Value) {
	tc.settle(func() { tc.resolve.Invoke(v) })
}

// rejected: the start failed or the dto was refused; the backend left
// nothing registered to cancel.
func (tc *testCall) rejected(err js.Value) {
	tc.settle(func() { tc.reject.Invoke(err) })
}

func (tc *testCall) lost(sent bool, err js.Value) {
	switch {
	case sent: // written when the socket dropped: the tool may have run
		tc.settle(func() { tc.resolve.Invoke(connectionLostOutcome(true)) })
	case isObject(err) && err.Get("code").Type() == js.TypeString && err.Get("code").String() == jsapi.CodeOriginNotAllowed:
		tc.settle(func() { tc.resolve.Invoke(refusedOutcome(err)) }) // the backend refused this origin: nothing was sent
	default:
		tc.settle(func() { tc.reject.Invoke(err) }) // the backend could not be reached at all
	}
}

// cancelHandler ignores the answer of a fire-and-forget cancel.
type cancelHandler struct{}

func (cancelHandler) resolved(js.Value) {}
func (cancelHandler) rejected(err js.Value) {
	logDebug("Failed to stop MCP test call:", err)
}
func (cancelHandler) lost(bool, js.Value) {}

var jsCrypto = global.Get("crypto")

// randomUUID is crypto.randomUUID(), or a v4 UUID from
// crypto.getRandomValues where randomUUID is missing (an insecure context,
// e.g. a SillyTavern page on a LAN address over http).
func randomUUID() string {
	if isObject(jsCrypto) {
		if jsCrypto.Get("randomUUID").Type() == js.TypeFunction {
			return jsCrypto.Call("randomUUID").String()
		}
		if jsCrypto.Get("getRandomValues").Type() == js.TypeFunction {
			a := global.Get("Uint8Array").New(16)
			jsCrypto.Call("getRandomValues", a)
			var b [16]byte
			js.CopyBytesToGo(b[:], a)
			return formatUUIDv4(b)
		}
	}
	panic("crypto.getRandomValues is not available")
}
