package jsapi

// The DTOs of reference §1.3 and §1.4, with TauriTavern's JSON names. The
// backend decodes inputs strictly (unknown fields are a BadRequest); optional
// inputs are pointers so "absent" and "empty" stay distinguishable.

// Protocol preferences a registration may hold.
const (
	ProtocolAuto     = "auto"
	Protocol20260728 = "2026-07-28"
	Protocol20251125 = "2025-11-25"
	Protocol20250618 = "2025-06-18"
	Protocol20250326 = "2025-03-26"
)

// Registration states.
const (
	StateActive = "active"
	StatePaused = "paused"
)

// Tool permissions. Off is never stored: it is the absence of an entry.
const (
	PermissionOff   = "off"
	PermissionAsk   = "ask"
	PermissionAllow = "allow"
)

// McpServer is one registration as the page sees it.
type McpServer struct {
	ID                       string                             `json:"id"`
	DisplayName              string                             `json:"displayName"`
	Endpoint                 string                             `json:"endpoint"`
	Headers                  map[string]string                  `json:"headers"`
	ProtocolVersion          string                             `json:"protocolVersion"`
	State                    string                             `json:"state"`
	ToolPermissions          map[string]string                  `json:"toolPermissions"`
	ToolDescriptionOverrides map[string]ToolDescriptionOverride `json:"toolDescriptionOverrides"`
	// Auth is the server's sign-in state, a ttmcp addition (SPEC §10);
	// absent only where the backend cannot tell.
	Auth *McpServerAuth `json:"auth,omitzero"`
	// Transport and Stdio are ttmcp's addition (SPEC §10), present only for
	// a local server started as a process: Transport is TransportStdio and
	// Endpoint is "stdio:" followed by the command line. A remote server
	// has neither member, exactly as upstream sends it.
	Transport string          `json:"transport,omitempty"`
	Stdio     *McpStdioConfig `json:"stdio,omitzero"`
	// Capabilities is ttmcp's addition (SPEC §10 "Resources and
	// prompts"): what the server advertised, when known, and which of
	// resources and prompts the user allows. Absent where the backend
	// cannot tell (upstream never sends it).
	Capabilities *McpServerCapabilities `json:"capabilities,omitzero"`
}

// Sign-in states of McpServerAuth.State.
const (
	AuthNone     = "none"      // the server never asked for authorization
	AuthRequired = "required"  // it refused a request; sign in
	AuthSignedIn = "signed_in" // a sign-in is kept
)

// McpServerAuth is where a registration stands with its server's
// authorization (ttmcp addition). It never holds a token or a secret.
type McpServerAuth struct {
	State string `json:"state"`
	// Scopes are the granted scopes (signed in), else empty.
	Scopes []string `json:"scopes"`
	// ExpiresAt is the access token's expiry (RFC 3339), when known.
	ExpiresAt *string `json:"expiresAt,omitzero"`
	// Refreshable: a refresh token is kept, so an expired access token is
	// replaced without signing in again.
	Refreshable bool `json:"refreshable"`
	// AuthorizationServer is the host of the token endpoint.
	AuthorizationServer *string `json:"authorizationServer,omitzero"`
	// ClientRegistration is "dynamic" (registered by ttmcp) or "manual"
	// (a client id the user entered).
	ClientRegistration *string `json:"clientRegistration,omitzero"`
	SignedInAt         *string `json:"signedInAt,omitzero"`
	// Challenge is what the server last asked for when it refused a
	// request (state required, or signed in but short of a scope).
	Challenge *McpAuthChallenge `json:"challenge,omitzero"`
	// RedirectURI is ttmcp's callback, to register with an authorization
	// server by hand when it offers no dynamic registration; absent when
	// this backend cannot sign in.
	RedirectURI *string `json:"redirectUri,omitzero"`
	// Issue says why the sign-in state cannot be read (a damaged auth
	// file); signing out deletes it.
	Issue *string `json:"issue,omitzero"`
}

// McpAuthChallenge is a server's authorization challenge (RFC 6750 §3).
type McpAuthChallenge struct {
	Status      int      `json:"status"` // 401 or 403
	Error       *string  `json:"error,omitzero"`
	Description *string  `json:"description,omitzero"`
	Scopes      []string `json:"scopes"`
	At          string   `json:"at"`
}

// StartMcpSignInDto starts a sign-in (ttmcp addition). ClientID (and
// ClientSecret) name a client the user registered with the authorization
// server; without them ttmcp registers one dynamically.
type StartMcpSignInDto struct {
	RegistrationID string  `json:"registrationId"`
	ClientID       *string `json:"clientId,omitzero"`
	ClientSecret   *string `json:"clientSecret,omitzero"`
}

// McpSignInStarted is the result of start_mcp_server_sign_in: the page
// opens AuthorizationURL in the window it opened for the user's click,
// then waits with finish_mcp_server_sign_in.
type McpSignInStarted struct {
	SignInID         string `json:"signInId"`
	AuthorizationURL string `json:"authorizationUrl"`
	RedirectURI      string `json:"redirectUri"`
	ExpiresAt        string `json:"expiresAt"`
}

// McpSignInIdDto names a pending sign-in.
type McpSignInIdDto struct {
	SignInID string `json:"signInId"`
}

