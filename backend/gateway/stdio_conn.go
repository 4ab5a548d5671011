package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the mcp.Transport of a started stdio server: go-sdk's
// own newline-delimited JSON-RPC over the process's pipes (mcp.IOTransport,
// the connection mcp.CommandTransport uses), with the line length capped
// at the response limit, and wrapped by stdioConn, which sees every
// message go out and come in.
//
// mcp.CommandTransport itself is not used: it starts the process (so the
// process could not be put in its job before it runs), its Close signals
// only the process it started (not what that one started), and it does
// not cap a line below go-sdk's 16 MiB default.
type stdioTransport struct {
	in   *countingWriter
	out  *watchedReader
	conn *stdioConn // made before Connect, so a failed start can ask it why
}

// newStdioTransport returns the transport of proc. refuseInitialize keeps
// a session that asked for 2026-07-28 only from falling back to
// initialize, as the HTTP transport does.
func newStdioTransport(proc *process, limit int, refuseInitialize bool) *stdioTransport {
	t := &stdioTransport{in: &countingWriter{w: proc.stdin}, out: &watchedReader{r: proc.stdout, limit: limit}}
	t.conn = &stdioConn{in: t.in, out: t.out, refuseInitialize: refuseInitialize, calls: map[jsonrpc.ID]*exchange{}, lists: map[jsonrpc.ID]listed{}}
	return t
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// stdout is read line by line through the guard (guard.go), after the
	// watcher has seen it as written
	inner, err := (&mcp.IOTransport{Reader: newGuardReader(t.out, guardLines), Writer: t.in, MaxLineLength: t.out.limit}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn.Connection = inner
	return t.conn, nil
}

// stdioConn is the connection of one stdio session, shared by every
// request to that server. It tells what the shared session cannot:
//
//   - whether a tracked request was written to the process's stdin (a
//     request is "sent" once any byte of it was): each operation carries
//     its exchange in its context (exchange.go), and writes are
//     serialised, so the bytes a write put in the pipe are that message's;
//   - the raw answer to each tracked request, matched by request id, so a
//     result go-sdk cannot decode (an unknown content type) is still known;
//   - why the connection broke: non-protocol text on stdout, or a line
//     over the limit.
type stdioConn struct {
	mcp.Connection
	in               *countingWriter
	out              *watchedReader
	refuseInitialize bool
	refusedLegacy    atomic.Bool

	// question sees the params of each elicitation/create the server
	// sends, as read (elicit.go keeps them for the asking call).
	question func(json.RawMessage)
	// progress takes the params of each notifications/progress as read,
	// before go-sdk would queue it (progress.go take), and says whether it
	// did: go-sdk then never sees it.
	progress func(params []byte) bool

	wmu   sync.Mutex // serialises writes, so in's count is per message
	mu    sync.Mutex
	calls map[jsonrpc.ID]*exchange // tracked requests written and not answered
	lists map[jsonrpc.ID]listed    // list requests written and not answered
}

// listed is a list request of an operation, waiting for its answer.
type listed struct {
	method string
	ex     *exchange
}

func reqMethod(req *jsonrpc.Request) string {
	if req == nil {
		return ""
	}
	return req.Method
}

// errLegacyStdio refuses an initialize in a session that accepts only MCP
// 2026-07-28.
var errLegacyStdio = errors.New("initialize refused: only MCP 2026-07-28 is accepted")

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, _ := msg.(*jsonrpc.Request)
	if c.refuseInitialize && req != nil && req.Method == "initialize" {
		c.refusedLegacy.Store(true)
		return errLegacyStdio
	}
	ex := exchangeOf(ctx)
	if _, ok := listMembers[reqMethod(req)]; ok && ex != nil && req.IsCall() {
		c.mu.Lock()
		c.lists[req.ID] = listed{method: req.Method, ex: ex}
		c.mu.Unlock()
	}
	if ex == nil || req == nil || req.Method != ex.method || !req.IsCall() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	c.calls[req.ID] = ex
	c.mu.Unlock()
	c.wmu.Lock()
	before := c.in.n.Load()
	err := c.Connection.Write(ctx, msg)
	if c.in.n.Load() > before {
		// Even a failed write may have put the request in the pipe.
		ex.written.Store(true)
	}
	c.wmu.Unlock()
	if !ex.written.Load() {
		c.mu.Lock()
		delete(c.calls, req.ID)
		c.mu.Unlock()
	}
	return err
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	for c.progress != nil && err == nil {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != "notifications/progress" || req.IsCall() || !c.progress(req.Params) {
			break
		}
		msg, err = c.Connection.Read(ctx) // taken: the next message is go-sdk's
	}
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "elicitation/create" && c.question != nil {
		c.question(req.Params)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		ex := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		l, isList := c.lists[resp.ID]
		delete(c.lists, resp.ID)
		c.mu.Unlock()
		if isList && len(resp.Result) > 0 {
			// a list answer: each entry decoded apart (entries.go)
			var bad []malformed
			resp.Result, bad = isolateEntries(l.method, resp.Result)
			l.ex.addMalformed(bad)
		}
		if ex != nil {
			ex.answered(resp)
		}
	}
	return msg, err
}

