package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/jsapi"
)

// Memory under many pages (issue 9). A result waits in memory until the
// page has read it; a page that stops reading would hold every result it
// asked for (up to MaxInFlight of them, each up to a catalog's size) until
// its writes time out. So the bytes waiting to be written are counted, per
// socket and across sockets, and bounded:
//
//   - a socket that has results waiting and would exceed MaxQueuedPerSocket
//     is closed (1013, the reason says it is not reading);
//   - when the waiting bytes of all sockets would exceed MaxQueued, the
//     slowest socket (the one whose waiting results have made no progress
//     for longest) is closed, until they fit.
//
// One result is always let through on its own (a socket with nothing
// waiting, a server with nothing else waiting), so a large catalog still
// reaches a page that reads. A result shared by many sockets (the encoded
// list of an unchanged folder) is one buffer in memory and counts once
// across sockets, however many sockets it waits on.

// Defaults of the bounds (Config).
const (
	defaultMaxSockets         = 256
	defaultMaxQueuedPerSocket = 16 << 20
	defaultMaxQueued          = 128 << 20
)

// outbox counts the result bytes waiting to be written.
type outbox struct {
	perSocket, total int64

	// close closes a socket dropped for being slow (the page hears the
	// reason); tests substitute it.
	close func(sk *socket, reason string)

	mu      sync.Mutex
	queued  int64         // across sockets: heads once each, values once per buffer
	buffers map[*byte]int // values waiting, by first byte: how many results hold each
	sockets map[*socket]struct{}
}

func newOutbox(perSocket, total int64) *outbox {
	return &outbox{perSocket: perSocket, total: total, buffers: map[*byte]int{}, sockets: map[*socket]struct{}{},
		close: func(sk *socket, reason string) {
			sk.srv.log.Warn("closing a page's socket", "reason", reason)
			go sk.conn.Close(jsapi.CloseTryAgainLater, closeReason(reason))
			// The close frame waits behind a write in progress, which waits
			// for the page to read: give it a moment, then tear the
			// connection down under it (the page sees 1006), so the memory
			// is released.
			time.AfterFunc(dropGrace, sk.abortWrites)
		}}
}

// pending is one result waiting on a socket: its framing (head and tail,
// its own) and its value (possibly shared).
type pending struct {
	framing int64
	value   []byte
}

func (p *pending) size() int64 { return p.framing + int64(len(p.value)) }

// backlog is a socket's share of the outbox, under outbox.mu.
type backlog struct {
	queued  int64                 // this socket's waiting bytes, shared values included
	since   time.Time             // of the last progress while bytes wait
	pending map[*pending]struct{} // waiting on this socket
	dropped bool                  // closed for being slow: its bytes no longer count across sockets
}

// admit counts p on sk before it is written, or returns false when sk is
// (or was just) closed for being slow: then p is not written.
func (o *outbox) admit(sk *socket, p *pending) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := &sk.backlog
	if b.dropped {
		return false
	}
	if b.queued > 0 && b.queued+p.size() > o.perSocket {
		o.drop(sk, fmt.Sprintf("ttmcp: this page is not reading its results (more than %d MiB waiting); reconnect", o.perSocket>>20))
		return false
	}
	if b.queued == 0 {
		b.since = time.Now()
	}
	b.queued += p.size()
	if b.pending == nil {
		b.pending = map[*pending]struct{}{}
	}
	b.pending[p] = struct{}{}
	o.sockets[sk] = struct{}{}
	others := o.queued
	o.add(p)
	for o.queued > o.total && others > 0 {
		victim := o.slowest()
		if victim == nil {
			break
		}
		o.drop(victim, fmt.Sprintf("ttmcp: too many results waiting across pages (more than %d MiB); this page was the slowest to read", o.total>>20))
		if victim == sk {
			return false
		}
	}
	return true
}

// done uncounts p once it is written (or failed).
func (o *outbox) done(sk *socket, p *pending) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := &sk.backlog
	if _, ok := b.pending[p]; !ok {
		return
	}
	delete(b.pending, p)
	b.queued -= p.size()
	b.since = time.Now() // progress
	if !b.dropped {
		o.remove(p)
	}
	if b.queued == 0 {
		delete(o.sockets, sk)
	}
}

// forget drops what is left of a socket that has closed.
func (o *outbox) forget(sk *socket) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !sk.backlog.dropped {
		for p := range sk.backlog.pending {
			o.remove(p)
		}
	}
	sk.backlog = backlog{dropped: true}
	delete(o.sockets, sk)
}

func (o *outbox) add(p *pending) {
	o.queued += p.framing
	if len(p.value) > 0 {
		k := &p.value[0]
		if o.buffers[k] == 0 {
			o.queued += int64(len(p.value))
		}
		o.buffers[k]++
	}
}

func (o *outbox) remove(p *pending) {
	o.queued -= p.framing
	if len(p.value) > 0 {
		k := &p.value[0]
		if o.buffers[k]--; o.buffers[k] == 0 {
			delete(o.buffers, k)
			o.queued -= int64(len(p.value))
		}
	}
}

// slowest returns the socket with waiting bytes that has made no progress
// for longest.
func (o *outbox) slowest() *socket {
	var worst *socket
	for sk := range o.sockets {
		b := &sk.backlog
		if b.dropped || b.queued == 0 {
			continue
		}
		if worst == nil || b.since.Before(worst.backlog.since) {
			worst = sk
		}
	}
	return worst
}

// drop closes sk for being slow: its waiting bytes stop counting across
// sockets at once (they are released as its writes fail, within
// dropGrace), and the page hears why if it reads on.
func (o *outbox) drop(sk *socket, reason string) {
	b := &sk.backlog
	if b.dropped {
		return
	}
	b.dropped = true
	for p := range b.pending {
		o.remove(p)
	}
	delete(o.sockets, sk)
	o.close(sk, reason)
}

// writeResult writes one result frame: head, then value (written as is,
// never copied: it may be shared), then tail.
func (sk *socket) writeResult(head, value, tail []byte) error {
	p := &pending{framing: int64(len(head) + len(tail)), value: value}
	if !sk.srv.outbox.admit(sk, p) {
		return fmt.Errorf("the socket was closed for not reading")
	}
	defer sk.srv.outbox.done(sk, p)
	ctx, cancel := context.WithTimeout(sk.writes, writeTimeout)
	defer cancel()
	return sk.conn.WriteFrame(ctx, head, value, tail)
}

// dropGrace is how long a dropped socket's close frame may wait behind a
// write in progress before the connection is torn down.
const dropGrace = time.Second

// fragmentAbove is the value size from which a result is written in
// fragments instead of being copied into one frame.
const fragmentAbove = 64 << 10
