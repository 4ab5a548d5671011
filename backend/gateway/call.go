package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

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
// on a new session), and one answered HeaderMismatch (-32020), which the
// server gives before running anything, after the tool's current schema
// was listed. Once the request may have reached the server, any other
// failure is outcome_unknown.
func (g *Gateway) Call(ctx context.Context, r domain.Registration, call domain.ToolCall) domain.CallOutcome {
	if r.Stdio != nil {
		return g.callStdio(ctx, r, call)
	}
	if ctx.Err() != nil {
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before preparation started")
	}
	for fresh := false; ; fresh = true {
		le, err := g.lives.acquire(ctx, r)
		if err != nil {
			return startupNotSent(err)
		}
		g.observe(r, le.s.cs.InitializeResult())
		out, again := g.callOn(ctx, le, call, !fresh)
		g.lives.release(le)
		if !again {
			return out
		}
	}
}

// callOn makes the call on le's session. again reports that the request
// provably was not processed because the session was gone, and mayResend
// allowed sending it once more on a new session.
func (g *Gateway) callOn(ctx context.Context, le *lease, call domain.ToolCall, mayResend bool) (out domain.CallOutcome, again bool) {
	s := le.s
	init := s.cs.InitializeResult()
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return domain.NotSent(CodeCallToolsMissing, "The MCP server did not declare the tools capability"), false
	}
	modern := init.ProtocolVersion >= Versions[0]
	var params http.Header
	if modern {
		params = paramHeaders(call.InputSchema, call.Arguments)
	}
	out, ex := g.send(ctx, s, call, params)
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
		g.lives.expired(le)
		if mayResend {
			return out, true
		}
		return domain.NotSent(CodeCallSessionExpired, "The MCP server ended the session again before the tool request was processed; the tool did not run"), false
	case !ex.written.Load() && ctx.Err() == nil && s.over() && mayResend:
		// Nothing left this host, and the kept session had ended: the
		// request goes on a new session.
		g.lives.drop(le)
		return out, true
	}
	if out.Outcome == domain.OutcomeKnownResponse {
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
		out, _ = g.send(ctx, s, call, paramHeaders(schema, call.Arguments))
	}
	return out, false
}

// codeHeaderMismatch is SEP-2243's HeaderMismatch: the server compared the
// Mcp-* headers with the body before doing anything else and refused.
const codeHeaderMismatch = -32020

// CodeCallSessionExpired: a 2025 server expired the session a tool call
// was sent on, twice in a row; the call was not processed.
const CodeCallSessionExpired = "mcp.call_session_expired"

// send makes one tools/call request on s and words its outcome.
func (g *Gateway) send(ctx context.Context, s *session, call domain.ToolCall, params http.Header) (domain.CallOutcome, *exchange) {
	cctx, done := g.requestContext(ctx, g.cfg.CallWait)
	defer done()
	cctx, ex := withExchange(cctx, "tools/call")
	ex.params = params
	res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: call.NativeName, Arguments: json.RawMessage(call.Arguments)})
	answer, known := ex.end()
	if !ex.written.Load() {
		// Nothing reached the server: the request never left this host.
		if ctx.Err() != nil {
			return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it was queued"), ex
		}
		if err == nil {
			err = errors.New("no request was written")
		}
		return domain.NotSent(CodeCallNotQueued, "The tool request could not be queued: "+s.tr.explain(ex, err)), ex
	}
	// The request was written: decide from the raw response first, so a
	// result go-sdk cannot decode (an unknown content type) stays known.
	if known {
		if out, ok := answerOutcome(answer); ok {
			return out, ex
		}
	}
	if out, ok := writtenOutcome(ctx, cctx, res, err, "the remote tool"); ok {
		return out, ex
	}
	return domain.Unknown(CodeCallResponseFailed, "The tool response could not be confirmed: "+s.tr.explain(ex, err)+"; the remote tool may have executed"), ex
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

// responseMessages splits a response body into JSON-RPC messages.
func responseMessages(contentType string, body []byte) []json.RawMessage {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "text/event-stream" {
		return []json.RawMessage{body} // validated as it is decoded
	}
	var out []json.RawMessage
	var data bytes.Buffer
	flush := func() {
		if data.Len() > 0 && json.Valid(data.Bytes()) {
			out = append(out, bytes.Clone(data.Bytes()))
		}
		data.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush() // an event cut short by the end of the body is incomplete: Valid rejects most
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
