package gateway

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Following list changes (issue 21, docs/ARCHITECTURE.md "Live
// connections"): the shared session of a live connection registers
// go-sdk's list-changed handlers, so go-sdk opens the server's
// notification stream — the standalone GET stream on 2025, a
// subscriptions/listen request on 2026 — and the handlers hear
// notifications/{tools,prompts,resources}/list_changed, also those a
// server puts in the stream of a response. A notification reaches
// Config.Changed, at most once per server per followDebounce; the service
// refreshes the catalog with every rule of a user's refresh. Nothing is
// polled: a server that announces nothing is refreshed only by the user.
//
// The transport answers go-sdk's stream request at once with a stream of
// its own and makes the real request beside it (stream below): go-sdk
// would otherwise wait for the stream's answer inside Connect (a round
// trip more for every cold operation of a 2025 server), and on 2025 an end
// of the stream — a server that closes it, one that refuses it, a flood
// that ttmcp cuts — would fail the whole session. With the stream in
// between, what happens to the server's stream changes only whether the
// connection follows (Status), never the session.

// Bounds of a followed stream: more events than followFlood within
// followWindow, or one event larger than maxStreamEvent, and the stream is
// cut (the connection stops following until it is opened again).
const (
	followDebounce = 2 * time.Second
	followFlood    = 100
	followWindow   = 10 * time.Second
	maxStreamEvent = 1 << 20
)

// isNotificationStream reports whether req is go-sdk opening a
// notification stream: the 2025 standalone GET (not a resumption, which
// names the last event) or a 2026 subscriptions/listen.
func isNotificationStream(req *http.Request, method string) bool {
	if method == "subscriptions/listen" {
		return true
	}
	return req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == "" &&
		bytes.Contains([]byte(req.Header.Get("Accept")), []byte("text/event-stream"))
}

// noteEnded is why a stream stopped when the server ended it (or the
// connection under it broke), rather than ttmcp cutting it.
const noteEnded = "the server ended its notification stream"

// streamState is what became of a session's notification stream.
type streamState struct {
	mu        sync.Mutex
	following bool
	note      string    // why not, when not
	since     time.Time // when it began following
	// lost: it followed for a while (Config.LostStreamAge) and then the
	// server ended it — typically the server went away, and a 2025
	// session with it. The live connection is opened again at its next
	// operation (lives.acquire), so a server that comes back is followed
	// again. A stream that ends sooner is the server's choice (it offers
	// none to keep), and reopening it on every operation would cost a
	// new session each time: that one only stops following.
	lost bool
}

func (st *streamState) set(following bool, note string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.following, st.note = following, note
}

// begin records that the stream follows from now on.
func (st *streamState) begin() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.following, st.note, st.since = true, "", time.Now()
}

// end records why a following stream stopped; lostAge decides whether an
// end by the server counts as lost.
func (st *streamState) end(note string, lostAge time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.following, st.note = false, note
	if note == noteEnded && time.Since(st.since) >= lostAge {
		st.lost = true
		st.note = noteEnded + "; it is opened again on the next use"
	}
}

func (st *streamState) get() (bool, string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.following, st.note
}

func (st *streamState) isLost() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.lost
}

// streamLost reports whether the session's notification stream was lost
// (streamState.lost).
func (t *transport) streamLost() bool {
	st := t.streams.Load()
	return st != nil && st.isLost()
}

// stream answers go-sdk's stream request at once with a pipe and makes the
// real request in the background, copying the server's events into the
// pipe while they stay within the bounds. The pipe ends only when go-sdk
// ends the request (closing the session) or the session's life ends.
func (t *transport) stream(req *http.Request) *http.Response {
	st := &streamState{}
	t.streams.Store(st)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(req.Context())
	stopLife := context.AfterFunc(t.life, cancel)
	context.AfterFunc(ctx, func() { pw.CloseWithError(context.Canceled) })
	real := req.Clone(ctx)
	t.setHeaders(real)
	go func() {
		defer stopLife()
		defer cancel() // the pipe closes when go-sdk stops reading, at the latest here
		resp, err := t.base.RoundTrip(real)
		switch {
		case err != nil:
			st.set(false, "the notification stream could not be opened: "+err.Error())
		case resp.StatusCode == http.StatusMethodNotAllowed:
			st.set(false, "the server offers no notification stream")
		case resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")):
			if ch, ok := challengeOf(resp, t.clock); ok {
				t.refused.CompareAndSwap(nil, &refusal{ch: ch})
			}
			st.set(false, "the server refused the notification stream ("+resp.Status+")")
		default:
			st.begin()
			st.end(copyEvents(pw, resp.Body, t.sawEvent), t.lostAge)
		}
		if resp != nil {
			resp.Body.Close()
		}
		<-ctx.Done() // keep go-sdk's stream open (and silent) until the session ends it
	}()
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, Request: req,
	}
}

