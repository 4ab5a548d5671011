package jsapi

// Error kinds, as in a result frame's error.kind and on a rejected Promise's
// .kind (SPEC §5.2).
const (
	KindBadRequest  = "BadRequest"
	KindNotFound    = "NotFound"
	KindConflict    = "Conflict"
	KindUnavailable = "Unavailable"
	KindInternal    = "Internal"
)

// ErrorBody is the error member of a failed result frame. Message starts
// with Code ("mcp.endpoint_invalid: ...") whenever a code applies, so a
// caller that only reads message sees the code too.
type ErrorBody struct {
	Kind    string `json:"kind"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// Codes of the host layer (the bridge and the command server). The domain
// codes (mcp.endpoint_invalid, ...) belong to the backend's domain package.
const (
	// CodeCommandUnknown: an invoke named a command that does not exist.
	CodeCommandUnknown = "mcp.command_unknown"
	// CodeArgsInvalid: args or their dto did not decode (unknown field,
	// wrong type, missing member, trailing data).
	CodeArgsInvalid = "mcp.dto_invalid"
	// CodeHostUnavailable: the page could not reach the backend.
	CodeHostUnavailable = "mcp.host_unavailable"
	// CodeOriginNotAllowed: the backend refused the page's origin (it is
	// neither the backend's own nor one given with --allow-origin).
	CodeOriginNotAllowed = "mcp.origin_not_allowed"
	// CodeHostConnectionLost: the WebSocket dropped while a request was in
	// flight. The request may or may not have run; it is never replayed.
	CodeHostConnectionLost = "mcp.host_connection_lost"
	// CodeRequestTooLarge: a request above MaxInboundFrame, refused locally.
	CodeRequestTooLarge = "mcp.request_too_large"
	// CodeHostInternal: the shim itself failed (a recovered panic).
	CodeHostInternal = "mcp.host_internal"
	// CodeInternal: the backend failed in a way that is not the caller's.
	CodeInternal = "mcp.internal"
)

// Test-call codes that the shim produces locally (reference §1.5).
const (
	CodeCallCancelledBeforeSend    = "mcp.call_cancelled_before_send"
	MessageCallCancelledBeforeSend = "The tool request was cancelled before it started"
)

// CodeRequestCancelled: the socket that sent a request closed (or the
// backend shut down) before the request took effect.
const CodeRequestCancelled = "mcp.request_cancelled"

// ttmcp's codes of the SillyTavern plugin path (issue 28, PROTOCOL.md).
const (
	// CodePluginUntrusted: a request carried X-Ttmcp-* headers without the
	// plugin secret, or with a user or origin that is not valid (401).
	CodePluginUntrusted = "mcp.plugin_untrusted"
	// CodeUserUnavailable: the backend serves no data for the SillyTavern
	// user a plugin request names (403).
	CodeUserUnavailable = "mcp.user_unavailable"
	// CodeTransportNotFound: an HTTP transport id that is unknown, closed,
	// or another user's (404).
	CodeTransportNotFound = "mcp.transport_not_found"
)
