package jsapi

// Command names, exactly as TauriTavern's Tauri commands (SPEC §5.2). Every
// command takes args {"dto": {...}} except the two list commands, which take
// no arguments.
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
)

// Commands lists every command name in the order of SPEC §5.2, then
// ttmcp's additions.
var Commands = []string{
	CmdListServers, CmdCreateServer, CmdUpdateServer, CmdSetServerState,
	CmdRemoveServer, CmdDiscoverTools, CmdRefreshTools, CmdSetToolPermission,
	CmdSetToolDescriptionOverride, CmdStartTestCall, CmdTestToolCall,
	CmdCancelTestCall, CmdListLegacyTools, CmdStartLegacyToolCall,
	CmdCallLegacyTool, CmdCancelLegacyToolCall,
	CmdListAuditEntries,
}

// TakesNoArgs reports whether a command is called without a dto (the two
// list commands).
func TakesNoArgs(command string) bool {
	return command == CmdListServers || command == CmdListLegacyTools
}