// TransportStdio is the Transport of a local server.
const TransportStdio = "stdio"

// McpStdioConfig is how a local server is started, as the page may see it:
// the command, its arguments and working directory, and the names of the
// environment variables it gets, never their values. It is configured
// only on the backend's machine (`ttmcp stdio add|import`): no command
// takes it as input.
type McpStdioConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Cwd is absent when the process runs in the backend's directory.
	Cwd      *string  `json:"cwd,omitzero"`
	EnvNames []string `json:"envNames"`
	// CommandLine is the command and arguments as one line, each word
	// quoted as a POSIX shell would need it (for display; no shell runs it).
	CommandLine string `json:"commandLine"`
}

// McpConnectionStatus is how a remote server is connected now
// (get_mcp_connection_status, a ttmcp addition; SPEC §10 "Live
// connections").
type McpConnectionStatus struct {
	RegistrationID string `json:"registrationId"`
	// State is ConnectionClosed (no live connection: the next operation
	// opens one), ConnectionOpening or ConnectionOpen.
	State string `json:"state"`
	// Sessions is SessionsKept, or SessionsShortLived when the server
	// ended kept sessions twice in a row and each operation now opens a
	// fresh one.
	Sessions        string  `json:"sessions"`
	ProtocolVersion *string `json:"protocolVersion,omitzero"`
	// Following: the open connection hears the server's list changes
	// (its catalog follows them without a refresh).
	Following bool `json:"following"`
	// Note says why an open connection does not follow (the server's
	// notification stream was refused, ended or cut).
	Note *string `json:"note,omitzero"`
}

// Connection states and session modes of McpConnectionStatus.
const (
	ConnectionClosed   = "closed"
	ConnectionOpening  = "opening"
	ConnectionOpen     = "open"
	SessionsKept       = "kept"
	SessionsShortLived = "short_lived"
)

// McpStdioStatus is what the backend knows of a local server's process
// (get_mcp_stdio_status, a ttmcp addition).
type McpStdioStatus struct {
	RegistrationID string `json:"registrationId"`
	State          string `json:"state"` // StdioStopped, StdioStarting or StdioRunning
	// LastExit is how the last process ended when it failed to start or
	// died; absent once one started again, and after a stop on purpose.
	LastExit *McpStdioExit `json:"lastExit,omitzero"`
}

// Process states of a local server.
const (
	StdioStopped  = "stopped"
	StdioStarting = "starting"
	StdioRunning  = "running"
)

// McpStdioExit is a process that failed to start or died.
type McpStdioExit struct {
	Time    string   `json:"time"` // RFC 3339 UTC
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Stderr  []string `json:"stderr"` // its last lines on stderr, oldest first
}

// ToolDescriptionOverride replaces the description the model sees for a tool
// and, per property, for its input schema. Description is absent when only
// properties are overridden; Properties is always present.
type ToolDescriptionOverride struct {
	Description *string           `json:"description,omitzero"`      // "" is kept: only absent is left out
	Properties  map[string]string `json:"properties" dto:"optional"` // may be absent on input (serde default); always written
}

// McpServerList is the result of list_mcp_servers: the healthy
// registrations and one issue per file that could not be loaded.
type McpServerList struct {
	Servers       []McpServer    `json:"servers"`
	StorageIssues []StorageIssue `json:"storageIssues"`
}

// StorageIssue names a registration file that could not be loaded.
type StorageIssue struct {
	FileName string `json:"fileName"`
	Message  string `json:"message"`
}

// CreateMcpServerDto: headers default to {}, protocolVersion to "auto".
type CreateMcpServerDto struct {
	DisplayName     string             `json:"displayName"`
	Endpoint        string             `json:"endpoint"`
	Headers         *map[string]string `json:"headers,omitzero"`
	ProtocolVersion *string            `json:"protocolVersion,omitzero"`
}

// UpdateMcpServerDto replaces the connection settings and name; all members
// are required.
type UpdateMcpServerDto struct {
	RegistrationID  string            `json:"registrationId"`
	DisplayName     string            `json:"displayName"`
	Endpoint        string            `json:"endpoint"`
	Headers         map[string]string `json:"headers"`
	ProtocolVersion string            `json:"protocolVersion"`
}

// SetMcpServerStateDto activates or pauses a registration.
type SetMcpServerStateDto struct {
	RegistrationID string `json:"registrationId"`
	State          string `json:"state"`
}

// McpRegistrationIdDto names a registration (remove, discover, refresh).
type McpRegistrationIdDto struct {
	RegistrationID string `json:"registrationId"`
}

// SetMcpToolPermissionDto sets off/ask/allow for one native tool name.
type SetMcpToolPermissionDto struct {
	RegistrationID string `json:"registrationId"`
	NativeName     string `json:"nativeName"`
	Permission     string `json:"permission"`
}

// SetMcpToolDescriptionOverrideDto sets or (with a null or absent override)
// deletes a tool's description override.
type SetMcpToolDescriptionOverrideDto struct {
	RegistrationID string                   `json:"registrationId"`
	NativeName     string                   `json:"nativeName"`
	Override       *ToolDescriptionOverride `json:"override"`
}

