//go:build js && wasm

package main

import (
	"strconv"
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

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

// invoke sends command with args (a JS string holding a JSON object) and
// reports the outcome to h. It never blocks: an open connection sends at
// once, a connection attempt in progress queues the call, a closed bridge
// refuses it, and so does a refused one (with the refusal) unless the
// refusal is older than refusedQuiet: then the call starts an attempt.
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
	case b.refusedNow():
		h.rejected(b.refusedError())
	case b.state == stateRefused:
		// refused a while ago: this call makes one attempt and waits for it
		b.queued = append(b.queued, c)
		b.connect()
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

// sendQueued sends, in order, the calls that waited for the connection
// that has just opened.
func (b *bridge) sendQueued() {
	for _, q := range b.takeQueued() {
		b.send(q)
	}
}

// takeQueued empties the queue and returns what it held.
func (b *bridge) takeQueued() []*call {
	q := b.queued
	b.queued = nil
	return q
}

// takeInflight empties the in-flight table and returns what it held.
func (b *bridge) takeInflight() map[uint64]*call {
	lost := b.inflight
	b.inflight = make(map[uint64]*call)
	return lost
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
