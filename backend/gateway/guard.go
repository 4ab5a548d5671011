package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// A server's question goes through go-sdk's decoder before ttmcp's
// handler sees it, and that decoder fails a message nested more than 1,000
// levels: on a call's response stream the whole call with it
// (outcome_unknown), on a stdio process the whole session. So the
// transports look at each message from the server before go-sdk does, and
// put a small stand-in in place of an elicitation/create whose params are
// beyond the bounds (domain.CheckElicitParams): the same id, a form with
// no schema and metaRefused in its _meta, which the handler answers
// cancel without asking (elicit.go). Everything else passes unchanged.

// metaRefused marks a stand-in question; its value is the mode the server
// asked in.
const metaRefused = "io.ttmcp/refused"

// guardMessage returns msg, or msg with stand-ins for its questions beyond
// the bounds: msg itself an elicitation/create (2025), or a 2026 answer
// whose input_required names such questions. It does not recurse: nothing
// else touches a message that does not name elicitation/create.
func guardMessage(msg []byte) []byte {
	if !bytes.Contains(msg, question) {
		return msg
	}
	m, ok := domain.Members(msg)
	if !ok {
		return msg
	}
	switch {
	case m["id"] != nil && isQuestion(m) && domain.CheckElicitParams(m["params"]) != nil:
		m["params"] = standIn(m["params"])
	case m["result"] != nil:
		result, changed := guardInputRequests(m["result"])
		if !changed {
			return msg
		}
		m["result"] = result
	default:
		return msg
	}
	out, err := json.Marshal(m)
	if err != nil {
		return msg // a member that does not encode: go-sdk refuses it anyway
	}
	return out
}

// isQuestion reports whether the members of a request are an
// elicitation/create.
func isQuestion(m map[string]json.RawMessage) bool {
	var method string
	return json.Unmarshal(m["method"], &method) == nil && method == "elicitation/create"
}

// guardInputRequests is result with stand-ins for the questions beyond the
// bounds among its inputRequests (2026), and whether any was replaced.
func guardInputRequests(result json.RawMessage) (json.RawMessage, bool) {
	top, ok := domain.Members(result)
	if !ok {
		return result, false
	}
	reqs, ok := domain.Members(top["inputRequests"])
	if !ok {
		return result, false
	}
	changed := false
	for key, raw := range reqs {
		r, ok := domain.Members(raw)
		if !ok || !isQuestion(r) || domain.CheckElicitParams(r["params"]) == nil {
			continue
		}
		r["params"] = standIn(r["params"])
		if b, err := json.Marshal(r); err == nil {
			reqs[key], changed = b, true
		}
	}
	if !changed {
		return result, false
	}
	b, err := json.Marshal(reqs)
	if err != nil {
		return result, false
	}
	top["inputRequests"] = b
	if b, err = json.Marshal(top); err != nil {
		return result, false
	}
	return b, true
}

// standIn is the params put in place of a question's beyond the bounds: a
// form without a schema (go-sdk passes it to the handler), marked with the
// mode the server asked in.
func standIn(params json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"mode": "form", "message": "",
		"_meta": map[string]string{metaRefused: recordedMode(modeOf(params))}})
	return b
}

// refusedMode reports whether params are a stand-in (standIn), and the mode
// the server asked in.
func refusedMode(params json.RawMessage) (string, bool) {
	var p struct {
		Meta map[string]string `json:"_meta"`
	}
	if len(params) > 256 || json.Unmarshal(params, &p) != nil {
		return "", false
	}
	mode, ok := p.Meta[metaRefused]
	return mode, ok
}

// fixLine is fix for one stdio line, its newline included.
func fixLine(line []byte, fix func([]byte) []byte) []byte {
	fixed := fix(line)
	if len(fixed) > 0 && &fixed[0] == &line[0] {
		return line
	}
	return append(fixed, '\n')
}

// fixEvent is fix for one SSE event (its lines, the blank line that ends it
// included): an event whose data fix changes becomes one data line of what
// fix made of it.
func fixEvent(event []byte, fix func([]byte) []byte) []byte {
	msgs := responseMessages("text/event-stream", event)
	if len(msgs) != 1 {
		return event
	}
	fixed := fix(msgs[0])
	if len(fixed) == len(msgs[0]) && bytes.Equal(fixed, msgs[0]) {
		return event
	}
	return append(append([]byte("data: "), fixed...), '\n', '\n')
}

// guardEvent is guardMessage for one SSE event, which screen then drops
// when go-sdk could not decode it.
func guardEvent(event []byte) []byte {
	if bytes.Contains(event, question) {
		event = fixEvent(event, guardMessage)
	}
	return screen(event)
}

// screen drops an SSE event that go-sdk could not decode and that answers
// nothing: go-sdk fails the whole connection on one such event (every
// operation on the session with it: "failed to decode event"), though a
// notification that cannot be read is only a notification lost. Text that
// is not JSON, a message nested beyond go-sdk's 1,000 levels, one without
// "jsonrpc":"2.0" — unless it carries an id: what may be an answer stays,
// for its operation to judge (exchange.go). An event without data, or of
// another type than message, passes (go-sdk skips it).
func screen(event []byte) []byte {
	msgs := responseMessages("text/event-stream", event)
	if len(msgs) != 1 || !isMessageEvent(event) {
		return event
	}
	msg := msgs[0]
	m, ok := domain.Members(msg)
	if ok && m["id"] != nil && !bytes.Equal(m["id"], []byte("null")) {
		return event
	}
	if ok && bytes.Equal(bytes.TrimSpace(m["jsonrpc"]), []byte(`"2.0"`)) && !domain.DepthOver(msg, 1000) && json.Valid(msg) {
		return event
	}
	return nil
}

