package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Not-sent codes of the test-call gates (reference §1.5).
const (
	CodeCallIDInUse                 = "mcp.call_id_in_use"
	CodeCallNotStarted              = "mcp.call_not_started"
	CodeCallCancelledBeforeSend     = "mcp.call_cancelled_before_send"
	CodeCallRegistrationInvalid     = "mcp.call_registration_invalid"
	CodeCallToolNameInvalid         = "mcp.call_tool_name_invalid"
	CodeCallArgumentsSizeLimit      = "mcp.call_arguments_size_limit"
	CodeCallArgumentsNotObject      = "mcp.call_arguments_not_object"
	CodeCallArgumentsInvalidJSON    = "mcp.call_arguments_invalid_json"
	CodeCallRegistrationNotFound    = "mcp.call_registration_not_found"
	CodeCallRegistrationUnavailable = "mcp.call_registration_unavailable"
	CodeCallServerPaused            = "mcp.call_server_paused"
)

// maxCallIDBytes bounds a call id (the page sends a UUID).
const maxCallIDBytes = 128

// calls are the prepared test calls: the private start acknowledgement
// registers a call id with its own cancellation, so the page can cancel a
// call whose test_mcp_tool_call command has not even arrived yet.
type calls struct {
	mu   sync.Mutex
	byID map[string]*preparedCall
}

