package jsapi

// Frame types of the page ⇄ backend WebSocket (SPEC §5). Every frame is a
// JSON text message with a "type" member.
const (
	FrameHello   = "hello"   // page → backend, first frame: {"type":"hello","token":"..."}
	FrameWelcome = "welcome" // backend → page: {"type":"welcome","server":{"name","version"}}
	FrameInvoke  = "invoke"  // page → backend: {"type":"invoke","id":N,"command":"...","args":{...}}
	FrameResult  = "result"  // backend → page: see ResultHead
)

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
// WebSocket URL to present it to.
type Session struct {
	Token string `json:"token"`
	WS    string `json:"ws"`
}

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
)

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
