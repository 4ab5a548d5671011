package service

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Progress (issue 29): a call's server may report its progress
// (notifications/progress) while the call runs. The gateway hands each one
// to the call's domain.ProgressFunc on its reading goroutine, which must
// not wait; a server may send thousands a second. So a call's progress is
// coalesced here: each update only replaces the call's latest state (and
// counts), and the page that made the call is sent that state at most once
// per interval (DefaultProgressInterval), the first at once. When the call
// ends, the state not yet sent is sent before the call returns, so the
// page's last progress frame is the server's last step and it comes before
// the result; nothing is sent after. A flood therefore costs a fixed few
// bytes per call and a few frames a second, whatever its rate.
//
// Progress never extends a call's wait for its answer (the gateway's
// CallWait): a server that reports progress forever would otherwise hold
// the call forever, and the page can stop a call it still wants to wait
// for (DECISIONS "Progress").

// ProgressSink takes a call's coalesced progress for the page that made it
// (the server layer writes a progress frame for the invoke). Its calls are
// serialised, in order; it may block while the page reads.
type ProgressSink func(jsapi.McpCallProgress)

type progressKey struct{}

// WithProgress returns ctx whose calls send their progress to sink; a
// command without one still counts its call's progress for the audit.
func WithProgress(ctx context.Context, sink ProgressSink) context.Context {
	return context.WithValue(ctx, progressKey{}, sink)
}

func progressSinkOf(ctx context.Context) ProgressSink {
	sink, _ := ctx.Value(progressKey{}).(ProgressSink)
	return sink
}

// DefaultProgressInterval is the least time between two progress frames of
// one call: four a second.
const DefaultProgressInterval = 250 * time.Millisecond

// maxProgressMessage bounds the message kept and sent (a server's message
// could be megabytes, once per update): longer ones are cut on a UTF-8
// boundary.
const maxProgressMessage = 1000

// clipBytes cuts s to at most n bytes on a UTF-8 boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// callProgress coalesces one call's progress.
type callProgress struct {
	sink     ProgressSink // nil: counted, never sent
	interval time.Duration

	send sync.Mutex // held while sink runs: frames in order, the last after the others

	mu      sync.Mutex
	latest  jsapi.McpCallProgress
	message string // the last message any update carried
	dirty   bool   // latest is not yet sent
	armed   bool   // a flush is scheduled
	ended   bool
	sentAt  time.Time
	timer   *time.Timer
}

func newCallProgress(sink ProgressSink, interval time.Duration) *callProgress {
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	return &callProgress{sink: sink, interval: interval}
}

// take is the call's domain.ProgressFunc: it records p and never waits.
func (c *callProgress) take(p domain.Progress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.latest.Updates++
	c.latest.Progress = p.Progress
	c.latest.Total = nil
	if p.Total > 0 {
		t := p.Total
		c.latest.Total = &t
	}
	if p.Message != "" {
		c.message = clipBytes(p.Message, maxProgressMessage)
	}
	c.dirty = true
	if c.sink == nil || c.armed {
		return
	}
	c.armed = true
	wait := c.interval - time.Since(c.sentAt)
	if wait < 0 {
		wait = 0
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(wait, c.flush)
	} else {
		c.timer.Reset(wait)
	}
}

// snapshot is the state to send, under mu.
func (c *callProgress) snapshot() jsapi.McpCallProgress {
	s := c.latest
	if c.message != "" {
		m := c.message
		s.Message = &m
	}
	c.dirty = false
	return s
}

// flush sends the latest state, unless the call ended (end sends it).
func (c *callProgress) flush() {
	c.send.Lock()
	defer c.send.Unlock()
	c.mu.Lock()
	c.armed = false
	if c.ended || !c.dirty {
		c.mu.Unlock()
		return
	}
	s := c.snapshot()
	c.sentAt = time.Now()
	c.mu.Unlock()
	c.sink(s)
}

// end stops the call's progress: the state not yet sent is sent (after any
// send under way) before end returns, and nothing after. It returns how
// many updates came and the last message, for the audit.
func (c *callProgress) end() (updates int, message string) {
	c.mu.Lock()
	c.ended = true
	if c.timer != nil {
		c.timer.Stop()
	}
	dirty := c.dirty && c.sink != nil
	var s jsapi.McpCallProgress
	if dirty {
		s = c.snapshot()
	}
	updates, message = c.latest.Updates, c.message
	c.mu.Unlock()
	c.send.Lock() // a flush under way finishes first
	defer c.send.Unlock()
	if dirty {
		c.sink(s)
	}
	return updates, message
}

// progressFor sets the progress of a call the command in ctx makes: call
// takes it, and the returned end, run when the gateway's call returned,
// sends the last state and records the counts in the call's audit.
func (s *Service) progressFor(ctx context.Context, call *domain.ToolCall, audit *callAudit) (end func()) {
	c := newCallProgress(progressSinkOf(ctx), s.progressInterval)
	call.Progress = c.take
	return func() {
		audit.rec.ProgressUpdates, audit.rec.ProgressMessage = c.end()
	}
}