// broken says why the connection can no longer be read, when stdout
// showed it: the error's code and a message, or "" when stdout looked
// right (it ended, or the connection was closed).
func (c *stdioConn) broken() (code, message string) {
	return c.out.verdict()
}

// countingWriter counts the bytes written to the process's stdin.
type countingWriter struct {
	w io.WriteCloser
	n atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func (w *countingWriter) Close() error { return w.w.Close() }

// watchedReader reads the process's stdout for go-sdk and keeps what is
// needed to say why decoding failed: the first line that cannot be a
// JSON-RPC message (one that does not start with '{' or '['), and whether
// a line went over the limit. It looks at each line as it passes, so the
// verdict does not depend on how the reads split the stream.
type watchedReader struct {
	r     io.ReadCloser
	limit int

	mu       sync.Mutex
	lineLen  int  // bytes of the current line so far
	lineKind byte // its first byte that is not white space, 0 while there is none
	bad      []byte
	badOpen  bool // bad is the current line, still being read
	badCut   bool // bad was cut at maxShownStdout
	tooLong  bool
}

const maxShownStdout = 200

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.mu.Lock()
	w.see(p[:n])
	w.mu.Unlock()
	return n, err
}

// see follows the lines of b.
func (w *watchedReader) see(b []byte) {
	for len(b) > 0 {
		seg, rest, nl := bytes.Cut(b, []byte{'\n'})
		w.lineLen += len(seg)
		if w.lineLen >= w.limit {
			w.tooLong = true
		}
		if w.lineKind == 0 {
			if t := bytes.TrimLeft(seg, " \t\r"); len(t) > 0 {
				w.lineKind = t[0]
				if w.bad == nil && t[0] != '{' && t[0] != '[' {
					w.bad, w.badOpen = []byte{}, true
					seg = t
				}
			}
		}
		if w.badOpen {
			room := maxShownStdout - len(w.bad)
			if len(seg) > room {
				seg, w.badCut = seg[:room], true
			}
			w.bad = append(w.bad, seg...)
		}
		if !nl {
			return
		}
		w.lineLen, w.lineKind, w.badOpen = 0, 0, false
		b = rest
	}
}

func (w *watchedReader) Close() error { return w.r.Close() }

// verdict tells why decoding stopped, if stdout shows it: a line over the
// limit, or text that is not JSON-RPC. "" when stdout looked right (it
// ended, or the connection was closed).
func (w *watchedReader) verdict() (code, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tooLong {
		return CodeStdioLineTooLong, "the server wrote a line of more than " + strconv.Itoa(w.limit) +
			" bytes to stdout (one JSON-RPC message per line, at most the response limit)"
	}
	if w.bad == nil {
		return "", ""
	}
	shown := strings.TrimRight(string(bytes.ToValidUTF8(w.bad, []byte("\uFFFD"))), " \t\r")
	if w.badCut {
		shown += " …"
	}
	return CodeStdioStdoutInvalid, "the server wrote text that is not a JSON-RPC message to stdout: " + strconv.Quote(shown) +
		" (an MCP stdio server may write only protocol messages there; logs belong on stderr)"
}
