package users

import (
	"log/slog"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/server"
)

// Users keeps the stacks: the default user's, open from Open to Close,
// and the other users', each opened by its user's first request
// (ForUser), closed when idle (CloseIdle, which Run calls every minute)
// or to make room (MaxOpen), and reopened on demand.
//
// A stack is idle when no page watches its service (every open socket or
// HTTP transport of the user is a watcher, server/socket.go) and it has
// been neither asked for nor watched (as CloseIdle last saw) within
// IdleAfter. Closing one stops its live
// connections and its stdio servers' process trees; its files stay, so
// reopening it finds everything as it was (but a sign-in still pending
// in its memory: hence IdleAfter's default). One data root never has two
// stacks at once: a reopen waits until the close of the stack before it
// finished.
type Users struct {
	cfg Config
	def *stack

	mu      sync.Mutex
	open    map[string]*entry        // by handle, opening or open
	closing map[string]chan struct{} // closed when that handle's last stack is closed
	closed  bool
}

// entry is one user's stack, being opened or open.
type entry struct {
	ready    chan struct{} // closed once stack or err is set
	stack    *stack
	err      error
	lastUsed time.Time // under Users.mu
}

// Open opens the default user's stack over cfg.DataRoot (sweeping its
// leftovers first, as every stack's opening does).
func Open(cfg Config) (*Users, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = 32
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = 15 * time.Minute
	}
	if cfg.EvictAfter <= 0 {
		cfg.EvictAfter = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	def, err := openStack(cfg, DefaultUser, cfg.DataRoot)
	if err != nil {
		return nil, err
	}
	return &Users{cfg: cfg, def: def, open: map[string]*entry{}, closing: map[string]chan struct{}{}}, nil
}

// Default returns the default user's commands: the direct path's, and
// the plugin path's for DefaultUser.
func (u *Users) Default() *server.Commands { return u.def.cmds }

// ForUser returns the commands over handle's data root, opening its stack
// if it is not open: server.Config.ForUser. A handle SillyTavern cannot
// make is refused before it becomes a path; so is a new user when MaxOpen
// stacks are open and none can be closed.
func (u *Users) ForUser(handle string) (*server.Commands, error) {
	if err := CheckHandle(handle); err != nil {
		return nil, err
	}
	if handle == DefaultUser {
		return u.def.cmds, nil
	}
	for {
		u.mu.Lock()
		if u.closed {
			u.mu.Unlock()
			return nil, domain.Errorf(domain.KindUnavailable, CodeUsersClosed, "the ttmcp backend is shutting down")
		}
		if e := u.open[handle]; e != nil {
			e.lastUsed = u.cfg.Now()
			u.mu.Unlock()
			<-e.ready
			if e.err != nil {
				return nil, e.err
			}
			return e.stack.cmds, nil
		}
		if gone := u.closing[handle]; gone != nil {
			u.mu.Unlock()
			<-gone // the stack before must be gone first: one stack per root
			continue
		}
		if len(u.open) >= u.cfg.MaxOpen {
			victim := u.evictable()
			if victim == "" {
				u.mu.Unlock()
				return nil, domain.Errorf(domain.KindUnavailable, CodeUsersBusy,
					"%d SillyTavern users are using ttmcp at once, the most this backend serves; try again when one of them closes their page", u.cfg.MaxOpen)
			}
			u.closeLocked(victim, "to make room for another user")
		}
		e := &entry{ready: make(chan struct{}), lastUsed: u.cfg.Now()}
		u.open[handle] = e
		u.mu.Unlock()

		root, _ := Root(u.cfg.DataRoot, handle) // checked above
		e.stack, e.err = openStack(u.cfg, handle, root)
		if e.err != nil {
			u.mu.Lock()
			if u.open[handle] == e {
				delete(u.open, handle) // the next request tries again
			}
			u.mu.Unlock()
		} else {
			e.stack.log.Info("opened the data of a SillyTavern user", "dataRoot", root)
		}
		close(e.ready)
		if e.err != nil {
			return nil, e.err
		}
		return e.stack.cmds, nil
	}
}