// sawEvent hands the params of an elicitation/create that came on the
// session's stream to the session's question hook (a 2025 server may ask on
// its standalone stream instead of the call's; elicit.go keeps the raw
// params for the asking call).
func (t *transport) sawEvent(event []byte) {
	if t.progressSeen != nil {
		t.progressSeen(event) // a call's progress may come here too (2025)
	}
	if t.question == nil || !bytes.Contains(event, []byte("elicitation/create")) {
		return
	}
	for _, raw := range rawQuestions("text/event-stream", event) {
		t.question(raw)
	}
}

func isEventStream(contentType string) bool {
	if contentType == "text/event-stream" { // as most servers send it
		return true
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}

// copyEvents copies SSE events from body to w, whole events at a time,
// until the body ends or breaks a bound, and says why it stopped. saw sees
// each event first.
func copyEvents(w io.Writer, body io.Reader, saw func(event []byte)) string {
	var event bytes.Buffer
	var times []time.Time // of the last events, for the flood bound
	buf := make([]byte, 32<<10)
	line := []byte{}
	for {
		n, err := body.Read(buf)
		for _, b := range buf[:n] {
			line = append(line, b)
			if b != '\n' {
				if len(line)+event.Len() > maxStreamEvent {
					return "the server's notification stream sent an event of more than 1 MiB; it was cut"
				}
				continue
			}
			event.Write(line)
			blank := len(bytes.TrimRight(line, "\r\n")) == 0
			line = line[:0]
			if !blank {
				continue
			}
			now := time.Now()
			times = append(times, now)
			for len(times) > 0 && now.Sub(times[0]) > followWindow {
				times = times[1:]
			}
			if len(times) > followFlood {
				return "the server flooded its notification stream (more than 100 events in 10 s); it was cut"
			}
			saw(event.Bytes())
			if _, werr := w.Write(guardEvent(event.Bytes())); werr != nil {
				return "the notification stream was closed"
			}
			event.Reset()
		}
		if err != nil {
			return noteEnded
		}
	}
}

// follower debounces one live connection's list-changed notifications.
type follower struct {
	g  *Gateway
	id domain.RegistrationID

	mu      sync.Mutex
	pending domain.ListChange
	timer   *time.Timer
	last    time.Time // when Changed was last called
}

// handlers sets the list-changed handlers on the options of a shared
// session, when the gateway has somewhere to send changes.
func (f *follower) handlers(opts *mcp.ClientOptions) {
	if f == nil || f.g.cfg.Changed == nil {
		return
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { f.notify(domain.ListChange{Tools: true}) }
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { f.notify(domain.ListChange{Prompts: true}) }
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
		f.notify(domain.ListChange{Resources: true})
	}
}

// notify records a change and calls Changed when followDebounce has passed
// since the last call (at once for the first change).
func (f *follower) notify(c domain.ListChange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending.Tools = f.pending.Tools || c.Tools
	f.pending.Prompts = f.pending.Prompts || c.Prompts
	f.pending.Resources = f.pending.Resources || c.Resources
	if f.timer != nil {
		return // a call is due
	}
	wait := followDebounce - time.Since(f.last)
	if f.last.IsZero() || wait < 0 {
		wait = 0
	}
	f.timer = time.AfterFunc(wait, f.fire)
}

func (f *follower) fire() {
	f.mu.Lock()
	c := f.pending
	c.RegistrationID = f.id
	f.pending = domain.ListChange{}
	f.timer = nil
	f.last = time.Now()
	f.mu.Unlock()
	f.g.cfg.Changed(c)
}

// stop drops a change not yet delivered (the connection closed).
func (f *follower) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
}
