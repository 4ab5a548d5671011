package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The HTTP transport (issue 28, PROTOCOL.md "The HTTP transport"): what a
// page reaching the backend through SillyTavern's plugin uses instead of
// the command socket, since a plugin sees plain HTTP requests only (no
// upgrade). It carries the same frames as /ws, and the same conversation
// runs over it (socket.go, through frameConn):
//
//	POST   /transport       → 201 {"id":"<128-bit hex>"}
//	GET    /transport/<id>  → the event stream: each frame to the page is
//	                          one event "data: <frame>\n\n", ": ping" while
//	                          idle, "event: close" with {code, reason} last
//	POST   /transport/<id>  → frames to the backend, one per line, in order;
//	                          204 once the conversation has read them all
//	DELETE /transport/<id>  → 204: the page closes
//
// The stream is the socket: when it ends, either side, the transport is
// closed as a WebSocket close would close the socket (what it started is
// cancelled). Only plugin requests reach it, and only for the user who
// opened it: another user's id, like an unknown one, is 404
// mcp.transport_not_found.

// transports are the HTTP transports not yet closed, by id.
type transports struct {
	mu   sync.Mutex
	byID map[string]*httpConn
}

// maxPendingFactor bounds the transports whose stream is not open yet,
// as a multiple of MaxSockets (each is dropped after the handshake timeout
// anyway; the bound caps the memory of a flood in between).
const maxPendingFactor = 2

func (t *transports) add(h *httpConn, limit int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= limit {
		return false
	}
	if t.byID == nil {
		t.byID = map[string]*httpConn{}
	}
	t.byID[h.id] = h
	return true
}

// get returns user's transport id.
func (t *transports) get(id, user string) *httpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.byID[id]; h != nil && h.caller.User == user {
		return h
	}
	return nil
}

func (t *transports) remove(h *httpConn) {
	t.mu.Lock()
	if t.byID[h.id] == h {
		delete(t.byID, h.id)
	}
	t.mu.Unlock()
}

// httpConn is one HTTP transport: a frameConn whose reads come from the
// page's POSTs and whose writes go to its event stream.
type httpConn struct {
	srv    *Server
	id     string
	caller Caller
	cmds   *Commands

	in       chan []byte   // frames up, handed over one by one (unbuffered: a POST waits for the reader)
	done     chan struct{} // closed when the transport ends
	doneOnce sync.Once
	posts    sync.Mutex // one POST's frames at a time, in order

	mu        sync.Mutex
	streaming bool // a GET has opened the stream

	wmu    chan struct{} // held (a token in it) by the stream's writer
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool // nothing more is written to the stream
}

// end ends the transport: ReadFrame reports the end, POSTs waiting give up.
func (h *httpConn) end() {
	h.doneOnce.Do(func() { close(h.done) })
}

// ReadFrame returns the next frame a POST brought.
func (h *httpConn) ReadFrame() ([]byte, error) {
	select {
	case f := <-h.in:
		return f, nil
	case <-h.done:
		return nil, io.EOF
	}
}

// WriteFrame writes one event: "data: " and the frame's parts, a raw line
// break inside a part (whitespace between JSON tokens, never inside a
// string) continued as a further data line, which the page's reader joins
// back with "\n".
func (h *httpConn) WriteFrame(ctx context.Context, parts ...[]byte) error {
	h.lockW()
	defer h.unlockW()
	if h.closed || h.w == nil {
		return errTransportClosed
	}
	if d, ok := ctx.Deadline(); ok {
		h.rc.SetWriteDeadline(d)
	}
	// ctx ending under a write tears the stream down (an outbox drop).
	stop := context.AfterFunc(ctx, func() { h.rc.SetWriteDeadline(time.Now()) })
	defer stop()
	err := h.event(parts...)
	if err == nil {
		err = h.rc.Flush()
	}
	if err != nil {
		h.closed = true
		h.end()
		return err
	}
	h.rc.SetWriteDeadline(time.Time{})
	return nil
}

var (
	dataPrefix = []byte("data: ")
	dataBreak  = []byte("\ndata: ")
	eventEnd   = []byte("\n\n")
)

// event writes "data: <parts>\n\n" to the stream (under wmu).
func (h *httpConn) event(parts ...[]byte) error {
	if _, err := h.w.Write(dataPrefix); err != nil {
		return err
	}
	for _, p := range parts {
		for len(p) > 0 {
			i := bytes.IndexAny(p, "\r\n")
			if i < 0 {
				if _, err := h.w.Write(p); err != nil {
					return err
				}
				break
			}
			if _, err := h.w.Write(p[:i]); err != nil {
				return err
			}
			if _, err := h.w.Write(dataBreak); err != nil {
				return err
			}
			p = p[i+1:]
		}
	}
	_, err := h.w.Write(eventEnd)
	return err
}