// McpDiscoveryResult is a catalog projected for the Manager (reference §3.7).
type McpDiscoveryResult struct {
	RegistrationID  string          `json:"registrationId"`
	ProtocolVersion string          `json:"protocolVersion"`
	ServerName      *string         `json:"serverName,omitzero"`
	ServerVersion   *string         `json:"serverVersion,omitzero"`
	Tools           []McpTool       `json:"tools"`
	Diagnostics     []McpDiagnostic `json:"diagnostics"`
	StaleTools      []McpStaleTool  `json:"staleTools"`
}

// McpTool is one discovered tool with its current permission.
type McpTool struct {
	ID           string  `json:"id"`
	NativeName   string  `json:"nativeName"`
	Title        *string `json:"title,omitzero"`
	Description  *string `json:"description,omitzero"`
	InputSchema  RawJSON `json:"inputSchema"`
	OutputSchema RawJSON `json:"outputSchema,omitempty"`
	Annotations  RawJSON `json:"annotations"`
	Permission   string  `json:"permission"`
	// UI is ttmcp's addition (issue 30): the tool's MCP Apps metadata,
	// absent for a tool that has none (upstream's Manager never sees it).
	UI *McpToolUI `json:"ui,omitzero"`
}

// McpToolUI is a tool's _meta.ui: the ui:// resource of its interface
// (absent when it has none) and who may see it (absent: model and app;
// ["app"]: the tool is never offered to a model, only its App may call it).
type McpToolUI struct {
	ResourceURI *string  `json:"resourceUri,omitzero"`
	Visibility  []string `json:"visibility,omitzero"`
}

// McpDiagnostic reports a tool or catalog problem found by discovery.
type McpDiagnostic struct {
	Code       string  `json:"code"`
	NativeName *string `json:"nativeName,omitzero"`
	Message    string  `json:"message"`
}

// McpStaleTool is a stored permission whose tool is not in the catalog.
type McpStaleTool struct {
	NativeName string `json:"nativeName"`
	Permission string `json:"permission"`
}

// McpTestCallIdDto names a prepared test call.
type McpTestCallIdDto struct {
	CallID string `json:"callId"`
}

// TestMcpToolCallDto runs one prepared test call. ArgumentsJSON stays a
// string end to end so integers beyond 2^53 reach the server unchanged.
type TestMcpToolCallDto struct {
	CallID         string `json:"callId"`
	RegistrationID string `json:"registrationId"`
	NativeName     string `json:"nativeName"`
	ArgumentsJSON  string `json:"argumentsJson"`
}

// Call outcomes (reference §1.3).
const (
	OutcomeKnownResponse  = "known_response"
	OutcomeNotSent        = "not_sent"
	OutcomeOutcomeUnknown = "outcome_unknown"
)

// McpCallOutcome tells what a tool call did: Response for known_response,
// Code and Message otherwise.
type McpCallOutcome struct {
	Outcome  string `json:"outcome"`
	Response any    `json:"response,omitempty"` // *McpToolResult, *McpServerError or *McpUnsupportedResponse
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
	// Readable is ttmcp's addition, present only when the call asked for
	// it (CallLegacyMcpToolDto.Readable): what the model reads of the
	// outcome. Upstream's callers never ask, so their outcome is upstream's.
	Readable *McpReadableResult `json:"readable,omitzero"`
	// Rounds and Elicitations are ttmcp's addition (SPEC §10), present
	// only when the server asked the user during the call: the requests it
	// took and each question's mode and answer (the test console shows
	// them). Upstream's callers never set a handler, so they never see them.
	Rounds       *int                   `json:"rounds,omitzero"`
	Elicitations []McpElicitationRecord `json:"elicitations,omitzero"`
}

// McpReadableOptions asks call_legacy_mcp_tool for the model-readable
// text of its outcome (ttmcp's addition, SPEC §10 "Tool sets"): a result
// longer than InlineCharLimit characters (default 50,000) is kept by the
// backend and the text is a note with a preview; ReaderTool (default true)
// says whether the model has ttmcp_read_result to read it.
type McpReadableOptions struct {
	InlineCharLimit *int  `json:"inlineCharLimit,omitzero"`
	ReaderTool      *bool `json:"readerTool,omitzero"`
}

// McpReadableResult is what the model reads of a call.
type McpReadableResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
	// Stored is set when the result was too long to include: Text is then
	// the note and its preview.
	Stored *McpStoredResultRef `json:"stored,omitzero"`
}

// McpStoredResultRef describes a result too long to include. ResultID is
// absent when it could not be kept (the note says why).
type McpStoredResultRef struct {
	ResultID  *string `json:"resultId,omitzero"`
	CharCount int     `json:"charCount"`
	CharLimit int     `json:"charLimit"`
}

// ReadMcpToolResultDto reads a stored result by lines (read_mcp_tool_result,
// ttmcp's addition): from StartLine (1-based, default 1), at most LineCount
// lines (default 200, at most 5,000) and MaxChars characters (default
// 20,000, 3,000 to 1,000,000; at least one line is always read). Lines are
// wrapped every 3,000 characters.
type ReadMcpToolResultDto struct {
	ResultID  string `json:"resultId"`
	StartLine *int   `json:"startLine,omitzero"`
	LineCount *int   `json:"lineCount,omitzero"`
	MaxChars  *int   `json:"maxChars,omitzero"`
}

