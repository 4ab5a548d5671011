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

func TestTestCallHappyPath(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	input := testInput()
	p := b.testCall(input, obj("signal", sig.obj))
	input.Set("nativeName", "changed after the call") // must not change what is sent

	// the start and the call are written at once (issue 31), in that order
	startID, args := s.invoked(t, 1, jsapi.CmdStartTestCall)
	callID := args.Get("dto").Get("callId").String()
	if !uuidV4.MatchString(callID) || stringify(args) != `{"dto":{"callId":"`+callID+`"}}` {
		t.Fatalf("start args = %s", stringify(args))
	}
	id, args := s.invoked(t, 2, jsapi.CmdTestToolCall)
	want := `{"dto":{"registrationId":"r1","nativeName":"echo","argumentsJson":"{\"n\":9007199254740993}","callId":"` + callID + `"}}`
	if got := stringify(args); got != want {
		t.Errorf("test args = %s\nwant        %s", got, want)
	}
	if sig.added != 1 {
		t.Errorf("abort listeners added: %d", sig.added)
	}
	// an outcome before the acknowledgement waits for it
	s.reply(id, knownOutcome)
	if !pending(t, p) {
		t.Fatal("settled before the start's acknowledgement")
	}
	s.reply(startID, `null`)
	v := mustResolve(t, p)
	if stringify(v) != knownOutcome {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	if len(s.sent) != 3 {
		t.Errorf("extra frames: %v", s.sent[3:])
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

// An abort before the acknowledgement, with both frames written: the
// backend is asked to cancel (it orders the cancel after the start: read
// while the start runs, the call is not_sent), and its outcome is awaited.
func TestTestCallAbortedBeforeTheAcknowledgement(t *testing.T) {
	b, _, s := openBridge(t)
	ctl := global.Get("AbortController").New()
	p := b.testCall(testInput(), obj("signal", ctl.Get("signal")))
	id, args := s.invoked(t, 1, jsapi.CmdStartTestCall)
	runID, _ := s.invoked(t, 2, jsapi.CmdTestToolCall)
	ctl.Call("abort")
	_, cargs := s.invoked(t, 3, jsapi.CmdCancelTestCall)
	if stringify(cargs) != stringify(args) {
		t.Errorf("cancel args %s, start args %s", stringify(cargs), stringify(args))
	}
	s.reply(id, `null`)
	if !pending(t, p) {
		t.Fatal("abort settled the call; the backend outcome must be awaited")
	}
	notSent := `{"outcome":"not_sent","code":"mcp.call_cancelled_before_send","message":"The tool request was cancelled before it started"}`
	s.reply(runID, notSent)
	if v := mustResolve(t, p); stringify(v) != notSent {
		t.Errorf("outcome = %s", stringify(v))
	}
	if len(s.sent) != 4 {
		t.Errorf("frames: %v", s.sent)
	}
}

// An abort while the two wait for the connection takes them back: nothing
// is ever written, and the call is not_sent.
func TestTestCallAbortedWhileConnecting(t *testing.T) {
	n, e := newFakeNet(t)
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	other := b.call(jsapi.CmdListServers, js.ValueOf("{}")) // queued beside them
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

func TestTestCallAbortedAfterDispatch(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	id, start := s.invoked(t, 1, jsapi.CmdStartTestCall)
	s.reply(id, `null`)
	id, _ = s.invoked(t, 2, jsapi.CmdTestToolCall)
	sig.abort()
	_, cargs := s.invoked(t, 3, jsapi.CmdCancelTestCall)
	if stringify(cargs) != stringify(start) {
		t.Errorf("cancel args = %s", stringify(cargs))
	}
	if !pending(t, p) {
		t.Fatal("abort settled the call; the backend outcome must be awaited")
	}
	// the backend's outcome is returned as-is, even a known response
	s.reply(id, knownOutcome)
	if v := mustResolve(t, p); stringify(v) != knownOutcome {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	s.reply(4, `null`) // the cancel's own answer is absorbed
}

func TestTestCallRejectionSendsCancel(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	id, start := s.invoked(t, 1, jsapi.CmdStartTestCall)
	s.reply(id, `null`)
	id, _ = s.invoked(t, 2, jsapi.CmdTestToolCall)
	s.replyError(id, `{"kind":"Internal","code":"mcp.internal","message":"mcp.internal: the disk is full"}`)
	mustReject(t, p, jsapi.CodeInternal, jsapi.KindInternal)
	_, cargs := s.invoked(t, 3, jsapi.CmdCancelTestCall)
	if stringify(cargs) != stringify(start) {
		t.Errorf("cancel args = %s", stringify(cargs))
	}
	if sig.added != 1 || sig.removed != 1 {
		t.Errorf("listener added %d removed %d", sig.added, sig.removed)
	}

	// a rejected start rejects with its error, without cancel (nothing
	// was registered), whichever answer comes first; the backend fails the
	// call with the start's error (here a different one, to tell them apart)
	inUse := `{"kind":"Conflict","code":"mcp.call_id_in_use","message":"mcp.call_id_in_use: call is already active"}`
	other := `{"kind":"Internal","code":"mcp.internal","message":"mcp.internal: not the start's"}`
	p = b.testCall(testInput(), js.Undefined())
	id, _ = s.invoked(t, 4, jsapi.CmdStartTestCall)
	runID, _ := s.invoked(t, 5, jsapi.CmdTestToolCall)
	s.replyError(id, inUse)
	mustReject(t, p, "mcp.call_id_in_use", jsapi.KindConflict)
	s.replyError(runID, inUse)
	p = b.testCall(testInput(), js.Undefined())
	id, _ = s.invoked(t, 6, jsapi.CmdStartTestCall)
	runID, _ = s.invoked(t, 7, jsapi.CmdTestToolCall)
	s.replyError(runID, other)
	if !pending(t, p) {
		t.Fatal("the call's error settled before the start's answer")
	}
	s.replyError(id, inUse)
	mustReject(t, p, "mcp.call_id_in_use", jsapi.KindConflict)
	if len(s.sent) != 8 {
		t.Errorf("frames after a rejected start: %v", s.sent[8:])
	}
}

func TestTestCallConnectionLost(t *testing.T) {
	b, n, s := openBridge(t)
	sig := newFakeSignal(n)

	// dropped after test_mcp_tool_call was written: outcome_unknown, with
	// its start acknowledged or not (the two are written together)
	p := b.testCall(testInput(), obj("signal", sig.obj))
	id, _ := s.invoked(t, 1, jsapi.CmdStartTestCall)
	s.reply(id, `null`)
	s.invoked(t, 2, jsapi.CmdTestToolCall)
	p2 := b.testCall(testInput(), js.Undefined())
	s.invoked(t, 3, jsapi.CmdStartTestCall)
	s.invoked(t, 4, jsapi.CmdTestToolCall)
	s.drop(1006, "")

	v := mustResolve(t, p)
	if v.Get("outcome").String() != jsapi.OutcomeOutcomeUnknown || v.Get("code").String() != jsapi.CodeHostConnectionLost || v.Get("message").String() == "" {
		t.Errorf("outcome = %s", stringify(v))
	}
	if sig.removed != 1 {
		t.Errorf("listener removed %d times", sig.removed)
	}
	v2 := mustResolve(t, p2)
	if v2.Get("outcome").String() != jsapi.OutcomeOutcomeUnknown || v2.Get("code").String() != jsapi.CodeHostConnectionLost {
		t.Errorf("outcome = %s", stringify(v2))
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
	id, _ := s.invoked(t, 1, jsapi.CmdStartTestCall)
	s.reply(id, `null`)
	id, args := s.invoked(t, 2, jsapi.CmdTestToolCall)
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
	id, _ := s.invoked(t, 1, jsapi.CmdStartTestCall)
	s.replyError(id, `{"kind":"Conflict","code":"mcp.call_id_in_use","message":"mcp.call_id_in_use: call is already active"}`)
	mustReject(t, p, "mcp.call_id_in_use", jsapi.KindConflict)
}

// options.onProgress: the test call's invoke asks for progress (the
// start's does not), its progress frames reach the function in order
// until the result, and none after.
func TestTestCallProgress(t *testing.T) {
	b, n, s := openBridge(t)
	var got []string
	onProgress := n.fn(func(a []js.Value) any {
		got = append(got, stringify(a[0]))
		return nil
	})
	p := b.testCall(testInput(), obj("onProgress", onProgress))
	id, _ := s.invoked(t, 1, jsapi.CmdStartTestCall)
	if s.frame(t, 1).Get("progress").Truthy() {
		t.Fatalf("the start asked for progress: %s", s.sent[1])
	}
	s.reply(id, `null`)
	id, _ = s.invoked(t, 2, jsapi.CmdTestToolCall)
	if !s.frame(t, 2).Get("progress").Truthy() {
		t.Fatalf("the test call did not ask for progress: %s", s.sent[2])
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
	// without onProgress the test call does not ask
	b.testCall(testInput(), js.Undefined())
	id, _ = s.invoked(t, 3, jsapi.CmdStartTestCall)
	s.reply(id, `null`)
	s.invoked(t, 4, jsapi.CmdTestToolCall)
	if s.frame(t, 4).Get("progress").Truthy() {
		t.Fatalf("asked for progress without onProgress: %s", s.sent[4])
	}
}
