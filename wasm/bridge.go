//go:build js && wasm

package main

import "syscall/js"

// The bridge is split by concern:
//
//	bridge.go   the bridge object and what it takes from the page (env)
//	status.go   the states and the mcpBridge status object, state events
//	conn.go     one connection: session fetch, socket, hello/welcome,
//	            failure, drop, reconnect with backoff
//	transport.go the data plane (jsapi/bridge-transport.js): ordinary
//	            calls sent and settled in JavaScript, and its hooks into Go
//	calls.go    the calls Go sends itself: queued while connecting,
//	            in flight, settled through the transport's result hook
//	api.go      api.mcp and invoke.safeInvoke, published on the page
//	testcall.go tools.testCall's slow path (run_mcp_test_call, cancel)
//
// All of it runs on JavaScript's thread (see bridge).

// env is what the bridge takes from the page; tests substitute fakes.
type env struct {
	transport        js.Value // createTransport(hooks, layout) of jsapi/bridge-transport.js
	fetch            js.Value // fetch(url, init)
	webSocket        js.Value // WebSocket constructor
	httpSocket       js.Value // HttpSocket constructor (jsapi/http-socket.js), or undefined
	abortController  js.Value // AbortController constructor, or undefined
	setTimeout       js.Value
	clearTimeout     js.Value
	random           func() float64
	now              func() float64 // ms, for the refusal's quiet period
	handshakeTimeout int            // ms for one attempt: session fetch, socket open, welcome
}

func browserEnv(transport, httpSocket js.Value) env {
	random := global.Get("Math").Get("random")
	dateNow := global.Get("Date").Get("now")
	return env{
		transport:        transport,
		fetch:            global.Get("fetch"),
		webSocket:        global.Get("WebSocket"),
		httpSocket:       httpSocket,
		abortController:  global.Get("AbortController"),
		setTimeout:       global.Get("setTimeout"),
		clearTimeout:     global.Get("clearTimeout"),
		random:           func() float64 { return random.Invoke().Float() },
		now:              func() float64 { return dateNow.Invoke().Float() },
		handshakeTimeout: 10000,
	}
}

// bridge is the callback-only WebSocket client. All its methods run on
// JavaScript's thread, from exported functions or socket/timer/promise
// callbacks, never concurrently (but possibly re-entrantly: a state event
// listener or an abort listener may call back into the API), so it holds
// no mutex: a blocking lock would deadlock a re-entrant call.
type bridge struct {
	origin string
	env    env

	// status (status.go)
	state      string
	status     js.Value // the mcpBridge object, once published
	errCode    string   // mcpBridge.error, "" when there is none
	errMessage string
	errCommand string // mcpBridge.error.command, "" when there is none

	// connection (conn.go)
	conn       *conn // the open connection, or nil
	pending    *conn // the connection attempt in progress, or nil
	epoch      uint64
	failures   int    // consecutive failed attempts
	reason     string // why the last attempt failed
	retryFunc  js.Func
	retryTimer js.Value
	refusedAt  float64 // env.now() when the backend refused this origin
	// refusedCommand is the refusal's restart command ("" when none).
	refusedCommand string
	waiters        []js.Value // resolve functions of reconnect() promises, until the attempt settles
	// prefetched is the loader's GET /jsapi/session, started while the
	// wasm downloaded: the first attempt uses it instead of fetching, which
	// saves a round trip before ready. Later attempts fetch afresh.
	prefetched js.Value

	// transport (transport.go): the data plane, and the calls Go sent
	// through it (calls.go)
	transport js.Value
	inflight  map[uint64]*call // written to conn, waiting for a result
	queued    []*call          // waiting for pending to open

	onFirstSettle func()
	settled       bool
}

func newBridge(origin string, e env) *bridge {
	b := &bridge{
		origin:     origin,
		env:        e,
		state:      stateConnecting,
		status:     js.Undefined(),
		inflight:   make(map[uint64]*call),
		prefetched: js.Undefined(),
	}
	b.transport = b.newTransport(e.transport)
	return b
}
