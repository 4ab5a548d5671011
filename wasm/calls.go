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
	command string
	args    js.Value // the args JSON text (a JS string), held while queued
	h       handler
	// progress is the call's onProgress function (undefined: none), which
	// the transport hands the call's progress frames.
	progress js.Value
	// epoch is the connection the call was written to (0: not written).
	epoch uint64
}

// invoke sends command with args (a JS string holding a JSON object)
// through the transport and reports the outcome to h. It never blocks: an
// open connection sends at once, a connection attempt in progress queues
// the call, a closed bridge refuses it, and so does a refused one (with the
// refusal) unless the refusal is older than refusedQuiet: then the call
// starts an attempt. The api.mcp methods reach it only when the
// transport's fast path cannot send (no open socket, large arguments).
func (b *bridge) invoke(command string, args js.Value, h handler) *call {
	return b.invokeProgress(command, args, js.Undefined(), h)
}

// invokeProgress is invoke with the call's onProgress function (a
// function, or undefined). It returns the call, sent or queued (nil when
// it was refused at once).
func (b *bridge) invokeProgress(command string, args, progress js.Value, h handler) *call {
	limit := jsapi.MaxInboundFrame - maxEnvelope(command)
	if n := utf8Size(args, limit); n > limit {
		h.rejected(tooLargeError(n + maxEnvelope(command)))
		return nil
	}
	if typeOf(progress) != js.TypeFunction {
		progress = js.Undefined()
	}
	c := &call{command: command, args: args, h: h, progress: progress}
	switch {
	case b.conn != nil:
		b.send(c)
	case b.pending != nil:
		b.queued = append(b.queued, c)
	case b.refusedNow():
		h.rejected(b.refusedError())
		return nil
	case b.state == stateRefused:
		// refused a while ago: this call makes one attempt and waits for it
		b.queued = append(b.queued, c)
		b.connect()
	default:
		h.rejected(b.unavailableError())
		return nil
	}
	return c
}

// unqueue takes c out of the calls waiting for a connection; false when it
// is not among them (written, or settled).
func (b *bridge) unqueue(c *call) bool {
	for i, q := range b.queued {
		if q == c {
			b.queued = append(b.queued[:i:i], b.queued[i+1:]...)
			return true
		}
	}
	return false
}

func tooLargeError(n int) js.Value {
	return newError(jsapi.CodeRequestTooLarge, jsapi.KindBadRequest,
		jsapi.CodeRequestTooLarge+": the request is "+strconv.Itoa(n)+
			" bytes; the ttmcp backend reads at most "+strconv.Itoa(jsapi.MaxInboundFrame)+" bytes per frame")
}

// send writes a call to the open connection, through the transport, which
// hands its result back to result().
func (b *bridge) send(c *call) {
	args := c.args
	c.args = js.Undefined()
	id, err := tryCall(func() js.Value { return b.transport.Call("send", c.command, args, c.progress) })
	if err != nil {
		c.h.rejected(internalError("WebSocket.send", err))
		return
	}
	c.epoch = b.epoch
	b.inflight[uint64(id.Int())] = c
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