// McpToolResultPage is one read of a stored result.
type McpToolResultPage struct {
	ResultID       string `json:"resultId"`
	RegistrationID string `json:"registrationId"`
	StoredAt       string `json:"storedAt"` // RFC 3339 UTC
	CharCount      int    `json:"charCount"`
	TotalLines     int    `json:"totalLines"`
	StartLine      int    `json:"startLine"`
	EndLine        int    `json:"endLine"` // the last line read (inclusive)
	Text           string `json:"text"`    // those lines, joined by newlines
	// NextStartLine is where to continue; absent at the end.
	NextStartLine *int `json:"nextStartLine,omitzero"`
}

// Kinds of a known response.
const (
	ResponseToolResult  = "tool_result"
	ResponseServerError = "server_error"
	ResponseUnsupported = "unsupported_response"
)

// McpToolResult is a tools/call result projected for the page.
type McpToolResult struct {
	Kind           string              `json:"kind"`
	IsError        bool                `json:"isError"`
	TextBlocks     []McpTextBlock      `json:"textBlocks"`
	StructuredJSON *string             `json:"structuredJson,omitzero"`
	Diagnostics    []McpCallDiagnostic `json:"diagnostics"`
	// Resources is ttmcp's addition (issue 18): the result's resource
	// links and embedded resources, for the user to see and attach. The
	// diagnostics still report those blocks as upstream does.
	Resources []McpResultResource `json:"resources,omitzero"`
}

// McpResultResource is a resource_link or embedded resource block of a
// tool result, with its index in the result's content.
type McpResultResource struct {
	Index int `json:"index"`
	McpContentBlock
}

// McpTextBlock is a text content block with its index in the result.
type McpTextBlock struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// McpCallDiagnostic reports a part of a result that was not projected.
type McpCallDiagnostic struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	ContentIndex *int   `json:"contentIndex,omitzero"`
}

// McpServerError is a JSON-RPC error answered by the server.
type McpServerError struct {
	Kind     string  `json:"kind"`
	Code     int32   `json:"code"`
	Message  string  `json:"message"`
	DataJSON *string `json:"dataJson,omitzero"`
}

// McpUnsupportedResponse is a response the host does not drive further.
type McpUnsupportedResponse struct {
	Kind         string `json:"kind"`
	ResponseType string `json:"responseType"`
	Message      string `json:"message"`
}

// McpExecutionCallIdDto names a prepared legacy tool call.
type McpExecutionCallIdDto struct {
	ExecutionCallID string `json:"executionCallId"`
}

// CallLegacyMcpToolDto runs one prepared legacy tool call. Approval is a
// ttmcp addition (upstream's hooks never send it): what the user answered
// an Ask prompt, ApprovalOnce, ApprovalAlways or ApprovalDenied; with
// ApprovalDenied the call is recorded and answered not_sent
// mcp.call_denied_by_user without reaching the server.
type CallLegacyMcpToolDto struct {
	ExecutionCallID string  `json:"executionCallId"`
	ToolID          string  `json:"toolId"`
	ArgumentsJSON   string  `json:"argumentsJson"`
	Approval        *string `json:"approval,omitzero"`
	// Readable (ttmcp's addition) asks for McpCallOutcome.Readable.
	Readable *McpReadableOptions `json:"readable,omitzero"`
}

// Approvals (what let a call through besides its permission; the audit
// log's approval). A page sends only ApprovalOnce, ApprovalAlways or
// ApprovalDenied.
const (
	ApprovalNone   = "none"   // nobody was asked: an Allow tool, or a caller that asks no one
	ApprovalManual = "manual" // a test call: the user's click
	ApprovalOnce   = "once"   // Ask prompt: "Allow once"
	ApprovalAlways = "always" // Ask prompt: "Always allow"
	ApprovalDenied = "denied" // Ask prompt: "Deny", closed, or Stop
)

// Call sources of the audit log.
const (
	AuditSourceTest  = "test"
	AuditSourceModel = "model"
	// AuditSourcePage: a read or get asked by a page through api.mcp
	// (the Manager, a chat attachment, /mcp-prompt).
	AuditSourcePage = "page"
	// AuditSourceApp: a call or read asked by an MCP App (issue 30).
	AuditSourceApp = "app"
)

// OutcomeRejected is the audit outcome of a call command that failed with
// an error instead of an outcome: nothing was sent.
const OutcomeRejected = "rejected"

// McpAuditListDto selects audit records, newest first (api.mcp.audit.list,
// a ttmcp addition). Limit defaults to 50 (at most 1000); Before is the
// time of a record (RFC 3339): only older ones are listed.
type McpAuditListDto struct {
	RegistrationID *string `json:"registrationId,omitzero"`
	Limit          *int    `json:"limit,omitzero"`
	Before         *string `json:"before,omitzero"`
}

// McpAuditList is the result of list_mcp_audit_entries. SkippedLines
// counts the lines read that were not records (a torn last line, damage).
type McpAuditList struct {
	Entries      []McpAuditEntry `json:"entries"`
	SkippedLines int             `json:"skippedLines"`
}

