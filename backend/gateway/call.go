package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Codes of call outcomes (reference §4.2).
const (
	CodeCallCancelledBeforeSend = "mcp.call_cancelled_before_send"
	CodeCallHeadersInvalid      = "mcp.call_headers_invalid"
	CodeCallInitializeTimeout   = "mcp.call_initialize_timeout"
	CodeCallInitializeFailed    = "mcp.call_initialize_failed"
	CodeCallToolsMissing        = "mcp.call_tools_capability_missing"
	CodeCallMetadataTimeout     = "mcp.call_metadata_timeout"
	CodeCallMetadataFailed      = "mcp.call_metadata_failed"
	CodeCallToolUnavailable     = "mcp.call_tool_unavailable"
	CodeCallNotQueued           = "mcp.call_not_queued"
	CodeCallCancelled           = "mcp.call_cancelled"
	CodeCallTimeout             = "mcp.call_timeout"
	CodeCallResponseFailed      = "mcp.call_response_failed"
	CodeCallContentUnsupported  = "mcp.call_content_unsupported"
	CodeCallMetadataUnsupported = "mcp.call_metadata_unsupported"
)

// Call makes one tools/call and reports honestly what the server may have
// done. The arguments are sent byte for byte (no schema coercion; integers
// beyond 2^53 stay exact). It runs on the registration's live connection
// (live.go): a warm call is its one request.
//
// Nothing the server may have acted on is sent again. The only second
// sends are of requests it provably did not process (DECISIONS "Live
// connections"): one that never left this host because the kept session
// had ended meanwhile, one answered 404 for an expired 2025 session (both
// on a new session), one answered HeaderMismatch (-32020), which the
// server gives before running anything, after the tool's current schema
// was listed, and one refused until the user was done on a page (-32042),
// once the user is; and the protocol's own continuation, the rounds of a
// 2026 call that asks the user (elicit.go). Once the request may have
// reached the server, any other failure is outcome_unknown.
func (g *Gateway) Call(ctx context.Context, r domain.Registration, call domain.ToolCall) domain.CallOutcome {
	if ctx.Err() != nil {
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before preparation started")
	}
	var a *asker
	if call.Elicit != nil {
		a = &asker{ctx: ctx, elic: call.Elicit, reg: r.ID, budget: &g.asks}
	}
	callOnce := g.callHTTP
	if r.Stdio != nil {
		callOnce = g.callStdio
	}
	out := callOnce(ctx, r, call, a)
	pages, ok := pagesRequired(out)
	if a == nil || !ok {
		return out
	}
	// The server took nothing of the call until the user is done on its
	// pages (elicit.go); no session is held while the user is there.
	refused := max(out.Rounds, 1)
	if !g.visitPages(a, r.ID, pages) {
		out.Rounds, out.Elicitations = refused, a.trace()
		return out
	}
	out = callOnce(ctx, r, call, a)
	// A second refusal stays the server's answer: ttmcp sends no third.
	out.Rounds, out.Elicitations = refused+max(out.Rounds, 1), a.trace()
	return out
}

// callHTTP makes the call on the registration's live connection.
func (g *Gateway) callHTTP(ctx context.Context, r domain.Registration, call domain.ToolCall, a *asker) domain.CallOutcome {
	for fresh := false; ; fresh = true {
		le, err := g.lives.acquire(ctx, r)
		if err != nil {
			return startupNotSent(err)
		}
		g.observe(r, le.s.cs.InitializeResult())
		out, again := g.callOn(ctx, le, call, a, !fresh)
		g.lives.release(le)
		if !again {
			return out
		}
	}
}

