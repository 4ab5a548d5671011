//go:build js && wasm

// Command wasm is the page side of ttmcp: a Go program compiled to
// WebAssembly (GOOS=js GOARCH=wasm) that publishes TauriTavern's MCP host
// API, window.__TAURITAVERN__.api.mcp and window.__TAURITAVERN__.invoke
// .safeInvoke, and forwards every call to the ttmcp backend over one
// WebSocket (SPEC §4, §5).
//
// It is modelled on Tailscale's cmd/tsconnect: one small main publishes an
// object of methods, each returning a Promise, and stays alive with
// select {}. The transport is callback-only (SPEC §4.1, wasm-bridge-notes
// §3.2): the browser's own WebSocket, no goroutine waiting on it, no
// callback that blocks. It is split in two planes (transport.go): the data
// plane, jsapi/bridge-transport.js, carries every ordinary call in
// JavaScript (the method stub sends the frame, the socket's message
// handler settles the Promise from a table keyed by id), because entering
// Go costs more than a whole call of a plain JavaScript client; the Go
// program is the control plane: the method table, the connection, its
// handshake and reconnection, calls made while no socket is open, every
// Error and tools.testCall. Payloads stay JavaScript strings, parsed by the
// page's JSON.parse; no net/http, encoding/json or fmt is linked.
//
// # Boot data
//
// The loader (jsapi/tauritavern-mcp.js) hands the wasm its boot data in a
// private global that it deletes as soon as go.run has returned (main reads
// it synchronously, before its first block):
//
//	globalThis.__ttmcpBoot = {
//	  backend: "http://127.0.0.1:7878", // where the loader was served from, without /jsapi/…: the
//	                                    // backend's origin, or SillyTavern's origin + /api/plugins/ttmcp
//	  settled: () => void,              // called once: API published and first handshake settled
//	  session: Promise<Response>,       // optional: GET /jsapi/session, started while the wasm loaded
//	  transport: createTransport,       // the data plane (jsapi/bridge-transport.js)
//	  httpSocket: HttpSocket,           // the HTTP transport (jsapi/http-socket.js), a WebSocket's shape
//	}
//
// Without it (a page that runs the wasm by hand) the shim cannot work: it
// says so on the console and exits.
//
// # Bridge status
//
// window.__TAURITAVERN__.mcpBridge = { state, backend, error?, reconnect() }
// is kept current (contract C2: state "connecting" | "open" | "closed" |
// "refused"; error {code, message} while not open), and every change
// dispatches CustomEvent("tauritavern-mcp:state", { detail: { state } }) on
// window. A backend that refuses the page's origin (403 with
// mcp.origin_not_allowed, contract C3) puts the bridge in "refused": calls
// reject at once with the backend's message and no attempt is made until
// reconnect() or a call 30 s later (status.go, conn.go).
package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// bootKey names the private global through which the loader passes the
// boot data (see the package comment).
const bootKey = "__ttmcpBoot"

func main() {
	origin, settled, session, transport, httpSocket := readBoot()
	if transport.Type() != js.TypeFunction {
		logError("ttmcp bridge: no transport; load the shim with " + jsapi.PathLoader)
		return
	}
	b := newBridge(origin, browserEnv(transport, httpSocket))
	b.prefetched = session
	publish(b)
	if settled.Type() == js.TypeFunction {
		b.onFirstSettle = func() { settled.Invoke() }
	}
	b.connect()
	select {}
}

// readBoot takes the loader's boot data and deletes the private global.
func readBoot() (origin string, settled, session, transport, httpSocket js.Value) {
	settled, session, transport, httpSocket = js.Undefined(), js.Undefined(), js.Undefined(), js.Undefined()
	boot := global.Get(bootKey)
	if boot.Type() == js.TypeObject {
		transport = boot.Get("transport")
		httpSocket = boot.Get("httpSocket")
		if o := boot.Get("backend"); o.Type() == js.TypeString {
			origin = o.String()
		}
		settled = boot.Get("settled")
		if p := boot.Get("session"); p.Type() == js.TypeObject && p.Get("then").Type() == js.TypeFunction {
			session = p
		}
		global.Delete(bootKey)
	}
	if origin == "" {
		if loc := global.Get("location"); loc.Type() == js.TypeObject {
			if o := loc.Get("origin"); o.Type() == js.TypeString {
				origin = o.String()
			}
		}
	}
	return origin, settled, session, transport, httpSocket
}