// McpAuditEntry is one tools/call ttmcp sent or refused. It never holds
// the arguments (only their size and SHA-256) nor the result.
type McpAuditEntry struct {
	Time              string  `json:"time"` // when the outcome was known, RFC 3339 UTC with nanoseconds
	CallID            string  `json:"callId"`
	Source            string  `json:"source"` // AuditSource*
	RegistrationID    string  `json:"registrationId"`
	ServerDisplayName string  `json:"serverDisplayName"`
	NativeName        string  `json:"nativeName"`
	Permission        string  `json:"permission"` // off, ask, allow; "" when unknown
	Approval          string  `json:"approval"`   // Approval*
	Outcome           string  `json:"outcome"`    // Outcome*, or OutcomeRejected
	Code              string  `json:"code"`
	ResponseKind      string  `json:"responseKind"` // Response* for known_response
	IsError           bool    `json:"isError"`
	DurationMs        float64 `json:"durationMs"`
	ArgumentsBytes    int     `json:"argumentsBytes"`
	ArgumentsSHA256   string  `json:"argumentsSha256"`
	// ResultID names the readable result kept by the backend when it was
	// too long for the model's prompt (read it with read_mcp_tool_result).
	ResultID *string `json:"resultId,omitzero"`
	// Kind is what was sent (AuditKind*, ttmcp's resources and prompts);
	// a record without one is a tool call.
	Kind string `json:"kind"`
	// URI is the resource read (AuditKindResourceRead); PromptName the
	// prompt got (AuditKindPromptGet), whose arguments' JSON is what
	// ArgumentsBytes and ArgumentsSHA256 describe.
	URI        *string `json:"uri,omitzero"`
	PromptName *string `json:"promptName,omitzero"`
	// ContentBytes and ContentCount describe what a read or get returned:
	// the contents' (or messages') decoded bytes and their number. Never
	// the content itself.
	ContentBytes *int64 `json:"contentBytes,omitzero"`
	ContentCount *int   `json:"contentCount,omitzero"`
	// Rounds and Elicitations: a tools/call whose server asked the user
	// (elicitation): how many requests the call took (2026-07-28
	// input_required rounds count each) and each question's mode and
	// answer, in order; absent for a call that asked nothing.
	Rounds       *int                   `json:"rounds,omitzero"`
	Elicitations []McpElicitationRecord `json:"elicitations,omitzero"`
	// ProgressUpdates and ProgressMessage: a tools/call whose server
	// reported progress (notifications/progress, issue 29): how many
	// updates came and the last message one carried; absent for a call
	// without progress.
	ProgressUpdates *int    `json:"progressUpdates,omitzero"`
	ProgressMessage *string `json:"progressMessage,omitzero"`
	// AppTool names the MCP App a source "app" request came from: the
	// tool of the same server whose interface it is (issue 30).
	AppTool *string `json:"appTool,omitzero"`
}

// McpCallProgress is the value of a FrameProgress: the latest progress of
// a call as its server reported it (coalesced: at most a few a second).
// Total is absent when the server did not say how much there is, Message
// when no update carried one (the last message stays until a new one
// comes); Updates counts the server's notifications so far, all of them,
// including those coalesced away.
type McpCallProgress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitzero"`
	Message  *string  `json:"message,omitzero"`
	Updates  int      `json:"updates"`
}

// Audit record kinds.
const (
	AuditKindToolCall     = "tool_call"
	AuditKindResourceRead = "resource_read"
	AuditKindPromptGet    = "prompt_get"
)

// LegacyMcpToolList is the result of list_legacy_mcp_tools.
type LegacyMcpToolList struct {
	Tools       []LegacyMcpTool       `json:"tools"`
	Diagnostics []LegacyMcpDiagnostic `json:"diagnostics"`
}

// LegacyMcpTool is a permitted tool with its override-applied descriptor.
type LegacyMcpTool struct {
	ToolID            string  `json:"toolId"`
	NativeName        string  `json:"nativeName"`
	ServerDisplayName string  `json:"serverDisplayName"`
	Title             *string `json:"title,omitzero"`
	Description       *string `json:"description,omitzero"`
	InputSchema       RawJSON `json:"inputSchema"`
	// UI is ttmcp's addition (issue 30): the tool's MCP Apps metadata, so
	// the page knows a called tool's App without asking for its catalog;
	// absent for a tool that has none (upstream's listing, byte for byte).
	UI *McpToolUI `json:"ui,omitzero"`
}