type preparedCall struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// start registers a call id. The registration ends with the call, with a
// cancel, or when ctx ends (its page closed the socket).
func (c *calls) start(ctx context.Context, id string) error {
	if id == "" || len(id) > maxCallIDBytes {
		return domain.Errorf(domain.KindBadRequest, jsapi.CodeArgsInvalid, "the call id must be 1 to %d bytes", maxCallIDBytes)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; ok {
		return domain.Errorf(domain.KindConflict, CodeCallIDInUse, "call `%s` is already active", id)
	}
	cctx, cancel := context.WithCancel(ctx)
	p := &preparedCall{ctx: cctx, cancel: cancel}
	c.byID[id] = p
	// Forget the call once it is over, however it ends (its context is
	// cancelled by the call's end, by a cancel, or by the socket closing);
	// a cancelled child context also leaves its parent, so a long-lived
	// socket accumulates nothing.
	context.AfterFunc(cctx, func() { c.forget(id, p) })
	return nil
}

// cancel cancels a prepared or running call; an unknown id is a no-op (no
// tombstones: the page may cancel after the call ended).
func (c *calls) cancel(id string) {
	c.mu.Lock()
	p, ok := c.byID[id]
	delete(c.byID, id)
	c.mu.Unlock()
	if ok {
		p.cancel()
	}
}

// get returns the prepared call of id.
func (c *calls) get(id string) (*preparedCall, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	return p, ok
}

// forget removes p if it is still the call registered under id.
func (c *calls) forget(id string, p *preparedCall) {
	c.mu.Lock()
	if c.byID[id] == p {
		delete(c.byID, id)
	}
	c.mu.Unlock()
	p.cancel()
}

// StartTestCall is the private start acknowledgement of a test call.
func (s *Service) StartTestCall(ctx context.Context, dto jsapi.McpTestCallIdDto) (any, error) {
	return nil, s.calls.start(ctx, dto.CallID)
}

// PipelinedStart is what the page's socket tells a test call that was read
// before its start had finished (the page sends the two together, issue
// 31; server/testorder.go): the start failed with Err, or a cancel of the
// call was handled while the start ran. Either way the call is refused
// before anything is sent, and recorded as any refused call is.
type PipelinedStart struct {
	Err       error
	Cancelled bool
}

type pipelinedKey struct{}

// WithPipelinedStart returns ctx telling its test call how its start ended.
func WithPipelinedStart(ctx context.Context, p PipelinedStart) context.Context {
	return context.WithValue(ctx, pipelinedKey{}, p)
}

type startedKey struct{}

// WithStarted returns ctx whose run_mcp_test_call tells started how its
// start ended, before its call goes on, and hears whether a cancel of the
// call was read meanwhile: the page's socket holds such a cancel until
// then (server/testorder.go), and the call is then not sent.
func WithStarted(ctx context.Context, started func(error) (cancelled bool)) context.Context {
	return context.WithValue(ctx, startedKey{}, started)
}

// RunTestCall is a test call in one command (run_mcp_test_call, issue 31):
// StartTestCall, then TestCall, as upstream's page runs them, without the
// page's round trip between. A start that fails is the call's error, and a
// cancel read while the start ran makes it not_sent, each recorded as a
// pipelined start's is.
func (s *Service) RunTestCall(ctx context.Context, dto jsapi.TestMcpToolCallDto) (jsapi.McpCallOutcome, error) {
	err := s.calls.start(ctx, dto.CallID)
	cancelled := false
	if started, ok := ctx.Value(startedKey{}).(func(error) bool); ok {
		cancelled = started(err)
	}
	if err != nil || cancelled {
		return s.TestCall(WithPipelinedStart(ctx, PipelinedStart{Err: err, Cancelled: cancelled}), dto)
	}
	return s.TestCall(ctx, dto)
}

// CancelTestCall cancels a prepared or running test call.
func (s *Service) CancelTestCall(_ context.Context, dto jsapi.McpTestCallIdDto) (any, error) {
	s.calls.cancel(dto.CallID)
	return nil, nil
}

// TestCall runs one prepared test call: the gates of reference §1.5 in
// their order, each failing as not_sent, then exactly one tools/call.
// Permissions are neither checked nor changed: a test call is the user's
// explicit act (approval manual in the audit log). The arguments reach the
// server byte for byte. Every test call, sent or refused, appends one
// audit record.
func (s *Service) TestCall(ctx context.Context, dto jsapi.TestMcpToolCallDto) (out jsapi.McpCallOutcome, err error) {
	audit := s.beginAudit(domain.SourceTest, dto.CallID, dto.ArgumentsJSON, domain.ApprovalManual)
	audit.afterAnswer(ctx)
	id, _ := domain.ParseRegistrationID(dto.RegistrationID) // "" when invalid
	audit.tool(id, dto.NativeName)
	defer func() { audit.finish(out, err) }()

	if ps, ok := ctx.Value(pipelinedKey{}).(PipelinedStart); ok {
		switch {
		case ps.Err != nil: // the start's own error: upstream's page would have stopped there
			return jsapi.McpCallOutcome{}, ps.Err
		case ps.Cancelled: // as upstream's page does for an abort during the start
			s.calls.cancel(dto.CallID)
			return notSent(CodeCallCancelledBeforeSend, jsapi.MessageCallCancelledBeforeSend), nil
		}
	}
	p, ok := s.calls.get(dto.CallID)
	if !ok {
		return notSent(CodeCallNotStarted, "The test call was not prepared or was cancelled before it started"), nil
	}
	defer s.calls.forget(dto.CallID, p)
	if p.ctx.Err() != nil {
		return notSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it started"), nil
	}
	// The call ends when the page cancels it or its socket closes.
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()

	if _, err := domain.ParseRegistrationID(dto.RegistrationID); err != nil {
		return notSent(CodeCallRegistrationInvalid, err.Error()), nil
	}
	if err := domain.ValidateNativeName(dto.NativeName); err != nil {
		return notSent(CodeCallToolNameInvalid, err.Error()), nil
	}
	args, outcome := parseArguments(dto.ArgumentsJSON)
	if outcome != nil {
		return *outcome, nil
	}
	r, ok, err := s.regs.Load(id)
	switch {
	case err != nil:
		return notSent(CodeCallRegistrationUnavailable, fmt.Sprintf("MCP registration `%s` cannot be loaded: %v", id, err)), nil
	case !ok:
		return notSent(CodeCallRegistrationNotFound, fmt.Sprintf("MCP registration not found: %s", id)), nil
	}
	audit.registration(r)
	if r.State != domain.StateActive {
		return notSent(CodeCallServerPaused, fmt.Sprintf("MCP registration `%s` must be Active before a test call", id)), nil
	}
	if callCtx.Err() != nil {
		return notSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it started"), nil
	}
	call := s.toolCall(r, dto.NativeName, args)
	call.Elicit = s.elicitFor(ctx, domain.SourceTest, dto.CallID, r, dto.NativeName)
	endProgress := s.progressFor(ctx, &call, audit)
	o := s.gateway.Call(callCtx, r, call)
	endProgress()
	return CallOutcomeDTO(o), nil
}

// toolCall is the call of nativeName on r with args, with the tool's input
// schema from the cached catalog when there is one (memory, else the file;
// never the network): its x-mcp-header parameters become the call's
// headers without a tools/list first.
func (s *Service) toolCall(r domain.Registration, nativeName string, args json.RawMessage) domain.ToolCall {
	call := domain.ToolCall{NativeName: nativeName, Arguments: args}
	if cat, _, err := s.publishedCatalog(r); err == nil && cat != nil {
		for _, t := range cat.Tools {
			if t.NativeName == nativeName {
				call.InputSchema = t.InputSchema
				break
			}
		}
	}
	return call
}

// parseArguments checks argumentsJson: at most MaxArgumentsBytes, valid
// JSON, an object. The text itself is what is sent: nothing is decoded
// into numbers that could lose precision.
func parseArguments(text string) (json.RawMessage, *jsapi.McpCallOutcome) {
	if len(text) > domain.MaxArgumentsBytes {
		o := notSent(CodeCallArgumentsSizeLimit, fmt.Sprintf("Arguments JSON exceeds %d bytes", domain.MaxArgumentsBytes))
		return nil, &o
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		o := notSent(CodeCallArgumentsInvalidJSON, "Arguments are not valid JSON: "+err.Error())
		return nil, &o
	}
	if dec.More() || !json.Valid([]byte(text)) {
		o := notSent(CodeCallArgumentsInvalidJSON, "Arguments are not valid JSON: trailing data after the value")
		return nil, &o
	}
	if _, ok := v.(map[string]any); !ok {
		o := notSent(CodeCallArgumentsNotObject, "Arguments must be a JSON object")
		return nil, &o
	}
	return json.RawMessage(text), nil
}

func notSent(code, message string) jsapi.McpCallOutcome {
	return jsapi.McpCallOutcome{Outcome: jsapi.OutcomeNotSent, Code: code, Message: message}
}

// CallOutcomeDTO projects a call outcome for the page.
func CallOutcomeDTO(o domain.CallOutcome) jsapi.McpCallOutcome {
	out := jsapi.McpCallOutcome{Outcome: string(o.Outcome), Code: o.Code, Message: o.Message}
	switch {
	case o.Result != nil:
		r := &jsapi.McpToolResult{Kind: jsapi.ResponseToolResult, IsError: o.Result.IsError, StructuredJSON: o.Result.StructuredJSON,
			TextBlocks: make([]jsapi.McpTextBlock, 0, len(o.Result.TextBlocks)), Diagnostics: make([]jsapi.McpCallDiagnostic, 0, len(o.Result.Diagnostics))}
		for _, b := range o.Result.TextBlocks {
			r.TextBlocks = append(r.TextBlocks, jsapi.McpTextBlock{Index: b.Index, Text: b.Text})
		}
		for _, d := range o.Result.Diagnostics {
			r.Diagnostics = append(r.Diagnostics, jsapi.McpCallDiagnostic{Code: d.Code, Message: d.Message, ContentIndex: d.ContentIndex})
		}
		for _, res := range o.Result.Resources {
			r.Resources = append(r.Resources, jsapi.McpResultResource{Index: res.Index, McpContentBlock: contentBlockDTO(res.Block)})
		}
		out.Response = r
	case o.ServerError != nil:
		out.Response = &jsapi.McpServerError{Kind: jsapi.ResponseServerError, Code: o.ServerError.Code, Message: o.ServerError.Message, DataJSON: o.ServerError.DataJSON}
	case o.Unsupported != nil:
		out.Response = &jsapi.McpUnsupportedResponse{Kind: jsapi.ResponseUnsupported, ResponseType: o.Unsupported.ResponseType, Message: o.Unsupported.Message}
	}
	if o.Rounds > 0 {
		rounds := o.Rounds
		out.Rounds = &rounds
		out.Elicitations = make([]jsapi.McpElicitationRecord, 0, len(o.Elicitations))
		for _, e := range o.Elicitations {
			out.Elicitations = append(out.Elicitations, jsapi.McpElicitationRecord{Mode: e.Mode, Action: e.Action})
		}
	}
	return out
}
