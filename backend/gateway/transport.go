package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/net/http/httpguts"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// transport is the RoundTripper of one session: the registration's headers
// on every request, a cap on every response body, over the connections
// kept for the session's profile (pool.go). What an operation must judge
// for itself — whether its request was written, the raw answer, a body over
// the cap, an expired session — is recorded in the exchange its request's
// context carries (exchange.go), so operations sharing the session keep
// their own. Every exchange is bound to the session's life, so closing the
// session ends whatever is still running, and the transport counts the
// response bodies not yet closed, so the close can let them finish first:
// a body read to its end leaves its connection reusable, one cut short
// does not.
type transport struct {
	client  *http.Client
	base    http.RoundTripper
	headers http.Header
	limit   int64
	life    context.Context
	// refuseInitialize keeps a session that asked for 2026-07-28 only from
	// falling back to initialize (go-sdk falls back on its own).
	refuseInitialize bool

	overflow      atomic.Bool // a response body without an exchange (startup's) exceeded limit
	refusedLegacy atomic.Bool // an initialize was refused
	expired       atomic.Bool // a request was answered 404 for the session's id: the session is gone

	open     atomic.Int64  // exchanges whose response body is not closed
	openDone chan struct{} // pinged when an exchange ends

	// owed counts the notifications/cancelled go-sdk is to send for calls
	// stopped after their write (it sends them from a goroutine), sent
	// those whose POST ended, pinging cancelSent: a session closed right
	// after such a call waits for them (awaitCancels), or its DELETE could
	// overtake the cancellation and the server's tool run on.
	owed, sent atomic.Int64
	cancelSent chan struct{}

	// streams follows the session's notification stream (follow.go), nil
	// until it opened one; question, when set, sees the params of each
	// elicitation/create that comes on it (an eliciting session's).
	streams  atomic.Pointer[streamState]
	question func(params json.RawMessage)
	// progress takes the progress events of a call's response stream
	// before go-sdk reads them (progress.go takeEvent), and progressSeen
	// counts those of the notification stream (sawEvent); nil: neither.
	progress     func(event []byte) bool
	progressSeen func(event []byte)
	// lostAge is Config.LostStreamAge: how long a stream must have
	// followed before its end counts as lost (streamState.end).
	lostAge time.Duration

	// bearer is the access token sent on every request ("" when not
	// signed in); a kept session gets the refreshed one (setBearer).
	// refused is the first request the server refused for want of
	// authorization (auth.go): nothing but the DELETE is sent after it.
	bearer  atomic.Pointer[domain.Secret]
	now     func() time.Time
	refused atomic.Pointer[refusal]
}

var (
	errTooLarge = errors.New("response too large")
	errLegacy   = errors.New("initialize refused: only MCP 2026-07-28 is accepted")
	errRefused  = errors.New("not sent: the server refused this session's authorization")
)

// newTransport compiles a registration's headers and returns a session
// transport over the pool's connections for them (and, when it sends a
// bearer token, for the sign-in identity), bound to life.
func newTransport(cfg Config, p *pool, life context.Context, headers map[string]string, bearer domain.Secret, identity string, refuseInitialize bool) (*transport, error) {
	h, err := compileHeaders(headers)
	if err != nil {
		return nil, err
	}
	prof := profileOf(h)
	if bearer != "" {
		prof.identity = identity
	}
	t := &transport{base: p.transport(prof), headers: h, limit: cfg.MaxResponseBytes, life: life,
		refuseInitialize: refuseInitialize, openDone: make(chan struct{}, 1), cancelSent: make(chan struct{}, 1), now: cfg.Now, lostAge: cfg.LostStreamAge}
	t.setBearer(bearer)
	t.client = &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("redirect to %s refused: MCP endpoints must answer directly", req.URL.Redacted())
		},
	}
	return t, nil
}

// setBearer sets the access token sent from now on.
func (t *transport) setBearer(b domain.Secret) { t.bearer.Store(&b) }