// LegacyMcpDiagnostic reports a registration or tool left out of the list.
type LegacyMcpDiagnostic struct {
	ToolID  *string `json:"toolId,omitzero"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
}

// ---- Tool sets (ttmcp's addition, SPEC §10 "Tool sets")

// McpToolSet is a named selection of tools for the model: ToolIds
// ("mcp/<uuid>:<nativeName>") or whole servers ("mcp/<uuid>:*"), in the
// user's order, with description overrides keyed by ToolId that win over
// the registration's, the inline limit of a result (characters) and
// whether the model gets the reader tool ttmcp_read_result.
type McpToolSet struct {
	ID                    string                             `json:"id"`
	Name                  string                             `json:"name"`
	Tools                 []string                           `json:"tools"`
	DescriptionOverrides  map[string]ToolDescriptionOverride `json:"descriptionOverrides"`
	ResultInlineCharLimit int                                `json:"resultInlineCharLimit"`
	ReaderTool            bool                               `json:"readerTool"`
	// How the set's tools reach the model (issue 31): "all", "search" or
	// "automatic", with automatic mode's budget (defaults resolved) and
	// the tools pinned beside the search tools.
	ToolMode             string   `json:"toolMode"`
	SearchMaxTools       int      `json:"searchMaxTools"`
	SearchContextPercent int      `json:"searchContextPercent"`
	PinnedTools          []string `json:"pinnedTools"`
}

// McpToolSetList is the result of list_mcp_tool_sets: the sets by name,
// and one storage issue per set file that could not be loaded.
type McpToolSetList struct {
	ToolSets      []McpToolSet   `json:"toolSets"`
	StorageIssues []StorageIssue `json:"storageIssues"`
}

// SaveMcpToolSetDto creates a set (no id) or replaces the set id. The
// overrides default to none, the limit to 50,000 characters, the reader
// tool to on.
type SaveMcpToolSetDto struct {
	ID                    *string                             `json:"id,omitzero"`
	Name                  string                              `json:"name"`
	Tools                 []string                            `json:"tools"`
	DescriptionOverrides  *map[string]ToolDescriptionOverride `json:"descriptionOverrides,omitzero"`
	ResultInlineCharLimit *int                                `json:"resultInlineCharLimit,omitzero"`
	ReaderTool            *bool                               `json:"readerTool,omitzero"`
	// Defaults: "all", 40 tools, 10 %, none pinned.
	ToolMode             *string   `json:"toolMode,omitzero"`
	SearchMaxTools       *int      `json:"searchMaxTools,omitzero"`
	SearchContextPercent *int      `json:"searchContextPercent,omitzero"`
	PinnedTools          *[]string `json:"pinnedTools,omitzero"`
}

// McpToolSetIdDto names a tool set.
type McpToolSetIdDto struct {
	ID string `json:"id"`
}

// ListLegacyMcpToolsDto is the optional dto of list_legacy_mcp_tools: the
// set to apply (ttmcp's addition). Without it, or without toolSetId, the
// answer is upstream's: every permitted tool.
type ListLegacyMcpToolsDto struct {
	ToolSetID *string `json:"toolSetId,omitzero"`
}

// ---- Resources and prompts (ttmcp's addition, SPEC §10 "Resources and prompts")

// McpListDto asks for one of a server's lists (list_mcp_resources,
// list_mcp_resource_templates, list_mcp_prompts). The list is served from
// memory while it is fresh (a 2026 server's ttlMs; otherwise until a
// refresh); Refresh asks the server, whatever memory holds.
type McpListDto struct {
	RegistrationID string `json:"registrationId"`
	Refresh        *bool  `json:"refresh,omitzero"`
}

// McpListInfo says where a list came from.
type McpListInfo struct {
	// ListedAt is when the server was asked (RFC 3339 UTC).
	ListedAt string `json:"listedAt"`
	// ExpiresAt is when the list stops being fresh (a 2026 server's
	// ttlMs); absent: fresh until refreshed.
	ExpiresAt *string `json:"expiresAt,omitzero"`
	// FromCache: served from memory, not asked of the server now.
	FromCache bool `json:"fromCache"`
}

// McpListDiagnostic reports an entry left out of a list, or the list
// itself. Item names the entry as the server sent it (a resource's URI, a
// template's uriTemplate, a prompt's name), when it has one.
type McpListDiagnostic struct {
	Code    string  `json:"code"`
	Item    *string `json:"item,omitzero"`
	Message string  `json:"message"`
}

// McpAnnotations are a resource's or a content's hints, as the server
// sent them (untrusted).
type McpAnnotations struct {
	Audience     []string `json:"audience,omitempty"` // "user", "assistant"
	Priority     *float64 `json:"priority,omitzero"`  // 0 (optional) to 1 (required)
	LastModified *string  `json:"lastModified,omitzero"`
}

// McpResourceList is the result of list_mcp_resources.
type McpResourceList struct {
	RegistrationID string              `json:"registrationId"`
	Items          []McpResource       `json:"items"`
	Diagnostics    []McpListDiagnostic `json:"diagnostics"`
	McpListInfo    `json:",inline"`
}

// McpResource is one resource a server lists.
type McpResource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       *string         `json:"title,omitzero"`
	Description *string         `json:"description,omitzero"`
	MimeType    *string         `json:"mimeType,omitzero"`
	Size        *int64          `json:"size,omitzero"` // bytes, as the server says
	Annotations *McpAnnotations `json:"annotations,omitzero"`
}

// McpResourceTemplateList is the result of list_mcp_resource_templates.
type McpResourceTemplateList struct {
	RegistrationID string                `json:"registrationId"`
	Items          []McpResourceTemplate `json:"items"`
	Diagnostics    []McpListDiagnostic   `json:"diagnostics"`
	McpListInfo    `json:",inline"`
}

// McpResourceTemplate is one RFC 6570 URI template a server lists.
// Variables are its variable names in order of appearance (ttmcp parses
// the template), for a form.
type McpResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       *string         `json:"title,omitzero"`
	Description *string         `json:"description,omitzero"`
	MimeType    *string         `json:"mimeType,omitzero"`
	Annotations *McpAnnotations `json:"annotations,omitzero"`
	Variables   []string        `json:"variables"`
}

// ReadMcpResourceDto reads one resource (read_mcp_resource). Its result is
// an McpCallOutcome whose known response is *McpResourceContents.
type ReadMcpResourceDto struct {
	RegistrationID string `json:"registrationId"`
	URI            string `json:"uri"`
}

// Kinds of a known response of a read or a get (beside server_error and
// unsupported_response).
const (
	ResponseResourceContents = "resource_contents"
	ResponsePromptMessages   = "prompt_messages"
)

// McpResourceContents is a resources/read result: every content, in the
// server's order. A content over the size limit is kept without its
// text or blob, with a diagnostic naming its index.
type McpResourceContents struct {
	Kind        string               `json:"kind"` // ResponseResourceContents
	URI         string               `json:"uri"`  // the URI read
	Contents    []McpResourceContent `json:"contents"`
	TotalBytes  int64                `json:"totalBytes"` // the contents' sizes together
	Diagnostics []McpCallDiagnostic  `json:"diagnostics"`
}

// Content types of a resource content.
const (
	ContentText = "text"
	ContentBlob = "blob"
)

// McpResourceContent is one content of a resource: Text for a text
// content, Blob (base64, as received) for a binary one; neither when it
// was refused (a diagnostic says why).
type McpResourceContent struct {
	Type     string  `json:"type"` // ContentText or ContentBlob
	URI      string  `json:"uri"`
	MimeType *string `json:"mimeType,omitzero"`
	Text     *string `json:"text,omitzero"`
	Blob     *string `json:"blob,omitzero"`
	// Size is the content's bytes: the text's UTF-8 bytes, the blob's
	// decoded bytes.
	Size int64 `json:"size"`
}

// McpPromptList is the result of list_mcp_prompts.
type McpPromptList struct {
	RegistrationID string              `json:"registrationId"`
	Items          []McpPrompt         `json:"items"`
	Diagnostics    []McpListDiagnostic `json:"diagnostics"`
	McpListInfo    `json:",inline"`
}

// McpPrompt is one prompt a server lists.
type McpPrompt struct {
	Name        string              `json:"name"`
	Title       *string             `json:"title,omitzero"`
	Description *string             `json:"description,omitzero"`
	Arguments   []McpPromptArgument `json:"arguments"`
}

// McpPromptArgument is one argument of a prompt.
type McpPromptArgument struct {
	Name        string  `json:"name"`
	Title       *string `json:"title,omitzero"`
	Description *string `json:"description,omitzero"`
	Required    bool    `json:"required"`
}

// GetMcpPromptDto gets one prompt with its arguments (get_mcp_prompt). The
// required arguments are checked against the prompt's definition before
// anything is sent. Its result is an McpCallOutcome whose known response
// is *McpPromptMessages.
type GetMcpPromptDto struct {
	RegistrationID string             `json:"registrationId"`
	Name           string             `json:"name"`
	Arguments      *map[string]string `json:"arguments,omitzero"`
}

// McpPromptMessages is a prompts/get result: its messages in order. A
// message whose content ttmcp cannot show is left out with a diagnostic
// naming its index.
type McpPromptMessages struct {
	Kind        string              `json:"kind"` // ResponsePromptMessages
	Name        string              `json:"name"`
	Description *string             `json:"description,omitzero"`
	Messages    []McpPromptMessage  `json:"messages"`
	Diagnostics []McpCallDiagnostic `json:"diagnostics"`
}

// McpPromptMessage is one message of a prompt.
type McpPromptMessage struct {
	Role    string          `json:"role"` // "user" or "assistant"
	Content McpContentBlock `json:"content"`
}

// Content block types of a prompt message.
const (
	BlockText         = "text"
	BlockImage        = "image"
	BlockAudio        = "audio"
	BlockResource     = "resource"      // an embedded resource
	BlockResourceLink = "resource_link" // a resource named by URI
)

// McpContentBlock is one content block: Text (text); Data and MimeType
// (image, audio; Data in base64); Resource (resource); URI, Name and
// optionally Title, Description, MimeType, Size (resource_link).
type McpContentBlock struct {
	Type        string              `json:"type"`
	Text        *string             `json:"text,omitzero"`
	Data        *string             `json:"data,omitzero"`
	MimeType    *string             `json:"mimeType,omitzero"`
	Resource    *McpResourceContent `json:"resource,omitzero"`
	URI         *string             `json:"uri,omitzero"`
	Name        *string             `json:"name,omitzero"`
	Title       *string             `json:"title,omitzero"`
	Description *string             `json:"description,omitzero"`
	Size        *int64              `json:"size,omitzero"`
	Annotations *McpAnnotations     `json:"annotations,omitzero"`
}

// Completion reference types.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteMcpArgumentDto asks a server for completions of one argument
// (complete_mcp_argument): of a prompt (Ref {type: "ref/prompt", name})
// or of a resource template's variable (Ref {type: "ref/resource", uri:
// the uriTemplate}). Context holds the arguments already filled in.
type CompleteMcpArgumentDto struct {
	RegistrationID string                `json:"registrationId"`
	Ref            McpCompletionRef      `json:"ref"`
	Argument       McpCompletionArgument `json:"argument"`
	Context        *McpCompletionContext `json:"context,omitzero"`
}

// McpCompletionRef names what is completed: Name for ref/prompt, URI for
// ref/resource.
type McpCompletionRef struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitzero"`
	URI  *string `json:"uri,omitzero"`
}

