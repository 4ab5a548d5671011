package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

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
// Open (issue 29): go-sdk hands a request's response to its caller at once
// but queues notifications for the session's handler, so the last steps
// may still be queued when the request ends and the route is gone; and a
// go-sdk HTTP server's steps were not seen by the handler at all in the
// first tests. Delivery is therefore not yet asserted anywhere.

// progressRoutes maps the tokens of the requests in flight to their calls.
type progressRoutes struct {
	mu sync.RWMutex
	m  map[string]progressRoute
}

type progressRoute struct {
	reg domain.RegistrationID
	fn  domain.ProgressFunc
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
	pr.mu.Lock()
	if pr.m == nil {
		pr.m = map[string]progressRoute{}
	}
	pr.m[tok] = progressRoute{reg: reg, fn: fn}
	pr.mu.Unlock()
	return func() {
		pr.mu.Lock()
		delete(pr.m, tok)
		pr.mu.Unlock()
	}
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
		r.fn(domain.Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}

// inFlight reports how many tokens are routed (tests).
func (pr *progressRoutes) inFlight() int {
	pr.mu.RLock()
	defer pr.mu.RUnlock()
	return len(pr.m)
}