// idle reports whether e may be closed: opened, no page watching, not
// asked for within after. Under u.mu.
func (u *Users) idle(e *entry, now time.Time, after time.Duration) bool {
	select {
	case <-e.ready:
	default:
		return false // still opening: its requester is about to use it
	}
	return e.stack != nil && e.stack.svc.Watching() == 0 && now.Sub(e.lastUsed) >= after
}

// watched reports whether an open stack has a page watching it. Under
// u.mu.
func (u *Users) watched(e *entry) bool {
	select {
	case <-e.ready:
		return e.stack != nil && e.stack.svc.Watching() > 0
	default:
		return false
	}
}

// evictable returns the least recently used stack that may be closed
// early, or "". Under u.mu.
func (u *Users) evictable() string {
	now, victim := u.cfg.Now(), ""
	var oldest time.Time
	for h, e := range u.open {
		if u.idle(e, now, u.cfg.EvictAfter) && (victim == "" || e.lastUsed.Before(oldest)) {
			victim, oldest = h, e.lastUsed
		}
	}
	return victim
}

// closeLocked starts closing handle's stack; a later ForUser of handle
// waits for it. Under u.mu.
func (u *Users) closeLocked(handle, why string) {
	e := u.open[handle]
	delete(u.open, handle)
	gone := make(chan struct{})
	u.closing[handle] = gone
	go func() {
		e.stack.log.Info("closing the data of a SillyTavern user", "why", why)
		e.stack.close()
		u.mu.Lock()
		delete(u.closing, handle)
		u.mu.Unlock()
		close(gone)
	}()
}

// CloseIdle closes the stacks that are idle (no page watching, unused for
// IdleAfter) and returns their handles; their closing may still be under
// way (WaitClosed).
func (u *Users) CloseIdle() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.cfg.Now()
	var out []string
	for h, e := range u.open {
		if u.watched(e) {
			// Counted as a use: the idle time of a stack whose last page
			// went away starts (at most a tick before) when it went.
			e.lastUsed = now
			continue
		}
		if u.idle(e, now, u.cfg.IdleAfter) {
			u.closeLocked(h, "idle")
			out = append(out, h)
		}
	}
	return out
}

// WaitClosed waits until every stack being closed is closed.
func (u *Users) WaitClosed() {
	u.mu.Lock()
	waits := make([]chan struct{}, 0, len(u.closing))
	for _, gone := range u.closing {
		waits = append(waits, gone)
	}
	u.mu.Unlock()
	for _, gone := range waits {
		<-gone
	}
}

// OpenUsers returns the handles whose stack is open or opening, the
// default user's not counted.
func (u *Users) OpenUsers() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.open))
	for h := range u.open {
		out = append(out, h)
	}
	return out
}

// Run calls CloseIdle every interval until stop is closed.
func (u *Users) Run(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			u.CloseIdle()
		}
	}
}

// Close closes every stack, after the server stopped (no request can open
// one any more, and ForUser refuses from now on): the other users' at
// once, side by side, then the default user's; it returns when every
// stdio server's process tree is gone.
func (u *Users) Close() {
	u.mu.Lock()
	u.closed = true
	var opening []*entry
	for h, e := range u.open {
		select {
		case <-e.ready:
			if e.stack != nil {
				u.closeLocked(h, "ttmcp stops")
			}
		default:
			opening = append(opening, e)
		}
	}
	u.mu.Unlock()
	// A stack that was still opening is closed when it is open.
	var wg sync.WaitGroup
	for _, e := range opening {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-e.ready
			if e.stack != nil {
				e.stack.close()
			}
		}()
	}
	wg.Wait()
	u.WaitClosed()
	u.def.close()
}
