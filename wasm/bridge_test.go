//go:build js && wasm

package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The bridge is tested against a fake fetch and a fake WebSocket (node has
// neither WebSocket nor a backend); the socket's on* handlers are driven by
// the test the way the browser would drive them. The real browser test is
// webtest/.

const testOrigin = "http://127.0.0.1:7878"

type fakeNet struct {
	t        *testing.T
	sessions int    // GET /jsapi/session count
	lastURL  string // of the last fetch
	fail     string // when set, fetch rejects with TypeError(fail)
	status   int    // HTTP status of the session answer
	body     string // when set, the session answer's JSON body instead of {token, ws}
	token    string
	clock    float64 // ms, what env.now returns
	sockets  []*fakeSocket
	funcs    []js.Func
}

type fakeSocket struct {
	url    string
	obj    js.Value
	sent   []string
	closed bool
}

func newFakeNet(t *testing.T) (*fakeNet, env) {
	n := &fakeNet{t: t, status: 200, token: "tok-1"}
	fetch := n.fn(func(args []js.Value) any {
		n.sessions++
		n.lastURL = args[0].String()
		init := args[1]
		if init.Get("credentials").String() != "same-origin" || init.Get("cache").String() != "no-store" {
			t.Errorf("session fetch init = %s", stringify(init))
		}
		if n.fail != "" {
			return rejected(global.Get("TypeError").New(n.fail))
		}
		body := jsObject.New()
		body.Set("token", n.token)
		body.Set("ws", "ws://127.0.0.1:7878/ws")
		if n.body != "" {
			body, _ = parseJSON(js.ValueOf(n.body))
		}
		resp := jsObject.New()
		resp.Set("ok", n.status >= 200 && n.status < 300)
		resp.Set("status", n.status)
		resp.Set("json", n.fn(func([]js.Value) any { return resolved(body) }))
		return resolved(resp)
	})
	ws := n.fn(func(args []js.Value) any {
		s := &fakeSocket{url: args[0].String(), obj: jsObject.New()}
		s.obj.Set("send", n.fn(func(a []js.Value) any {
			if s.closed {
				t.Errorf("send on a closed socket")
			}
			s.sent = append(s.sent, a[0].String())
			return nil
		}))
		s.obj.Set("close", n.fn(func([]js.Value) any { s.closed = true; return nil }))
		n.sockets = append(n.sockets, s)
		return s.obj
	})
	t.Cleanup(func() {
		for _, f := range n.funcs {
			f.Release()
		}
	})
	random := 0.5
	return n, env{
		transport:        loadTransport(t),
		fetch:            fetch,
		webSocket:        ws,
		abortController:  global.Get("AbortController"),
		setTimeout:       global.Get("setTimeout"),
		clearTimeout:     global.Get("clearTimeout"),
		random:           func() float64 { return random },
		now:              func() float64 { return n.clock },
		handshakeTimeout: 2000,
	}
}

// loadTransport returns createTransport of jsapi/bridge-transport.js, the
// data plane the loader hands the shim (node 20 cannot import the module
// from here, so its text is evaluated as a function body, without its
// export keywords).
var loadTransport = func() func(t *testing.T) js.Value {
	var (
		once    sync.Once
		factory js.Value
		err     error
	)
	return func(t *testing.T) js.Value {
		t.Helper()
		once.Do(func() {
			var src []byte
			if src, err = os.ReadFile("../jsapi/bridge-transport.js"); err != nil {
				return
			}
			body := regexp.MustCompile(`(?m)^export `).ReplaceAllString(string(src), "")
			factory, err = tryCall(func() js.Value {
				return global.Get("Function").New(body + "\nreturn createTransport;").Invoke()
			})
		})
		if err != nil {
			t.Fatalf("loading jsapi/bridge-transport.js: %v", err)
		}
		return factory
	}
}()

func (n *fakeNet) fn(f func(args []js.Value) any) js.Value {
	g := js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) })
	n.funcs = append(n.funcs, g)
	return g.Value
}

