package server

import (
	"context"
	"errors"

	"github.com/coder/websocket"
)

// A page's conversation (socket.go) runs over a frameConn: the command
// WebSocket of the direct path, or the HTTP transport of the plugin path
// (transport.go). Every rule of the conversation (the handshake and its
// token, the in-flight bound, the outbox's bounds and its slow-page drop,
// cancellation on close, events, the backend's questions, the socket
// bound) is written once, against this interface, and holds for both.
type frameConn interface {
	// ReadFrame waits for the page's next frame; it never takes a context
	// (a conversation ends by Close, CloseNow or the page). An error ends
	// the conversation; errBinaryFrame is a frame that is not text.
	ReadFrame() ([]byte, error)
	// WriteFrame writes one frame, the concatenation of parts (never
	// copied when large: a part may be shared), within ctx; ctx ending
	// under a write tears the connection down.
	WriteFrame(ctx context.Context, parts ...[]byte) error
	// Close ends the connection with a status code and a reason the page
	// hears (WebSocket close codes, jsapi.Close*).
	Close(code websocket.StatusCode, reason string) error
	// CloseNow tears the connection down without a status.
	CloseNow() error
}

// errBinaryFrame: the page sent a binary frame (the protocol is JSON text).
var errBinaryFrame = errors.New("binary frame")

// wsConn is a frameConn over a WebSocket.
type wsConn struct{ c *websocket.Conn }

func (w wsConn) ReadFrame() ([]byte, error) {
	// Reads never take a cancellable context: cancelling one closes the
	// socket without a status.
	typ, data, err := w.c.Read(context.Background())
	if err == nil && typ != websocket.MessageText {
		return nil, errBinaryFrame
	}
	return data, err
}

// WriteFrame writes parts as one message: copied into one frame when small,
// else a fragmented message, which every WebSocket client reassembles.
func (w wsConn) WriteFrame(ctx context.Context, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if largest(parts) < fragmentAbove {
		frame := make([]byte, 0, n)
		for _, p := range parts {
			frame = append(frame, p...)
		}
		return w.c.Write(ctx, websocket.MessageText, frame)
	}
	wr, err := w.c.Writer(ctx, websocket.MessageText)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := wr.Write(p); err != nil {
			wr.Close()
			return err
		}
	}
	return wr.Close()
}

func largest(parts [][]byte) int {
	m := 0
	for _, p := range parts {
		m = max(m, len(p))
	}
	return m
}

func (w wsConn) Close(code websocket.StatusCode, reason string) error { return w.c.Close(code, reason) }
func (w wsConn) CloseNow() error                                      { return w.c.CloseNow() }
