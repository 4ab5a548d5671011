package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The plugin path (issue 28) against the real server, through a Go
// stand-in for SillyTavern's plugin: a reverse proxy that forwards
// /api/plugins/ttmcp/<rest> to the backend with the contract's headers
// (plugin-contract §1), as the JavaScript plugin does.

const (
	testSecret   = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pluginPrefix = "/api/plugins/ttmcp"
	// stUser is the header with which a test says which SillyTavern user
	// is logged in (the stand-in's session).
	stUser = "X-Test-St-User"
)

// stPlugin serves the stand-in at its own address and returns the base URL
// a page uses (<origin>/api/plugins/ttmcp). wrap, if set, is middleware
// before the plugin (SillyTavern's compression()).
func stPlugin(t testing.TB, backend string, secret string, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	target, _ := url.Parse(backend)
	proxy := &httputil.ReverseProxy{
		FlushInterval: -1, // every chunk at once: res.flush() in the plugin
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, pluginPrefix)
			pr.Out.URL.RawPath = ""
			pr.Out.Host = target.Host
			for name := range pr.Out.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(name), jsapi.PluginHeaderPrefix) {
					pr.Out.Header.Del(name)
				}
			}
			for _, h := range []string{"Cookie", "Authorization", "X-Csrf-Token", stUser} {
				pr.Out.Header.Del(h)
			}
			user := pr.In.Header.Get(stUser)
			if user == "" {
				user = jsapi.DefaultUser
			}
			pr.Out.Header.Set(jsapi.HeaderPluginSecret, secret)
			pr.Out.Header.Set(jsapi.HeaderPluginUser, user)
			pr.Out.Header.Set(jsapi.HeaderPluginAdmin, "0")
			pr.Out.Header.Set(jsapi.HeaderPluginOrigin, "http://"+pr.In.Host)
			pr.Out.Header.Set(jsapi.HeaderPluginPrefix, pluginPrefix)
		},
	}
	mux := http.NewServeMux()
	mux.Handle(pluginPrefix+"/", proxy)
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + pluginPrefix
}

// pageWire carries a client's frames.
type pageWire interface {
	write(frame []byte) error
	read(ctx context.Context) ([]byte, error)
}

// httpPage is a page on the HTTP transport, as jsapi/http-socket.js is.
type httpPage struct {
	base, user, id string
	frames         chan []byte
	closed         chan closeEvent // the close event, or {-1, why} when the stream just ended
	pings          atomic.Int32
	stream         *http.Response
}

func (p *httpPage) do(method, path, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if p.user != "" {
		req.Header.Set(stUser, p.user)
	}
	if body != "" {
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	return http.DefaultClient.Do(req)
}

// openHTTPPage opens a transport and its stream.
func openHTTPPage(t testing.TB, base, user string) *httpPage {
	t.Helper()
	p := &httpPage{base: base, user: user, frames: make(chan []byte, 64), closed: make(chan closeEvent, 1)}
	resp, err := p.do("POST", jsapi.PathTransport, "")
	if err != nil {
		t.Fatal(err)
	}
	var opened struct {
		ID string `json:"id"`
	}
	err = json.UnmarshalRead(resp.Body, &opened)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil || len(opened.ID) != 32 {
		t.Fatalf("POST /transport: %d %+v (%v)", resp.StatusCode, opened, err)
	}
	p.id = opened.ID
	resp, err = p.do("GET", jsapi.PathTransport+"/"+p.id, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-store, no-transform" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("GET stream: %d %v", resp.StatusCode, resp.Header)
	}
	p.stream = resp
	t.Cleanup(func() { resp.Body.Close() })
	go p.readStream(resp.Body)
	return p
}

// readStream parses the event stream: data lines joined by "\n", an
// "event: close" event last, comment lines counted as pings.
func (p *httpPage) readStream(body io.Reader) {
	r := bufio.NewReader(body)
	var data [][]byte
	event := ""
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			p.closed <- closeEvent{Code: -1, Reason: "stream ended: " + err.Error()}
			return
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case len(line) == 0:
			frame := bytes.Join(data, []byte("\n"))
			data = nil
			if event == "close" {
				var ce closeEvent
				json.Unmarshal(frame, &ce)
				p.closed <- ce
				return
			}
			event = ""
			if frame != nil {
				p.frames <- frame
			}
		case line[0] == ':':
			p.pings.Add(1)
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, bytes.Clone(line[len("data: "):]))
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[len("event: "):])
		}
	}
}

