//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/jsapi"
)

const refusalMessage = "mcp.origin_not_allowed: the ttmcp backend does not allow requests from http://localhost:9000; restart it with --allow-origin http://localhost:9000"

const refusalBody = `{"code":"mcp.origin_not_allowed","origin":"http://localhost:9000","message":"` + refusalMessage + `"}`

// refusalCommand is what a backend that tells its restart command adds.
const refusalCommand = `ttmcp serve --data-root '/home/u/my data' --listen 127.0.0.1:7880 --allow-origin http://localhost:9000`

// refusedBridge returns a bridge whose first attempt the backend refused
// (contract C3: 403 with a JSON body).
func refusedBridge(t *testing.T) (*bridge, *fakeNet, *int) {
	t.Helper()
	return refusedBridgeWith(t, refusalBody)
}

// refusedBridgeWith is refusedBridge with body as the 403's body.
func refusedBridgeWith(t *testing.T, body string) (*bridge, *fakeNet, *int) {
	t.Helper()
	n, e := newFakeNet(t)
	n.status, n.body = 403, body
	b := newBridge(testOrigin, e)
	b.newStatus()
	settled := 0
	b.onFirstSettle = func() { settled++ }
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	waitFor(t, "refused", func() bool { return b.state == stateRefused })
	return b, n, &settled
}

func statusError(b *bridge) (code, message string) {
	e := b.status.Get("error")
	if !isObject(e) {
		return "", ""
	}
	return e.Get("code").String(), e.Get("message").String()
}