// sentBearer is the access token being sent ("" when none).
func (t *transport) sentBearer() domain.Secret {
	if b := t.bearer.Load(); b != nil {
		return *b
	}
	return ""
}

// setHeaders puts the registration's headers and the bearer token on req.
func (t *transport) setHeaders(req *http.Request) {
	for name, values := range t.headers {
		req.Header[name] = values
	}
	if b := t.sentBearer(); b != "" {
		// A sign-in replaces a static Authorization header.
		req.Header.Set("Authorization", "Bearer "+b.Reveal())
	}
}

// RoundTrip adds the registration's headers, refuses what the session must
// not send, caps the response body, and records the fate of the request an
// exchange tracks.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := requestMethod(req)
	if t.refuseInitialize && method == "initialize" {
		t.refusedLegacy.Store(true)
		return nil, errLegacy
	}
	if t.refused.Load() != nil && req.Method != http.MethodDelete {
		// Nothing is sent after the server refused the session for want of
		// authorization (go-sdk would fall back from server/discover to
		// initialize with the same credentials), but the session's DELETE.
		return nil, errRefused
	}
	if method == notificationCancelled {
		defer t.sentCancel()
	}
	if err := t.life.Err(); err != nil {
		return nil, fmt.Errorf("the session is closed: %w", err)
	}
	ex := exchangeOf(req.Context())
	tracked := ex != nil && method != "" && method == ex.method
	if isNotificationStream(req, method) {
		return t.stream(req), nil
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.life, cancel)
	t.open.Add(1)
	end := func() {
		stop()
		cancel()
		t.open.Add(-1)
		select {
		case t.openDone <- struct{}{}:
		default:
		}
	}
	extra := len(t.headers) + 1 // and a bearer's Authorization
	if tracked {
		ctx = withSentBoundary(ctx, &ex.written)
		extra += len(ex.params)
	}
	req = onward(ctx, req, extra)
	t.setHeaders(req)
	if tracked && ex.params != nil {
		setParamHeaders(req.Header, ex.params)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		end()
		return nil, err
	}
	if tracked {
		ex.written.Store(true) // answered, so it arrived
	}
	if ch, ok := challengeOf(resp, t.clock); ok {
		t.refused.CompareAndSwap(nil, &refusal{method: method, ch: ch})
		if tracked {
			ex.refused = true
		}
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		// "The server MAY terminate the session at any time, after which it
		// MUST respond to requests containing that session ID with HTTP 404"
		// (Streamable HTTP, session management).
		t.expired.Store(true)
		if ex != nil {
			ex.expired.Store(true)
		}
	}
	overflow, limit := &t.overflow, t.limit
	if ex != nil {
		overflow = &ex.overflow
		if ex.limit > 0 {
			limit = ex.limit
		}
	}
	body := &cappedBody{rc: resp.Body, left: limit, overflow: overflow, onClose: end}
	resp.Body = body
	// A server's questions come on SSE streams, and a 2026 call's in its
	// answer: both are read through the guard (guard.go), and the exchange
	// keeps what go-sdk read.
	var guard *guardReader
	contentType := resp.Header.Get("Content-Type")
	switch {
	case isEventStream(contentType):
		guard = newGuardReader(body, guardSSE)
		guard.progress = t.progress
		guard.refund = func(n int) { body.left += int64(n) } // on the reading goroutine, as body's reads
	case tracked && method == "tools/call", listMembers[method].entries != "":
		guard = newGuardReader(body, guardWhole)
	}
	if _, ok := listMembers[method]; ok && guard != nil && ex != nil {
		// a list answer: each entry decoded apart (entries.go)
		guard.holdAll = true
		guard.fix = func(msg []byte) []byte {
			out, bad := isolateMessage(method, msg)
			ex.addMalformed(bad)
			return guardMessage(out)
		}
	}
	if guard != nil {
		resp.Body = guard
	}
	if tracked {
		ex.capture(contentType)
		if guard != nil {
			guard.tee = ex.tee
		} else {
			body.tee = ex.tee
		}
	}
	return resp, nil
}

