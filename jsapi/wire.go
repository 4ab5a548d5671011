package jsapi

// Frame types of the page ⇄ backend WebSocket (SPEC §5). Every frame is a
// JSON text message with a "type" member.
const (
	FrameHello   = "hello"   // page → backend, first frame: {"type":"hello","token":"..."}
	FrameWelcome = "welcome" // backend → page: {"type":"welcome","server":{"name","version"}}
	FrameInvoke  = "invoke"  // page → backend: {"type":"invoke","id":N,"command":"...","args":{...}}
	FrameResult  = "result"  // backend → page: see ResultHead

	// ttmcp's additions (SPEC §10): what the backend tells or asks a page
	// on its own, and the page's side of that.

	// FrameEvent, backend → every page: something changed that the page
	// may show (Event). No answer.
	FrameEvent = "event"
	// FrameRequest, backend → one page: a question for the page's handler
	// (Request), answered by a FrameResponse with the same id. The ids are
	// the backend's own, apart from the page's invoke ids.
	FrameRequest = "request"
	// FrameResponse, page → backend: {"type":"response","id":N,"ok":true,
	// "value":{...}} or {"type":"response","id":N,"ok":false,"error":
	// {"message":"..."}}.
	FrameResponse = "response"
	// FrameCancel, backend → page: {"type":"cancel","id":N}: request N is
	// withdrawn (its call was stopped, or the wait ran out); its answer is
	// not wanted any more.
	FrameCancel = "cancel"
	// FrameHandlers, page → backend: {"type":"handlers","elicitation":
	// bool}, which handlers the page has. It is read in order with the
	// invoke frames (not concurrently with them), so a call sent after it
	// sees it; a page sends it again on every new socket.
	FrameHandlers = "handlers"
	// FrameProgress, backend → the page whose invoke asked for it
	// ("progress":true in the invoke frame): {"type":"progress","id":N,
	// "value":McpCallProgress}, N that invoke's id. Sent only while the
	// call runs, at most a few a second per call (the latest state), and
	// always before the invoke's result frame, which ends them.
	FrameProgress = "progress"
)

// ProgressFrame is a FrameProgress.
type ProgressFrame struct {
	Type  string          `json:"type"`
	ID    uint64          `json:"id"`
	Value McpCallProgress `json:"value"`
}