// Contract C2: a refused origin is state "refused" with error {code,
// message}; every call rejects at once with the server's message (a test
// call resolves not_sent), and the bridge makes no attempt of its own.
func TestOriginRefused(t *testing.T) {
	b, n, settled := refusedBridge(t)
	if *settled != 1 || b.status.Get("state").String() != stateRefused {
		t.Fatalf("settled %d, status %s", *settled, stringify(b.status))
	}
	if code, msg := statusError(b); code != jsapi.CodeOriginNotAllowed || msg != refusalMessage {
		t.Errorf("mcpBridge.error = %s", stringify(b.status.Get("error")))
	}
	defer global.Delete("__TAURITAVERN__")
	publish(b)
	tt := global.Get("__TAURITAVERN__")
	calls := []js.Value{
		b.call(jsapi.CmdListServers, js.ValueOf("{}")),
		tt.Get("api").Get("mcp").Get("servers").Call("create", obj("displayName", "x")),
		tt.Get("invoke").Call("safeInvoke", jsapi.CmdListLegacyTools),
	}
	for _, p := range calls {
		e := mustReject(t, p, jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
		if e.Get("message").String() != refusalMessage {
			t.Errorf("message = %q", e.Get("message").String())
		}
	}
	v := mustResolve(t, b.testCall(testInput(), js.Undefined()))
	if v.Get("outcome").String() != jsapi.OutcomeNotSent || v.Get("code").String() != jsapi.CodeOriginNotAllowed || v.Get("message").String() != refusalMessage {
		t.Errorf("testCall = %s", stringify(v))
	}
	// No hammering: with the backoff of an unreachable backend, 300 ms
	// would have made three more attempts.
	time.Sleep(300 * time.Millisecond)
	if n.sessions != 1 || len(n.sockets) != 0 {
		t.Errorf("%d session fetches, %d sockets while refused", n.sessions, len(n.sockets))
	}

	// reconnect() makes one attempt; the backend now allows the origin.
	n.status, n.body = 200, ""
	p := tt.Get("mcpBridge").Get("reconnect").Invoke()
	s := n.socket(0)
	if n.sessions != 2 || !pending(t, p) {
		t.Fatalf("sessions %d; reconnect settled before the attempt", n.sessions)
	}
	s.open()
	s.welcome()
	mustResolve(t, p)
	if b.state != stateOpen || !b.status.Get("error").IsUndefined() {
		t.Errorf("after reconnect: state %s, status %s", b.state, stringify(b.status))
	}
	if *settled != 1 {
		t.Errorf("settled %d times", *settled)
	}
}

// The refusal's command (the backend's own command line with
// --allow-origin added) is mcpBridge.error.command and the command of every
// rejection while refused; a backend that sends none leaves both out, and
// so does a later failure of another kind.
func TestOriginRefusedCommand(t *testing.T) {
	withCommand := strings.TrimSuffix(refusalBody, "}") + `,"command":` + quoteJSON(refusalCommand) + `}`
	b, n, _ := refusedBridgeWith(t, withCommand)
	if got := b.status.Get("error").Get("command"); got.Type() != js.TypeString || got.String() != refusalCommand {
		t.Errorf("mcpBridge.error = %s; want command %q", stringify(b.status.Get("error")), refusalCommand)
	}
	e := mustReject(t, b.call(jsapi.CmdListServers, js.ValueOf("{}")), jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
	if got := e.Get("command"); got.Type() != js.TypeString || got.String() != refusalCommand {
		t.Errorf("the rejection's command = %v", got)
	}
	// the backend is gone now: the next attempt's failure has no command
	n.fail = "TypeError: Failed to fetch"
	mustResolve(t, b.reconnect())
	if b.state != stateClosed || !b.status.Get("error").Get("command").IsUndefined() {
		t.Errorf("after a failed attempt: state %s, error %s", b.state, stringify(b.status.Get("error")))
	}

	old, _, _ := refusedBridge(t)
	if !old.status.Get("error").Get("command").IsUndefined() {
		t.Errorf("a refusal without command: error %s", stringify(old.status.Get("error")))
	}
	if e := mustReject(t, old.call(jsapi.CmdListServers, js.ValueOf("{}")), jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable); !e.Get("command").IsUndefined() {
		t.Errorf("a refusal without command: the rejection has command %v", e.Get("command"))
	}
}

// A call made 30 s or more after the refusal makes one attempt and waits
// for it; refused again, it rejects with the refusal, and so does a test
// call queued behind it (as not_sent).
func TestOriginRefusedQuietPeriod(t *testing.T) {
	b, n, _ := refusedBridge(t)
	n.clock += refusedQuiet - 1
	mustReject(t, b.call(jsapi.CmdListServers, js.ValueOf("{}")), jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
	if n.sessions != 1 {
		t.Fatalf("an attempt before the quiet period ended (%d fetches)", n.sessions)
	}
	n.clock++
	p := watch(b.call(jsapi.CmdListServers, js.ValueOf("{}")))
	tc := b.testCall(testInput(), js.Undefined()) // queued behind the same attempt
	if n.sessions != 2 {
		t.Fatalf("the call made no attempt (%d fetches)", n.sessions)
	}
	mustReject(t, p, jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
	if v := mustResolve(t, tc); v.Get("outcome").String() != jsapi.OutcomeNotSent || v.Get("code").String() != jsapi.CodeOriginNotAllowed {
		t.Errorf("testCall = %s", stringify(v))
	}
	if b.state != stateRefused || n.sessions != 2 {
		t.Errorf("state %s after %d fetches", b.state, n.sessions)
	}
	// the next call is in a new quiet period
	mustReject(t, b.call(jsapi.CmdListServers, js.ValueOf("{}")), jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
	if n.sessions != 2 {
		t.Errorf("%d fetches", n.sessions)
	}

	// allowed now: the next call after the quiet period goes through
	n.clock += refusedQuiet
	n.status, n.body = 200, ""
	p = b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	s := n.socket(0)
	s.open()
	s.welcome()
	id, _ := s.invoked(t, 1, jsapi.CmdListServers)
	s.reply(id, `{"servers":[],"storageIssues":[]}`)
	mustResolve(t, p)
}

// A 403 that is not a refusal of the origin (no JSON, or another code: the
// Host check, a cross-site fetch) is a failed attempt: closed, retried.
func TestForbiddenWithoutRefusalIsAFailure(t *testing.T) {
	for _, body := range []string{`"not an object"`, `{"code":"other","message":"x"}`} {
		n, e := newFakeNet(t)
		n.status, n.body = 403, body
		b := newBridge(testOrigin, e)
		b.newStatus()
		b.connect()
		waitFor(t, "closed", func() bool { return b.state == stateClosed })
		if code, msg := statusError(b); code != jsapi.CodeHostUnavailable || !strings.Contains(msg, "HTTP 403") || !strings.Contains(msg, testOrigin) {
			t.Errorf("%s: error %s %s", body, code, msg)
		}
		waitFor(t, "a retry", func() bool { return n.sessions >= 2 })
		b.cancelRetry()
	}
}

// mcpBridge.error says why the bridge is not open: host_unavailable (naming
// the backend) after a failed attempt, host_connection_lost after a drop;
// it is removed when the bridge opens. reconnect() resolves at once while
// open, and with the attempt in progress otherwise.
func TestStatusErrorAndReconnect(t *testing.T) {
	n, e := newFakeNet(t)
	n.fail = "Failed to fetch"
	b := newBridge(testOrigin, e)
	b.newStatus()
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	waitFor(t, "closed", func() bool { return b.state == stateClosed })
	code, msg := statusError(b)
	if code != jsapi.CodeHostUnavailable || !strings.HasPrefix(msg, jsapi.CodeHostUnavailable+": cannot reach the ttmcp backend at "+testOrigin) {
		t.Errorf("error %s %q", code, msg)
	}
	// reconnect() from closed: an attempt now (not at the backoff's time)
	b.cancelRetry()
	n.fail = ""
	before := n.sessions
	p := b.reconnect()
	s := n.socket(0)
	if n.sessions != before+1 {
		t.Fatalf("reconnect made no attempt")
	}
	p2 := b.reconnect() // joins the attempt in progress
	if n.sessions != before+1 {
		t.Errorf("a second reconnect started another attempt")
	}
	s.open()
	s.welcome()
	mustResolve(t, p)
	mustResolve(t, p2)
	if !b.status.Get("error").IsUndefined() {
		t.Errorf("error while open: %s", stringify(b.status.Get("error")))
	}
	mustResolve(t, b.reconnect()) // open: nothing to do
	if len(n.sockets) != 1 {
		t.Errorf("reconnect while open opened a socket")
	}
	s.drop(1006, "")
	if code, _ := statusError(b); code != jsapi.CodeHostConnectionLost || b.state != stateConnecting {
		t.Errorf("after a drop: state %s error %s", b.state, stringify(b.status.Get("error")))
	}
}
