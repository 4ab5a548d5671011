// Package wan puts a loopback server at network distance: a TCP proxy that
// delays every byte by a fixed time each way and counts what a client's
// exchanges cost in round trips. Tests and benchmarks put it in front of an
// MCP server (plain or TLS: the proxy forwards bytes, it does not care) to
// measure what a protocol spends on the wire, which loopback hides.
//
// The counts come from the proxy's own view of each connection, so they are
// deterministic for a sequential client: a round trip is the server
// answering something the client sent after the server's previous answer
// reached it (see pair), and every connection opened costs one more (the
// TCP handshake, which the proxy models by holding the client's first bytes
// for one extra round trip).
package wan

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are a link's counters since it started.
type Stats struct {
	Conns      int // connections opened (each paid a TCP handshake)
	RoundTrips int // round trips (see pair)
	Open       int // connections open now
}

// Sub returns the counts of s since earlier (Open stays s's).
func (s Stats) Sub(earlier Stats) Stats {
	return Stats{Conns: s.Conns - earlier.Conns, RoundTrips: s.RoundTrips - earlier.RoundTrips, Open: s.Open}
}

// Link is a delaying TCP proxy in front of one target address.
type Link struct {
	// Trace, when set, sees every chunk the link reads: its direction, size
	// and depth (see pair). Tests print it when a count is not the one they
	// expect.
	Trace atomic.Pointer[func(up bool, n, depth int)]

	ln     net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	stats  Stats
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a link on a loopback port that forwards to target (host:port)
// and delays each direction by oneWay, so a round trip takes 2×oneWay.
func Listen(target string, oneWay time.Duration) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Link{ln: ln, target: target, delay: oneWay, conns: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the link's address (host:port): connect here instead of the target.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Stats returns the counters so far.
func (l *Link) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close stops accepting, cuts every connection and waits for the link's
// goroutines to end.
func (l *Link) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	err := l.ln.Close()
	l.wg.Wait()
	return err
}

func (l *Link) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		opened := time.Now()
		s, err := net.Dial("tcp", l.target)
		if err != nil {
			c.Close()
			continue
		}
		if !l.track(c, s) {
			return
		}
		p := &pair{link: l}
		// A real client's first bytes leave one round trip after it called
		// connect (SYN, SYN-ACK): hold them until then.
		notBefore := opened.Add(2 * l.delay)
		l.wg.Add(2)
		go p.pump(c, s, notBefore, true)
		go p.pump(s, c, time.Time{}, false)
	}
}

// track registers a connection pair; false once the link is closed.
func (l *Link) track(c, s net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		s.Close()
		return false
	}
	l.stats.Conns++
	l.stats.Open++
	l.conns[c] = struct{}{}
	l.conns[s] = struct{}{}
	return true
}

func (l *Link) untrack(c, s net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	delete(l.conns, s)
	l.stats.Open--
}

// pair is one proxied connection: the client's side and the server's.
//
// Round trips are counted by causality: every chunk gets a depth, the
// number of round trips after which it could have been sent at the
// earliest. A client chunk has the depth of the last server chunk
// delivered to the client before it was read; a server chunk has one more
// than the last client chunk delivered to the server before it was read.
// The connection's cost is its deepest server chunk. Bytes that only
// happen to interleave (a TLS session ticket, HTTP/2 SETTINGS) therefore
// add nothing, and a request sent after its predecessor's answer adds one.
//
// A client chunk too small to hold a request (maxControl bytes: a SETTINGS
// acknowledgement, a WINDOW_UPDATE, an RST_STREAM, a TLS alert) does not
// deepen the server's next chunk: otherwise a server slower to answer
// than the client is to acknowledge its SETTINGS would seem to answer the
// acknowledgement.
type pair struct {
	link *Link
	mu   sync.Mutex
	// clientLevel is the depth of the last server chunk delivered to the
	// client; serverLevel the depth the server's next chunk gets (0 until
	// the client has sent anything).
	clientLevel, serverLevel int
	deepest                  int
	done                     int // pumps finished
}

// chunk is what one read returned, when it may be delivered, and its depth.
type chunk struct {
	data  []byte
	at    time.Time
	depth int
}

// pump copies src to dst, delivering each read oneWay after it was read
// (and not before notBefore). up is the client-to-server direction.
func (p *pair) pump(src, dst net.Conn, notBefore time.Time, up bool) {
	defer p.link.wg.Done()
	queue := make(chan chunk, 1024)
	go func() {
		defer close(queue)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				at := time.Now().Add(p.link.delay)
				if at.Before(notBefore) {
					at = notBefore
				}
				d := p.read(up)
				if trace := p.link.Trace.Load(); trace != nil {
					(*trace)(up, n, d)
				}
				queue <- chunk{buf[:n], at, d}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range queue {
		if failed {
			continue // drain, so the reader can end
		}
		time.Sleep(time.Until(c.at))
		// Before the write: the peer may answer before Write returns.
		p.delivered(up, len(c.data), c.depth)
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			src.Close()
			dst.Close()
		}
	}
	// src ended: pass the end on (a half-close keeps the other way open).
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && !failed {
		cw.CloseWrite()
	}
	p.mu.Lock()
	p.done++
	last := p.done == 2
	p.mu.Unlock()
	if last {
		src.Close()
		dst.Close()
		if up {
			p.link.untrack(src, dst)
		} else {
			p.link.untrack(dst, src)
		}
	}
}

// read returns the depth of a chunk just read, counting the round trip
// when a server chunk is the deepest yet.
func (p *pair) read(up bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up {
		return p.clientLevel
	}
	d := p.serverLevel
	if d > p.deepest {
		p.link.mu.Lock()
		p.link.stats.RoundTrips += d - p.deepest
		p.link.mu.Unlock()
		p.deepest = d
	}
	return d
}

// maxControl is the largest client chunk that cannot be a request (see
// pair): a TLS 1.3 record adds 22 bytes and an HTTP/2 frame header 9; the
// 5 bytes left hold a SETTINGS acknowledgement (0), a WINDOW_UPDATE or
// RST_STREAM (4), never a request: even a DELETE whose headers HPACK
// reduced to table indexes takes more (a PING, 8, counts: it is answered).
const maxControl = 36

// delivered notes that a chunk of n bytes and depth d reaches its peer now.
func (p *pair) delivered(up bool, n, d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up {
		if n > maxControl {
			p.serverLevel = max(p.serverLevel, d+1)
		}
	} else {
		p.clientLevel = max(p.clientLevel, d)
	}
}