// screenLine is screen for a stdio line: a message go-sdk could not
// decode fails the process's whole session. Only a JSON object without an
// id is dropped (a notification nested beyond 1,000 levels, one without
// "jsonrpc":"2.0"); text that is not JSON stays, for stdout's verdict
// (stdio_conn.go: the server must write only protocol messages there).
func screenLine(line []byte) []byte {
	m, ok := domain.Members(line)
	if !ok || m["id"] != nil && !bytes.Equal(m["id"], []byte("null")) {
		return line
	}
	if bytes.Equal(bytes.TrimSpace(m["jsonrpc"]), []byte(`"2.0"`)) && !domain.DepthOver(line, 1000) {
		return line
	}
	return nil
}

// isMessageEvent reports whether an SSE event is of type message (named so,
// or not named), the only type go-sdk decodes.
func isMessageEvent(event []byte) bool {
	for _, line := range bytes.Split(event, []byte("\n")) {
		if name, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("event:")); ok {
			name = bytes.TrimSpace(name)
			return len(name) == 0 || string(name) == "message"
		}
	}
	return true
}

// guardReader hands on a server's stream message by message through a
// guard: an SSE body event by event (guardEvent), a stdio process's stdout
// line by line (guardMessage). A message is handed on when it is whole
// (go-sdk acts on none before that); one that is long and no question (a
// large result) is handed on as it comes rather than held whole. The
// stream's caps are the reader's below.
type guardReader struct {
	r    *bufio.Reader
	c    io.Closer
	kind guardKind
	tee  func([]byte) // sees every byte handed on, when set, but progress's
	// progress, when set, sees each whole SSE event that names
	// notifications/progress and says whether it took it (progress.go
	// takeEvent): such an event is handed on as its id alone, if it had
	// one (go-sdk keeps it for resumption and decodes nothing), is not
	// teed, and its bytes are given back to the stream's cap (refund), so
	// a call's progress, however much, neither grows go-sdk's queue nor
	// what is kept of its answer, nor fails it as too large.
	progress func(event []byte) bool
	refund   func(n int)
	quiet    bool // out is such an event
	// fix is what each message goes through (guardMessage); holdAll holds
	// every message whole, not only those that name a question (a list
	// answer, whose entries fix takes apart: entries.go).
	fix     func([]byte) []byte
	holdAll bool
	unit    []byte // the message being read
	asks    bool   // unit names elicitation/create
	out     []byte // what is ready for the reader
	err     error
}

// guardKind is how a stream is split into messages.
type guardKind int

const (
	guardSSE   guardKind = iota // events, each ended by a blank line
	guardLines                  // one message a line (stdio)
	guardWhole                  // the body is one message (a JSON response)
)

// maxHeld is how much of a message that names no question is held before
// it is handed on as it comes.
const maxHeld = 64 << 10

func newGuardReader(rc io.ReadCloser, kind guardKind) *guardReader {
	return &guardReader{r: bufio.NewReaderSize(rc, 32<<10), c: rc, kind: kind, fix: guardMessage}
}

func (g *guardReader) Read(p []byte) (int, error) {
	for len(g.out) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.r.ReadSlice('\n')
		from := max(len(g.unit)-len(question)+1, 0)
		g.unit = append(g.unit, line...)
		g.asks = g.holdAll || g.asks || bytes.Contains(g.unit[from:], question)
		switch {
		case err != nil && err != bufio.ErrBufferFull:
			// the stream ended (within a message, but for a whole body)
			if g.kind == guardWhole && g.asks {
				g.unit = g.fix(g.unit)
			}
			g.flush()
			g.err = err
		case err != nil || g.kind == guardWhole:
			if len(g.unit) > maxHeld && !g.asks {
				g.flush() // long, and no question so far: handed on as it comes
			}
		case g.kind == guardLines:
			if g.asks {
				g.unit = fixLine(g.unit, g.fix)
			}
			g.unit = screenLine(g.unit)
			g.flush()
		case len(bytes.TrimRight(line, "\r\n")) == 0:
			if g.asks {
				g.unit = fixEvent(g.unit, g.fix)
			}
			g.unit = screen(g.unit)
			quiet := g.progress != nil && bytes.Contains(g.unit, progressMethod) && g.progress(g.unit)
			if quiet {
				if g.refund != nil {
					g.refund(len(g.unit))
				}
				g.unit = eventID(g.unit)
			}
			g.flush()
			g.quiet = quiet
		case len(g.unit) > maxHeld && !g.asks:
			g.flush()
		}
	}
	n := copy(p, g.out)
	if g.tee != nil && !g.quiet {
		g.tee(p[:n])
	}
	g.out = g.out[n:]
	return n, nil
}

// eventID is what is left of a taken event: its id line and a blank line,
// or nothing when it had no id.
func eventID(event []byte) []byte {
	for _, line := range bytes.SplitAfter(event, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("id:")) {
			return append(bytes.TrimRight(line, "\r\n"), '\n', '\n')
		}
	}
	return nil
}

// flush hands on the message read so far.
func (g *guardReader) flush() {
	g.out, g.unit, g.asks, g.quiet = g.unit, nil, false, false
}

// question is what every message a guard changes contains.
var question = []byte(`"elicitation/create"`)

func (g *guardReader) Close() error { return g.c.Close() }
