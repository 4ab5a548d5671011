package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// exchange is what the transports saw of the requests of one operation
// that the operation must judge on its own: whether its request may have
// reached the server (written), the server's raw answer to it, and what
// went wrong under it (a body over the cap, an expired session). It
// travels in the operation's context (withExchange) down to the HTTP
// RoundTripper (transport.go) or the stdio connection (stdio_conn.go), so
// operations sharing one session each keep their own: the honest-outcome
// rules are per request, not per session.
//
// method names the request whose fate is tracked ("tools/call",
// "resources/read", ...); other requests made under the same context (the
// pages of a listing carry it too) only report what failed under them.
type exchange struct {
	method string
	params http.Header // the Mcp-Param-* headers of a tools/call (params.go), set by the operation
	// limit, when > 0, caps the response bodies of the operation's
	// requests instead of Config.MaxResponseBytes (a resources/read may
	// carry an 8 MiB blob in base64).
	limit int64
	// mayElicit: the operation's page answers elicitation, so its 2026
	// requests advertise it (middleware.go); nobody else's do.
	mayElicit bool
	written   atomic.Bool // the tracked request may have reached the server
	overflow  atomic.Bool // a response body exceeded the cap
	expired   atomic.Bool // answered 404 for the session's id (2025): not processed, the session is gone
	refused   bool        // the tracked request was refused for want of authorization (401, Bearer 403)

	mu          sync.Mutex
	contentType string       // HTTP: the tracked response's Content-Type
	body        bytes.Buffer // HTTP: the tracked response's body as read
	answer      *rawAnswer   // stdio: the response matched by request id
	over        bool         // the operation returned: a later answer is not what it got

	// The questions its server asked during the request (elicit.go):
	// questions kept as they were read (stdio), and how many were taken.
	questions []json.RawMessage
	asked     int

	// Seen by the sending middleware (middleware.go), for listings.
	names []string // the tool names of the last tools/list page, as the server sent them
	ttlMs int      // the last list result's ttlMs (2026), before go-sdk's cache saw it
	// malformed are the list entries left out because they do not decode
	// (entries.go), until the listing takes them.
	malformed []malformed
}

// lenient decodes what a server sent as leniently as go-sdk's own decoder
// (repeated members, invalid UTF-8 replaced), with the faster decoder.
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// rawAnswer is a JSON-RPC response as received: a result or an error.
type rawAnswer struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

type exchangeKey struct{}

// withExchange returns ctx carrying a new exchange that tracks method.
func withExchange(ctx context.Context, method string) (context.Context, *exchange) {
	ex := &exchange{method: method}
	return context.WithValue(ctx, exchangeKey{}, ex), ex
}

// exchangeOf returns the exchange ctx carries, or nil.
func exchangeOf(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// capture starts keeping a new HTTP response of the tracked request.
func (ex *exchange) capture(contentType string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.contentType = contentType
	ex.body.Reset()
}

// tee keeps bytes of the tracked HTTP response as they are read.
func (ex *exchange) tee(p []byte) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.body.Write(p)
}

// answered records the stdio server's answer to the tracked request.
func (ex *exchange) answered(resp *jsonrpc.Response) {
	a := &rawAnswer{}
	switch {
	case resp.Error != nil:
		if !errors.As(resp.Error, &a.err) {
			return
		}
	case len(resp.Result) > 0:
		a.result = bytes.Clone(resp.Result)
	default:
		return
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if !ex.over {
		ex.answer = a
	}
}

// end marks the operation returned and returns the server's answer to the
// tracked request, when a whole one arrived: the stdio response, or the
// message of the HTTP response (a JSON body or an SSE event) that answers
// it. A response whose body went over the cap is no answer.
func (ex *exchange) end() (rawAnswer, bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.over = true
	if ex.answer != nil {
		return *ex.answer, true
	}
	if ex.overflow.Load() {
		return rawAnswer{}, false
	}
	for _, msg := range responseMessages(ex.contentType, ex.body.Bytes()) {
		var m struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
			Result jsontext.Value `json:"result"`
			Error  *struct {
				Code    int64          `json:"code"`
				Message string         `json:"message"`
				Data    jsontext.Value `json:"data"`
			} `json:"error"`
		}
		// One pass of the faster decoder, which also validates: a
		// resources/read answer may be megabytes.
		if jsonv2.Unmarshal(msg, &m, lenient) != nil || len(m.ID) == 0 || m.Method != "" {
			continue // a notification or a request from the server
		}
		if m.Error != nil {
			return rawAnswer{err: &jsonrpc.Error{Code: m.Error.Code, Message: m.Error.Message, Data: json.RawMessage(m.Error.Data)}}, true
		}
		if len(m.Result) > 0 {
			return rawAnswer{result: json.RawMessage(m.Result)}, true
		}
	}
	return rawAnswer{}, false
}
