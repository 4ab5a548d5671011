package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
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

// Call makes exactly one tools/call of nativeName over a fresh session and
// reports honestly what the server may have done. args is a JSON object
// sent byte for byte (no schema coercion; integers beyond 2^53 stay
// exact). Nothing is retried: once the request is written, any failure is
// outcome_unknown.
//
// On MCP 2026-07-28 the session first pages tools/list until the target
// appears, so go-sdk knows its schema and sends the Mcp-Param-* headers
// (SEP-2243); a target that is not listed is not called.
func (g *Gateway) Call(ctx context.Context, r domain.Registration, nativeName string, args json.RawMessage) domain.CallOutcome {
	if r.Stdio != nil {
		return g.callStdio(ctx, r, nativeName, args)
	}
	if ctx.Err() != nil {
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before preparation started")
	}
	filtered := &filterWatch{}
	s, err := g.openWith(ctx, r, filtered.middleware)
	if err != nil {
		return startupNotSent(err)
	}
	defer s.release() // the result does not wait for the session's clean-up

	init := s.cs.InitializeResult()
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return domain.NotSent(CodeCallToolsMissing, "The MCP server did not declare the tools capability")
	}
	if init.ProtocolVersion >= Versions[0] {
		l, err := g.listTools(ctx, s, filtered, nativeName, nil)
		switch {
		case ctx.Err() != nil:
			return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled while preparing transport metadata")
		case domain.CodeOf(err) == CodeAuthRequired:
			return domain.NotSent(CodeAuthRequired, "The tool request was not sent: "+detailOf(err))
		case domain.CodeOf(err) == CodeListTimeout:
			return domain.NotSent(CodeCallMetadataTimeout, "Timed out loading the current tool metadata before the tool request was sent")
		case err != nil:
			return domain.NotSent(CodeCallMetadataFailed, "Failed to load current tool metadata: "+err.Error())
		case !l.found:
			return domain.NotSent(CodeCallToolUnavailable, fmt.Sprintf("Tool `%s` was not advertised or was rejected by the transport in this session", nativeName))
		}
	}

	cctx := s.within(g.cfg.CallWait)
	res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: nativeName, Arguments: args})
	if ref := s.tr.refused.Load(); ref != nil && ref.method == "tools/call" {
		// Written, but refused before it was applied: a 401 says the
		// request "has not been applied" for want of valid credentials (RFC
		// 9110 §15.5.2), and a Bearer 403 is the same refusal for want of
		// scope (RFC 6750 §3.1). So the tool did not run: not_sent, and
		// nothing re-sends it (see docs/DECISIONS.md).
		err, _ := g.authFailure(r, s.tr)
		return domain.NotSent(CodeAuthRequired, "The tool request was refused before it ran: "+detailOf(err))
	}
	if !s.tr.callWritten.Load() {
		// Nothing reached the server: the request never left this host.
		if ctx.Err() != nil {
			return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it was queued")
		}
		if err == nil {
			err = errors.New("no request was written")
		}
		return domain.NotSent(CodeCallNotQueued, "The tool request could not be queued: "+s.tr.explain(err))
	}
	// The request was written: decide from the raw response first, so a
	// result go-sdk cannot decode (an unknown content type) stays known.
	if known, ok := s.tr.knownResponse(); ok && !s.tr.overflow.Load() {
		return known
	}
	if out, ok := writtenOutcome(ctx, cctx, res, err, "the remote tool"); ok {
		return out
	}
	return domain.Unknown(CodeCallResponseFailed, "The tool response could not be confirmed: "+s.tr.explain(err)+"; the remote tool may have executed")
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
func startupNotSent(err error) domain.CallOutcome {
	switch domain.CodeOf(err) {
	case CodeAuthRequired, CodeAuthRefreshFailed, CodeAuthUnavailable:
		return domain.NotSent(domain.CodeOf(err), "The tool request was not sent: "+detailOf(err))
	case CodeHeaderNameInvalid, CodeHeaderValueInvalid:
		return domain.NotSent(CodeCallHeadersInvalid, err.Error())
	case CodeInitializeTimeout:
		return domain.NotSent(CodeCallInitializeTimeout, "Timed out preparing the MCP client before the tool request was sent")
	case "mcp.request_cancelled":
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled during MCP client preparation")
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

// knownResponse reads the captured tools/call response: a JSON body or
// the SSE event that answers the call. It reports false when no complete
// answer was received.
func (t *transport) knownResponse() (domain.CallOutcome, bool) {
	ctype, body := t.rawCallResponse()
	for _, msg := range responseMessages(ctype, body) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int64           `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 {
			continue // a notification or a request from the server
		}
		if m.Error != nil {
			return serverError(m.Error.Code, m.Error.Message, m.Error.Data), true
		}
		if len(m.Result) > 0 {
			return projectRaw(m.Result)
		}
	}
	return domain.CallOutcome{}, false
}

// responseMessages splits a response body into JSON-RPC messages.
func responseMessages(contentType string, body []byte) []json.RawMessage {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "text/event-stream" {
		if json.Valid(body) {
			return []json.RawMessage{body}
		}
		return nil
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