// McpCompletionArgument is the argument being completed and its value so far.
type McpCompletionArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// McpCompletionContext holds the arguments already resolved.
type McpCompletionContext struct {
	Arguments *map[string]string `json:"arguments,omitzero"`
}

// McpCompletion is the result of complete_mcp_argument: at most 100
// values, best first. Total is how many there are, when the server said.
type McpCompletion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitzero"`
	HasMore bool     `json:"hasMore"`
}

// McpServerCapabilities is what a server advertised and what the user
// allows of it (get_mcp_server_capabilities; McpServer.Capabilities).
type McpServerCapabilities struct {
	Allowed McpAllowedPrimitives `json:"allowed"`
	// Advertised is what the server said at its last startup on this
	// backend, for the registration's current connection; absent until
	// then (get_mcp_server_capabilities connects to learn it).
	Advertised *McpAdvertisedCapabilities `json:"advertised,omitzero"`
	// Issue says why the allowlist file cannot be read: resources and
	// prompts are refused until set_mcp_server_capabilities writes it
	// again.
	Issue *string `json:"issue,omitzero"`
}

// McpAllowedPrimitives are the user's per-server switches (default on).
// Tools have their own per-tool permissions.
type McpAllowedPrimitives struct {
	Resources bool `json:"resources"`
	Prompts   bool `json:"prompts"`
}