func (p *httpPage) write(frame []byte) error {
	resp, err := p.do("POST", jsapi.PathTransport+"/"+p.id, string(frame)+"\n")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("POST frames: HTTP %d", resp.StatusCode)
	}
	return nil
}

func (p *httpPage) read(ctx context.Context) ([]byte, error) {
	select {
	case f := <-p.frames:
		return f, nil
	case ce := <-p.closed:
		p.closed <- ce
		return nil, fmt.Errorf("closed %d: %s", ce.Code, ce.Reason)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// closing waits for the stream's end: its close event, or -1.
func (p *httpPage) closing(t testing.TB) closeEvent {
	t.Helper()
	for {
		select {
		case <-p.frames:
		case ce := <-p.closed:
			return ce
		case <-time.After(10 * time.Second):
			t.Fatal("the stream did not end")
		}
	}
}

// pluginSession reads /jsapi/session through the plugin as user.
func pluginSession(t testing.TB, base, user string) jsapi.Session {
	t.Helper()
	p := &httpPage{base: base, user: user}
	resp, err := p.do("GET", jsapi.PathSession, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sess jsapi.Session
	if err := json.UnmarshalRead(resp.Body, &sess); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("session: %d %v", resp.StatusCode, err)
	}
	return sess
}

// connectPlugin is connect through the plugin: the session, the
// transport, hello and welcome.
func connectPlugin(t testing.TB, base, user string) (*client, *httpPage) {
	t.Helper()
	sess := pluginSession(t, base, user)
	if sess.Transport != jsapi.TransportHTTP || sess.CSRF != jsapi.SillyTavernCSRF || sess.WS != "" || len(sess.Token) < 32 {
		t.Fatalf("plugin session %+v", sess)
	}
	p := openHTTPPage(t, base, user)
	c := &client{t: t, over: p}
	hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: sess.Token})
	c.write(hello)
	var w jsapi.Welcome
	if data := c.readFrame(); json.Unmarshal(data, &w) != nil || w.Type != jsapi.FrameWelcome {
		t.Fatalf("welcome = %s", data)
	}
	return c, p
}

func pluginFixture(t testing.TB, mutate func(*Config)) (*fixture, string) {
	f := newFixture(t, func(c *Config) {
		c.PluginSecret = testSecret
		if mutate != nil {
			mutate(c)
		}
	})
	return f, stPlugin(t, f.url, testSecret, nil)
}

// A whole conversation over the HTTP transport: hello, commands, an event
// told by another page's change, an elicitation question answered.
func TestPluginSessionOverHTTPTransport(t *testing.T) {
	f, id := askingFixture(t)
	f.srv.pluginSecret = testSecret
	base := stPlugin(t, f.url, testSecret, nil)
	c, _ := connectPlugin(t, base, "")

	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != 1 || list.Servers[0].ID != id {
		t.Fatalf("list %+v", list)
	}
	// another page (direct) changes a registration: this one hears of it
	direct := f.connect(t)
	direct.must(jsapi.CmdUpdateServer, dto(map[string]any{"registrationId": id, "displayName": "Greeter 2", "endpoint": list.Servers[0].Endpoint, "headers": map[string]string{}, "protocolVersion": "2026-07-28"}), nil)
	if ev := c.event(); ev.Event != jsapi.EventServersChanged || ev.Data.(jsapi.McpServerChange).RegistrationID != id {
		t.Fatalf("event %+v", ev)
	}
	// the server asks, the page answers
	c.raw(`{"type":"handlers","elicitation":true}`)
	testCallFrames(c, "c1", id, 10)
	var reqID uint64
	for reqID == 0 {
		m := c.frame()
		if string(m["type"]) != `"request"` {
			t.Fatalf("frame %v", m)
		}
		json.Unmarshal(m["id"], &reqID)
	}
	c.raw(fmt.Sprintf(`{"type":"response","id":%d,"ok":true,"value":{"action":"accept","content":{"name":"Ada"}}}`, reqID))
	if r := c.read(); r.ID != 11 || !r.OK || !strings.Contains(string(r.Value), "accept Ada") {
		t.Fatalf("result %s", r.raw)
	}
	// several frames in one POST are read in order
	p := c.over.(*httpPage)
	resp, err := p.do("POST", jsapi.PathTransport+"/"+p.id,
		`{"type":"invoke","id":50,"command":"list_mcp_servers"}`+"\n"+`{"type":"invoke","id":50,"command":"list_mcp_servers"}`)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("batch: %v %v", resp, err)
	}
	resp.Body.Close()
	got := map[uint64]int{}
	for range 2 {
		r := c.read()
		got[r.ID]++
		if !r.OK && r.Error.Code != jsapi.CodeArgsInvalid {
			t.Fatalf("batch result %s", r.raw)
		}
	}
	if got[50] != 2 {
		t.Fatalf("batch results %v", got)
	}
}

