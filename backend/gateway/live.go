package gateway

import (
	"container/list"
	"context"
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Live connections (docs/ARCHITECTURE.md, "Live connections"): one per
// remote server in use, opened by its first operation and shared by the
// ones after — discoveries, calls, lists, reads — so a warm operation pays
// only its own request. A 2025 server keeps its session (Mcp-Session-Id),
// a 2026 one its discovered version and capabilities.
//
// A connection is closed after IdleTimeout without an operation, when the
// registration's connection settings change (the key), on pause and
// removal (Disconnect), when its session ends or is refused, when more
// than MaxLive are open (the least recently used first), and by Close.
// Operations hold it while they run (acquire … release); a connection
// closed while in use lets them finish on their session.

// liveKey is what a live connection was opened with: an operation of a
// registration whose key differs gets a new connection.
type liveKey struct {
	endpoint string
	headers  [sha256.Size]byte // of the registration's headers, as stored
	protocol domain.Protocol
	signedIn bool // a bearer token is sent (its connections are the registration's own, pool.go)
}

func keyOf(r domain.Registration, bearer domain.Secret) liveKey {
	k := liveKey{endpoint: r.Endpoint.String(), protocol: r.Protocol, signedIn: bearer != ""}
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(r.Headers[name]))
		h.Write([]byte{0})
	}
	h.Sum(k.headers[:0])
	return k
}

// lives holds the live connections, by registration.
type lives struct {
	g      *Gateway
	mu     sync.Mutex
	byID   map[domain.RegistrationID]*live
	lru    *list.List // of *live, most recently used first
	closed bool
}

func newLives(g *Gateway) *lives {
	return &lives{g: g, byID: map[domain.RegistrationID]*live{}, lru: list.New()}
}

// live is the connection of one registration.
type live struct {
	id     domain.RegistrationID
	key    liveKey
	el     *list.Element
	follow *follower // its list-changed notifications (follow.go)

	// Under lives.mu.
	users   int
	idle    *time.Timer
	retired bool
	shared  *session // nil until opened, and again after it ended
	// idleEliciting are 2025 sessions of one operation at a time between
	// operations (at most maxIdleEliciting of each kind): a call that may
	// ask the user, or whose page renders MCP Apps, takes one of its kind
	// for itself.
	idleEliciting []*session
	opening       chan struct{} // closed when the opening in progress is done
	openErr       error         // why the last opening failed
	// shortLived: the server expired kept sessions twice in a row, so
	// each operation gets a fresh session of its own (SPEC §10).
	shortLived bool
	expiries   int // consecutive expired sessions
}

// lease is a session an operation runs on, and how it gives it back.
type lease struct {
	s *session
	l *live
	// own: the session is the operation's alone (short-lived), closed on
	// release.
	own bool
}

// acquire returns a session of r's live connection, opening the
// connection (or its session) when needed. It waits for an opening in
// progress, bounded by StartupTimeout, or until ctx ends. The lease must
// be released.
func (ls *lives) acquire(ctx context.Context, r domain.Registration) (*lease, error) {
	// The access token to send, refreshed first when it expires; a kept
	// session sends the refreshed one from now on.
	bearer, err := ls.g.auth.bearer(ctx, r)
	if err != nil {
		return nil, err
	}
	key := keyOf(r, bearer)
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return nil, domain.Errorf(domain.KindUnavailable, CodeBackendStopping, "the backend is stopping")
	}
	l := ls.byID[r.ID]
	if l != nil && l.key != key {
		ls.retireLocked(l)
		l = nil
	}
	if l == nil {
		l = &live{id: r.ID, key: key, follow: &follower{g: ls.g, id: r.ID}}
		l.el = ls.lru.PushFront(l)
		ls.byID[r.ID] = l
		ls.evictLocked()
	} else {
		ls.lru.MoveToFront(l.el)
	}
	l.users++
	if l.idle != nil {
		l.idle.Stop()
		l.idle = nil
	}
	if l.shortLived {
		ls.mu.Unlock()
		s, err := ls.g.open(ctx, r, sessionOptions{})
		if err != nil {
			ls.release(&lease{l: l})
			return nil, err
		}
		return &lease{s: s, l: l, own: true}, nil
	}
	for {
		// A shared session whose notification stream was lost is replaced,
		// so that the connection follows its server again (follow.go) —
		// only when no other operation runs on the connection, as closing
		// the session would cut theirs; a later one replaces it then.
		if s := l.shared; s != nil && !s.over() && s.tr.refused.Load() == nil && (l.users > 1 || !s.tr.streamLost()) {
			ls.mu.Unlock()
			if s.tr.sentBearer() != bearer {
				s.tr.setBearer(bearer)
			}
			return &lease{s: s, l: l}, nil
		}
		if l.shared != nil {
			l.shared.close() // ended, refused or no longer following: the next one is opened
			l.shared = nil
		}
		if l.opening == nil {
			l.opening = make(chan struct{})
			go ls.openShared(l, r.Clone())
		}
		opening := l.opening
		ls.mu.Unlock()
		select {
		case <-opening:
		case <-ctx.Done():
			ls.release(&lease{l: l})
			return nil, cancelled(ctx)
		}
		ls.mu.Lock()
		if l.shared == nil {
			err := l.openErr
			ls.mu.Unlock()
			ls.release(&lease{l: l})
			return nil, err
		}
	}
}