// callOn makes the call on le's connection: on its shared session, or for
// a 2025 call that may ask the user (a) on an eliciting session of its own.
// again reports that the request provably was not processed because the
// session was gone, and mayResend allowed sending it once more on a new
// session.
func (g *Gateway) callOn(ctx context.Context, le *lease, call domain.ToolCall, a *asker, mayResend bool) (out domain.CallOutcome, again bool) {
	init := le.s.cs.InitializeResult()
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return domain.NotSent(CodeCallToolsMissing, "The MCP server did not declare the tools capability"), false
	}
	modern := init.ProtocolVersion >= Versions[0]
	s, gone := le.s, func(expired bool) {
		if expired {
			g.lives.expired(le)
		} else {
			g.lives.drop(le)
		}
	}
	apps := domain.RendersApps(ctx)
	if (a != nil || apps) && !modern {
		es, put, err := g.lives.eliciting(ctx, le, sessionKind{eliciting: a != nil, apps: apps})
		if err != nil {
			return startupNotSent(err), false
		}
		defer func() { put(out.Outcome == domain.OutcomeKnownResponse) }()
		s, gone = es, func(bool) { es.close() }
	}
	var params http.Header
	if modern {
		params = paramHeaders(call.InputSchema, call.Arguments)
	}
	out, ex, ans := g.send(ctx, s, call, params, a, nil)
	switch {
	case ex.refused:
		// Written, but refused before it was applied: a 401 says the
		// request "has not been applied" for want of valid credentials (RFC
		// 9110 §15.5.2), and a Bearer 403 is the same refusal for want of
		// scope (RFC 6750 §3.1). So the tool did not run: not_sent, and
		// nothing re-sends it (see docs/DECISIONS.md).
		g.lives.drop(le)
		err, _ := g.authFailure(s.r, s.tr)
		return domain.NotSent(CodeAuthRequired, "The tool request was refused before it ran: "+detailOf(err)), false
	case ex.expired.Load():
		// The session expired: by the transport's definition the request
		// was not processed.
		gone(true)
		if mayResend {
			return out, true
		}
		return domain.NotSent(CodeCallSessionExpired, "The MCP server ended the session again before the tool request was processed; the tool did not run"), false
	case !ex.written.Load() && ctx.Err() == nil && s.over() && mayResend:
		// Nothing left this host, and the kept session had ended: the
		// request goes on a new session.
		gone(false)
		return out, true
	}
	if out.Outcome == domain.OutcomeKnownResponse && s == le.s {
		g.lives.kept(le)
	}
	if modern && out.ServerError != nil && out.ServerError.Code == codeHeaderMismatch {
		// The server refused the headers before running anything: its
		// schema of the tool differs from the catalog's. List it, and send
		// once more with the headers of the schema it lists now.
		schema, ok := g.currentSchema(ctx, s, call.NativeName)
		if !ok {
			return out, false
		}
		call.InputSchema = schema
		params = paramHeaders(schema, call.Arguments)
		out, _, ans = g.send(ctx, s, call, params, a, nil)
	}
	if a == nil {
		return out, false
	}
	rounds := 1
	if modern {
		out, rounds = g.rounds(ctx, a, out, ans, func(cont *continuation) (domain.CallOutcome, rawAnswer) {
			out, _, ans := g.send(ctx, s, call, params, a, cont)
			return out, ans
		})
	}
	if recs := a.trace(); len(recs) > 0 || rounds > 1 {
		out.Rounds, out.Elicitations = rounds, recs
	}
	return out, false
}

