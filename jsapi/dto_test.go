package jsapi_test

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The DTOs encode with TauriTavern's member names, optional members
// omitted and lists always present, as the backend encodes them.
func TestDTOShapes(t *testing.T) {
	// An optional member that is present but empty stays, as serde writes
	// Some(""); only an absent one is left out.
	desc, index, data, empty := "d", 1, `{"field":"region"}`, ""
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"server", jsapi.McpServer{ID: "i", DisplayName: "n", Endpoint: "http://a/", Headers: map[string]string{}, ProtocolVersion: "auto", State: "paused",
			ToolPermissions: map[string]string{"t": "ask"}, ToolDescriptionOverrides: map[string]jsapi.ToolDescriptionOverride{"t": {Properties: map[string]string{}}}},
			`{"id":"i","displayName":"n","endpoint":"http://a/","headers":{},"protocolVersion":"auto","state":"paused","toolPermissions":{"t":"ask"},"toolDescriptionOverrides":{"t":{"properties":{}}}}`},
		{"stdio server", jsapi.McpServer{ID: "i", DisplayName: "n", Endpoint: "stdio:npx -y srv", Headers: map[string]string{}, ProtocolVersion: "auto", State: "paused",
			ToolPermissions: map[string]string{}, ToolDescriptionOverrides: map[string]jsapi.ToolDescriptionOverride{},
			Transport: jsapi.TransportStdio, Stdio: &jsapi.McpStdioConfig{Command: "npx", Args: []string{"-y", "srv"}, EnvNames: []string{"API_KEY"}, CommandLine: "npx -y srv"}},
			`{"id":"i","displayName":"n","endpoint":"stdio:npx -y srv","headers":{},"protocolVersion":"auto","state":"paused","toolPermissions":{},"toolDescriptionOverrides":{},` +
				`"transport":"stdio","stdio":{"command":"npx","args":["-y","srv"],"envNames":["API_KEY"],"commandLine":"npx -y srv"}}`},
		{"discovery", jsapi.McpDiscoveryResult{RegistrationID: "r", ProtocolVersion: "2025-11-25",
			Tools:       []jsapi.McpTool{{ID: "mcp/r:t", NativeName: "t", Description: &desc, InputSchema: jsapi.RawJSON(`{"type":"object"}`), Annotations: jsapi.RawJSON(`{}`), Permission: "off"}},
			Diagnostics: []jsapi.McpDiagnostic{{Code: "c", Message: "m"}}, StaleTools: []jsapi.McpStaleTool{}},
			`{"registrationId":"r","protocolVersion":"2025-11-25","tools":[{"id":"mcp/r:t","nativeName":"t","description":"d","inputSchema":{"type":"object"},"annotations":{},"permission":"off"}],"diagnostics":[{"code":"c","message":"m"}],"staleTools":[]}`},
		{"tool result", jsapi.McpCallOutcome{Outcome: jsapi.OutcomeKnownResponse, Response: &jsapi.McpToolResult{Kind: jsapi.ResponseToolResult,
			TextBlocks: []jsapi.McpTextBlock{{Index: 0, Text: "x"}}, Diagnostics: []jsapi.McpCallDiagnostic{{Code: "c", Message: "m", ContentIndex: &index}}}},
			`{"outcome":"known_response","response":{"kind":"tool_result","isError":false,"textBlocks":[{"index":0,"text":"x"}],"diagnostics":[{"code":"c","message":"m","contentIndex":1}]}}`},
		{"server error", jsapi.McpCallOutcome{Outcome: jsapi.OutcomeKnownResponse, Response: &jsapi.McpServerError{Kind: jsapi.ResponseServerError, Code: -32602, Message: "bad", DataJSON: &data}},
			`{"outcome":"known_response","response":{"kind":"server_error","code":-32602,"message":"bad","dataJson":"{\"field\":\"region\"}"}}`},
		{"empty optional strings", jsapi.McpDiscoveryResult{RegistrationID: "r", ProtocolVersion: "2025-11-25", ServerName: &empty, ServerVersion: &empty,
			Tools:       []jsapi.McpTool{{ID: "mcp/r:t", NativeName: "t", Title: &empty, Description: &empty, InputSchema: jsapi.RawJSON(`{"type":"object"}`), Annotations: jsapi.RawJSON(`{}`), Permission: "off"}},
			Diagnostics: []jsapi.McpDiagnostic{}, StaleTools: []jsapi.McpStaleTool{}},
			`{"registrationId":"r","protocolVersion":"2025-11-25","serverName":"","serverVersion":"","tools":[{"id":"mcp/r:t","nativeName":"t","title":"","description":"","inputSchema":{"type":"object"},"annotations":{},"permission":"off"}],"diagnostics":[],"staleTools":[]}`},
		{"not sent", jsapi.McpCallOutcome{Outcome: jsapi.OutcomeNotSent, Code: "mcp.call_not_started", Message: "m"},
			`{"outcome":"not_sent","code":"mcp.call_not_started","message":"m"}`},
		{"resource list", jsapi.McpResourceList{RegistrationID: "r", Items: []jsapi.McpResource{{URI: "test://a", Name: "a", MimeType: &desc}},
			Diagnostics: []jsapi.McpListDiagnostic{{Code: "c", Item: &desc, Message: "m"}}, McpListInfo: jsapi.McpListInfo{ListedAt: "t", FromCache: true}},
			`{"registrationId":"r","items":[{"uri":"test://a","name":"a","mimeType":"d"}],"diagnostics":[{"code":"c","item":"d","message":"m"}],"listedAt":"t","fromCache":true}`},
		{"read", jsapi.McpCallOutcome{Outcome: jsapi.OutcomeKnownResponse, Response: &jsapi.McpResourceContents{Kind: jsapi.ResponseResourceContents, URI: "test://a",
			Contents:   []jsapi.McpResourceContent{{Type: jsapi.ContentText, URI: "test://a", Text: &empty, Size: 0}, {Type: jsapi.ContentBlob, URI: "test://a", Size: 9 << 20}},
			TotalBytes: 9 << 20, Diagnostics: []jsapi.McpCallDiagnostic{{Code: "c", Message: "m", ContentIndex: &index}}}},
			`{"outcome":"known_response","response":{"kind":"resource_contents","uri":"test://a","contents":[{"type":"text","uri":"test://a","text":"","size":0},{"type":"blob","uri":"test://a","size":9437184}],"totalBytes":9437184,"diagnostics":[{"code":"c","message":"m","contentIndex":1}]}}`},
		{"prompt", jsapi.McpCallOutcome{Outcome: jsapi.OutcomeKnownResponse, Response: &jsapi.McpPromptMessages{Kind: jsapi.ResponsePromptMessages, Name: "p",
			Messages:    []jsapi.McpPromptMessage{{Role: "user", Content: jsapi.McpContentBlock{Type: jsapi.BlockText, Text: &desc}}},
			Diagnostics: []jsapi.McpCallDiagnostic{}}},
			`{"outcome":"known_response","response":{"kind":"prompt_messages","name":"p","messages":[{"role":"user","content":{"type":"text","text":"d"}}],"diagnostics":[]}}`},
		{"capabilities", jsapi.McpServerCapabilities{Allowed: jsapi.McpAllowedPrimitives{Resources: true}},
			`{"allowed":{"resources":true,"prompts":false}}`},
		{"error body", jsapi.ErrorBody{Kind: jsapi.KindNotFound, Code: "mcp.registration_not_found", Message: "mcp.registration_not_found: x"},
			`{"kind":"NotFound","code":"mcp.registration_not_found","message":"mcp.registration_not_found: x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.v)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got  %s (%v)\nwant %s", got, err, tt.want)
			}
		})
	}
}

// Every command of SPEC §5.2 and of the extension store, once, and only the
// two list commands take no dto.
func TestCommands(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range jsapi.Commands {
		if seen[c] {
			t.Fatalf("%s twice", c)
		}
		seen[c] = true
	}
	for _, c := range append([]string{jsapi.CmdListAuditEntries, jsapi.CmdStartSignIn, jsapi.CmdFinishSignIn, jsapi.CmdCancelSignIn, jsapi.CmdSignOut, jsapi.CmdGetStdioStatus, jsapi.CmdGetConnectionStatus,
		jsapi.CmdListToolSets, jsapi.CmdSaveToolSet, jsapi.CmdRemoveToolSet, jsapi.CmdReadToolResult,
		jsapi.CmdListResources, jsapi.CmdListResourceTemplates, jsapi.CmdReadResource, jsapi.CmdListPrompts, jsapi.CmdGetPrompt,
		jsapi.CmdCompleteArgument, jsapi.CmdGetServerCapabilities, jsapi.CmdSetServerCapabilities, jsapi.CmdSearchTools, jsapi.CmdLegacyToolsDigest,
		jsapi.CmdStartAppToolCall, jsapi.CmdCallAppTool, jsapi.CmdCancelAppToolCall, jsapi.CmdReadAppResource, jsapi.CmdRunTestCall}, jsapi.StoreCommands...) { // ttmcp's additions, the extension store
		if !seen[c] {
			t.Errorf("%s missing", c)
		}
		delete(seen, c)
	}
	if len(seen) != 16 || len(jsapi.StoreCommands) != 13 {
		t.Fatalf("%d commands of SPEC §5.2, %d of the extension store", len(seen), len(jsapi.StoreCommands))
	}
	for _, c := range jsapi.Commands {
		if jsapi.TakesNoArgs(c) != (c == jsapi.CmdListServers || c == jsapi.CmdListLegacyTools || c == jsapi.CmdListToolSets) {
			t.Errorf("TakesNoArgs(%s)", c)
		}
	}
}
