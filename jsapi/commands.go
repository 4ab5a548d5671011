package jsapi

// Command names, exactly as TauriTavern's Tauri commands (SPEC §5.2). Every
// MCP command takes args {"dto": {...}} except the two list commands, which
// take no arguments; the extension store's commands (extension_store.go)
// take theirs flat.
const (
	CmdListServers                = "list_mcp_servers"
	CmdCreateServer               = "create_mcp_server"
	CmdUpdateServer               = "update_mcp_server"
	CmdSetServerState             = "set_mcp_server_state"
	CmdRemoveServer               = "remove_mcp_server"
	CmdDiscoverTools              = "discover_mcp_tools"
	CmdRefreshTools               = "refresh_mcp_tools"
	CmdSetToolPermission          = "set_mcp_tool_permission"
	CmdSetToolDescriptionOverride = "set_mcp_tool_description_override"
	CmdStartTestCall              = "start_mcp_test_call"
	CmdTestToolCall               = "test_mcp_tool_call"
	CmdCancelTestCall             = "cancel_mcp_test_call"
	CmdListLegacyTools            = "list_legacy_mcp_tools"
	CmdStartLegacyToolCall        = "start_legacy_mcp_tool_call"
	CmdCallLegacyTool             = "call_legacy_mcp_tool"
	CmdCancelLegacyToolCall       = "cancel_legacy_mcp_tool_call"

	// ttmcp's own additions (SPEC §10).
	CmdListAuditEntries = "list_mcp_audit_entries"
	// CmdRunTestCall is a test call in one command (issue 31): the start
	// and test_mcp_tool_call's run, with test_mcp_tool_call's dto, one
	// frame each way. Private to the shim's tools.testCall, as
	// start_mcp_test_call is; cancel_mcp_test_call stops it.
	CmdRunTestCall    = "run_mcp_test_call"
	CmdStartSignIn    = "start_mcp_server_sign_in"
	CmdFinishSignIn   = "finish_mcp_server_sign_in"
	CmdCancelSignIn   = "cancel_mcp_server_sign_in"
	CmdSignOut        = "sign_out_mcp_server"
	CmdGetStdioStatus = "get_mcp_stdio_status"
	// CmdGetConnectionStatus: how a remote server is connected (live
	// connections, SPEC §10).
	CmdGetConnectionStatus = "get_mcp_connection_status"

	// Tool sets (SPEC §10 "Tool sets"): list takes no args; save and
	// remove take {dto}. list_legacy_mcp_tools also takes {dto: {toolSetId}}.
	CmdListToolSets  = "list_mcp_tool_sets"
	CmdSaveToolSet   = "save_mcp_tool_set"
	CmdRemoveToolSet = "remove_mcp_tool_set"
	// CmdReadToolResult reads a result kept because it was too long for
	// the model's prompt: {dto: {resultId, startLine?, lineCount?, maxChars?}}.
	CmdReadToolResult = "read_mcp_tool_result"

	// Resources and prompts (SPEC §10 "Resources and prompts"), each
	// {dto: {registrationId, ...}}. The three lists take an optional
	// refresh; read and get answer with an outcome (McpCallOutcome's
	// vocabulary); completion answers the values or fails.
	CmdListResources         = "list_mcp_resources"
	CmdListResourceTemplates = "list_mcp_resource_templates"
	CmdReadResource          = "read_mcp_resource"
	CmdListPrompts           = "list_mcp_prompts"
	CmdGetPrompt             = "get_mcp_prompt"
	CmdCompleteArgument      = "complete_mcp_argument"
	// The per-server capability allowlist: what the server advertised and
	// what the user allows (resources, prompts).
	CmdGetServerCapabilities = "get_mcp_server_capabilities"
	CmdSetServerCapabilities = "set_mcp_server_capabilities"
)

// McpCommands lists the MCP command names in the order of SPEC §5.2, then
// ttmcp's additions.
var McpCommands = []string{
	CmdListServers, CmdCreateServer, CmdUpdateServer, CmdSetServerState,
	CmdRemoveServer, CmdDiscoverTools, CmdRefreshTools, CmdSetToolPermission,
	CmdSetToolDescriptionOverride, CmdStartTestCall, CmdTestToolCall,
	CmdCancelTestCall, CmdListLegacyTools, CmdStartLegacyToolCall,
	CmdCallLegacyTool, CmdCancelLegacyToolCall,
	CmdListAuditEntries, CmdRunTestCall, CmdStartSignIn, CmdFinishSignIn, CmdCancelSignIn, CmdSignOut, CmdGetStdioStatus, CmdGetConnectionStatus,
	CmdListToolSets, CmdSaveToolSet, CmdRemoveToolSet, CmdReadToolResult,
	CmdListResources, CmdListResourceTemplates, CmdReadResource, CmdListPrompts, CmdGetPrompt,
	CmdCompleteArgument, CmdGetServerCapabilities, CmdSetServerCapabilities,
}

// Commands lists every command the backend serves: the MCP commands, then
// the extension store's (extension_store.go).
var Commands = append(append(append(append([]string(nil), McpCommands...), StoreCommands...), ToolSearchCommands...), AppsCommands...)

// TakesNoArgs reports whether a command may be called without a dto: the
// two list commands of upstream (list_legacy_mcp_tools also takes an
// optional {dto: {toolSetId}}, ttmcp's addition) and list_mcp_tool_sets.
func TakesNoArgs(command string) bool {
	return command == CmdListServers || command == CmdListLegacyTools || command == CmdListToolSets
}
