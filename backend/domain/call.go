package domain

// Outcome tells what a tool call may have done on the server. The host
// never guesses: a call is "not sent" only while the tools/call request
// has provably not been written to the connection; after that, anything
// short of a decoded answer is "unknown", and the call is never retried.
type Outcome string

// The outcomes (jsapi.Outcome*).
const (
	OutcomeKnownResponse Outcome = "known_response"
	OutcomeNotSent       Outcome = "not_sent"
	OutcomeUnknown       Outcome = "outcome_unknown"
)

// CallOutcome is the result of one tool call. Exactly one of Result,
// ServerError and Unsupported is set for a known response; Code and
// Message are set otherwise.
type CallOutcome struct {
	Outcome     Outcome
	Code        string
	Message     string
	Result      *ToolResult
	ServerError *ServerError
	Unsupported *UnsupportedResponse
	// Rounds and Elicitations are set when the server asked the user
	// during the call: how many tools/call requests it took (2026-07-28
	// input_required rounds each count, and so does a request the server
	// refused until the user was done on a page; a 2025 call that asks
	// during its request is one) and each question's mode and answer, in
	// order.
	Rounds       int
	Elicitations []ElicitRecord
}

// ToolResult is a tools/call result projected for people and models: the
// text blocks with their original indexes, the structured content as
// deterministic JSON, and a diagnostic for each part not projected.
type ToolResult struct {
	IsError        bool
	TextBlocks     []TextBlock
	StructuredJSON *string
	Diagnostics    []CallDiagnostic
	// Resources are the result's resource links and embedded resources
	// (ttmcp's addition, issue 18): shown to the user, who may attach
	// them to a chat. Their diagnostics stay as upstream reports them.
	Resources []ResultResource
}

// ResultResource is a resource_link or embedded resource block of a tool
// result, checked as a prompt message's are (ProjectResultResource).
type ResultResource struct {
	Index int          // its index in the result's content
	Block ContentBlock // Type BlockResourceLink or BlockResource
}

// TextBlock is a text content block and its index in the result.
type TextBlock struct {
	Index int
	Text  string
}

// CallDiagnostic reports a part of a result that was not projected.
type CallDiagnostic struct {
	Code         string
	Message      string
	ContentIndex *int
}

// ServerError is a JSON-RPC error the server answered: a known response
// (the server says it did not run the tool as asked).
type ServerError struct {
	Code     int32
	Message  string
	DataJSON *string
}

// UnsupportedResponse is a response the host does not drive further
// (input_required, task, other).
type UnsupportedResponse struct {
	ResponseType string
	Message      string
}

// NotSent returns a not_sent outcome.
func NotSent(code, message string) CallOutcome {
	return CallOutcome{Outcome: OutcomeNotSent, Code: code, Message: message}
}

// Unknown returns an outcome_unknown outcome.
func Unknown(code, message string) CallOutcome {
	return CallOutcome{Outcome: OutcomeUnknown, Code: code, Message: message}
}

// MaxArgumentsBytes bounds a call's argumentsJson.
const MaxArgumentsBytes = 256 << 10

// ToolCall is one tools/call to make.
type ToolCall struct {
	NativeName string
	// Arguments is a JSON object, sent byte for byte.
	Arguments []byte
	// InputSchema is the tool's input schema from the validated catalog,
	// nil when none is known: on MCP 2026-07-28 its x-mcp-header
	// parameters are sent as Mcp-Param-* headers without listing the
	// tools first (SEP-2243).
	InputSchema []byte
	// Elicit answers the server's questions during the call (the asking
	// page's handler); nil: the call does not offer elicitation, and the
	// server cannot ask.
	Elicit ElicitFunc
	// Progress takes the server's notifications/progress for the call
	// (every request of it carries a progress token of its own); nil: they
	// are dropped.
	Progress ProgressFunc
}

// ConnectionStatus is how a remote server is connected (the gateway's live
// connection, SPEC §10 "Live connections").
type ConnectionStatus struct {
	State ConnectionState
	// Sessions is SessionsKept, or SessionsShortLived once the server
	// expired kept sessions twice in a row: each operation then opens a
	// fresh session.
	Sessions        SessionMode
	ProtocolVersion string // of the open session, "" otherwise
	// Following: the open session hears the server's list-changed
	// notifications; Note says why not when the server's stream was
	// refused, ended or cut.
	Following bool
	Note      string
}

// ConnectionState is whether a live connection is open.
type ConnectionState string

const (
	ConnectionClosed  ConnectionState = "closed"
	ConnectionOpening ConnectionState = "opening"
	ConnectionOpen    ConnectionState = "open"
)

// SessionMode is how a server's sessions are held.
type SessionMode string

const (
	SessionsKept       SessionMode = "kept"
	SessionsShortLived SessionMode = "short_lived"
)

// ListChange says which lists of a server changed, as its server announced
// (notifications/*/list_changed).
type ListChange struct {
	RegistrationID            RegistrationID
	Tools, Resources, Prompts bool
}

// Progress is one notifications/progress of a call's server, as received:
// Progress grows as the work goes on; Total is 0 when the server did not
// say how much there is; Message is the server's, "" when it sent none.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// ProgressFunc takes a call's progress as its server reports it. It is
// called on the gateway's goroutine that read the notification, in the
// order the server sent them, and never after the call's request ended: it
// must not block (the service coalesces; service/progress.go).
type ProgressFunc func(Progress)