// Work a transport started is cancelled when its stream ends (the page's
// fetch aborted, the plugin or SillyTavern gone), or when the page closes
// it with DELETE.
func TestEndOfStreamCancelsWork(t *testing.T) {
	for _, how := range []string{"stream", "delete"} {
		t.Run(how, func(t *testing.T) {
			started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
			_, base := pluginFixture(t, func(c *Config) { c.Commands = blockingCommands(started, cancelled) })
			c, p := connectPlugin(t, base, "")
			c.send(1, "block", nil)
			<-started
			if how == "stream" {
				p.stream.Body.Close()
			} else {
				resp, err := p.do("DELETE", jsapi.PathTransport+"/"+p.id, "")
				if err != nil || resp.StatusCode != http.StatusNoContent {
					t.Fatalf("DELETE: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the work of a closed transport was not cancelled")
			}
			if resp, _ := p.do("POST", jsapi.PathTransport+"/"+p.id, `{"type":"invoke","id":2,"command":"block"}`); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("POST to a closed transport: %d", resp.StatusCode)
			}
		})
	}
}

// countingForUser is a ForUser seam that counts its calls: a refused
// request must reach no user's commands.
func countingForUser(n *atomic.Int32, cmds *Commands) func(string) (*Commands, error) {
	return func(handle string) (*Commands, error) {
		n.Add(1)
		if handle == "ann" || handle == jsapi.DefaultUser {
			return cmds, nil
		}
		return nil, errors.New("no such user")
	}
}

