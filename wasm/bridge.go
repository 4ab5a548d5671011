//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// Bridge states, as in window.__TAURITAVERN__.mcpBridge.state.
const (
	stateConnecting = "connecting" // a connection attempt is in progress; calls wait for it
	stateOpen       = "open"       // handshake done; calls are sent at once
	stateClosed     = "closed"     // the last attempt failed; calls reject at once
)

// stateEvent is dispatched on window at every state change.
const stateEvent = "tauritavern-mcp:state"

// env is what the bridge takes from the page; tests substitute fakes.
type env struct {
	fetch            js.Value // fetch(url, init)
	webSocket        js.Value // WebSocket constructor
	abortController  js.Value // AbortController constructor, or undefined
	setTimeout       js.Value
	clearTimeout     js.Value
	random           func() float64
	handshakeTimeout int // ms for one attempt: session fetch, socket open, welcome
}

func browserEnv() env {
	random := global.Get("Math").Get("random")
	return env{
		fetch:            global.Get("fetch"),
		webSocket:        global.Get("WebSocket"),
		abortController:  global.Get("AbortController"),
		setTimeout:       global.Get("setTimeout"),
		clearTimeout:     global.Get("clearTimeout"),
		random:           func() float64 { return random.Invoke().Float() },
		handshakeTimeout: 10000,
	}
}

// handler receives the outcome of one invoke. Exactly one method is called,
// once.
type handler interface {
	// resolved: the backend answered ok with value v.
	resolved(v js.Value)
	// rejected: the backend answered an error, or the call was refused
	// before reaching the socket (too large, backend unreachable); err is
	// the Error to reject with.
	rejected(err js.Value)
	// lost: the socket dropped with the call written to it (sent), or the
	// connection attempt the call was queued behind failed (!sent); err is
	// the matching Error (connection lost / host unavailable).
	lost(sent bool, err js.Value)
}

// call is one invoke, queued behind a connection attempt or in flight.
type call struct {
	id      uint64
	command string
	frame   js.Value // the whole frame, held while queued
	h       handler
}

// bridge is the callback-only WebSocket client. All its methods run on
// JavaScript's thread, from exported functions or socket/timer/promise
// callbacks, never concurrently (but possibly re-entrantly: a state event
// listener or an abort listener may call back into the API), so it holds
// no mutex: a blocking lock would deadlock a re-entrant call.
type bridge struct {
	origin string
	env    env

	state  string
	status js.Value // the mcpBridge object, once published

	conn    *conn // the open connection, or nil
	pending *conn // the connection attempt in progress, or nil
	epoch   uint64

	nextID   uint64
	inflight map[uint64]*call // written to conn, waiting for a result
	queued   []*call          // waiting for pending to open

	failures   int    // consecutive failed attempts
	reason     string // why the last attempt failed
	retryFunc  js.Func
	retryTimer js.Value

	onFirstSettle func()
	settled       bool

	// prefetched is the loader's GET /jsapi/session, started while the
	// wasm downloaded: the first attempt uses it instead of fetching, which
	// saves a round trip before ready. Later attempts fetch afresh.
	prefetched js.Value
}

func newBridge(origin string, e env) *bridge {
	return &bridge{
		origin:     origin,
		env:        e,
		state:      stateConnecting,
		status:     js.Undefined(),
		inflight:   make(map[uint64]*call),
		prefetched: js.Undefined(),
	}
}