// onward is req as the base transport gets it: under ctx, with a header
// map of its own, room for extra more names. The caller's request is left
// as it was (a RoundTripper must not change it); the header values are
// shared, as no one modifies them in place. A shallow copy rather than
// req.Clone, which copies every header value, the URL and more on every
// request.
func onward(ctx context.Context, req *http.Request, extra int) *http.Request {
	out := req.WithContext(ctx)
	out.Header = make(http.Header, len(req.Header)+extra)
	maps.Copy(out.Header, req.Header)
	return out
}

// withSentBoundary returns ctx tracing its request so that written is set
// as soon as the request may have left: when its headers are written,
// before any byte of its body (HTTP/1.1 writes the body right after them,
// HTTP/2 after the HEADERS frame), or when the write ended, even in
// failure (a failed write may have put the request on the wire). Nothing
// of a JSON-RPC request is on the wire before that, and the headers alone
// ask for nothing: an error until then is not_sent. WroteRequest alone
// would be too late over HTTP/2, where it is reported after the last DATA
// frame: the server may have the whole request, run the tool and even
// answer before it fires (a cancellation in that window would be reported
// not_sent). A write that fails after the headers makes the outcome
// unknown rather than not_sent: the honest side to err on.
//
// It is a trace rather than a wrapper around the body that marks its
// first read: net/http writes the headers and a body it knows to be in
// memory (go-sdk's) in one write, and any other body only after flushing
// the headers on their own — a second write per request, and a second
// read for the server.
func withSentBoundary(ctx context.Context, written *atomic.Bool) context.Context {
	mark := func() { written.Store(true) }
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: mark,
		WroteRequest: func(httptrace.WroteRequestInfo) { mark() },
	})
}

// notificationCancelled is the method of the notification go-sdk sends
// for a request its caller stopped waiting for.
const notificationCancelled = "notifications/cancelled"

// oweCancel records that go-sdk is to send a notifications/cancelled.
func (t *transport) oweCancel() { t.owed.Add(1) }

// sentCancel records that a notifications/cancelled POST ended (answered
// or failed: it was tried).
func (t *transport) sentCancel() {
	t.sent.Add(1)
	select {
	case t.cancelSent <- struct{}{}:
	default:
	}
}

// awaitCancels waits until every notifications/cancelled owed was tried,
// for at most d or until the session's life ends.
func (t *transport) awaitCancels(d time.Duration) {
	if t.sent.Load() >= t.owed.Load() {
		return
	}
	bound := time.NewTimer(d)
	defer bound.Stop()
	for t.sent.Load() < t.owed.Load() {
		select {
		case <-t.cancelSent:
		case <-bound.C:
			return
		case <-t.life.Done():
			return
		}
	}
}

// settled waits until every response body of the session is closed or the
// session's life ends.
func (t *transport) settled() {
	for t.open.Load() > 0 {
		select {
		case <-t.openDone:
		case <-t.life.Done():
			return
		}
	}
}

// clock is the time of a refusal (Config.Now).
func (t *transport) clock() time.Time {
	if t.now == nil {
		return time.Now()
	}
	return t.now()
}

// explain words a failure of an operation whose requests ex tracked (nil:
// startup's), naming the size cap when it was the cause (go-sdk's own
// wording of that case varies and may lose ours).
func (t *transport) explain(ex *exchange, err error) string {
	if ex != nil && ex.overflow.Load() || ex == nil && t.overflow.Load() {
		return fmt.Sprintf("the server's response exceeded %d bytes", t.limit)
	}
	return err.Error()
}