// closeEvent is the data of the last event of a stream closed with a
// status: the page's transport reports it as a WebSocket's close event.
type closeEvent struct {
	Code   int    `json:"code"`
	Reason string `json:"reason"`
}

// Close writes the close event (when the stream is open) and ends the
// transport. A stream not open yet hears nothing: its page finds the
// transport gone (404) when it asks for it.
func (h *httpConn) Close(code websocket.StatusCode, reason string) error {
	defer h.end()
	if !h.lockStream() {
		return nil
	}
	defer h.unlockW()
	if h.closed || h.w == nil {
		return nil
	}
	h.closed = true
	data, _ := json.Marshal(closeEvent{Code: int(code), Reason: closeReason(reason)})
	h.rc.SetWriteDeadline(time.Now().Add(closeWait))
	h.w.Write([]byte("event: close\n"))
	h.event(data)
	return h.rc.Flush()
}

// closeWait bounds the write of the close event to a page not reading.
const closeWait = 5 * time.Second

// CloseNow ends the transport without a close event.
func (h *httpConn) CloseNow() error {
	h.end()
	if h.lockStream() {
		h.closed = true
		h.unlockW()
	}
	return nil
}

// lockW and unlockW hold the stream's writes.
func (h *httpConn) lockW()   { h.wmu <- struct{}{} }
func (h *httpConn) unlockW() { <-h.wmu }

// lockStream takes the writes, tearing down a write stuck on a page that
// stopped reading if it does not end within closeGrace (the stream then
// ends; the page sees a dropped connection).
func (h *httpConn) lockStream() bool {
	select {
	case h.wmu <- struct{}{}:
		return true
	case <-time.After(closeGrace):
	}
	h.mu.Lock()
	rc := h.rc
	h.mu.Unlock()
	if rc != nil {
		rc.SetWriteDeadline(time.Now())
	}
	h.lockW()
	return true
}

// closeGrace is how long a close waits for a write in progress.
const closeGrace = time.Second

var errTransportClosed = errors.New("the transport is closed")

// transportRoutes adds the HTTP transport's routes.
func (s *Server) transportRoutes() {
	s.mux.HandleFunc("POST "+jsapi.PathTransport, s.handleTransportOpen)
	s.mux.HandleFunc("GET "+jsapi.PathTransport+"/{id}", s.handleTransportStream)
	s.mux.HandleFunc("POST "+jsapi.PathTransport+"/{id}", s.handleTransportSend)
	s.mux.HandleFunc("DELETE "+jsapi.PathTransport+"/{id}", s.handleTransportClose)
}

// transportNotFound answers 404 mcp.transport_not_found.
func transportNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, jsapi.KindBadRequest, jsapi.CodeTransportNotFound,
		"no such transport (unknown, closed, or another user's); open a new one")
}

// handleTransportOpen opens a transport for the caller.
func (s *Server) handleTransportOpen(w http.ResponseWriter, r *http.Request) {
	caller := CallerOf(r.Context())
	if !caller.Plugin {
		transportNotFound(w) // the direct path has /ws
		return
	}
	cmds, ok := s.userCommands(w, r)
	if !ok {
		return
	}
	b := make([]byte, 16)
	rand.Read(b)
	h := &httpConn{srv: s, id: hex.EncodeToString(b), caller: caller, cmds: cmds,
		in: make(chan []byte), done: make(chan struct{}), wmu: make(chan struct{}, 1)}
	if !s.transports.add(h, maxPendingFactor*s.cfg.MaxSockets) {
		writeError(w, http.StatusServiceUnavailable, jsapi.KindUnavailable, jsapi.CodeHostUnavailable,
			"too many open transports (%d); close some pages and reconnect", maxPendingFactor*s.cfg.MaxSockets)
		return
	}
	// A transport whose stream is not opened in time is dropped.
	time.AfterFunc(s.cfg.HandshakeTimeout, func() {
		h.mu.Lock()
		streaming := h.streaming
		h.mu.Unlock()
		if !streaming {
			s.transports.remove(h)
			h.end()
		}
	})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	body, _ := json.Marshal(struct {
		ID string `json:"id"`
	}{h.id})
	w.Write(body)
}