// openShared opens l's shared session, detached from whoever asked first
// (the others wait for it too), within StartupTimeout.
func (ls *lives) openShared(l *live, r domain.Registration) {
	s, err := ls.g.open(context.Background(), r, sessionOptions{client: l.follow.handlers})
	ls.mu.Lock()
	defer ls.mu.Unlock()
	close(l.opening)
	l.opening = nil
	l.openErr = err
	if err != nil {
		return
	}
	if l.retired {
		s.close()
		return
	}
	l.shared = s
	go func() {
		<-s.ended
		ls.mu.Lock()
		defer ls.mu.Unlock()
		if l.shared == s {
			l.shared = nil // the next operation opens another
		}
		s.close()
	}()
}

// maxIdleEliciting bounds the eliciting sessions a connection keeps
// between calls; a burst of concurrent asking calls opens more, closed
// after use.
const maxIdleEliciting = 1

// eliciting returns a 2025 session of kind k for one operation on le's
// connection — a kept one, or one opened at the version the shared session
// negotiated — and put, which gives it back (kept when keep and there is
// room, else closed). Its questions go to the call alone (session.elicit);
// it declares the MCP Apps extension only for a page that renders Apps.
func (ls *lives) eliciting(ctx context.Context, le *lease, k sessionKind) (*session, func(keep bool), error) {
	l := le.l
	ls.mu.Lock()
	var s *session
	for i := len(l.idleEliciting) - 1; i >= 0 && s == nil; i-- {
		c := l.idleEliciting[i]
		if c.kind != k && !c.over() && c.tr.refused.Load() == nil {
			continue
		}
		l.idleEliciting = append(l.idleEliciting[:i], l.idleEliciting[i+1:]...)
		if c.over() || c.tr.refused.Load() != nil {
			c.close()
			continue
		}
		s = c
	}
	ls.mu.Unlock()
	if s == nil {
		var err error
		s, err = ls.g.open(ctx, le.s.r, sessionOptions{version: le.s.cs.InitializeResult().ProtocolVersion, eliciting: k.eliciting, apps: k.apps})
		if err != nil {
			return nil, nil, err
		}
	}
	s.tr.setBearer(le.s.tr.sentBearer())
	put := func(keep bool) {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		same := 0
		for _, c := range l.idleEliciting {
			if c.kind == s.kind {
				same++
			}
		}
		if keep && !l.retired && !s.over() && s.tr.refused.Load() == nil && same < maxIdleEliciting {
			l.idleEliciting = append(l.idleEliciting, s)
			return
		}
		s.close()
	}
	return s, put, nil
}