// waitFor lets the event loop run until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// socket waits for the i-th socket (0-based).
func (n *fakeNet) socket(i int) *fakeSocket {
	n.t.Helper()
	// wait for the handlers too: the test goroutine may run between the
	// constructor and the assignments that follow it
	waitFor(n.t, "socket "+strconv.Itoa(i), func() bool {
		return len(n.sockets) > i && n.sockets[i].obj.Get("onclose").Type() == js.TypeFunction
	})
	return n.sockets[i]
}

func (s *fakeSocket) fire(event string, ev js.Value) {
	h := s.obj.Get("on" + event)
	if h.Type() != js.TypeFunction {
		panic("no on" + event + " handler")
	}
	h.Invoke(ev)
}

func (s *fakeSocket) open()               { s.fire("open", jsObject.New()) }
func (s *fakeSocket) message(data string) { s.fire("message", obj("data", data)) }
func (s *fakeSocket) welcome() {
	s.message(`{"type":"welcome","server":{"name":"ttmcp","version":"test"}}`)
}
func (s *fakeSocket) drop(code int, reason string) {
	s.closed = true
	ev := obj("code", code)
	ev.Set("reason", reason)
	s.fire("close", ev)
}

// reply answers the call with id ok with value (JSON text).
func (s *fakeSocket) reply(id int, value string) {
	s.message(jsapi.ResultHead + strconv.Itoa(id) + jsapi.ResultOK + value + "}")
}

// replyError answers the call with id with an error object (JSON text).
func (s *fakeSocket) replyError(id int, errObj string) {
	s.message(jsapi.ResultHead + strconv.Itoa(id) + jsapi.ResultError + errObj + "}")
}

// frame returns the i-th frame sent, parsed.
func (s *fakeSocket) frame(t *testing.T, i int) js.Value {
	t.Helper()
	waitFor(t, "frame "+strconv.Itoa(i), func() bool { return len(s.sent) > i })
	v, err := parseJSON(js.ValueOf(s.sent[i]))
	if err != nil {
		t.Fatalf("frame %d is not JSON: %s", i, s.sent[i])
	}
	return v
}

// invoked checks frame i is an invoke of command and returns its id and args.
func (s *fakeSocket) invoked(t *testing.T, i int, command string) (int, js.Value) {
	t.Helper()
	f := s.frame(t, i)
	if f.Get("type").String() != jsapi.FrameInvoke || f.Get("command").String() != command {
		t.Fatalf("frame %d = %s, want an invoke of %s", i, s.sent[i], command)
	}
	return f.Get("id").Int(), f.Get("args")
}

func obj(key string, v any) js.Value {
	o := jsObject.New()
	o.Set(key, v)
	return o
}

// openBridge returns a bridge whose first connection is open.
func openBridge(t *testing.T) (*bridge, *fakeNet, *fakeSocket) {
	t.Helper()
	n, e := newFakeNet(t)
	b := newBridge(testOrigin, e)
	b.status = jsObject.New()
	settled := 0
	b.onFirstSettle = func() { settled++ }
	b.connect()
	s := n.socket(0)
	if s.url != "ws://127.0.0.1:7878/ws" || n.lastURL != testOrigin+jsapi.PathSession {
		t.Fatalf("socket %s after fetching %s", s.url, n.lastURL)
	}
	if b.state != stateConnecting || settled != 0 {
		t.Fatalf("state %s, settled %d before the welcome", b.state, settled)
	}
	s.open()
	if h := s.frame(t, 0); h.Get("type").String() != jsapi.FrameHello || h.Get("token").String() != "tok-1" {
		t.Fatalf("first frame = %s", s.sent[0])
	}
	s.welcome()
	if b.state != stateOpen || settled != 1 || b.status.Get("state").String() != stateOpen {
		t.Fatalf("after welcome: state %s, settled %d", b.state, settled)
	}
	t.Cleanup(func() { b.cancelRetry() })
	return b, n, s
}