// rounds continues a 2026 call whose server answered input_required (MRTR,
// SEP-2322): each elicitation/create it names is put to the user, and the
// call is sent again with the answers and the requestState exactly as
// received — the protocol's continuation of one call, not a retry — up to
// maxRounds requests in all. It stops, sending nothing more, at a request
// ttmcp does not serve (sampling, roots: the server may not ask what the
// call did not advertise) and when the call is stopped while the user
// answers: the server answered that request and keeps nothing of it.
func (g *Gateway) rounds(ctx context.Context, a *asker, out domain.CallOutcome, ans rawAnswer,
	again func(*continuation) (domain.CallOutcome, rawAnswer)) (domain.CallOutcome, int) {
	n := 1
	for {
		ir, ok := inputRequired(ans)
		if !ok {
			return out, n
		}
		if n == maxRounds {
			return unsupported("input_required", fmt.Sprintf("The server asked for input again after %d requests; ttmcp stopped the call there", maxRounds)), n
		}
		responses := mcp.InputResponseMap{}
		for _, key := range slices.Sorted(maps.Keys(ir.requests)) {
			req := ir.requests[key]
			if req.Method != "elicitation/create" {
				return unsupported("input_required", fmt.Sprintf("The server asked for %s, which ttmcp does not offer; the call was not continued", req.Method)), n
			}
			q, ok := elicitRequest(req.Params)
			if !ok {
				// A question ttmcp cannot show (unreadable, or beyond the
				// bounds): answered cancel without asking, and the call goes on.
				mode, ok := refusedMode(req.Params)
				if !ok {
					mode = modeOf(req.Params)
				}
				responses[key] = elicitResult(a.refuse(mode))
				continue
			}
			resp := a.ask(q)
			if ctx.Err() != nil {
				return unsupported("input_required", "The server asked for input, and the call was stopped while the user was answering: "+
					"nothing more was sent, and the server keeps nothing of an unanswered request"), n
			}
			responses[key] = elicitResult(resp)
		}
		out, ans = again(&continuation{responses: responses, state: ir.state})
		n++
		if out.Outcome != domain.OutcomeKnownResponse {
			return out, n
		}
	}
}

// callParams are the params of one tools/call request of call; a round
// carries its answers (cont). What the request advertises is the sending
// middleware's (middleware.go).
func callParams(call domain.ToolCall, cont *continuation) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: call.NativeName, Arguments: json.RawMessage(call.Arguments)}
	if cont != nil {
		p.InputResponses = cont.responses
		if cont.state != nil {
			p.RequestState = *cont.state
		}
	}
	return p
}

// continuation is what a 2026 round sends besides the call's own params.
type continuation struct {
	responses mcp.InputResponseMap
	state     *string // nil: the server sent none, and none is sent back
}

// inputRequirement is a 2026 input_required answer.
type inputRequirement struct {
	requests map[string]inputRequest
	state    *string
}

// inputRequest is one request an input_required answer names: its params
// as sent, not yet decoded (elicitRequest bounds them first).
type inputRequest struct {
	Method string
	Params json.RawMessage
}

// inputRequired reads an input_required answer; false for any other. The
// answer is split member by member rather than decoded whole: a question
// nested thousands deep must not fail the answer it came in (elicit.go
// bounds each question).
func inputRequired(a rawAnswer) (inputRequirement, bool) {
	if a.err != nil || len(a.result) == 0 {
		return inputRequirement{}, false
	}
	top, ok := domain.Members(a.result)
	var resultType string
	if !ok || json.Unmarshal(top["resultType"], &resultType) != nil || resultType != "input_required" {
		return inputRequirement{}, false
	}
	ir := inputRequirement{requests: map[string]inputRequest{}}
	if raw, ok := top["requestState"]; ok && string(raw) != "null" {
		var state string
		if json.Unmarshal(raw, &state) != nil {
			return inputRequirement{}, false
		}
		ir.state = &state
	}
	if raw, ok := top["inputRequests"]; ok && string(raw) != "null" {
		reqs, ok := domain.Members(raw)
		if !ok {
			return inputRequirement{}, false
		}
		for key, raw := range reqs {
			m, ok := domain.Members(raw)
			var req inputRequest
			if !ok || m["method"] != nil && json.Unmarshal(m["method"], &req.Method) != nil {
				return inputRequirement{}, false
			}
			req.Params = m["params"]
			ir.requests[key] = req
		}
	}
	return ir, true
}