// McpAdvertisedCapabilities are the server's capabilities, as flags.
type McpAdvertisedCapabilities struct {
	ProtocolVersion      string `json:"protocolVersion"`
	Tools                bool   `json:"tools"`
	ToolsListChanged     bool   `json:"toolsListChanged"`
	Resources            bool   `json:"resources"`
	ResourcesSubscribe   bool   `json:"resourcesSubscribe"`
	ResourcesListChanged bool   `json:"resourcesListChanged"`
	Prompts              bool   `json:"prompts"`
	PromptsListChanged   bool   `json:"promptsListChanged"`
	Completions          bool   `json:"completions"`
	Logging              bool   `json:"logging"`
	// ObservedAt is when the server said so (RFC 3339 UTC).
	ObservedAt string `json:"observedAt"`
}

// SetMcpServerCapabilitiesDto turns resources or prompts on or off for a
// server (set_mcp_server_capabilities); an absent member keeps its value.
// The result is the server (McpServer) with its capabilities.
type SetMcpServerCapabilitiesDto struct {
	RegistrationID string `json:"registrationId"`
	Resources      *bool  `json:"resources,omitzero"`
	Prompts        *bool  `json:"prompts,omitzero"`
}

// RawJSON is JSON text carried verbatim, like encoding/json.RawMessage
// (which this package cannot name without linking encoding/json into the
// wasm shim).
type RawJSON []byte

// MarshalJSON returns r itself, or null when r is empty.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of data.
func (r *RawJSON) UnmarshalJSON(data []byte) error {
	*r = append((*r)[:0], data...)
	return nil
}

// Elicitation (SPEC §10): a server asks the user during a call; the page
// that made the call answers through its handler
// (api.mcp.elicitation.setHandler). Sent as a FrameRequest with method
// RequestElicitation.

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// McpElicitationRequest is what the page's handler is asked.
type McpElicitationRequest struct {
	CallID            string `json:"callId"`
	RegistrationID    string `json:"registrationId"`
	ServerDisplayName string `json:"serverDisplayName"`
	NativeName        string `json:"nativeName"`
	Source            string `json:"source"` // AuditSourceTest or AuditSourceModel
	Mode              string `json:"mode"`   // "form" or "url"
	Message           string `json:"message"`
	// RequestedSchema is the form's schema (form mode), as the server sent it.
	RequestedSchema RawJSON `json:"requestedSchema,omitzero"`
	URL             *string `json:"url,omitzero"`
	// Error says why the previous answer to this question was refused.
	Error *string `json:"error,omitzero"`
	// Resend: the server refused the call until the user is done on this
	// page (URL elicitation required, -32042), and ran nothing. accept
	// says the user is done there; the call is then sent once more.
	Resend bool `json:"resend,omitzero"`
}

// McpElicitationResponse is the handler's answer.
type McpElicitationResponse struct {
	Action  string  `json:"action"`
	Content RawJSON `json:"content,omitzero"`
}

// McpElicitationRecord is one question of a call in the audit log: its
// mode and how it was answered (accept, decline, cancel, or "timeout",
// "invalid" when the backend answered cancel itself). Never the content.
type McpElicitationRecord struct {
	Mode   string `json:"mode"`
	Action string `json:"action"`
}