func TestCallRoundTrip(t *testing.T) {
	b, _, s := openBridge(t)
	p := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	if s.sent[1] != `{"type":"invoke","id":1,"command":"list_mcp_servers","args":{}}` {
		t.Fatalf("frame = %s", s.sent[1])
	}
	s.reply(1, `{"servers":[{"id":"a","displayName":"é 世界"}],"storageIssues":[]}`)
	v := mustResolve(t, p)
	if v.Get("servers").Index(0).Get("displayName").String() != "é 世界" {
		t.Errorf("value = %s", stringify(v))
	}

	// results in any order; null values; an error with code and kind
	p2 := b.call(jsapi.CmdRemoveServer, js.ValueOf(`{"dto":{"registrationId":"x"}}`))
	p3 := b.call(jsapi.CmdCreateServer, js.ValueOf(`{"dto":{}}`))
	s.replyError(3, `{"kind":"BadRequest","code":"mcp.endpoint_invalid","message":"mcp.endpoint_invalid: empty host"}`)
	s.reply(2, `null`)
	if v := mustResolve(t, p2); !v.IsNull() {
		t.Errorf("remove resolved %s", stringify(v))
	}
	e := mustReject(t, p3, "mcp.endpoint_invalid", jsapi.KindBadRequest)
	if e.Get("message").String() != "mcp.endpoint_invalid: empty host" {
		t.Errorf("message = %s", e.Get("message").String())
	}

	// a result for an unknown id is ignored; the next call still works
	s.reply(99, `1`)
	p4 := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	s.reply(4, `"ok"`)
	if v := mustResolve(t, p4); v.String() != "ok" {
		t.Errorf("got %s", stringify(v))
	}
	if len(b.inflight) != 0 {
		t.Errorf("%d calls left in flight", len(b.inflight))
	}
}

func TestResultFallbackParse(t *testing.T) {
	b, _, s := openBridge(t)
	// members in another order / with spaces: parsed whole by JSON.parse
	p1 := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	p2 := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	p3 := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	s.message(`{"id":1,"type":"result","ok":true,"value":{"n":1}}`)
	s.message(`{"type": "result", "id": 2, "ok": false, "error": {"kind": "NotFound", "message": "MCP registration not found: x"}}`)
	// the head matches but the value is broken: the whole frame fails too,
	// so the call rejects instead of hanging
	s.message(jsapi.ResultHead + "3" + jsapi.ResultOK + `{broken}`)
	if v := mustResolve(t, p1); v.Get("n").Int() != 1 {
		t.Errorf("p1 = %s", stringify(v))
	}
	mustReject(t, p2, "", jsapi.KindNotFound)
	mustReject(t, p3, jsapi.CodeHostInternal, jsapi.KindInternal)

	// garbage and other frame types are ignored
	s.message(`not json`)
	s.message(`{"type":"notice"}`)
	p4 := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	s.reply(4, `[]`)
	mustResolve(t, p4)
}

func TestLargeResultStaysInJS(t *testing.T) {
	b, _, s := openBridge(t)
	p := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	// 6 MiB of text (above the inbound limit: responses may be larger)
	big := strings.Repeat("x", 6<<20)
	s.reply(1, `{"blob":"`+big+`"}`)
	v := mustResolve(t, p)
	if n := strLen(v.Get("blob")); n != 6<<20 {
		t.Errorf("blob length %d", n)
	}
}

func TestCallsWaitForTheConnectionAttempt(t *testing.T) {
	n, e := newFakeNet(t)
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	p := b.call(jsapi.CmdListServers, js.ValueOf("{}"))
	s := n.socket(0)
	s.open()
	if len(s.sent) != 1 {
		t.Fatalf("sent before the welcome: %v", s.sent)
	}
	if !pending(t, p) {
		t.Fatal("the call settled before the connection opened")
	}
	s.welcome()
	id, _ := s.invoked(t, 1, jsapi.CmdListServers)
	s.reply(id, `{"servers":[],"storageIssues":[]}`)
	mustResolve(t, p)
}

