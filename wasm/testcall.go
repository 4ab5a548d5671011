//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// testCall runs tools.testCall(input, {signal}) exactly as reference §1.5:
// start_mcp_test_call (the private start acknowledgement), then
// test_mcp_tool_call, with cancel_mcp_test_call on abort or failure.
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

	tc := &testCall{b: b, resolve: resolve, reject: reject, signal: signal, progress: progress, callID: callID, args: args}
	b.invoke(jsapi.CmdStartTestCall, callIDArgs(callID), (*testStart)(tc))
	return p
}

// testCall is one tools.testCall in progress.
type testCall struct {
	b               *bridge
	resolve, reject js.Value
	signal          js.Value
	progress        js.Value // options.onProgress
	callID          string
	args            js.Value // {"dto":{...,"callId":...}} as a JS string
	epoch           uint64   // the connection that acknowledged the start
	onAbort         js.Func
	listening       bool
	cancelled       bool
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

// listen adds the abort listener that asks the backend to cancel the call.
func (tc *testCall) listen() {
	if !isObject(tc.signal) || typeOf(tc.signal.Get("addEventListener")) != js.TypeFunction {
		return
	}
	tc.onAbort = callback("testCall abort", func([]js.Value) {
		tc.cancel()
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

// cancel fires cancel_mcp_test_call, once, without waiting; only on the
// connection that started the call (a dropped socket already cancelled
// everything it had started).
func (tc *testCall) cancel() {
	if tc.cancelled {
		return
	}
	tc.cancelled = true
	b := tc.b
	if tc.epoch == 0 || b.openEpoch() != tc.epoch {
		return
	}
	b.invoke(jsapi.CmdCancelTestCall, callIDArgs(tc.callID), cancelHandler{})
}

// testStart handles start_mcp_test_call.
type testStart testCall

func (t *testStart) resolved(js.Value) {
	tc := (*testCall)(t)
	tc.epoch = tc.b.openEpoch() // the acknowledgement came on the open connection
	if aborted(tc.signal) {
		tc.cancel()
		tc.resolve.Invoke(localNotSent())
		return
	}
	if tc.epoch == 0 {
		tc.resolve.Invoke(connectionLostOutcome(false))
		return
	}
	tc.listen()
	tc.b.invokeProgress(jsapi.CmdTestToolCall, tc.args, tc.progress, (*testRun)(tc))
}

func (t *testStart) rejected(err js.Value) { t.reject.Invoke(err) }

func (t *testStart) lost(sent bool, err js.Value) {
	if sent { // the socket dropped: the test request was never written
		t.resolve.Invoke(connectionLostOutcome(false))
		return
	}
	if code := err.Get("code"); code.Type() == js.TypeString && code.String() == jsapi.CodeOriginNotAllowed {
		t.resolve.Invoke(refusedOutcome(err)) // the backend refused this origin: nothing was sent
		return
	}
	t.reject.Invoke(err) // the backend could not be reached at all
}

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
	tc.unlisten()
	tc.resolve.Invoke(v)
}

func (t *testRun) rejected(err js.Value) {
	tc := (*testCall)(t)
	tc.unlisten()
	tc.cancel()
	tc.reject.Invoke(err)
}

func (t *testRun) lost(sent bool, _ js.Value) {
	tc := (*testCall)(t)
	tc.unlisten()
	tc.resolve.Invoke(connectionLostOutcome(sent))
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