// Forged plugin requests (a page adding the headers itself, a plugin with
// an old secret) are refused with 401 before anything is served, and
// reach no user's commands.
func TestForgedPluginRequestsAreRefused(t *testing.T) {
	var reached atomic.Int32
	f := newFixture(t, nil)
	f.srv.pluginSecret = testSecret
	f.srv.cfg.ForUser = countingForUser(&reached, f.srv.cfg.Commands)
	full := map[string]string{jsapi.HeaderPluginSecret: testSecret, jsapi.HeaderPluginUser: "ann",
		jsapi.HeaderPluginOrigin: "https://st.example", jsapi.HeaderPluginPrefix: pluginPrefix, jsapi.HeaderPluginAdmin: "1"}
	with := func(change map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range full {
			h[k] = v
		}
		for k, v := range change {
			if v == "-" {
				delete(h, k)
			} else {
				h[k] = v
			}
		}
		return h
	}
	for name, headers := range map[string]map[string]string{
		"user header only":         {jsapi.HeaderPluginUser: "ann"},
		"no secret":                with(map[string]string{jsapi.HeaderPluginSecret: "-"}),
		"empty secret":             with(map[string]string{jsapi.HeaderPluginSecret: ""}),
		"wrong secret":             with(map[string]string{jsapi.HeaderPluginSecret: strings.Repeat("0", 64)}),
		"secret prefix":            with(map[string]string{jsapi.HeaderPluginSecret: testSecret[:63]}),
		"an unknown ttmcp header":  {"X-Ttmcp-Whatever": "1"},
		"no user":                  with(map[string]string{jsapi.HeaderPluginUser: "-"}),
		"upper-case user":          with(map[string]string{jsapi.HeaderPluginUser: "Ann"}),
		"path in the user":         with(map[string]string{jsapi.HeaderPluginUser: "../ann"}),
		"trailing hyphen":          with(map[string]string{jsapi.HeaderPluginUser: "ann-"}),
		"double hyphen":            with(map[string]string{jsapi.HeaderPluginUser: "a--b"}),
		"no origin":                with(map[string]string{jsapi.HeaderPluginOrigin: "-"}),
		"origin with a path":       with(map[string]string{jsapi.HeaderPluginOrigin: "https://st.example/x"}),
		"not an http origin":       with(map[string]string{jsapi.HeaderPluginOrigin: "file://x"}),
		"prefix with a dot-dot":    with(map[string]string{jsapi.HeaderPluginPrefix: "/api/../x"}),
		"admin neither 1 nor 0":    with(map[string]string{jsapi.HeaderPluginAdmin: "yes"}),
		"lower-case header names":  {"x-ttmcp-user": "ann"},
		"secret of a direct token": with(map[string]string{jsapi.HeaderPluginSecret: f.srv.Token()}),
	} {
		t.Run(name, func(t *testing.T) {
			for _, route := range []struct{ method, path string }{
				{"GET", jsapi.PathSession}, {"POST", jsapi.PathTransport}, {"GET", jsapi.PathOAuthCallback + "?state=x&code=y"},
				{"GET", jsapi.PathLoader}, {"GET", "/"},
			} {
				req, _ := http.NewRequest(route.method, f.url+route.path, nil)
				for k, v := range headers {
					req.Header[k] = []string{v} // as given: "x-ttmcp-user" stays lower case
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var body errorReply
				json.UnmarshalRead(resp.Body, &body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || body.Error.Kind != jsapi.KindBadRequest ||
					!strings.HasPrefix(body.Error.Message, jsapi.CodePluginUntrusted+": ") {
					t.Errorf("%s %s: %d %+v", route.method, route.path, resp.StatusCode, body)
				}
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("refused requests reached ForUser %d times", n)
	}
	// a duplicated header is refused too
	req, _ := http.NewRequest("GET", f.url+jsapi.PathSession, nil)
	for k, v := range full {
		req.Header.Set(k, v)
	}
	req.Header.Add(jsapi.HeaderPluginUser, "bob")
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("two user headers: %d", resp.StatusCode)
	}
	// and the full set is served, for ann
	req.Header.Set(jsapi.HeaderPluginUser, "ann")
	resp, _ := http.DefaultClient.Do(req)
	if resp.StatusCode != http.StatusOK || reached.Load() != 1 {
		t.Fatalf("a trusted request: %d, ForUser called %d times", resp.StatusCode, reached.Load())
	}
}

// A transport belongs to its user: another user's id, like an unknown one,
// is 404 on every method; a user's token does not open another user's
// transport, nor does the direct path's token open one; the direct path
// has no transport, and the plugin path no socket.
func TestTransportsArePerUser(t *testing.T) {
	var reached atomic.Int32
	f, base := pluginFixture(t, nil)
	f.srv.cfg.ForUser = countingForUser(&reached, f.srv.cfg.Commands)
	annSess := pluginSession(t, base, "ann")
	ann := openHTTPPage(t, base, "ann")
	bob := &httpPage{base: base, user: "bob"}
	for _, m := range []string{"GET", "POST", "DELETE"} {
		for _, id := range []string{ann.id, strings.Repeat("a", 32)} {
			resp, err := bob.do(m, jsapi.PathTransport+"/"+id, "")
			if err != nil {
				t.Fatal(err)
			}
			var body errorReply
			json.UnmarshalRead(resp.Body, &body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || body.Error.Code != jsapi.CodeTransportNotFound {
				t.Errorf("%s by bob: %d %+v", m, resp.StatusCode, body)
			}
		}
	}
	// a second stream on ann's transport: 409
	if resp, _ := ann.do("GET", jsapi.PathTransport+"/"+ann.id, ""); resp.StatusCode != http.StatusConflict {
		t.Errorf("second GET: %d", resp.StatusCode)
	}
	// bob is unknown to ForUser: 403 on his session and transport
	for _, route := range []struct{ method, path string }{{"GET", jsapi.PathSession}, {"POST", jsapi.PathTransport}} {
		resp, _ := bob.do(route.method, route.path, "")
		var body errorReply
		json.UnmarshalRead(resp.Body, &body)
		if resp.StatusCode != http.StatusForbidden || body.Error.Code != jsapi.CodeUserUnavailable {
			t.Errorf("bob %s %s: %d %+v", route.method, route.path, resp.StatusCode, body)
		}
	}
	// ann's transport does not take the direct path's token
	for _, token := range []string{f.srv.Token(), "x"} {
		p := openHTTPPage(t, base, "ann")
		hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: token})
		p.write(hello)
		if ce := p.closing(t); ce.Code != jsapi.ClosePolicyViolation {
			t.Errorf("hello with %q: close %+v", token[:1], ce)
		}
	}
	// a default-user page's token does not open ann's transport
	def := pluginSession(t, base, "")
	if def.Token == annSess.Token || def.Token == f.srv.Token() {
		t.Fatal("the users' tokens are not their own")
	}
	p := openHTTPPage(t, base, "ann")
	hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: def.Token})
	p.write(hello)
	if ce := p.closing(t); ce.Code != jsapi.ClosePolicyViolation {
		t.Errorf("another user's token: close %+v", ce)
	}
	// the direct path: no transport; the plugin path: no socket
	if resp, _ := http.Post(f.url+jsapi.PathTransport, "text/plain", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("direct POST /transport: %d", resp.StatusCode)
	}
	if resp, _ := (&httpPage{base: base}).do("GET", jsapi.PathWS, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("plugin /ws: %d", resp.StatusCode)
	}
}

// Without a ForUser seam only the default user is served.
func TestWithoutForUserOnlyTheDefaultUser(t *testing.T) {
	_, base := pluginFixture(t, nil)
	connectPlugin(t, base, jsapi.DefaultUser)
	resp, _ := (&httpPage{base: base, user: "ann"}).do("GET", jsapi.PathSession, "")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("ann: %d", resp.StatusCode)
	}
}

