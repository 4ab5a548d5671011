package service

import (
	"context"
	"sync"
)

// Later is work a command leaves for after its result is on its way to the
// page (WithLater): the presentation layer runs it in the command's own
// goroutine, once the result frame is written. A test call's audit record
// is written so (issue 31): its write and fsync, a few hundred µs to
// milliseconds, are no longer in the call's time, and the socket still
// waits for it before it closes. A command without a Later does the work
// at once.
type Later struct {
	mu  sync.Mutex
	fns []func()
	ran bool
}

type laterKey struct{}

// WithLater returns ctx whose command leaves work in l.
func WithLater(ctx context.Context, l *Later) context.Context {
	return context.WithValue(ctx, laterKey{}, l)
}

// later runs fn after ctx's command has answered, or now when it has no
// Later (or its Later has run).
func later(ctx context.Context, fn func()) {
	if l, ok := ctx.Value(laterKey{}).(*Later); ok {
		l.mu.Lock()
		if !l.ran {
			l.fns = append(l.fns, fn)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
	fn()
}

// Run runs the work left, in order; work left after it runs at once.
func (l *Later) Run() {
	l.mu.Lock()
	fns := l.fns
	l.fns, l.ran = nil, true
	l.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// pendingWrites counts the audit records left to be written after their
// command's answer, so that a list waits for the records of every call
// whose answer came before it: a page that lists after an outcome finds
// its record.
type pendingWrites struct {
	mu      sync.Mutex
	changed *sync.Cond
	issued  uint64          // records handed over
	written uint64          // every record up to this one is written
	early   map[uint64]bool // written, after a record not yet written
}

// issue hands over one record and returns its number.
func (p *pendingWrites) issue() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.issued++
	return p.issued
}

// done marks record n written.
func (p *pendingWrites) done(n uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n != p.written+1 {
		if p.early == nil {
			p.early = map[uint64]bool{}
		}
		p.early[n] = true
		return
	}
	p.written = n
	for p.early[p.written+1] {
		delete(p.early, p.written+1)
		p.written++
	}
	if p.changed != nil {
		p.changed.Broadcast()
	}
}

// wait returns once every record handed over before it was called is
// written.
func (p *pendingWrites) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = sync.NewCond(&p.mu)
	}
	for upto := p.issued; p.written < upto; {
		p.changed.Wait()
	}
}
