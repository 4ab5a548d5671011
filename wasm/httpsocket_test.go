//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

// A session that says transport "http" (a page through SillyTavern's
// plugin) opens the loader's HttpSocket on the backend's base instead of a
// WebSocket, with the CSRF path the session names; the conversation on it
// is the socket's (hello with the session token, welcome, calls), and a
// drop reconnects with a fresh session, as on the socket.
func TestHTTPSession(t *testing.T) {
	const base = "https://st.example/api/plugins/ttmcp"
	n, e := newFakeNet(t)
	n.body = `{"token":"tok-h","transport":"http","csrf":"/csrf-token"}`
	var csrfs []string
	ws := e.webSocket
	e.httpSocket = n.fn(func(args []js.Value) any {
		csrfs = append(csrfs, args[1].Get("csrf").String())
		return ws.Invoke(args[0]) // a fake socket recording the base as its URL
	})
	e.webSocket = n.fn(func([]js.Value) any {
		t.Error("a WebSocket was opened for an http session")
		return jsObject.New()
	})
	b := newBridge(base, e)
	b.status = jsObject.New()
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	s := n.socket(0)
	if s.url != base || n.lastURL != base+jsapi.PathSession || len(csrfs) != 1 || csrfs[0] != "/csrf-token" {
		t.Fatalf("socket on %s (csrf %v) after fetching %s", s.url, csrfs, n.lastURL)
	}
	s.open()
	if h := s.frame(t, 0); h.Get("type").String() != jsapi.FrameHello || h.Get("token").String() != "tok-h" {
		t.Fatalf("hello = %s", s.sent[0])
	}
	s.welcome()
	if b.state != stateOpen {
		t.Fatalf("state %s", b.state)
	}
	s.drop(1006, "")
	waitFor(t, "a reconnect", func() bool { return len(n.sockets) == 2 })
	if n.sessions != 2 || len(csrfs) != 2 {
		t.Fatalf("reconnect: %d sessions, %d transports", n.sessions, len(csrfs))
	}
}

// A loader without the HTTP transport (an older page's) fails the attempt
// with a reason, and no socket is opened.
func TestHTTPSessionWithoutHTTPSocket(t *testing.T) {
	n, e := newFakeNet(t)
	n.body = `{"token":"tok-h","transport":"http","csrf":"/csrf-token"}`
	e.httpSocket = js.Undefined()
	b := newBridge(testOrigin, e)
	b.status = jsObject.New()
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	waitFor(t, "the failure", func() bool { return b.state == stateClosed })
	if !strings.Contains(b.reason, "no HTTP transport") || len(n.sockets) != 0 {
		t.Fatalf("reason %q, %d sockets", b.reason, len(n.sockets))
	}
}

// An HTTP transport that fails before its welcome is named as what it is
// (not "the WebSocket"), with the reason the transport gave.
func TestHTTPSessionRefusedSaysWhat(t *testing.T) {
	n, e := newFakeNet(t)
	n.body = `{"token":"tok-h","transport":"http","csrf":"/csrf-token"}`
	e.httpSocket = e.webSocket
	b := newBridge("https://st.example/api/plugins/ttmcp", e)
	b.status = jsObject.New()
	t.Cleanup(func() { b.cancelRetry() })
	b.connect()
	n.socket(0).drop(1006, "POST https://st.example/api/plugins/ttmcp/transport answered HTTP 503")
	waitFor(t, "the failure", func() bool { return b.state == stateClosed })
	want := "the HTTP transport through SillyTavern closed abnormally (1006: refused or unreachable): POST https://st.example/api/plugins/ttmcp/transport answered HTTP 503"
	if b.reason != want {
		t.Fatalf("reason %q; want %q", b.reason, want)
	}
}
