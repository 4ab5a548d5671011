//go:build js && wasm

package main

import (
	"strconv"
	"strings"
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

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
	// same-origin: through SillyTavern's plugin the page's own cookies and
	// basic auth must go along; to a backend on another origin nothing is
	// sent (as with omit).
	init.Set("credentials", "same-origin")
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
			c.refused(r)
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

// refused handles a session answer that is not ok: a 403 whose JSON body
// has code mcp.origin_not_allowed (contract C3) refuses the bridge; any
// other answer fails the attempt.
func (c *conn) refused(r js.Value) {
	status := r.Get("status").Int()
	failed := "GET " + jsapi.PathSession + " answered HTTP " + strconv.Itoa(status)
	if status != 403 || r.Get("json").Type() != js.TypeFunction {
		c.fail(failed)
		return
	}
	body, err := tryCall(func() js.Value { return r.Call("json") })
	if err != nil {
		c.fail(failed)
		return
	}
	then(body, func(v js.Value) {
		code, message, command := option(v, "code"), option(v, "message"), option(v, "command")
		if code.Type() != js.TypeString || code.String() != jsapi.CodeOriginNotAllowed {
			c.fail(failed)
			return
		}
		m := ""
		if message.Type() == js.TypeString {
			m = message.String()
		}
		if !strings.HasPrefix(m, jsapi.CodeOriginNotAllowed+": ") {
			m = jsapi.CodeOriginNotAllowed + ": the ttmcp backend at " + c.b.origin + " refused this page's origin; restart it with --allow-origin <this page's origin>"
		}
		// The backend's own command line with --allow-origin added (an
		// older backend sends none).
		cmd := ""
		if command.Type() == js.TypeString {
			cmd = command.String()
		}
		c.refuse(m, cmd)
	}, func(js.Value) { c.fail(failed) })
}

// gotSession opens the WebSocket named by the session answer, or, when
// it says transport "http" (through SillyTavern's plugin), an HttpSocket
// on the backend's base: the same object shape, the same conversation.
func (c *conn) gotSession(s js.Value) {
	if c.done {
		return
	}
	if isObject(s) && s.Get("transport").Type() == js.TypeString && s.Get("transport").String() == jsapi.TransportHTTP {
		c.openHTTP(s)
		return
	}
	if !isObject(s) || s.Get("token").Type() != js.TypeString || s.Get("ws").Type() != js.TypeString {
		c.fail("the session answer has no token and ws URL")
		return
	}
	token, url := s.Get("token").String(), s.Get("ws").String()
	c.openSocket("the WebSocket", token, url, func() js.Value { return c.b.env.webSocket.New(url) })
}

// openHTTP opens the HTTP transport of a plugin session.
func (c *conn) openHTTP(s js.Value) {
	if s.Get("token").Type() != js.TypeString {
		c.fail("the session answer has no token")
		return
	}
	if c.b.env.httpSocket.Type() != js.TypeFunction {
		c.fail("this loader has no HTTP transport (load " + jsapi.PathLoader + " again)")
		return
	}
	opts := jsObject.New()
	opts.Set("csrf", jsapi.SillyTavernCSRF)
	if v := s.Get("csrf"); v.Type() == js.TypeString {
		opts.Set("csrf", v)
	}
	c.openSocket("the HTTP transport through SillyTavern", s.Get("token").String(), c.b.origin+jsapi.PathTransport, func() js.Value { return c.b.env.httpSocket.New(c.b.origin, opts) })
}

// openSocket opens the socket made by newSocket (what and url name it in
// errors) and shakes hands with token.
func (c *conn) openSocket(what, token, url string, newSocket func() js.Value) {
	ws, err := tryCall(newSocket)
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
	// Until the welcome; then the transport reads the socket's frames.
	c.on("message", func(args []js.Value) {
		if c.done || c.open {
			return
		}
		c.handshake(arg(args, 0).Get("data"))
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
		c.fail(closeText(what, code, reason))
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
	b.transport.Call("open", c.ws)
	b.pending = nil
	b.conn = c
	b.epoch++
	c.epoch = b.epoch
	b.failures, b.reason = 0, ""
	b.setError("", "", "")
	b.sendQueued()
	b.setState(stateOpen)
	b.settleWaiters()
	b.firstSettle()
}

// fail ends a connection attempt that did not open: the calls queued behind
// it reject with host_unavailable and a retry is scheduled.
func (c *conn) fail(reason string) {
	if c.done || c.open {
		return
	}
	b := c.b
	b.failures++
	b.reason = reason
	err := b.unavailableError()
	b.setError(jsapi.CodeHostUnavailable, err.Get("message").String(), "")
	c.end(stateClosed, err)
	b.scheduleRetry()
}

// refuse ends a connection attempt that the backend refused (this page's
// origin is not allowed): the calls queued behind it reject with the
// refusal, and no retry is scheduled; only reconnect() or a call made at
// least refusedQuiet later tries again. command is the backend's restart
// command ("" when it sent none).
func (c *conn) refuse(message, command string) {
	if c.done || c.open {
		return
	}
	b := c.b
	b.failures = 0
	b.reason = message
	b.refusedCommand = command
	b.refusedAt = b.env.now()
	b.setError(jsapi.CodeOriginNotAllowed, message, command)
	c.end(stateRefused, b.refusedError())
}

// end closes an attempt that did not open, sets the state and fails the
// calls queued behind it with err.
func (c *conn) end(state string, err js.Value) {
	c.detach()
	b := c.b
	if b.pending == c {
		b.pending = nil
	}
	queued := b.takeQueued()
	b.setState(state)
	for _, q := range queued {
		q.h.lost(false, err)
	}
	b.settleWaiters()
	b.firstSettle()
}

// dropped handles the close of an open connection: reconnect at once, and
// every call in flight on it is lost (never replayed).
func (b *bridge) dropped(c *conn) {
	c.detach()
	if b.conn == c {
		b.conn = nil
	}
	fast := b.transport.Call("drop") // [command, reject, …] of the transport's own calls
	lost := b.takeInflight()
	b.setError(jsapi.CodeHostConnectionLost, jsapi.CodeHostConnectionLost+": the connection to the ttmcp backend at "+b.origin+" dropped; reconnecting", "")
	b.connect()
	for i, n := 0, fast.Length(); i+1 < n; i += 2 {
		fast.Index(i + 1).Invoke(b.lostError(fast.Index(i).String()))
	}
	for _, q := range lost {
		q.h.lost(true, b.lostError(q.command))
	}
}

// lostError is the rejection of a call in flight on a socket that dropped.
func (b *bridge) lostError(command string) js.Value {
	return newError(jsapi.CodeHostConnectionLost, jsapi.KindUnavailable,
		jsapi.CodeHostConnectionLost+": the connection to the ttmcp backend at "+b.origin+
			" dropped while "+command+" was in flight; it was not replayed")
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

// refusedQuiet is how long (ms) after a refusal the bridge makes no
// attempt of its own: calls reject at once, and only reconnect() tries.
const refusedQuiet = 30000

// refusedNow reports whether the bridge is refused and still quiet: a call
// now rejects with the refusal without an attempt.
func (b *bridge) refusedNow() bool {
	return b.state == stateRefused && b.env.now()-b.refusedAt < refusedQuiet
}

// refusedError is the rejection of a call while the origin is refused: the
// server's message, which names the origin and --allow-origin, and its
// restart command as the Error's command when it sent one.
func (b *bridge) refusedError() js.Value {
	e := newError(jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable, b.reason)
	if b.refusedCommand != "" {
		e.Set("command", b.refusedCommand)
	}
	return e
}

// reconnect is mcpBridge.reconnect(): one attempt now, unless one is in
// progress (then that one) or the bridge is open. The Promise resolves
// when the attempt has settled, whatever its outcome (state and error say
// which).
func (b *bridge) reconnect() js.Value {
	p, resolve, _ := newPromise()
	if b.conn != nil {
		resolve.Invoke()
		return p
	}
	b.waiters = append(b.waiters, resolve)
	b.connect() // does nothing while an attempt is in progress
	return p
}

// settleWaiters resolves the reconnect() promises of the attempt that has
// just settled.
func (b *bridge) settleWaiters() {
	w := b.waiters
	b.waiters = nil
	for _, resolve := range w {
		resolve.Invoke()
	}
}

// openEpoch returns the epoch of the open connection, or 0.
func (b *bridge) openEpoch() uint64 {
	if b.conn == nil {
		return 0
	}
	return b.epoch
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

// closeText explains the close of a socket that never opened; what names
// it ("the WebSocket", or the HTTP transport through SillyTavern).
func closeText(what string, code int, reason string) string {
	t := what + " closed with " + strconv.Itoa(code)
	switch code {
	case jsapi.ClosePolicyViolation:
		t = "the backend refused the session (close 1008 of " + what + ")"
	case 1006:
		t = what + " closed abnormally (1006: refused or unreachable)"
	}
	if reason != "" {
		t += ": " + reason
	}
	return t
}
