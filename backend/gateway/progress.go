package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Progress (issue 29): every tools/call request carries a progress token in
// its _meta (go-sdk's CallToolParams.SetProgressToken), in both protocol
// eras and over stdio, and a session's notifications/progress reach the
// call whose token they name through the session's
// ProgressNotificationHandler (ClientOptions; one per session, shared by
// the calls on it, so the tokens route). A token is minted per request —
// a call's second send (a resend, a 2026 round) gets a new one — from 128
// random bits, never reused; it is routed only while its request runs and
// only for the server it was sent to, so progress after the request ended,
// or naming another server's call, is dropped.
//
// go-sdk hands a request's response to its caller at once but queues the
// notifications read before it for the session's handler, one goroutine
// each, in an unbounded queue: when the request returns its last steps
// may still be queued, and a server flooding progress faster than the
// queue drains grows it without bound (a 100,000-step flood left 15,000
// queued). So the transports take a call's progress themselves, before
// go-sdk sees it: stdio_conn.go's Read and the SSE guard of a call's
// response stream (guard.go) hand each notifications/progress to its route
// on the reading goroutine (take), in the order read and before the
// answer that follows it, and pass go-sdk nothing of it (an SSE event
// keeps only its id, for resumption). Nothing is queued, and the last step
// is never lost. A server may still send a call's progress on the
// session's notification stream (2025); there the transport counts it
// (seen) and go-sdk's handler delivers it, and a request's end waits until
// the handler has taken as many as were read (at most
// Config.ProgressDrain) before it removes the route.

// progressRoutes maps the tokens of the requests in flight to their calls.
type progressRoutes struct {
	mu sync.RWMutex
	m  map[string]*progressRoute
	// drain bounds a request's wait for the steps read and not yet handled
	// (Config.ProgressDrain): go-sdk may drop a queued notification when
	// its connection closes, and the call's answer must not wait for it.
	drain time.Duration
	// viaHandler counts the notifications go-sdk's handler delivered (a
	// call's own stream's never reach it; tests).
	viaHandler atomic.Int64
}

type progressRoute struct {
	reg domain.RegistrationID
	fn  domain.ProgressFunc
	// pending counts the notifications read for the token and not yet
	// handled; idle is pinged when it falls to 0.
	pending atomic.Int64
	idle    chan struct{}
}

// newProgressToken returns a token no request has carried: "ttmcp-" and
// 32 hex digits of crypto/rand.
func newProgressToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "ttmcp-" + hex.EncodeToString(b[:])
}

// attach puts a new token on p, routed to fn (nil: the token is sent and
// its progress dropped) until stop, which returns only once no fn call for
// it is running, so nothing reaches fn after it.
func (pr *progressRoutes) attach(reg domain.RegistrationID, fn domain.ProgressFunc, p *mcp.CallToolParams) (stop func()) {
	tok := newProgressToken()
	p.SetProgressToken(tok)
	if fn == nil {
		return func() {}
	}
	r := &progressRoute{reg: reg, fn: fn, idle: make(chan struct{}, 1)}
	pr.mu.Lock()
	if pr.m == nil {
		pr.m = map[string]*progressRoute{}
	}
	pr.m[tok] = r
	pr.mu.Unlock()
	return func() {
		r.wait(pr.drain)
		pr.mu.Lock()
		delete(pr.m, tok)
		pr.mu.Unlock()
	}
}

// wait returns once every notification read for the route was handled, or
// after d.
func (r *progressRoute) wait(d time.Duration) {
	if r.pending.Load() <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for r.pending.Load() > 0 {
		select {
		case <-r.idle:
		case <-timer.C:
			return
		}
	}
}

// took counts one notification of the route handled.
func (r *progressRoute) took() {
	for {
		n := r.pending.Load()
		if n <= 0 {
			return // one the transports did not count
		}
		if r.pending.CompareAndSwap(n, n-1) {
			if n == 1 {
				select {
				case r.idle <- struct{}{}:
				default:
				}
			}
			return
		}
	}
}

