//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// testCall runs tools.testCall(input, {signal}) with reference §1.5's
// commands: start_mcp_test_call (the private start acknowledgement), then
// test_mcp_tool_call, with cancel_mcp_test_call on abort or failure. The
// two are sent together, without waiting for the acknowledgement (issue
// 31: one round trip instead of two); the backend orders the call after
// its start and fails it with the start's error when the start fails
// (backend/server/testorder.go, DECISIONS "Test calls"), so the outcome is
// what the two awaited in turn give: a rejected start rejects with its
// error, else the call's outcome is returned.
// options.onProgress (ttmcp's, issue 29) takes the call's progress: the
// test call's invoke asks for it, and the transport hands it the frames
// until the result.
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
	limit := jsapi.MaxInboundFrame - maxEnvelope(jsapi.CmdTestToolCall)
	if n := utf8Size(args, limit); n > limit {
		reject.Invoke(tooLargeError(n + maxEnvelope(jsapi.CmdTestToolCall)))
		return p
	}

	tc := &testCall{b: b, resolve: resolve, reject: reject, signal: signal, callID: callID}
	tc.listen()
	tc.start = b.invoke(jsapi.CmdStartTestCall, callIDArgs(callID), (*testStart)(tc))
	if !tc.settled { // not refused at once
		tc.run = b.invokeProgress(jsapi.CmdTestToolCall, args, progress, (*testRun)(tc))
	}
	return p
}

// testCall is one tools.testCall in progress.
type testCall struct {
	b               *bridge
	resolve, reject js.Value
	signal          js.Value
	callID          string
	start, run      *call // their invokes, sent or queued
	onAbort         js.Func
	listening       bool
	cancelled       bool
	// answered: the start's acknowledgement came (or its socket dropped);
	// until then held keeps the call's outcome, which the backend may
	// deliver first: a start that turns out rejected rejects instead.
	answered bool
	held     func()
	settled  bool
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
// outcome_unknown once test_mcp_tool_call was written, else not_sent.
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
	tc.held = nil
	tc.unlisten()
	fn()
}

// afterStart runs fn, the call's outcome, once the start has answered.
func (tc *testCall) afterStart(fn func()) {
	if tc.answered {
		fn()
		return
	}
	tc.held = fn
}

// startAnswered releases the call's outcome held for the start's answer.
func (tc *testCall) startAnswered() {
	tc.answered = true
	if h := tc.held; h != nil {
		tc.held = nil
		h()
	}
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

// abort: while the two wait for a connection, nothing was sent: they are
// taken back and the call is not_sent. Once written, the backend is asked
// to cancel, and its outcome is awaited (a cancel the backend reads while
// the start still runs makes the call not_sent; later, it stops the call).
func (tc *testCall) abort() {
	if tc.settled {
		return
	}
	if tc.start != nil && tc.b.unqueue(tc.start) {
		if tc.run != nil {
			tc.b.unqueue(tc.run)
		}
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
	if tc.start == nil || tc.start.epoch == 0 || b.openEpoch() != tc.start.epoch {
		return
	}
	b.invoke(jsapi.CmdCancelTestCall, callIDArgs(tc.callID), cancelHandler{})
}

// testStart handles start_mcp_test_call.
type testStart testCall

func (t *testStart) resolved(js.Value) { (*testCall)(t).startAnswered() }

// rejected: the start failed, and so does the call, with the start's
// error (the backend sends it nothing); nothing was registered to cancel.
func (t *testStart) rejected(err js.Value) {
	tc := (*testCall)(t)
	tc.answered = true
	tc.settle(func() { tc.reject.Invoke(err) })
}

// lost: the socket dropped, or the attempt the start waited for failed;
// the call, written or queued with it, is lost the same way and says how.
func (t *testStart) lost(bool, js.Value) { (*testCall)(t).startAnswered() }

// refusedOutcome is the outcome of a test call while the backend refuses
// this page's origin: not_sent, with the refusal's code and message.
func refusedOutcome(err js.Value) js.Value {
	return outcome(jsapi.OutcomeNotSent, jsapi.CodeOriginNotAllowed, err.Get("message").String())
}

// testRun handles test_mcp_tool_call: the backend's outcome is returned
// as-is, even when the signal aborted after dispatch.
type testRun testCall

func (t *testRun) resolved(v js.Value) {
	tc := (*testCall)(t)
	tc.afterStart(func() { tc.settle(func() { tc.resolve.Invoke(v) }) })
}

func (t *testRun) rejected(err js.Value) {
	tc := (*testCall)(t)
	tc.afterStart(func() {
		if tc.settled {
			return
		}
		tc.settle(func() { tc.reject.Invoke(err) })
		tc.cancel() // releases the start's registration
	})
}

func (t *testRun) lost(sent bool, err js.Value) {
	tc := (*testCall)(t)
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