// modeOf is the mode a question's params name, read without decoding the
// rest ("" when none can be read).
func modeOf(params json.RawMessage) string {
	var mode string
	if m, ok := domain.Members(params); ok {
		json.Unmarshal(m["mode"], &mode)
	}
	return mode
}

// codeHeaderMismatch is SEP-2243's HeaderMismatch: the server compared the
// Mcp-* headers with the body before doing anything else and refused.
const codeHeaderMismatch = -32020

// CodeCallSessionExpired: a 2025 server expired the session a tool call
// was sent on, twice in a row; the call was not processed.
const CodeCallSessionExpired = "mcp.call_session_expired"

// send makes one tools/call request on s and words its outcome; it also
// returns the raw answer, when one came (a 2026 input_required is read
// from it). A call that may ask the user (a) advertises elicitation in its
// request's _meta (2026) or, on an eliciting session (2025), holds the
// session's questions while it runs; cont, when set, is a 2026 round's
// answers.
func (g *Gateway) send(ctx context.Context, s *session, call domain.ToolCall, params http.Header, a *asker, cont *continuation) (domain.CallOutcome, *exchange, rawAnswer) {
	cctx, dl := g.requestContext(ctx, g.cfg.CallWait)
	defer dl.done()
	cctx, ex := withExchange(cctx, "tools/call")
	ex.params = params
	p := callParams(call, cont)
	defer g.progress.attach(s.r.ID, call.Progress, p)()
	if a != nil {
		ex.mayElicit = true
		a.pause = dl.pause
		if s.cs.InitializeResult().ProtocolVersion < Versions[0] {
			s.asking.Store(&asking{a: a, ex: ex})
			defer s.asking.Store(nil)
		}
	}
	res, err := s.cs.CallTool(cctx, p)
	answer, known := ex.end()
	if err != nil && cctx.Err() != nil && ex.written.Load() && !known {
		// go-sdk now tells the server, from a goroutine (see awaitCancels)
		s.tr.oweCancel()
	}
	if !ex.written.Load() {
		// Nothing reached the server: the request never left this host.
		if ctx.Err() != nil {
			return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it was queued"), ex, answer
		}
		if err == nil {
			err = errors.New("no request was written")
		}
		return domain.NotSent(CodeCallNotQueued, "The tool request could not be queued: "+s.tr.explain(ex, err)), ex, answer
	}
	// The request was written: decide from the raw response first, so a
	// result go-sdk cannot decode (an unknown content type) stays known.
	if known {
		if out, ok := answerOutcome(answer); ok {
			return out, ex, answer
		}
	}
	if out, ok := writtenOutcome(ctx, cctx, res, err, "the remote tool"); ok {
		return out, ex, answer
	}
	return domain.Unknown(CodeCallResponseFailed, "The tool response could not be confirmed: "+s.tr.explain(ex, err)+"; the remote tool may have executed"), ex, answer
}

// answerOutcome is the outcome of a tools/call answer as received.
func answerOutcome(a rawAnswer) (domain.CallOutcome, bool) {
	if a.err != nil {
		return serverError(a.err.Code, a.err.Message, a.err.Data), true
	}
	return projectRaw(a.result)
}

// currentSchema lists the tools of s until nativeName appears and returns
// its input schema as the server lists it now.
func (g *Gateway) currentSchema(ctx context.Context, s *session, nativeName string) (json.RawMessage, bool) {
	l, err := g.listTools(ctx, s, nativeName, nil)
	if err != nil || !l.found {
		return nil, false
	}
	for _, t := range l.tools {
		if t.NativeName == nativeName {
			return t.InputSchema, true
		}
	}
	return nil, false
}

