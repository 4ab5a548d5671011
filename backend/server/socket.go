package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/jsapi"
)

// handleWS upgrades an allowed browser to the command socket. Origin and
// Host are checked before the upgrade, so a refused page gets a plain 403
// and nothing of the socket. A plugin request never reaches a socket
// (SillyTavern's plugins cannot upgrade; their pages use the HTTP
// transport).
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	if CallerOf(r.Context()).Plugin {
		writeError(w, http.StatusNotFound, jsapi.KindBadRequest, jsapi.CodeTransportNotFound,
			"the command socket is not served through SillyTavern's plugin; use %s", jsapi.PathTransport)
		return
	}
	origin := r.Header.Get("Origin")
	if origin == "" || !s.allowedOrigin(r, origin) {
		s.refuseOrigin(w, r, origin)
		return
	}
	// Origin was verified above, against loopback names and the allowlist.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept has answered the request
	}
	c.SetReadLimit(jsapi.MaxInboundFrame)
	s.converse(wsConn{c}, CallerOf(r.Context()), s.cfg.Commands)
}

// converse runs a page's conversation on conn to its end, for caller,
// with cmds.
func (s *Server) converse(conn frameConn, caller Caller, cmds *Commands) {
	if code, reason, ok := s.track(conn); !ok {
		conn.Close(code, reason)
		return
	}
	defer s.untrack(conn)
	sock := &socket{srv: s, conn: conn, caller: caller, cmds: cmds, inflight: map[uint64]bool{}, slots: make(chan struct{}, s.cfg.MaxInFlight)}
	sock.writes, sock.abortWrites = context.WithCancel(context.Background())
	defer sock.abortWrites()
	defer s.outbox.forget(sock)
	sock.run()
}

// socket is one page's conversation.
type socket struct {
	srv    *Server
	conn   frameConn
	caller Caller        // whose conversation it is
	cmds   *Commands     // over the caller's data
	slots  chan struct{} // bounds concurrent requests

	mu       sync.Mutex
	inflight map[uint64]bool
	order    testOrder // pipelined test calls (testorder.go)
	work     sync.WaitGroup

	backlog backlog // its results waiting to be written (under srv.outbox.mu)
	asks    asks    // what the backend asks its page (asks.go)
	// writes is the parent of every write's context; abortWrites tears the
	// connection down under a write that is stuck (a page dropped for not
	// reading).
	writes      context.Context
	abortWrites context.CancelFunc
}

// hello is the first frame.
type hello struct {
	Type  string  `json:"type"`
	Token *string `json:"token,omitempty"`
}

func (sk *socket) run() {
	ctx, cancel := context.WithCancel(sk.srv.ctx)
	defer func() {
		sk.asks.end()  // nobody will answer its questions
		cancel()       // the socket is gone: stop what it started
		sk.work.Wait() // and let it finish before the handler returns
		sk.conn.CloseNow()
	}()
	if !sk.handshake() {
		return
	}
	if watch := sk.cmds.watch; watch != nil {
		defer watch(sk.event)()
	}
	for {
		// The socket ends by Close (shutdown sends 1001) or by the peer.
		data, err := sk.conn.ReadFrame()
		if err == errBinaryFrame {
			sk.conn.Close(jsapi.CloseUnsupportedData, "ttmcp: binary frames are not supported; send JSON text frames")
			return
		}
		if err != nil {
			// Too-big frames were already closed with 1009.
			return
		}
		inv, err := parseInvoke(data)
		if err != nil && sk.pageFrame(data) {
			continue // a page's handlers or response frame
		}
		if err != nil {
			sk.conn.Close(jsapi.ClosePolicyViolation, closeReason("ttmcp: expected an invoke frame {type,id,command,args}: "+err.Error()))
			return
		}
		id := inv.id
		if !sk.begin(id) {
			sk.reply(id, nil, errorf(jsapi.KindBadRequest, jsapi.CodeArgsInvalid, "request id %d is already in flight on this socket", id))
			continue
		}
		if inv.err != nil {
			sk.end(id)
			sk.reply(id, nil, inv.err)
			continue
		}
		// A test call's start, call and cancel are ordered (testorder.go);
		// the order is taken here, as the frames are read.
		var start, after *startGate // the start this frame is, the start it waits for
		var startsBefore uint64
		switch inv.command {
		case jsapi.CmdStartTestCall:
			start = sk.startRead(inv.args, false)
		case jsapi.CmdRunTestCall:
			start = sk.startRead(inv.args, true) // its own call: nothing else claims it
		case jsapi.CmdTestToolCall:
			startsBefore = sk.startsRead()
		case jsapi.CmdCancelTestCall:
			after = sk.cancelRead(inv.args)
		}
		select {
		case sk.slots <- struct{}{}:
		case <-ctx.Done():
			if start != nil {
				sk.startFinished(start, ctx.Err())
			}
			return
		}
		sk.work.Add(1)
		go func() {
			defer sk.work.Done()
			defer func() { <-sk.slots }()
			cctx := sk.callContext(ctx)
			if inv.progress {
				cctx = service.WithProgress(cctx, sk.progressSink(id))
			}
			if startsBefore > 0 {
				after = sk.callRead(inv.args, startsBefore)
			}
			if after != nil {
				<-after.done
				if ps, ok := after.pipelined(); ok && inv.command == jsapi.CmdTestToolCall {
					cctx = service.WithPipelinedStart(cctx, ps)
				}
			}
			var later service.Later // what the command leaves for after its answer
			defer later.Run()
			cctx = service.WithLater(cctx, &later)
			run := start != nil && inv.command == jsapi.CmdRunTestCall
			if run { // a cancel read meanwhile goes on once the call is registered
				cctx = service.WithStarted(cctx, func(err error) bool { return sk.startFinished(start, err) })
			}
			value, err := sk.cmds.Invoke(cctx, inv.command, inv.args)
			if start != nil && (err == nil || run) {
				// a start: its call goes on while the acknowledgement is
				// written; a run whose dto was refused before its start
				// (else it told already): the cancel goes on
				sk.startFinished(start, err)
			}
			sk.end(id) // the id is free once its result is on the way
			sk.reply(id, value, err)
			if start != nil && err != nil {
				sk.startFinished(start, err) // the start's failure is told before its call's (a run's: told)
			}
		}()
	}
}