func TestUnreachableBackend(t *testing.T) {
	n, e := newFakeNet(t)
	n.fail = "Failed to fetch"
	b := newBridge(testOrigin, e)
	b.status = jsObject.New()
	settled := 0
	b.onFirstSettle = func() { settled++ }
	b.connect()
	defer b.cancelRetry()
	// a call made while the attempt is in progress waits, then fails with it
	p := watch(b.call(jsapi.CmdListServers, js.ValueOf("{}")))
	waitFor(t, "the attempt to fail", func() bool { return b.state == stateClosed })
	if settled != 1 || b.status.Get("state").String() != stateClosed {
		t.Fatalf("settled %d, status %s", settled, stringify(b.status))
	}
	want := "mcp.host_unavailable: cannot reach the ttmcp backend at " + testOrigin + ": GET /jsapi/session failed: TypeError: Failed to fetch"
	for _, p := range []js.Value{p, b.call(jsapi.CmdListServers, js.ValueOf("{}"))} {
		e := mustReject(t, p, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
		if m := e.Get("message").String(); m != want {
			t.Errorf("message = %q\nwant      %q", m, want)
		}
	}
	// it keeps retrying with backoff (first retry ≈100 ms), re-fetching the session
	start := time.Now()
	waitFor(t, "a retry", func() bool { return n.sessions >= 2 })
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("first retry after %v", d)
	}
	// the backend comes back: the next attempt opens
	n.fail = ""
	s := n.socket(0)
	s.open()
	s.welcome()
	if b.state != stateOpen || settled != 1 {
		t.Errorf("state %s settled %d", b.state, settled)
	}
}

func TestSessionRefusedAndBadToken(t *testing.T) {
	n, e := newFakeNet(t)
	n.status = 403
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	waitFor(t, "closed", func() bool { return b.state == stateClosed })
	if b.reason != "GET /jsapi/session answered HTTP 403" {
		t.Errorf("reason = %q", b.reason)
	}

	n2, e2 := newFakeNet(t)
	b2 := newBridge(testOrigin, e2)
	b2.connect()
	defer b2.cancelRetry()
	s := n2.socket(0)
	s.open()
	s.drop(jsapi.ClosePolicyViolation, "invalid token")
	if b2.state != stateClosed || !strings.Contains(b2.reason, "1008") || !strings.Contains(b2.reason, "invalid token") {
		t.Errorf("state %s reason %q", b2.state, b2.reason)
	}
	if !s.closed {
		t.Error("the refused socket was not closed")
	}
	// the retry fetches a fresh session (a restarted backend has a new token)
	n2.token = "tok-2"
	s2 := n2.socket(1)
	if n2.sessions != 2 {
		t.Errorf("sessions fetched: %d", n2.sessions)
	}
	s2.open()
	if h := s2.frame(t, 0); h.Get("token").String() != "tok-2" {
		t.Errorf("hello = %s", s2.sent[0])
	}
	// a first frame that is not a welcome fails the attempt
	s2.message(`{"type":"result","id":1,"ok":true,"value":1}`)
	if b2.state != stateClosed || !strings.Contains(b2.reason, "welcome") {
		t.Errorf("state %s reason %q", b2.state, b2.reason)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	n, e := newFakeNet(t)
	e.handshakeTimeout = 500 // long enough for the test to reach the socket on a loaded machine
	b := newBridge(testOrigin, e)
	b.connect()
	defer b.cancelRetry()
	p := watch(b.call(jsapi.CmdListServers, js.ValueOf("{}")))
	s := n.socket(0)
	s.open() // but never welcomed
	mustReject(t, p, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	if !strings.Contains(b.reason, "no answer within") || !s.closed {
		t.Errorf("reason %q, closed %v", b.reason, s.closed)
	}
}

func TestDropRejectsInFlightAndReconnects(t *testing.T) {
	b, n, s := openBridge(t)
	var states []string
	saved := global.Get("dispatchEvent")
	rec := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ev := a[0]
		if ev.Get("type").String() == stateEvent {
			states = append(states, ev.Get("detail").Get("state").String())
		}
		return true
	})
	defer rec.Release()
	global.Set("dispatchEvent", rec)
	defer global.Set("dispatchEvent", saved)

	// calls of Go's and of the transport's (the published methods' path)
	p1 := b.call(jsapi.CmdDiscoverTools, js.ValueOf(`{"dto":{"registrationId":"r"}}`))
	p2 := b.call(jsapi.CmdListServers, js.ValueOf(`{}`))
	p0 := b.method(method{"refresh", jsapi.CmdRefreshTools, argsRegistrationID}).Invoke("r")
	s.drop(1006, "")
	if b.state != stateConnecting || b.status.Get("state").String() != stateConnecting {
		t.Fatalf("state after the drop: %s", b.state)
	}
	for i, p := range []js.Value{p1, p2, p0} {
		e := mustReject(t, p, jsapi.CodeHostConnectionLost, jsapi.KindUnavailable)
		command := []string{jsapi.CmdDiscoverTools, jsapi.CmdListServers, jsapi.CmdRefreshTools}[i]
		if m := e.Get("message").String(); !strings.HasPrefix(m, jsapi.CodeHostConnectionLost+": ") || !strings.Contains(m, testOrigin) ||
			!strings.Contains(m, "dropped while "+command+" was in flight") {
			t.Errorf("message = %q", m)
		}
	}
	if n := b.transport.Call("inflight").Int(); n != 0 || len(b.inflight) != 0 {
		t.Errorf("after the drop: %d calls in the transport, %d in Go", n, len(b.inflight))
	}
	// reconnected at once, with a fresh session; nothing is replayed
	s2 := n.socket(1)
	if n.sessions != 2 {
		t.Errorf("sessions = %d", n.sessions)
	}
	p3 := b.call(jsapi.CmdListServers, js.ValueOf(`{}`))
	s2.open()
	s2.welcome()
	if len(s2.sent) != 2 {
		t.Fatalf("second socket frames: %v", s2.sent)
	}
	id, _ := s2.invoked(t, 1, jsapi.CmdListServers)
	s2.reply(id, `1`)
	mustResolve(t, p3)
	if got := strings.Join(states, ","); got != "connecting,open" {
		t.Errorf("state events = %s", got)
	}
	// late events of the dead socket are not delivered (its handlers are gone)
	if h := s.obj.Get("onmessage"); !h.IsNull() {
		t.Errorf("old socket still has onmessage")
	}
}

