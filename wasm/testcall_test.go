//go:build js && wasm

package main

import (
	"strconv"
	"strings"
	"syscall/js"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

// fakeSignal is an AbortSignal stand-in that counts its listeners.
type fakeSignal struct {
	obj      js.Value
	listener js.Value
	added    int
	removed  int
}

func newFakeSignal(n *fakeNet) *fakeSignal {
	f := &fakeSignal{obj: jsObject.New(), listener: js.Undefined()}
	f.obj.Set("aborted", false)
	f.obj.Set("addEventListener", n.fn(func(a []js.Value) any {
		if a[0].String() == "abort" {
			f.added++
			f.listener = a[1]
		}
		return nil
	}))
	f.obj.Set("removeEventListener", n.fn(func(a []js.Value) any {
		if a[0].String() == "abort" && a[1].Equal(f.listener) {
			f.removed++
			f.listener = js.Undefined()
		}
		return nil
	}))
	return f
}

func (f *fakeSignal) abort() {
	f.obj.Set("aborted", true)
	if f.listener.Type() == js.TypeFunction {
		f.listener.Invoke(jsObject.New())
	}
}

func testInput() js.Value {
	v, _ := parseJSON(js.ValueOf(`{"registrationId":"r1","nativeName":"echo","argumentsJson":"{\"n\":9007199254740993}"}`))
	return v
}

const knownOutcome = `{"outcome":"known_response","response":{"kind":"tool_result","isError":false,"textBlocks":[{"index":0,"text":"hi"}],"diagnostics":[]}}`

// Go's tools.testCall (the data plane's hooks.testCall: queued, aborted
// already, large arguments; here on an open socket too, as it still
// works there): one run_mcp_test_call invoke.
func TestTestCallHappyPath(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	input := testInput()
	p := b.testCall(input, obj("signal", sig.obj))
	input.Set("nativeName", "changed after the call") // must not change what is sent

	id, args := s.invoked(t, 1, jsapi.CmdRunTestCall)
	callID := args.Get("dto").Get("callId").String()
	want := `{"dto":{"registrationId":"r1","nativeName":"echo","argumentsJson":"{\"n\":9007199254740993}","callId":"` + callID + `"}}`
	if got := stringify(args); !uuidV4.MatchString(callID) || got != want {
		t.Errorf("run args = %s\nwant       %s", got, want)
	}
	if sig.added != 1 {
		t.Errorf("abort listeners added: %d", sig.added)
	}
	s.reply(id, knownOutcome)
	v := mustResolve(t, p)
	if stringify(v) != knownOutcome {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	if len(s.sent) != 2 {
		t.Errorf("extra frames: %v", s.sent[2:])
	}
}

func TestTestCallPreAborted(t *testing.T) {
	b, _, s := openBridge(t)
	ctl := global.Get("AbortController").New()
	ctl.Call("abort")
	v := mustResolve(t, b.testCall(testInput(), obj("signal", ctl.Get("signal"))))
	if stringify(v) != `{"outcome":"not_sent","code":"mcp.call_cancelled_before_send","message":"The tool request was cancelled before it started"}` {
		t.Errorf("outcome = %s", stringify(v))
	}
	if len(s.sent) != 1 {
		t.Errorf("commands were sent: %v", s.sent[1:])
	}
}

// An abort once the call is written: the backend is asked to cancel (read
// while the start runs, the call is not_sent; later, it stops the call),
// and its outcome is awaited and returned as-is, even a known response.
func TestTestCallAbortedAfterDispatch(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	id, args := s.invoked(t, 1, jsapi.CmdRunTestCall)
	sig.abort()
	_, cargs := s.invoked(t, 2, jsapi.CmdCancelTestCall)
	if want := `{"dto":{"callId":"` + args.Get("dto").Get("callId").String() + `"}}`; stringify(cargs) != want {
		t.Errorf("cancel args = %s, want %s", stringify(cargs), want)
	}
	if !pending(t, p) {
		t.Fatal("abort settled the call; the backend outcome must be awaited")
	}
	s.reply(id, knownOutcome)
	if v := mustResolve(t, p); stringify(v) != knownOutcome {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	s.reply(3, `null`) // the cancel's own answer is absorbed
	if len(s.sent) != 3 {
		t.Errorf("frames: %v", s.sent)
	}
}

// An abort while the call waits for the connection takes it back: nothing
// is ever written, and the call is not_sent.
func TestTestCallAbortedWhileConnecting(t *testing.T) {
	n, e := newFakeNet(t)
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	other := b.call(jsapi.CmdListServers, js.ValueOf("{}")) // queued beside it
	sig.abort()
	v := mustResolve(t, p)
	if v.Get("outcome").String() != jsapi.OutcomeNotSent || v.Get("code").String() != jsapi.CodeCallCancelledBeforeSend {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	s := n.socket(0)
	s.open()
	s.welcome()
	id, _ := s.invoked(t, 1, jsapi.CmdListServers)
	if len(s.sent) != 2 {
		t.Errorf("frames after the welcome: %v", s.sent)
	}
	s.reply(id, `{"servers":[],"storageIssues":[]}`)
	mustResolve(t, other)
}

// The backend's error (a failed start, a refused dto) rejects, and no
// cancel follows: the backend left nothing registered.
func TestTestCallRejected(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	id, _ := s.invoked(t, 1, jsapi.CmdRunTestCall)
	s.replyError(id, `{"kind":"Conflict","code":"mcp.call_id_in_use","message":"mcp.call_id_in_use: call is already active"}`)
	mustReject(t, p, "mcp.call_id_in_use", jsapi.KindConflict)
	if sig.added != 1 || sig.removed != 1 {
		t.Errorf("listener added %d removed %d", sig.added, sig.removed)
	}
	sig.abort()
	if len(s.sent) != 2 {
		t.Errorf("frames after a rejection: %v", s.sent[2:])
	}
}

func TestTestCallConnectionLost(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)

	// dropped once run_mcp_test_call was written: outcome_unknown
	p := b.testCall(testInput(), obj("signal", sig.obj))
	s.invoked(t, 1, jsapi.CmdRunTestCall)
	s.drop(1006, "")
	v := mustResolve(t, p)
	if v.Get("outcome").String() != jsapi.OutcomeOutcomeUnknown || v.Get("code").String() != jsapi.CodeHostConnectionLost || v.Get("message").String() == "" {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	// an abort after the drop sends nothing on the new socket
	sig.abort()
	s2 := n.socket(1)
	s2.open()
	s2.welcome()
	if len(s2.sent) != 1 {
		t.Errorf("frames on the new socket: %v", s2.sent)
	}
}

func TestTestCallWhileUnreachable(t *testing.T) {
	n, e := newFakeNet(t)
	n.fail = "Failed to fetch"
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	// queued behind the attempt that fails: rejected, nothing sent
	p := b.testCall(testInput(), js.Undefined())
	mustReject(t, p, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	waitFor(t, "closed", func() bool { return b.state == stateClosed })
	mustReject(t, b.testCall(testInput(), js.Undefined()), jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	if len(n.sockets) != 0 {
		t.Errorf("%d sockets", len(n.sockets))
	}
}

func TestTestCallBadInput(t *testing.T) {
	b, _, s := openBridge(t)
	mustReject(t, b.testCall(obj("n", global.Get("BigInt").Invoke(1)), js.Undefined()), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	big := strProto.Get("repeat").Call("call", "x", jsapi.MaxInboundFrame)
	mustReject(t, b.testCall(obj("argumentsJson", big), js.Undefined()), jsapi.CodeRequestTooLarge, jsapi.KindBadRequest)
	if len(s.sent) != 1 {
		t.Errorf("frames: %v", s.sent[1:])
	}
	// null / undefined input is sent as {callId} (the backend validates)
	p := b.testCall(js.Null(), js.Null())
	id, args := s.invoked(t, 1, jsapi.CmdRunTestCall)
	if k := jsObject.Call("keys", args.Get("dto")).Call("join", ",").String(); k != "callId" {
		t.Errorf("dto keys = %s", k)
	}
	s.reply(id, `{"outcome":"not_sent","code":"mcp.call_registration_invalid","message":"x"}`)
	mustResolve(t, p)
}

// A signal that is not an AbortSignal, down to BigInts where booleans and
// functions belong, is a signal that never aborts: no panic, the call runs.
func TestTestCallStrangeSignal(t *testing.T) {
	b, _, s := openBridge(t)
	big := global.Get("BigInt").Invoke(1)
	sig := obj("aborted", big)
	sig.Set("addEventListener", big)
	p := b.testCall(testInput(), obj("signal", sig))
	if p.Get("then").Type() != js.TypeFunction {
		t.Fatal("testCall did not return a promise")
	}
	// aborted is truthy: the call is not sent
	v := mustResolve(t, p)
	if v.Get("outcome").String() != jsapi.OutcomeNotSent {
		t.Errorf("outcome = %s", stringify(v))
	}
	sig.Set("aborted", js.ValueOf(false))
	p = b.testCall(testInput(), obj("signal", sig))
	id, _ := s.invoked(t, 1, jsapi.CmdRunTestCall)
	s.replyError(id, `{"kind":"Conflict","code":"mcp.call_id_in_use","message":"mcp.call_id_in_use: call is already active"}`)
	mustReject(t, p, "mcp.call_id_in_use", jsapi.KindConflict)
}

// options.onProgress: the invoke asks for progress, its progress frames
// reach the function in order until the result, and none after.
func TestTestCallProgress(t *testing.T) {
	b, n, s := openBridge(t)
	var got []string
	onProgress := n.fn(func(a []js.Value) any {
		got = append(got, stringify(a[0]))
		return nil
	})
	p := b.testCall(testInput(), obj("onProgress", onProgress))
	id, _ := s.invoked(t, 1, jsapi.CmdRunTestCall)
	if !s.frame(t, 1).Get("progress").Truthy() {
		t.Fatalf("the test call did not ask for progress: %s", s.sent[1])
	}
	progress := func(v string) { s.message(`{"type":"progress","id":` + strconv.Itoa(id) + `,"value":` + v + `}`) }
	progress(`{"progress":1,"total":2,"message":"one","updates":1}`)
	progress(`{"progress":2,"total":2,"message":"two","updates":2}`)
	s.reply(id, knownOutcome)
	progress(`{"progress":3,"updates":3}`)
	mustResolve(t, p)
	want := []string{`{"progress":1,"total":2,"message":"one","updates":1}`, `{"progress":2,"total":2,"message":"two","updates":2}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("progress seen:\n%s", strings.Join(got, "\n"))
	}
	// without onProgress it does not ask
	b.testCall(testInput(), js.Undefined())
	s.invoked(t, 2, jsapi.CmdRunTestCall)
	if s.frame(t, 2).Get("progress").Truthy() {
		t.Fatalf("asked for progress without onProgress: %s", s.sent[2])
	}
}

// The published tools.testCall is the data plane's: on an open socket it
// writes one run_mcp_test_call without entering Go; while connecting it
// hands the call to Go, which queues it (and takes it back on abort).
func TestTestCallPublished(t *testing.T) {
	b, n, s := openBridge(t)
	global.Delete("__TAURITAVERN__")
	defer global.Delete("__TAURITAVERN__")
	publish(b)
	tc := b.transport.Get("testCall")
	if !global.Get("__TAURITAVERN__").Get("api").Get("mcp").Get("tools").Get("testCall").Equal(tc) {
		t.Fatal("api.mcp.tools.testCall is not the data plane's")
	}
	p := tc.Invoke(testInput(), js.Undefined())
	id, _ := s.invoked(t, 1, jsapi.CmdRunTestCall)
	s.reply(id, knownOutcome)
	if v := mustResolve(t, p); stringify(v) != knownOutcome {
		t.Errorf("outcome = %s", stringify(v))
	}
	s.drop(1006, "")
	sig := newFakeSignal(n)
	p = tc.Invoke(testInput(), obj("signal", sig.obj)) // queued by Go
	sig.abort()
	if v := mustResolve(t, p); v.Get("code").String() != jsapi.CodeCallCancelledBeforeSend {
		t.Errorf("outcome = %s", stringify(v))
	}
}