// requestMethod peeks at the JSON-RPC method of a POST body; "" when there
// is none.
func requestMethod(req *http.Request) string {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var head [256]byte
	n, _ := io.ReadFull(body, head[:])
	if m, ok := leadingMethod(head[:n]); ok {
		return m
	}
	// The top-level members up to "method", the rest skipped unread into
	// Go values: a call's arguments are not decoded on every request (it
	// cost as much as the HTTP round trip of a warm loopback call). A
	// decoder from the pool, with its buffer; repeated names are go-sdk's
	// decoder's business, not the method's.
	dec := methodDecoders.Get().(*jsontext.Decoder)
	dec.Reset(io.MultiReader(bytes.NewReader(head[:n]), body), jsontext.AllowDuplicateNames(true))
	defer func() {
		dec.Reset(noBody, jsontext.AllowDuplicateNames(true)) // keeps no request
		methodDecoders.Put(dec)
	}()
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return ""
		}
		if name.String() != "method" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil || v.Kind() != '"' {
			return ""
		}
		return v.String()
	}
}

// leadingMethod reads the method of a request that begins as go-sdk writes
// every request and notification — {"jsonrpc":"2.0", then an "id" that is
// a number or a string without escapes, then "method" with a name without
// escapes — without a JSON decoder. Those first members are unambiguous:
// no other reading of the same bytes is valid JSON. ok is false for
// anything else, which requestMethod decodes.
func leadingMethod(p []byte) (method string, ok bool) {
	rest, ok := bytes.CutPrefix(p, []byte(`{"jsonrpc":"2.0",`))
	if !ok {
		return "", false
	}
	if r, isID := bytes.CutPrefix(rest, []byte(`"id":`)); isID {
		var n int
		if len(r) > 0 && r[0] == '"' {
			end := bytes.IndexAny(r[1:], `"\`)
			if end < 0 || r[1+end] != '"' {
				return "", false
			}
			n = 1 + end + 1
		} else {
			for n < len(r) && (r[n] == '-' || '0' <= r[n] && r[n] <= '9') {
				n++
			}
		}
		if n == 0 || r[:n][n-1] == '-' || len(r) <= n || r[n] != ',' {
			return "", false
		}
		rest = r[n+1:]
	}
	name, ok := bytes.CutPrefix(rest, []byte(`"method":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexAny(name, `"\`)
	if end < 0 || name[end] != '"' {
		return "", false
	}
	return string(name[:end]), true
}

var (
	methodDecoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}
	noBody         = bytes.NewReader(nil)
)

// cappedBody fails a read past its limit instead of buffering without end
// (go-sdk reads JSON bodies with io.ReadAll).
type cappedBody struct {
	rc       io.ReadCloser
	left     int64
	overflow *atomic.Bool
	tee      func([]byte) // sees every byte read, when set
	onClose  func()       // runs once, after the body is closed
	closed   sync.Once
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.overflow.Store(true)
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.tee != nil && n > 0 {
		b.tee(p[:n])
	}
	return n, err
}

func (b *cappedBody) Close() error {
	err := b.rc.Close()
	b.closed.Do(b.onClose)
	return err
}

// reservedHeaders are set by the MCP transport itself; a registration
// header with one of these names would corrupt the protocol.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id",
	"Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version", "Mcp-Session-Id", "Transfer-Encoding",
}

// compileHeaders turns a registration's headers into HTTP headers: names
// must be HTTP tokens and values valid field values (UTF-8 bytes are kept
// as they are; control characters are not). Registrations store headers
// verbatim, so a bad one is only found here, at use.
func compileHeaders(headers map[string]string) (http.Header, error) {
	h := http.Header{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		value := headers[name]
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, domain.Errorf(domain.KindBadRequest, CodeHeaderNameInvalid, "`%s` is not a valid HTTP header name", name)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, domain.Errorf(domain.KindBadRequest, CodeHeaderValueInvalid, "value for `%s` is not a valid HTTP header value", name)
		}
		canonical := http.CanonicalHeaderKey(name)
		if slices.Contains(reservedHeaders, canonical) || strings.HasPrefix(canonical, "Mcp-Param-") {
			return nil, domain.Errorf(domain.KindBadRequest, CodeInitializeFailed, "header `%s` is reserved by the MCP transport", name)
		}
		h[canonical] = append(h[canonical], value)
	}
	return h, nil
}
