package jsapi

// ---- Tool search (ttmcp's addition, issue 31). Its own file so the DTO
// and command edits of other branches merge cleanly.

// CmdSearchTools ranks the tools the user allows for a query
// (api.mcp.toolSearch.search on the page, outside upstream's tools object).
const CmdSearchTools = "search_mcp_tools"

// CmdLegacyToolsDigest answers a digest of what list_legacy_mcp_tools
// would answer now, with the same arguments ({dto: {toolSetId}} or none):
// the page's data plane keeps a large listing and asks for it again only
// when the digest changed (issue 31, "big catalogs stay cheap"). Private
// to the shim, as start_mcp_test_call is.
const CmdLegacyToolsDigest = "digest_legacy_mcp_tools"

// ToolSearchCommands are the tool search's commands.
var ToolSearchCommands = []string{CmdSearchTools, CmdLegacyToolsDigest}

// LegacyToolsDigest is digest_legacy_mcp_tools's answer: a digest of the
// listing's encoded bytes in this backend process (a random seed per
// process, so a restarted backend never matches an older page's digest).
type LegacyToolsDigest struct {
	Digest string `json:"digest"`
}

// Tool search limits: a query of at most MaxToolSearchQuery bytes, limit
// 1..MaxToolSearchLimit (DefaultToolSearchLimit when absent).
const (
	DefaultToolSearchLimit = 10
	MaxToolSearchLimit     = 50
	MaxToolSearchQuery     = 1000
)

// SearchMcpToolsDto asks for the tools that best fit query: among a tool
// set's selection (with its description overrides) when ToolSetID is set,
// else among every allowed tool; only RegistrationID's when set.
type SearchMcpToolsDto struct {
	Query          string  `json:"query"`
	ToolSetID      *string `json:"toolSetId,omitzero"`
	RegistrationID *string `json:"registrationId,omitzero"`
	Limit          *int    `json:"limit,omitzero"`
}

// McpToolSearchResult is the ranking, best first. Every hit names its
// registration and server, so a consumer groups by server without asking
// again (issue 31: "grouped by server").
type McpToolSearchResult struct {
	Hits []McpToolSearchHit `json:"hits"`
}

// McpToolSearchHit is one found tool. Description is its first line, at
// most 200 characters; Score is the BM25F score (higher is better, only
// comparable within one answer).
type McpToolSearchHit struct {
	ToolID            string  `json:"toolId"`
	RegistrationID    string  `json:"registrationId"`
	ServerDisplayName string  `json:"serverDisplayName"`
	NativeName        string  `json:"nativeName"`
	Title             *string `json:"title,omitzero"`
	Description       string  `json:"description"`
	Score             float64 `json:"score"`
}