// A backend without a secret serves no plugin request.
func TestNoSecretNoPluginRequests(t *testing.T) {
	f := newFixture(t, nil)
	base := stPlugin(t, f.url, "", nil)
	resp, _ := (&httpPage{base: base}).do("GET", jsapi.PathSession, "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%d", resp.StatusCode)
	}
}

// The transport's bounds are the socket's: a transport whose stream is not
// opened in time is dropped; a hello that does not come in time closes it
// with 1008; a body above the frame limit closes it with 1009; beyond
// MaxSockets (sockets and transports together) it closes with 1013;
// shutdown closes it with 1001; an idle stream carries pings.
func TestTransportBounds(t *testing.T) {
	f, base := pluginFixture(t, func(c *Config) {
		c.HandshakeTimeout = 300 * time.Millisecond
		c.MaxSockets = 2
		c.HeartbeatInterval = 20 * time.Millisecond
	})
	// not opened in time
	p := &httpPage{base: base}
	resp, _ := p.do("POST", jsapi.PathTransport, "")
	var opened struct {
		ID string `json:"id"`
	}
	json.UnmarshalRead(resp.Body, &opened)
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.srv.transports.mu.Lock()
		_, open := f.srv.transports.byID[opened.ID]
		f.srv.transports.mu.Unlock()
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a transport never streamed was kept")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if resp, _ := p.do("GET", jsapi.PathTransport+"/"+opened.ID, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET after the timeout: %d", resp.StatusCode)
	}
	// no hello
	quiet := openHTTPPage(t, base, "")
	if ce := quiet.closing(t); ce.Code != jsapi.ClosePolicyViolation || !strings.Contains(ce.Reason, "hello") {
		t.Fatalf("no hello: %+v", ce)
	}
	if quiet.pings.Load() == 0 {
		t.Error("no ping on an idle stream")
	}
	// too big
	_, big := connectPlugin(t, base, "")
	resp, _ = big.do("POST", jsapi.PathTransport+"/"+big.id, strings.Repeat("x", jsapi.MaxInboundFrame+2))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("too big: %d", resp.StatusCode)
	}
	if ce := big.closing(t); ce.Code != jsapi.CloseMessageTooBig {
		t.Fatalf("too big: %+v", ce)
	}
	// one frame of 4 MiB + 1 byte, within the body's bound
	_, big = connectPlugin(t, base, "")
	resp, _ = big.do("POST", jsapi.PathTransport+"/"+big.id, strings.Repeat("x", jsapi.MaxInboundFrame+1))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a frame too big: %d", resp.StatusCode)
	}
	if ce := big.closing(t); ce.Code != jsapi.CloseMessageTooBig {
		t.Fatalf("a frame too big: %+v", ce)
	}
	// two open, the third is closed with 1013
	connectPlugin(t, base, "")
	f.connect(t)
	third := openHTTPPage(t, base, "")
	if ce := third.closing(t); ce.Code != jsapi.CloseTryAgainLater {
		t.Fatalf("third: %+v", ce)
	}
}