// Event is a FrameEvent: {"type":"event","event":"<name>","data":{...}}.
type Event struct {
	Type  string `json:"type"`
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// Events the backend sends.
const (
	// EventServersChanged: a server's catalog was published (a discovery
	// or refresh by any page, or ttmcp following its server's announced
	// change), its resources or prompts changed (announced), or its
	// registration was created, changed or removed (by any page or
	// script); data is McpServerChange. The page lists again.
	EventServersChanged = "servers_changed"
)

// ListRegistration is the McpServerChange list of a registration that was
// created, changed (its settings, permissions, overrides, switches) or
// removed.
const ListRegistration = "registration"

// McpServerChange is the data of EventServersChanged.
type McpServerChange struct {
	RegistrationID string `json:"registrationId"`
	// What changed: "tools", "resources", "prompts", "registration".
	Lists []string `json:"lists"`
}

// Request is a FrameRequest.
type Request struct {
	Type   string `json:"type"`
	ID     uint64 `json:"id"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

// Requests the backend sends.
const (
	// RequestElicitation asks the page's elicitation handler
	// (api.mcp.elicitation.setHandler): params McpElicitationRequest,
	// answer McpElicitationResponse.
	RequestElicitation = "elicitation"
)

// Handlers is a FrameHandlers.
type Handlers struct {
	Type        string `json:"type"`
	Elicitation bool   `json:"elicitation"`
}

// A result frame is written by the backend in exactly this layout, value or
// error last, so the wasm shim can cut the payload out of the frame without
// decoding it (SPEC §4.1: payloads stay JavaScript strings):
//
//	{"type":"result","id":N,"ok":true,"value":<json>}
//	{"type":"result","id":N,"ok":false,"error":{"kind":"...","code":"...","message":"..."}}
const (
	ResultHead  = `{"type":"result","id":`
	ResultOK    = `,"ok":true,"value":`
	ResultError = `,"ok":false,"error":`
)

// ServerInfo names the backend in the welcome frame.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Hello is the first frame a page sends.
type Hello struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

// Welcome answers a Hello with the right token.
type Welcome struct {
	Type   string     `json:"type"`
	Server ServerInfo `json:"server"`
}

// Session is the answer of GET /jsapi/session: the per-launch token and the
// WebSocket URL to present it to. Through SillyTavern's plugin (a plugin
// request, PROTOCOL.md) it is the user's session token, Transport is
// TransportHTTP and CSRF the path, on the page's origin, of SillyTavern's
// CSRF token; WS is then absent.
type Session struct {
	Token     string `json:"token"`
	WS        string `json:"ws,omitempty"`
	Transport string `json:"transport,omitempty"`
	CSRF      string `json:"csrf,omitempty"`
}

// TransportHTTP is the Session.Transport of the HTTP transport
// (PathTransport).
const TransportHTTP = "http"

// SillyTavernCSRF is where a SillyTavern page reads the token its
// state-changing requests carry in X-CSRF-Token.
const SillyTavernCSRF = "/csrf-token"

// OriginRefusal is the body of the 403 with which GET /jsapi/session and a
// /ws upgrade answer a page whose Origin is not allowed. It is served with
// CORS headers, so the page can read why: Code is CodeOriginNotAllowed and
// Message, which starts with it, names the origin and --allow-origin.
// Command, when the origin can be allowed, is the whole command line that
// restarts this backend as it runs now (its own flags, --data-root among
// them) with --allow-origin <origin> added; no flag of serve is a secret.
type OriginRefusal struct {
	Code    string `json:"code"`
	Origin  string `json:"origin"`
	Message string `json:"message"`
	Command string `json:"command,omitempty"`
}

// Paths served by the backend.
const (
	PathSession = "/jsapi/session"
	PathWS      = "/ws"
	// PathOAuthCallback is where authorization servers send the user back
	// after a sign-in (the redirect URI, on the backend's loopback address).
	PathOAuthCallback = "/oauth/callback"
	PathLoader        = "/jsapi/tauritavern-mcp.js"
	// PathTransport is the HTTP transport of plugin requests: POST opens
	// one, GET /transport/<id> is its event stream, POST /transport/<id>
	// sends frames, DELETE closes it (PROTOCOL.md).
	PathTransport = "/transport"
)

// The headers of SillyTavern's plugin (PROTOCOL.md "Plugin requests"). Any
// header starting with PluginHeaderPrefix makes a request a plugin
// request.
const (
	PluginHeaderPrefix = "X-Ttmcp-"
	HeaderPluginSecret = "X-Ttmcp-Plugin"
	HeaderPluginUser   = "X-Ttmcp-User"
	HeaderPluginAdmin  = "X-Ttmcp-User-Admin"
	HeaderPluginOrigin = "X-Ttmcp-Origin"
	HeaderPluginPrefix = "X-Ttmcp-Prefix"
)

// DefaultUser is SillyTavern's user when user accounts are off, and the
// user of the direct path.
const DefaultUser = "default-user"

// MaxInboundFrame is the largest frame the backend reads (4 MiB). Larger
// frames close the socket with status 1009; the shim refuses to send them.
const MaxInboundFrame = 4 << 20

// WebSocket close codes the backend uses.
const (
	ClosePolicyViolation = 1008 // wrong or missing token, or a frame out of protocol
	CloseMessageTooBig   = 1009 // a frame above MaxInboundFrame
	CloseGoingAway       = 1001 // backend shutting down
	CloseUnsupportedData = 1003 // a binary frame: the protocol is JSON text
	CloseTryAgainLater   = 1013 // too many sockets, or a page not reading its results
)
