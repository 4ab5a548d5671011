package jsapi

// ---- MCP Apps (ttmcp's addition, issue 30). Its own file so the DTO and
// command edits of other branches merge cleanly.

// The App commands (api.mcp.apps on the page). An App's tools/call goes
// through start/call/cancel as a model's does; the call names the App (the
// tool of the same registration whose interface it is), and the backend
// never sends it to another registration.
const (
	CmdStartAppToolCall  = "start_mcp_app_tool_call"
	CmdCallAppTool       = "call_mcp_app_tool"
	CmdCancelAppToolCall = "cancel_mcp_app_tool_call"
	// CmdReadAppResource reads the App's interface: {dto: {registrationId,
	// appToolName}} → McpAppResource.
	CmdReadAppResource = "read_mcp_app_resource"
)

// PathAppView is where the sandbox loads an App's document:
// PathAppView + "<viewId>", on the backend's origin (direct) or under the
// plugin's prefix (through SillyTavern).
const PathAppView = "/apps/view/"

// AppsCommands are the MCP Apps commands.
var AppsCommands = []string{CmdStartAppToolCall, CmdCallAppTool, CmdCancelAppToolCall, CmdReadAppResource}

// CallMcpAppToolDto runs one prepared tools/call an App asked for.
// RegistrationID is the App's own server and AppToolName the tool whose
// interface the App is; NativeName is the tool the App calls, which must
// be of the same server and allow "app" in its visibility. Approval is
// what the user answered the Ask prompt (an Ask tool without one is not
// called: an App never skips Ask).
type CallMcpAppToolDto struct {
	ExecutionCallID string  `json:"executionCallId"`
	RegistrationID  string  `json:"registrationId"`
	AppToolName     string  `json:"appToolName"`
	NativeName      string  `json:"nativeName"`
	ArgumentsJSON   string  `json:"argumentsJson"`
	Approval        *string `json:"approval,omitzero"`
}

// ReadMcpAppResourceDto asks for the interface of the App of a tool.
type ReadMcpAppResourceDto struct {
	RegistrationID string `json:"registrationId"`
	AppToolName    string `json:"appToolName"`
}

// McpAppResource is an App's interface, ready for the sandbox: its HTML,
// the CSP ttmcp builds from what the resource declares (never looser; the
// spec's restrictive default when it declares none), and the permissions
// it asked for (granted by the sandbox's allow attribute, each only after
// the user's consent in the extension).
type McpAppResource struct {
	RegistrationID string `json:"registrationId"`
	AppToolName    string `json:"appToolName"`
	URI            string `json:"uri"`
	HTML           string `json:"html"`
	CSP            string `json:"csp"`
	// ViewID names the document for the sandbox route (GET
	// /apps/view/<id>, jsapi.PathAppView): single use, valid two minutes.
	ViewID        string      `json:"viewId"`
	Declared      McpAppCSP   `json:"declared"`
	Permissions   McpAppPerms `json:"permissions"`
	PrefersBorder *bool       `json:"prefersBorder,omitzero"`
	SHA256        string      `json:"sha256"`
	// Dropped says what of the declaration was left out (the user may be
	// shown why an App cannot reach a host it named).
	Dropped []string `json:"dropped"`
}

// McpAppCSP is what an App's resource declared in _meta.ui.csp (only
// valid origins kept).
type McpAppCSP struct {
	ConnectDomains  []string `json:"connectDomains"`
	ResourceDomains []string `json:"resourceDomains"`
	FrameDomains    []string `json:"frameDomains"`
	BaseURIDomains  []string `json:"baseUriDomains"`
}

// McpAppPerms is what an App's resource asked for in _meta.ui.permissions.
type McpAppPerms struct {
	Camera         bool `json:"camera"`
	Microphone     bool `json:"microphone"`
	Geolocation    bool `json:"geolocation"`
	ClipboardWrite bool `json:"clipboardWrite"`
}

// Codes of the App gates.
const (
	CodeAppUnknown           = "mcp.app_unknown"
	CodeCallNotVisibleToApp  = "mcp.call_not_visible_to_app"
	CodeCallApprovalRequired = "mcp.call_approval_required"
	CodeCallToolAppOnly      = "mcp.call_tool_app_only"
	CodeAppResourceInvalid   = "mcp.app_resource_invalid"
	// CodeAppsNotRendered: the page did not say it renders Apps
	// (api.mcp.apps.setRenderer(true)), so no App of it may read or call.
	CodeAppsNotRendered = "mcp.apps_not_rendered"
)