func TestShutdownClosesTransports(t *testing.T) {
	f, base := pluginFixture(t, nil)
	_, p := connectPlugin(t, base, "")
	f.srv.Close()
	if ce := p.closing(t); ce.Code != jsapi.CloseGoingAway {
		t.Fatalf("shutdown: %+v", ce)
	}
}

// gzipUnlessNoTransform is a compressing middleware that, like
// SillyTavern's compression(), buffers what it compresses (it flushes only
// at the end) and leaves alone a response marked no-transform.
func gzipUnlessNoTransform(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w}
		next.ServeHTTP(gw, r)
		if gw.z != nil {
			gw.z.Close()
		}
	})
}

type gzipWriter struct {
	http.ResponseWriter
	z        *gzip.Writer
	decided  bool
	compress bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if !g.decided {
		g.decided = true
		g.compress = !strings.Contains(g.Header().Get("Cache-Control"), "no-transform")
		if g.compress {
			g.Header().Set("Content-Encoding", "gzip")
			g.Header().Del("Content-Length")
			g.z = gzip.NewWriter(g.ResponseWriter)
		}
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if !g.decided {
		g.WriteHeader(http.StatusOK)
	}
	if g.compress {
		return g.z.Write(b) // buffered until Close
	}
	return g.ResponseWriter.Write(b)
}

// Flush passes through only what is not compressed (compression() flushes
// its own buffer only when asked; this one never does).
func (g *gzipWriter) Flush() {
	if !g.compress {
		if f, ok := g.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// The event stream passes a compressing middleware that honours
// no-transform: the welcome arrives while the stream is open.
func TestStreamThroughCompression(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.PluginSecret = testSecret })
	base := stPlugin(t, f.url, testSecret, gzipUnlessNoTransform)
	c, p := connectPlugin(t, base, "") // the Go client asks for gzip itself
	if p.stream.Header.Get("Content-Encoding") != "" {
		t.Fatalf("the stream was compressed: %v", p.stream.Header)
	}
	if r := c.call(jsapi.CmdListServers, nil); !r.OK {
		t.Fatalf("list: %s", r.raw)
	}
	// the middleware does compress what is not marked (so the test can fail)
	req, _ := http.NewRequest("GET", base+jsapi.PathSession, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, _ := http.DefaultTransport.RoundTrip(req)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the middleware compressed nothing: %v", resp.Header)
	}
}

var _ = jsontext.Value(nil)

// errorReply is the body of an HTTP error of the plugin path.
type errorReply struct {
	Error jsapi.ErrorBody `json:"error"`
}

// A sign-in started through SillyTavern's plugin sends the user back to
// SillyTavern's origin (the plugin's prefix + /oauth/callback), and that
// callback, through the plugin, completes it.
func TestSignInThroughThePlugin(t *testing.T) {
	f, _, endpoint := newAuthBackend(t)
	f.srv.pluginSecret = testSecret
	base := stPlugin(t, f.url, testSecret, nil)
	c, _ := connectPlugin(t, base, "")
	var srv jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Demo", "endpoint": endpoint}), &srv)
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": srv.ID, "state": "active"}), nil)
	var st jsapi.McpSignInStarted
	c.must(jsapi.CmdStartSignIn, dto(map[string]any{"registrationId": srv.ID}), &st)
	if st.RedirectURI != base+jsapi.PathOAuthCallback {
		t.Fatalf("redirect %s, want %s", st.RedirectURI, base+jsapi.PathOAuthCallback)
	}
	back, err := demo.Approve(context.Background(), st.AuthorizationURL, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(back.String(), base+jsapi.PathOAuthCallback+"?") {
		t.Fatalf("sent back to %s", back)
	}
	if resp, page := browserGet(t, back.String()); resp.StatusCode != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("callback through the plugin %d: %s", resp.StatusCode, page)
	}
	r := c.call(jsapi.CmdFinishSignIn, dto(map[string]any{"signInId": st.SignInID}))
	if !r.OK || !strings.Contains(string(r.Value), `"state":"signed_in"`) {
		t.Fatalf("finish: %s", r.raw)
	}
	// the direct path's sign-ins keep the backend's own callback
	d := f.connect(t)
	var dst jsapi.McpSignInStarted
	d.must(jsapi.CmdStartSignIn, dto(map[string]any{"registrationId": srv.ID}), &dst)
	if !strings.HasPrefix(dst.RedirectURI, f.url+jsapi.PathOAuthCallback) {
		t.Fatalf("direct redirect %s", dst.RedirectURI)
	}
}