// event sends a FrameEvent to the page, off the caller's goroutine (the
// service's, which must not wait for a page); it counts in the outbox like
// a result.
func (sk *socket) event(ev jsapi.Event) {
	frame, err := json.Marshal(ev)
	if err != nil {
		sk.srv.log.Error("cannot encode an event", "event", ev.Event, "err", err)
		return
	}
	go func() {
		if err := sk.writeResult(frame, nil, nil); err != nil {
			sk.srv.log.Debug("cannot write an event", "event", ev.Event, "err", err)
		}
	}()
}

// progressSink writes the progress of the call invoke id makes as progress
// frames (jsapi.FrameProgress); the service sends them one at a time, the
// last before the command returns, so they precede its result. They count
// in the outbox like results.
func (sk *socket) progressSink(id uint64) service.ProgressSink {
	return func(p jsapi.McpCallProgress) {
		frame, err := json.Marshal(jsapi.ProgressFrame{Type: jsapi.FrameProgress, ID: id, Value: p})
		if err != nil {
			return
		}
		if err := sk.writeResult(frame, nil, nil); err != nil {
			sk.srv.log.Debug("cannot write a progress frame", "id", id, "err", err)
		}
	}
}

// closeReason cuts a close reason to the 123 bytes a close frame holds,
// on a UTF-8 boundary.
func closeReason(s string) string {
	if len(s) <= maxCloseReason {
		return s
	}
	s = s[:maxCloseReason]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

const maxCloseReason = 123

// handshake reads the hello frame and checks the token in constant time.
func (sk *socket) handshake() bool {
	// A deadline on the read context would close the socket without a
	// status (coder/websocket closes on cancellation); a timer closing with
	// 1008 tells the page why.
	timer := time.AfterFunc(sk.srv.cfg.HandshakeTimeout, func() {
		sk.conn.Close(jsapi.ClosePolicyViolation, "ttmcp: no hello frame in time")
	})
	defer timer.Stop()
	data, err := sk.conn.ReadFrame()
	if !timer.Stop() {
		return false
	}
	if err == errBinaryFrame {
		sk.conn.Close(jsapi.CloseUnsupportedData, "ttmcp: binary frames are not supported; send JSON text frames")
		return false
	}
	if err != nil {
		return false
	}
	var hello hello
	if json.Unmarshal(data, &hello) != nil || hello.Type != jsapi.FrameHello || hello.Token == nil || !sk.validToken(*hello.Token) {
		sk.conn.Close(jsapi.ClosePolicyViolation, "ttmcp: invalid session token")
		return false
	}
	welcome, _ := json.Marshal(jsapi.Welcome{Type: jsapi.FrameWelcome, Server: jsapi.ServerInfo{Name: "ttmcp", Version: sk.srv.cfg.Version}})
	return sk.write(welcome) == nil
}

// callContext is the context of a command the page sent: its page (for
// the backend's questions), its caller, and, through SillyTavern's plugin,
// the sign-in callback on the page's side (service.WithRedirectURL).
func (sk *socket) callContext(ctx context.Context) context.Context {
	ctx = withCaller(service.WithPage(ctx, sk), sk.caller)
	if sk.caller.Plugin {
		ctx = service.WithRedirectURL(ctx, sk.caller.Base()+jsapi.PathOAuthCallback)
	}
	return ctx
}

// validToken reports in constant time whether a hello's token opens this
// conversation: the per-launch token on the direct path, the user's own
// session token on the plugin path (never the per-launch one).
func (sk *socket) validToken(token string) bool {
	if sk.caller.Plugin {
		return sk.srv.userTokens.valid(sk.caller.User, token)
	}
	return subtle.ConstantTimeCompare([]byte(token), []byte(sk.srv.token)) == 1
}

// write sends one frame. Its deadline is independent of the request's
// context: a cancelled request still answers, and a cancelled write
// context would tear the socket down without a status.
func (sk *socket) write(frame []byte) error {
	ctx, cancel := context.WithTimeout(sk.writes, writeTimeout)
	defer cancel()
	return sk.conn.WriteFrame(ctx, frame)
}

// writeTimeout bounds one frame's write to a page that stopped reading.
const writeTimeout = 30 * time.Second

func (sk *socket) begin(id uint64) bool {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if sk.inflight[id] {
		return false
	}
	sk.inflight[id] = true
	return true
}

func (sk *socket) end(id uint64) {
	sk.mu.Lock()
	delete(sk.inflight, id)
	sk.mu.Unlock()
}

// reply writes a result frame in the fixed layout of jsapi.ResultHead, the
// payload last, so the shim can cut it out without decoding it.
func (sk *socket) reply(id uint64, value jsontext.Value, err error) {
	var head []byte
	head = append(head, jsapi.ResultHead...)
	head = strconv.AppendUint(head, id, 10)
	if err != nil {
		body, _ := json.Marshal(errorBody(err))
		head = append(head, jsapi.ResultError...)
		head = append(head, body...)
		value = nil
	} else {
		head = append(head, jsapi.ResultOK...)
	}
	if werr := sk.writeResult(head, value, []byte{'}'}); werr != nil {
		sk.srv.log.Debug("cannot write result", "id", id, "err", werr)
	}
}
