package domain

import (
	"strings"
	"testing"
)

func TestProjectReadable(t *testing.T) {
	label := ToolLabel{Title: "Create issue", Server: "GitHub", ToolID: "mcp/" + setReg + ":issue.create"}
	structured := func(s string) *string { return &s }
	idx := func(i int) *int { return &i }
	tests := []struct {
		name    string
		outcome CallOutcome
		want    string
		isError bool
	}{
		{"plain text is the text", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks: []TextBlock{{Index: 0, Text: "  Found 3 issues.\n"}}}},
			"Found 3 issues.", false},
		{"text blocks joined by blank lines", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks: []TextBlock{{Index: 0, Text: "first"}, {Index: 2, Text: "second"}}}},
			"first\n\nsecond", false},
		{"structured content that the text only serialises (reference §7's de-duplication)", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks: []TextBlock{{Index: 0, Text: `{ "issueId": 42.0 }`}}, StructuredJSON: structured(`{"issueId":42}`)}},
			"## Details\n\n- **issueId**: 42", false},
		{"text and other structured content", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks:     []TextBlock{{Index: 0, Text: "Created #42."}},
			StructuredJSON: structured(`{"issue":{"id":42,"labels":["bug","ui"],"assignees":[],"meta":{}},"url":"https://x/42","body":"a\nb","ok":true,"closed":null}`)}},
			"Created #42.\n\n## Details\n\n" +
				"- **issue**:\n" +
				"  - **id**: 42\n" +
				"  - **labels**:\n" +
				"    - bug\n" +
				"    - ui\n" +
				"  - **assignees**: (none)\n" +
				"  - **meta**: (empty)\n" +
				"- **url**: https://x/42\n" +
				"- **body**: a\n  b\n" +
				"- **ok**: true\n" +
				"- **closed**: null", false},
		{"an array of objects", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			StructuredJSON: structured(`[{"id":1},{"id":2},3]`)}},
			"## Details\n\n- **1**:\n  - **id**: 1\n- **2**:\n  - **id**: 2\n- 3", false},
		{"a scalar", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{StructuredJSON: structured(`"done"`)}},
			"## Details\n\ndone", false},
		{"notes, without the metadata one", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks: []TextBlock{{Index: 0, Text: "Here."}},
			Diagnostics: []CallDiagnostic{{Code: "mcp.call_content_unsupported", Message: "Image content is not supported", ContentIndex: idx(1)},
				{Code: "mcp.call_metadata_unsupported", Message: "Result metadata is not supported"}}}},
			"Here.\n\n## Notes\n\n- Image content is not supported", false},
		{"resource links and embedded resources, their notes left out; another block's note kept", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{
			TextBlocks: []TextBlock{{Index: 0, Text: "Two files."}},
			Resources: []ResultResource{
				{Index: 1, Block: ContentBlock{Type: BlockResourceLink, URI: structured("file:///a.md"), Name: structured("a.md"), Title: structured("Notes A"),
					MimeType: structured("text/markdown"), Size: new(int64(12)), Description: structured(" The first ")}},
				{Index: 2, Block: ContentBlock{Type: BlockResource, Resource: &ResourceContent{URI: "file:///b.txt", MimeType: structured("text/plain"), Text: structured("bee"), Size: 3, IsText: true}}},
				{Index: 3, Block: ContentBlock{Type: BlockResource, Resource: &ResourceContent{URI: "file:///c.png", Blob: structured("AAAA"), Size: 3}}},
			},
			Diagnostics: []CallDiagnostic{{Code: "mcp.call_content_unsupported", Message: "Resource link (12 bytes) is not supported", ContentIndex: idx(1)},
				{Code: "mcp.call_content_unsupported", Message: "Embedded resource content (3 encoded bytes) is not supported", ContentIndex: idx(2)},
				{Code: "mcp.call_content_unsupported", Message: "Embedded resource content (4 encoded bytes) is not supported", ContentIndex: idx(3)},
				{Code: "mcp.call_content_unsupported", Message: "Image content is not supported", ContentIndex: idx(4)}}}},
			"Two files.\n\n## Resources\n\n- Notes A (a.md) <file:///a.md> (text/markdown, 12 bytes): The first\n- file:///c.png (3 bytes), embedded, not shown" +
				"\n\n## Embedded resources\n\n### file:///b.txt (text/plain)\n\nbee\n\n## Notes\n\n- Image content is not supported", false},
		{"empty", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{TextBlocks: []TextBlock{{Text: "  "}}}},
			EmptyResultText, false},
		{"isError names the tool and mcp.tool_error", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{IsError: true,
			TextBlocks: []TextBlock{{Text: "Repository not found"}}}},
			"The MCP tool `Create issue` (GitHub) reported an error (mcp.tool_error).\n\nRepository not found", true},
		{"isError without content", CallOutcome{Outcome: OutcomeKnownResponse, Result: &ToolResult{IsError: true}},
			"The MCP tool `Create issue` (GitHub) reported an error (mcp.tool_error).", true},
		{"server error with data", CallOutcome{Outcome: OutcomeKnownResponse, ServerError: &ServerError{Code: -32602, Message: "Invalid params",
			DataJSON: structured(`{"field":"title"}`)}},
			"The MCP server answered the call of `Create issue` (GitHub) with an error (mcp.server_error, JSON-RPC -32602): Invalid params\n\n## Error details\n\n- **field**: title", true},
		{"server error without data", CallOutcome{Outcome: OutcomeKnownResponse, ServerError: &ServerError{Code: -32603, Message: "boom"}},
			"The MCP server answered the call of `Create issue` (GitHub) with an error (mcp.server_error, JSON-RPC -32603): boom", true},
		{"unsupported", CallOutcome{Outcome: OutcomeKnownResponse, Unsupported: &UnsupportedResponse{ResponseType: "task", Message: "Tasks are not supported"}},
			"The MCP tool `Create issue` (GitHub) answered with a response ttmcp cannot pass on (mcp.unsupported_response, task): Tasks are not supported", true},
		{"the user declined one question and answered another: each said in a sentence the model reads", CallOutcome{Outcome: OutcomeKnownResponse,
			Result:       &ToolResult{TextBlocks: []TextBlock{{Text: "nothing deleted"}}},
			Elicitations: []ElicitRecord{{Mode: ElicitForm, Action: ElicitDecline}, {Mode: ElicitURL, Action: ElicitCancel}, {Mode: ElicitForm, Action: ElicitAccept}}},
			"nothing deleted\n\n## The user was asked\n\n- The server asked the user to fill in a form; the user declined." +
				"\n- The server asked the user to open a page; the user dismissed it without answering." +
				"\n- The server asked the user to fill in a form; the user answered.", false},
		{"questions beyond the bounds: the model learns that ttmcp answered them", CallOutcome{Outcome: OutcomeKnownResponse,
			Result:       &ToolResult{TextBlocks: []TextBlock{{Text: "done"}}},
			Elicitations: []ElicitRecord{{Mode: ElicitForm, Action: ElicitAccept}, {Mode: ElicitForm, Action: ElicitLimited}}},
			"done\n\n## The user was asked\n\n- The server asked the user to fill in a form; the user answered." +
				"\n- The server asked the user more questions; ttmcp answered them cancel without asking, as the server had asked too many.", false},
		{"every question accepted: no note (the result tells)", CallOutcome{Outcome: OutcomeKnownResponse,
			Result:       &ToolResult{TextBlocks: []TextBlock{{Text: "deleted 3 files"}}},
			Elicitations: []ElicitRecord{{Mode: ElicitForm, Action: ElicitAccept}}},
			"deleted 3 files", false},
		{"not_sent: the title, never the ToolId", NotSent("mcp.call_permission_off", "MCP tool `mcp/"+setReg+":issue.create` is Off"),
			"The MCP tool `Create issue` (GitHub) was not called (mcp.call_permission_off): MCP tool `Create issue` is Off.", true},
		{"outcome_unknown", Unknown("mcp.call_timeout", "The tool did not answer within 60 s"),
			"The MCP tool `Create issue` (GitHub) may have run, but its result is unknown (mcp.call_timeout): The tool did not answer within 60 s. It was not retried; check what it does before calling it again.", true},
	}
	for _, tt := range tests {
		got := ProjectReadable(tt.outcome, label)
		if got.Text != tt.want || got.IsError != tt.isError {
			t.Errorf("%s:\n%q (error %v)\nwant\n%q (error %v)", tt.name, got.Text, got.IsError, tt.want, tt.isError)
		}
	}
	if got := ProjectReadable(NotSent("mcp.call_not_started", "not prepared"), ToolLabel{Title: "echo"}).Text; got != "The MCP tool `echo` was not called (mcp.call_not_started): not prepared." {
		t.Errorf("without a server: %q", got)
	}
}

