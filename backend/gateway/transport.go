package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// transport is the HTTP profile of one session (SPEC §6): a dialer with the
// connect timeout, the proxy from the environment, redirects refused, the
// registration's headers on every request and a cap on every response
// body. No http.Client.Timeout or ResponseHeaderTimeout: a go-sdk server
// sends its headers with the first event, so either would cap how long a
// tool may run; deadlines come from contexts instead.
type transport struct {
	client  *http.Client
	base    *http.Transport
	headers http.Header
	limit   int64
	// refuseInitialize keeps a session that asked for 2026-07-28 only from
	// falling back to initialize (go-sdk falls back on its own).
	refuseInitialize bool

	overflow      atomic.Bool // a response body exceeded limit
	refusedLegacy atomic.Bool // an initialize was refused

	// callWritten turns true once a tools/call request has been written to
	// the connection (httptrace): from then on the server may have run the
	// tool, whatever happens next.
	callWritten atomic.Bool
	// callResponse keeps the raw body of the tools/call response, so a
	// result go-sdk cannot decode is still known (see call.go).
	callResponse struct {
		sync.Mutex
		contentType string
		body        bytes.Buffer
	}
}

var (
	errTooLarge = errors.New("response too large")
	errLegacy   = errors.New("initialize refused: only MCP 2026-07-28 is accepted")
)

func newTransport(cfg Config, headers map[string]string, refuseInitialize bool) (*transport, error) {
	h, err := compileHeaders(headers)
	if err != nil {
		return nil, err
	}
	base := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: cfg.ConnectTimeout}).DialContext,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		TLSClientConfig:     cfg.TLS.Clone(),
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 1,
	}
	t := &transport{base: base, headers: h, limit: cfg.MaxResponseBytes, refuseInitialize: refuseInitialize}
	t.client = &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("redirect to %s refused: MCP endpoints must answer directly", req.URL.Redacted())
		},
	}
	return t, nil
}

// RoundTrip adds the registration's headers, refuses what the session must
// not send, and caps the response body.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := requestMethod(req)
	if t.refuseInitialize && method == "initialize" {
		t.refusedLegacy.Store(true)
		return nil, errLegacy
	}
	ctx := req.Context()
	if method == "tools/call" {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				// Even a failed write may have put the request on the wire.
				t.callWritten.Store(true)
			},
		})
	}
	req = req.Clone(ctx)
	for name, values := range t.headers {
		req.Header[name] = values
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body := &cappedBody{rc: resp.Body, left: t.limit, overflow: &t.overflow}
	resp.Body = body
	if method == "tools/call" {
		t.callResponse.Lock()
		t.callResponse.contentType = resp.Header.Get("Content-Type")
		t.callResponse.body.Reset()
		t.callResponse.Unlock()
		body.tee = func(p []byte) {
			t.callResponse.Lock()
			t.callResponse.body.Write(p)
			t.callResponse.Unlock()
		}
	}
	return resp, nil
}

// rawCallResponse returns what was read of the tools/call response.
func (t *transport) rawCallResponse() (contentType string, body []byte) {
	t.callResponse.Lock()
	defer t.callResponse.Unlock()
	return t.callResponse.contentType, bytes.Clone(t.callResponse.body.Bytes())
}

func (t *transport) close() { t.base.CloseIdleConnections() }

// explain words a session error, naming the size cap when it was the cause
// (go-sdk's own wording of that case varies and may lose ours).
func (t *transport) explain(err error) string {
	if t.overflow.Load() {
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
	var msg struct {
		Method string `json:"method"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil {
		return ""
	}
	return msg.Method
}

// cappedBody fails a read past its limit instead of buffering without end
// (go-sdk reads JSON bodies with io.ReadAll).
type cappedBody struct {
	rc       io.ReadCloser
	left     int64
	overflow *atomic.Bool
	tee      func([]byte) // sees every byte read, when set
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

func (b *cappedBody) Close() error { return b.rc.Close() }

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