func TestRequestTooLarge(t *testing.T) {
	b, _, s := openBridge(t)
	big := strProto.Get("repeat").Call("call", "é", 2<<20) // 4 MiB of UTF-8 in 2 Mi units
	dto := obj("displayName", big)
	args, _ := stringifyJSON(obj("dto", dto))
	e := mustReject(t, b.call(jsapi.CmdCreateServer, args), jsapi.CodeRequestTooLarge, jsapi.KindBadRequest)
	if !strings.Contains(e.Get("message").String(), strconv.Itoa(jsapi.MaxInboundFrame)) {
		t.Errorf("message = %s", e.Get("message").String())
	}
	if len(s.sent) != 1 {
		t.Errorf("a too-large frame was sent")
	}
	// just under the limit in UTF-16 units but over it in bytes is measured
	if n := utf8Size(args, jsapi.MaxInboundFrame); n <= jsapi.MaxInboundFrame {
		t.Errorf("utf8Size = %d", n)
	}
}

// The loader's prefetched session serves the first attempt only: a
// reconnect fetches a fresh token.
func TestPrefetchedSession(t *testing.T) {
	n, e := newFakeNet(t)
	body := jsObject.New()
	body.Set("token", "prefetched")
	body.Set("ws", "ws://127.0.0.1:7878/ws")
	resp := jsObject.New()
	resp.Set("ok", true)
	resp.Set("status", 200)
	resp.Set("json", n.fn(func([]js.Value) any { return resolved(body) }))
	b := newBridge(testOrigin, e)
	b.status = jsObject.New()
	b.prefetched = resolved(resp)
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	waitFor(t, "the first socket", func() bool { return len(n.sockets) == 1 })
	s := n.socket(0)
	s.open()
	if h := s.frame(t, 0); h.Get("token").String() != "prefetched" || n.sessions != 0 {
		t.Fatalf("hello %s after %d fetches", s.sent[0], n.sessions)
	}
	s.welcome()
	s.drop(1006, "")
	waitFor(t, "a reconnect", func() bool { return len(n.sockets) == 2 })
	if n.sessions != 1 {
		t.Fatalf("the reconnect did not fetch a new session (%d fetches)", n.sessions)
	}
}