// writtenOutcome is the outcome of a tools/call that was written and that
// no raw answer decided: go-sdk's typed result, the server's JSON-RPC
// error, or outcome_unknown when the caller stopped waiting (ctx) or the
// wait for the answer ended (cctx). ok is false for any other failure,
// which the caller words. tool names the tool in the messages.
func writtenOutcome(ctx, cctx context.Context, res *mcp.CallToolResult, err error, tool string) (out domain.CallOutcome, ok bool) {
	if err == nil {
		return domain.CallOutcome{Outcome: domain.OutcomeKnownResponse, Result: projectTyped(res)}, true // not seen raw: should not happen
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code != codeTransport {
		return serverError(je.Code, je.Message, je.Data), true
	}
	switch {
	case ctx.Err() != nil:
		return domain.Unknown(CodeCallCancelled, "Stopped waiting for the tool response; "+tool+" may have executed"), true
	case cctx.Err() != nil:
		return domain.Unknown(CodeCallTimeout, "Timed out waiting for the tool response; "+tool+" may have executed"), true
	}
	return domain.CallOutcome{}, false
}

// codeTransport is go-sdk's ErrRejected code: a transport failure or a
// 5xx/429, not an answer of the server's JSON-RPC layer.
const codeTransport = -32005

// startupNotSent maps a session startup failure to its not_sent outcome.
func startupNotSent(err error) domain.CallOutcome { return startupNotSentAs(err, "tool request") }

// startupNotSentAs is startupNotSent for any request, named by what ("tool
// request", "resource read", ...).
func startupNotSentAs(err error, what string) domain.CallOutcome {
	switch domain.CodeOf(err) {
	case CodeAuthRequired, CodeAuthRefreshFailed, CodeAuthUnavailable:
		return domain.NotSent(domain.CodeOf(err), "The "+what+" was not sent: "+detailOf(err))
	case CodeHeaderNameInvalid, CodeHeaderValueInvalid:
		return domain.NotSent(CodeCallHeadersInvalid, err.Error())
	case CodeInitializeTimeout:
		return domain.NotSent(CodeCallInitializeTimeout, "Timed out preparing the MCP client before the "+what+" was sent")
	case "mcp.request_cancelled":
		return domain.NotSent(CodeCallCancelledBeforeSend, "The "+what+" was cancelled during MCP client preparation")
	}
	var de *domain.Error
	detail := err.Error()
	if errors.As(err, &de) {
		detail = de.Detail
	}
	return domain.NotSent(CodeCallInitializeFailed, "Failed to prepare the MCP client: "+detail)
}

// detailOf returns an error's text without its code.
func detailOf(err error) string {
	if de, ok := errors.AsType[*domain.Error](err); ok {
		return de.Detail
	}
	return err.Error()
}

// responseMessages splits a response body into the JSON-RPC messages it
// may hold: the body itself, or the data of each SSE event (read as
// go-sdk reads events: "data:" lines, joined by newlines, up to a blank
// line). The messages are not validated here: each caller decodes them
// and skips what does not decode, an event cut short by the end of the
// body among them. A one-line event is a slice of body.
func responseMessages(contentType string, body []byte) []json.RawMessage {
	if !isEventStream(contentType) {
		return []json.RawMessage{body}
	}
	var out []json.RawMessage
	var data []byte
	lines := 0
	flush := func() {
		if len(data) > 0 {
			out = append(out, data)
		}
		data, lines = nil, 0
	}
	for rest := body; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			line = bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if lines++; lines == 1 {
				data = line
				continue
			}
			if lines == 2 {
				data = bytes.Clone(data) // no longer a slice of body
			}
			data = append(append(data, '\n'), line...)
		}
	}
	flush()
	return out
}

func serverError(code int64, message string, data json.RawMessage) domain.CallOutcome {
	se := &domain.ServerError{Code: int32(code), Message: message}
	if d := bytes.TrimSpace(data); len(d) > 0 && string(d) != "null" {
		var buf bytes.Buffer
		if json.Compact(&buf, d) == nil {
			s := buf.String()
			se.DataJSON = &s
		}
	}
	return domain.CallOutcome{Outcome: domain.OutcomeKnownResponse, ServerError: se}
}