// conn is one connection attempt and, once welcomed, the open connection.
type conn struct {
	b       *bridge
	epoch   uint64
	ws      js.Value
	abort   js.Value // AbortController of the session fetch
	wsFuncs []js.Func
	timer   js.Value
	timerFn js.Func
	hasTime bool
	open    bool // welcomed
	done    bool // failed or closed; its callbacks are detached
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

func (b *bridge) firstSettle() {
	if b.settled {
		return
	}
	b.settled = true
	if b.onFirstSettle != nil {
		b.onFirstSettle()
	}
}

// connect starts a connection attempt unless one is running or open:
// fetch the session (a fresh token each time: a restarted backend has a new
// one), open the socket, send hello, wait for welcome.
func (b *bridge) connect() {
	if b.pending != nil || b.conn != nil {
		return
	}
	b.cancelRetry()
	c := &conn{b: b, ws: js.Undefined(), abort: js.Undefined()}
	b.pending = c
	b.setState(stateConnecting)

	c.timerFn = callback("handshake timeout", func([]js.Value) {
		c.hasTime = false
		c.fail("no answer within " + strconv.Itoa(b.env.handshakeTimeout/1000) + " s")
	})
	c.timer = b.env.setTimeout.Invoke(c.timerFn, b.env.handshakeTimeout)
	c.hasTime = true

	init := jsObject.New()
	init.Set("credentials", "omit")
	init.Set("cache", "no-store")
	if b.env.abortController.Type() == js.TypeFunction {
		c.abort = b.env.abortController.New()
		init.Set("signal", c.abort.Get("signal"))
	}
	resp, err := b.prefetched, error(nil)
	b.prefetched = js.Undefined()
	if resp.Type() != js.TypeObject {
		resp, err = tryCall(func() js.Value {
			return b.env.fetch.Invoke(b.origin+jsapi.PathSession, init)
		})
	}
	if err != nil {
		c.fail("fetch failed: " + err.Error())
		return
	}
	then(resp, func(r js.Value) {
		if c.done {
			return
		}
		if !r.Get("ok").Truthy() {
			c.fail("GET " + jsapi.PathSession + " answered HTTP " + strconv.Itoa(r.Get("status").Int()))
			return
		}
		body, err := tryCall(func() js.Value { return r.Call("json") })
		if err != nil {
			c.fail("the session answer is not JSON: " + err.Error())
			return
		}
		then(body, c.gotSession, func(e js.Value) {
			c.fail("the session answer is not JSON: " + jsErrorText(e))
		})
	}, func(e js.Value) {
		c.fail("GET " + jsapi.PathSession + " failed: " + jsErrorText(e))
	})
}

// gotSession opens the WebSocket named by the session answer.
func (c *conn) gotSession(s js.Value) {
	if c.done {
		return
	}
	if !isObject(s) || s.Get("token").Type() != js.TypeString || s.Get("ws").Type() != js.TypeString {
		c.fail("the session answer has no token and ws URL")
		return
	}
	token, url := s.Get("token").String(), s.Get("ws").String()
	ws, err := tryCall(func() js.Value { return c.b.env.webSocket.New(url) })
	if err != nil {
		c.fail("cannot open " + url + ": " + err.Error())
		return
	}
	c.ws = ws
	c.on("open", func([]js.Value) {
		if !c.done {
			c.ws.Call("send", helloFrame(token))
		}
	})
	c.on("message", func(args []js.Value) {
		if c.done {
			return
		}
		data := arg(args, 0).Get("data")
		if c.open {
			c.b.receive(data)
		} else {
			c.handshake(data)
		}
	})
	c.on("close", func(args []js.Value) {
		if c.done {
			return
		}
		ev := arg(args, 0)
		code, reason := 0, ""
		if isObject(ev) {
			if v := ev.Get("code"); v.Type() == js.TypeNumber {
				code = v.Int()
			}
			if v := ev.Get("reason"); v.Type() == js.TypeString {
				reason = v.String()
			}
		}
		if c.open {
			c.b.dropped(c)
			return
		}
		c.fail(closeText(code, reason))
	})
}

// on sets ws.on<event> to a js.Func owned by the connection.
func (c *conn) on(event string, fn func(args []js.Value)) {
	f := callback("WebSocket "+event, fn)
	c.wsFuncs = append(c.wsFuncs, f)
	c.ws.Set("on"+event, f)
}

// handshake reads the first frame, which must be the welcome.
func (c *conn) handshake(data js.Value) {
	if data.Type() != js.TypeString {
		c.fail("the backend's first frame is not text")
		return
	}
	v, err := parseJSON(data)
	if err != nil || !isObject(v) || v.Get("type").Type() != js.TypeString || v.Get("type").String() != jsapi.FrameWelcome {
		c.fail("the backend's first frame is not a welcome")
		return
	}
	c.stopTimer()
	c.open = true
	b := c.b
	b.pending = nil
	b.conn = c
	b.epoch++
	c.epoch = b.epoch
	b.failures, b.reason = 0, ""
	queued := b.queued
	b.queued = nil
	for _, q := range queued {
		b.send(q)
	}
	b.setState(stateOpen)
	b.firstSettle()
}

// fail ends a connection attempt that did not open: the calls queued behind
// it reject with host_unavailable and a retry is scheduled.
func (c *conn) fail(reason string) {
	if c.done || c.open {
		return
	}
	c.detach()
	b := c.b
	if b.pending == c {
		b.pending = nil
	}
	b.failures++
	b.reason = reason
	queued := b.queued
	b.queued = nil
	b.setState(stateClosed)
	b.scheduleRetry()
	for _, q := range queued {
		q.h.lost(false, b.unavailableError())
	}
	b.firstSettle()
}

// dropped handles the close of an open connection: reconnect at once, and
// every call in flight on it is lost (never replayed).
func (b *bridge) dropped(c *conn) {
	c.detach()
	if b.conn == c {
		b.conn = nil
	}
	lost := b.inflight
	b.inflight = make(map[uint64]*call)
	b.connect()
	for _, q := range lost {
		q.h.lost(true, newError(jsapi.CodeHostConnectionLost, jsapi.KindUnavailable,
			jsapi.CodeHostConnectionLost+": the connection to the ttmcp backend at "+b.origin+
				" dropped while "+q.command+" was in flight; it was not replayed"))
	}
}

// detach stops every callback of the connection, closes its socket and
// releases its js.Funcs. The handlers are unset before release, so the
// browser never calls a released function.
func (c *conn) detach() {
	if c.done {
		return
	}
	c.done = true
	c.stopTimer()
	if c.abort.Type() == js.TypeObject {
		tryCall(func() js.Value { return c.abort.Call("abort") })
	}
	if c.ws.Type() == js.TypeObject {
		for _, ev := range [...]string{"onopen", "onmessage", "onclose"} {
			c.ws.Set(ev, js.Null())
		}
		tryCall(func() js.Value { return c.ws.Call("close") })
	}
	for _, f := range c.wsFuncs {
		f.Release()
	}
	c.wsFuncs = nil
}

func (c *conn) stopTimer() {
	if c.hasTime {
		c.b.env.clearTimeout.Invoke(c.timer)
		c.hasTime = false
	}
	if c.timerFn.Truthy() {
		c.timerFn.Release()
		c.timerFn = js.Func{}
	}
}

// scheduleRetry starts the next attempt after a jittered backoff.
func (b *bridge) scheduleRetry() {
	b.cancelRetry()
	delay := backoffDelay(b.failures-1, b.env.random())
	b.retryFunc = callback("reconnect", func([]js.Value) {
		b.retryFunc.Release()
		b.retryFunc = js.Func{}
		b.connect()
	})
	b.retryTimer = b.env.setTimeout.Invoke(b.retryFunc, delay)
}

func (b *bridge) cancelRetry() {
	if b.retryFunc.Truthy() {
		b.env.clearTimeout.Invoke(b.retryTimer)
		b.retryFunc.Release()
		b.retryFunc = js.Func{}
	}
}

// unavailableError is the rejection of a call made while the backend
// cannot be reached.
func (b *bridge) unavailableError() js.Value {
	reason := b.reason
	if reason == "" {
		reason = "not connected"
	}
	return newError(jsapi.CodeHostUnavailable, jsapi.KindUnavailable,
		jsapi.CodeHostUnavailable+": cannot reach the ttmcp backend at "+b.origin+": "+reason)
}

// invoke sends command with args (a JS string holding a JSON object) and
// reports the outcome to h. It never blocks: an open connection sends at
// once, a connection attempt in progress queues the call, a closed bridge
// refuses it.
func (b *bridge) invoke(command string, args js.Value, h handler) {
	b.nextID++
	id := b.nextID
	frame := concat(invokeEnvelope(id, command), args, invokeTail)
	if n := utf8Size(frame, jsapi.MaxInboundFrame); n > jsapi.MaxInboundFrame {
		h.rejected(tooLargeError(n))
		return
	}
	c := &call{id: id, command: command, frame: frame, h: h}
	switch {
	case b.conn != nil:
		b.send(c)
	case b.pending != nil:
		b.queued = append(b.queued, c)
	default:
		h.rejected(b.unavailableError())
	}
}

func tooLargeError(n int) js.Value {
	return newError(jsapi.CodeRequestTooLarge, jsapi.KindBadRequest,
		jsapi.CodeRequestTooLarge+": the request is "+strconv.Itoa(n)+
			" bytes; the ttmcp backend reads at most "+strconv.Itoa(jsapi.MaxInboundFrame)+" bytes per frame")
}

// send writes a call to the open connection.
func (b *bridge) send(c *call) {
	frame := c.frame
	c.frame = js.Undefined()
	b.inflight[c.id] = c
	if _, err := tryCall(func() js.Value { return b.conn.ws.Call("send", frame) }); err != nil {
		delete(b.inflight, c.id)
		c.h.rejected(internalError("WebSocket.send", err))
	}
}

// openEpoch returns the epoch of the open connection, or 0.
func (b *bridge) openEpoch() uint64 {
	if b.conn == nil {
		return 0
	}
	return b.epoch
}

// receive handles one frame of the open connection. Only its head (64
// UTF-16 units) enters Go; the value is cut out and parsed by JavaScript.
func (b *bridge) receive(data js.Value) {
	if data.Type() != js.TypeString {
		return // the protocol is text frames only
	}
	n := strLen(data)
	headEnd := n
	if headEnd > headLen {
		headEnd = headLen
	}
	id, ok, start, matched := parseResultHead(slice(data, 0, headEnd).String())
	if matched && start < n-1 && charCodeAt(data, n-1) == '}' {
		c := b.inflight[id]
		if c == nil {
			return // an unknown id (a call of an older socket cannot be here): nothing to settle
		}
		if v, err := parseJSON(slice(data, start, n-1)); err == nil {
			delete(b.inflight, id)
			if ok {
				c.h.resolved(v)
			} else {
				c.h.rejected(backendError(v))
			}
			return
		}
	}
	b.receiveSlow(data, id, matched)
}

// receiveSlow parses a frame that does not follow the result layout as a
// whole, in JavaScript.
func (b *bridge) receiveSlow(data js.Value, headID uint64, headMatched bool) {
	v, err := parseJSON(data)
	if err != nil || !isObject(v) {
		if c := b.inflight[headID]; headMatched && c != nil {
			delete(b.inflight, headID)
			c.h.rejected(newError(jsapi.CodeHostInternal, jsapi.KindInternal,
				jsapi.CodeHostInternal+": the ttmcp backend sent a malformed result for "+c.command))
			return
		}
		logError("ttmcp bridge: ignoring a malformed frame from the backend")
		return
	}
	if t := v.Get("type"); t.Type() != js.TypeString || t.String() != jsapi.FrameResult {
		return // not a result (nothing else is defined yet): ignore
	}
	idv := v.Get("id")
	if idv.Type() != js.TypeNumber {
		return
	}
	f := idv.Float()
	if f < 1 || f != float64(uint64(f)) {
		return
	}
	id := uint64(f)
	c := b.inflight[id]
	if c == nil {
		return
	}
	delete(b.inflight, id)
	if v.Get("ok").Type() == js.TypeBoolean && v.Get("ok").Bool() {
		c.h.resolved(v.Get("value"))
		return
	}
	c.h.rejected(backendError(v.Get("error")))
}

// then attaches onOK/onErr to promise p. The two js.Funcs release each
// other when either runs (a promise settles once), so late settlements
// never reach a released function.
func then(p js.Value, onOK, onErr func(js.Value)) {
	var ok, bad js.Func
	release := func() {
		ok.Release()
		bad.Release()
	}
	ok = callback("promise reaction", func(args []js.Value) {
		release()
		onOK(arg(args, 0))
	})
	bad = callback("promise reaction", func(args []js.Value) {
		release()
		onErr(arg(args, 0))
	})
	p.Call("then", ok, bad)
}

// jsErrorText renders a thrown JS value (an Error's "Name: message", else
// String(v)).
func jsErrorText(e js.Value) string {
	if isObject(e) {
		if m := e.Get("message"); m.Type() == js.TypeString {
			if n := e.Get("name"); n.Type() == js.TypeString && n.String() != "" {
				return n.String() + ": " + m.String()
			}
			return m.String()
		}
	}
	if e.Type() == js.TypeString {
		return e.String()
	}
	return "unknown error"
}

// closeText explains the close of a socket that never opened.
func closeText(code int, reason string) string {
	t := "the WebSocket closed with " + strconv.Itoa(code)
	switch code {
	case jsapi.ClosePolicyViolation:
		t = "the backend refused the session (WebSocket close 1008)"
	case 1006:
		t = "the WebSocket closed abnormally (1006: refused or unreachable)"
	}
	if reason != "" {
		t += ": " + reason
	}
	return t
}