// seen counts a notifications/progress that reg's transport read, before
// go-sdk queues it for the handler; params are the notification's.
func (pr *progressRoutes) seen(reg domain.RegistrationID, params []byte) {
	tok, ok := tokenOf(params)
	if !ok {
		return
	}
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	if r := pr.m[tok]; r != nil && r.reg == reg {
		r.pending.Add(1)
	}
}

// progressOf returns the params of msg when it is a notifications/progress
// (a notification: no id).
func progressOf(msg []byte) (json.RawMessage, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "notifications/progress" || len(m.ID) > 0 {
		return nil, false
	}
	return m.Params, true
}

// sawEvent counts the progress notifications of an SSE event of the
// session's notification stream as read (seen): go-sdk's handler delivers
// them.
func (pr *progressRoutes) sawEvent(reg domain.RegistrationID, event []byte) {
	if !bytes.Contains(event, progressMethod) {
		return
	}
	for _, msg := range responseMessages("text/event-stream", event) {
		if params, ok := progressOf(msg); ok {
			pr.seen(reg, params)
		}
	}
}

// takeEvent takes an SSE event of a call's response stream that is one
// small progress notification and nothing else (take), and reports
// whether it did: then neither go-sdk nor the call's kept answer sees it,
// and its bytes do not count against the answer's cap.
func (pr *progressRoutes) takeEvent(reg domain.RegistrationID, event []byte) bool {
	if len(event) > maxProgressEvent || !bytes.Contains(event, progressMethod) || !isMessageEvent(event) {
		return false
	}
	msgs := responseMessages("text/event-stream", event)
	if len(msgs) != 1 {
		return false
	}
	params, ok := progressOf(msgs[0])
	return ok && pr.take(reg, params)
}

// take hands a notifications/progress that reg's transport read to the
// call its token names, on the reading goroutine, and reports whether the
// params were a progress notification's (go-sdk's decoder would take
// them): such a notification is consumed, delivered or (its call ended,
// another server's, not a token of ours) dropped. Params go-sdk would
// refuse are left to it.
func (pr *progressRoutes) take(reg domain.RegistrationID, params []byte) bool {
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress *float64        `json:"progress"`
		Total    *float64        `json:"total"`
		Message  *string         `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil || p.Progress == nil || len(p.Token) == 0 {
		return false
	}
	var tok string
	if p.Token[0] != '"' || json.Unmarshal(p.Token, &tok) != nil {
		return true // not one of ours: ours are strings
	}
	got := domain.Progress{Progress: *p.Progress}
	if p.Total != nil {
		got.Total = *p.Total
	}
	if p.Message != nil {
		got.Message = *p.Message
	}
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	if r := pr.m[tok]; r != nil && r.reg == reg {
		r.fn(got)
	}
	return true
}

// progressMethod is in every progress notification; maxProgressEvent is
// the largest event taken as one (a progress notification is a few hundred
// bytes; a longer one counts against its stream's cap like any message).
var progressMethod = []byte(`"notifications/progress"`)

const maxProgressEvent = 8 << 10

// tokenOf returns the string progressToken of a notification's params.
func tokenOf(params []byte) (string, bool) {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Token) == 0 || p.Token[0] != '"' {
		return "", false
	}
	var tok string
	if json.Unmarshal(p.Token, &tok) != nil {
		return "", false
	}
	return tok, true
}

// handler is the ProgressNotificationHandler of reg's sessions. The call's
// fn runs under the read lock (it must not block: domain.ProgressFunc), so
// a stop waits for it.
func (pr *progressRoutes) handler(reg domain.RegistrationID) func(context.Context, *mcp.ProgressNotificationClientRequest) {
	return func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req == nil || req.Params == nil {
			return
		}
		tok, ok := req.Params.ProgressToken.(string)
		if !ok {
			return // not one of ours: ours are strings
		}
		pr.mu.RLock()
		defer pr.mu.RUnlock()
		r, ok := pr.m[tok]
		if !ok || r.reg != reg {
			return // ended, or another server's
		}
		defer r.took()
		pr.viaHandler.Add(1)
		r.fn(domain.Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}

// inFlight reports how many tokens are routed (tests).
func (pr *progressRoutes) inFlight() int {
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	return len(pr.m)
}