// lookup returns the caller's transport named in the path, or answers 404.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) *httpConn {
	caller := CallerOf(r.Context())
	var h *httpConn
	if caller.Plugin {
		h = s.transports.get(r.PathValue("id"), caller.User)
	}
	if h == nil {
		transportNotFound(w)
	}
	return h
}

// handleTransportStream is the event stream, and the conversation: it
// runs here, as a WebSocket's runs in its handler, until either side ends
// it.
func (s *Server) handleTransportStream(w http.ResponseWriter, r *http.Request) {
	h := s.lookup(w, r)
	if h == nil {
		return
	}
	h.mu.Lock()
	again := h.streaming
	h.streaming = true
	h.mu.Unlock()
	if again {
		writeError(w, http.StatusConflict, jsapi.KindConflict, jsapi.CodeTransportNotFound,
			"this transport's stream is already open")
		return
	}
	defer s.transports.remove(h)
	select {
	case <-h.done: // dropped meanwhile
		transportNotFound(w)
		return
	default:
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	// no-transform: a compressing proxy (SillyTavern's compression())
	// would otherwise buffer the stream.
	hd.Set("Cache-Control", "no-store, no-transform")
	hd.Set("X-Accel-Buffering", "no")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		h.end()
		return
	}
	h.lockW()
	h.mu.Lock()
	h.w, h.rc = w, rc
	h.mu.Unlock()
	h.unlockW()
	// The page (or a proxy) ending the stream ends the transport.
	stopWatch := context.AfterFunc(r.Context(), h.end)
	defer stopWatch()
	stopBeat := h.heartbeat(s.cfg.HeartbeatInterval)
	defer stopBeat()
	// The conversation's own end (CloseNow) tears nothing down that is
	// still in use: the handler returns only after every write is done.
	s.converse(h, h.caller, h.cmds)
	h.CloseNow()
}

// heartbeat writes ": ping" every interval while the stream is open.
func (h *httpConn) heartbeat(interval time.Duration) (stop func()) {
	t := time.NewTicker(interval)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-quit:
				return
			case <-h.done:
				return
			}
			h.lockW()
			if !h.closed {
				h.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				_, err := h.w.Write([]byte(": ping\n\n"))
				if err == nil {
					err = h.rc.Flush()
				}
				h.rc.SetWriteDeadline(time.Time{})
				if err != nil {
					h.closed = true
					h.end()
				}
			}
			h.unlockW()
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// maxTransportBody bounds a POST's body: the page batches frames up to
// jsapi.MaxInboundFrame in all (a frame alone up to it), newlines counted.
const maxTransportBody = jsapi.MaxInboundFrame + 1

// handleTransportSend hands the POST's frames, in order, to the
// conversation; it answers 204 once it has read them all (so a page whose
// calls fill the in-flight bound is pushed back, as on a socket).
func (s *Server) handleTransportSend(w http.ResponseWriter, r *http.Request) {
	h := s.lookup(w, r)
	if h == nil {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTransportBody))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		h.tooBig(w)
		return
	}
	if err != nil {
		h.end() // a page that cannot send its frames has lost them: as a broken socket
		return
	}
	frames := bytes.Split(body, []byte{'\n'})
	if n := len(frames); n > 0 && len(frames[n-1]) == 0 {
		frames = frames[:n-1]
	}
	for _, f := range frames {
		if len(f) > jsapi.MaxInboundFrame {
			h.tooBig(w)
			return
		}
	}
	h.posts.Lock()
	defer h.posts.Unlock()
	for _, f := range frames {
		select {
		case h.in <- f:
		case <-h.done:
			transportNotFound(w)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// tooBig answers a POST whose body or a frame in it is above the limit:
// as a WebSocket frame above it, the transport closes with 1009.
func (h *httpConn) tooBig(w http.ResponseWriter) {
	reason := "ttmcp: frames above " + strconv.Itoa(jsapi.MaxInboundFrame>>20) + " MiB are not read"
	h.Close(jsapi.CloseMessageTooBig, reason)
	writeError(w, http.StatusRequestEntityTooLarge, jsapi.KindBadRequest, jsapi.CodeRequestTooLarge, "%s", reason)
}

// handleTransportClose is the page's close.
func (s *Server) handleTransportClose(w http.ResponseWriter, r *http.Request) {
	h := s.lookup(w, r)
	if h == nil {
		return
	}
	s.transports.remove(h)
	h.end()
	w.WriteHeader(http.StatusNoContent)
}