func TestLongResults(t *testing.T) {
	if n := CountChars("日本語e\u0301"); n != 5 {
		t.Fatalf("CountChars = %d (code points)", n)
	}
	long := strings.Repeat("語", 3500) + "\nshort\n" + strings.Repeat("a", 6001)
	lines := WrapLines(long)
	lens := []int{}
	for _, l := range lines {
		lens = append(lens, CountChars(l))
	}
	if want := []int{3000, 500, 5, 3000, 3000, 1}; len(lens) != len(want) || lens[0] != 3000 || lens[1] != 500 || lens[2] != 5 || lens[3] != 3000 || lens[4] != 3000 || lens[5] != 1 {
		t.Fatalf("wrapped line lengths %v, want %v", lens, want)
	}
	if strings.Join(lines[:2], "") != strings.Repeat("語", 3500) {
		t.Fatal("wrapping lost or cut a character")
	}
	note := StoredNote(long, CountChars(long), 50_000, "0f2c", true, "")
	for _, want := range []string{
		"This MCP result is too large to include here (9508 characters; inline limit 50000).",
		"kept by ttmcp as result `0f2c`", "`ttmcp_read_result`", `{"resultId": "0f2c", "startLine": 1}`, "each answer ends with the call that reads on",
		"## Prefix preview\n\nThe first 3000 characters, cut without regard to lines or words; the rest is not shown here:\n\n" + strings.Repeat("語", 3000),
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%.600s", want, note)
		}
	}
	if strings.Contains(note, strings.Repeat("語", 3001)) {
		t.Error("the preview is longer than 3,000 characters")
	}
	if n := StoredNote(long, 1, 1, "0f2c", false, ""); strings.Contains(n, ReaderToolName) || !strings.Contains(n, "Recent calls") {
		t.Errorf("without the reader: %.400s", n)
	}
	if n := StoredNote(long, 1, 1, "", true, "disk full"); strings.Contains(n, ReaderToolName) || !strings.Contains(n, "could not keep the complete result (disk full)") {
		t.Errorf("not kept: %.400s", n)
	}
}