// release ends an operation's use of a lease. The last user of a
// connection arms its idle timer.
func (ls *lives) release(le *lease) {
	if le.own && le.s != nil {
		le.s.close()
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := le.l
	l.users--
	if l.users == 0 && !l.retired {
		l.idle = time.AfterFunc(ls.g.cfg.LiveIdleTimeout, func() {
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if l.users == 0 && !l.retired {
				ls.retireLocked(l)
			}
		})
	}
}

// expired records that a request of le was answered 404 for its session
// (2025: the server dropped the session). The connection's session is
// closed, so the next operation opens another. A session that expires
// before it served two operations was not worth keeping; after two such
// in a row the connection gives each operation a session of its own
// (short-lived, as before issue 21), so a server that ends its sessions
// between operations costs no wasted request each time and nothing loops.
func (ls *lives) expired(le *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := le.l
	if l.shared == le.s {
		l.shared = nil
	}
	le.s.close()
	if le.own {
		return
	}
	if le.s.served >= 2 {
		l.expiries = 0 // it was kept for a while: its end is not a pattern yet
	}
	l.expiries++
	if l.expiries >= 2 && !l.shortLived {
		l.shortLived = true
		ls.g.cfg.Log.Warn("an MCP server expires its sessions right after they open: each operation gets a fresh session from now on",
			"registration", l.id)
	}
}

// kept records that le's session answered an operation.
func (ls *lives) kept(le *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	le.s.served++
}

// Status says how r is connected: ConnectionClosed when no live connection
// is open; Sessions "short_lived" once its server expired kept sessions
// twice in a row. A stdio server's connection is its process.
func (g *Gateway) Status(r domain.Registration) domain.ConnectionStatus {
	if r.Stdio != nil {
		return g.stdio.connectionStatus(r.ID)
	}
	ls := g.lives
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.byID[r.ID]
	st := domain.ConnectionStatus{State: domain.ConnectionClosed, Sessions: domain.SessionsKept}
	if l == nil {
		return st
	}
	if l.shortLived {
		st.Sessions = domain.SessionsShortLived
	}
	switch {
	case l.shared != nil && !l.shared.over():
		st.State = domain.ConnectionOpen
		st.ProtocolVersion = l.shared.cs.InitializeResult().ProtocolVersion
		if stream := l.shared.tr.streams.Load(); stream != nil {
			st.Following, st.Note = stream.get()
		}
	case l.opening != nil:
		st.State = domain.ConnectionOpening
	}
	return st
}

// drop closes le's session when it is still the connection's (its server
// refused it, or it broke): the next operation opens another.
func (ls *lives) drop(le *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if le.l.shared == le.s {
		le.l.shared = nil
	}
	le.s.close()
}

// retireLocked takes l out of service and closes its session; operations
// still running on it finish there. ls.mu is held.
func (ls *lives) retireLocked(l *live) {
	if l.retired {
		return
	}
	l.retired = true
	if ls.byID[l.id] == l {
		delete(ls.byID, l.id)
	}
	ls.lru.Remove(l.el)
	l.follow.stop()
	if l.idle != nil {
		l.idle.Stop()
		l.idle = nil
	}
	if l.shared != nil {
		l.shared.close()
		l.shared = nil
	}
	for _, s := range l.idleEliciting {
		s.close()
	}
	l.idleEliciting = nil
}

// evictLocked closes the least recently used connections beyond MaxLive.
func (ls *lives) evictLocked() {
	for ls.lru.Len() > ls.g.cfg.MaxLive {
		ls.retireLocked(ls.lru.Back().Value.(*live))
	}
}

// disconnect closes the live connection of id, if there is one.
func (ls *lives) disconnect(id domain.RegistrationID) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.byID[id]; l != nil {
		ls.retireLocked(l)
	}
}

// closeAll closes every connection; later operations open new ones.
func (ls *lives) closeAll() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.byID {
		ls.retireLocked(l)
	}
}

// close closes every connection and opens none afterwards.
func (ls *lives) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.closed = true
	for _, l := range ls.byID {
		ls.retireLocked(l)
	}
}

// count is the number of live connections.
func (ls *lives) count() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.lru.Len()
}

// CodeBackendStopping: the backend is shutting down and opens no
// connection any more.
const CodeBackendStopping = "mcp.backend_stopping"
