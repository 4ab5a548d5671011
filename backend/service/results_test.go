package service

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// readableServer serves "page" (titled "Fetch page": n characters of text,
// lines of 80), "issue" (structured content and its serialisation as text)
// and "fail" (isError).
func readableServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "page", Title: "Fetch page", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ N int }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pageText(in.N)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "issue", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"issueId": 42}`}}, StructuredContent: map[string]any{"issueId": 42}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such page"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// pageText is n characters in lines of 80 (79 and a newline), numbered.
func pageText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		line := "line " + strconv.Itoa(i) + " "
		b.WriteString(line + strings.Repeat("x", 79-len(line)) + "\n")
	}
	return b.String()[:n]
}

func (w *world) readableCall(toolID, args string, opt *jsapi.McpReadableOptions) jsapi.McpCallOutcome {
	w.t.Helper()
	ctx := context.Background()
	callID := "c-" + strconv.Itoa(int(w.calls.Add(1)))
	if _, err := w.svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: callID}); err != nil {
		w.t.Fatal(err)
	}
	o, err := w.svc.CallLegacyTool(ctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: callID, ToolID: toolID, ArgumentsJSON: args, Readable: opt})
	if err != nil {
		w.t.Fatal(err)
	}
	return o
}

// A model call asked for its readable text gets it beside the outcome; a
// call that does not ask (upstream's hooks) gets upstream's outcome, byte
// for byte without the member.
func TestReadableCalls(t *testing.T) {
	w := newWorld(t)
	id := w.register(readableServer(t), true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"page", "issue", "fail"} {
		w.permit(id, n, jsapi.PermissionAllow)
	}
	tool := func(n string) string { return "mcp/" + id + ":" + n }
	on := &jsapi.McpReadableOptions{}

	plain := w.readableCall(tool("page"), `{"n":100}`, nil)
	if enc, _ := jsonv2.Marshal(plain); strings.Contains(string(enc), "readable") || plain.Readable != nil {
		t.Fatalf("upstream's call got a readable member: %s", enc)
	}
	o := w.readableCall(tool("page"), `{"n":100}`, on)
	if o.Readable == nil || o.Readable.Text != strings.TrimSpace(pageText(100)) || o.Readable.IsError || o.Readable.Stored != nil {
		t.Fatalf("plain text: %+v", o.Readable)
	}
	if o := w.readableCall(tool("issue"), `{}`, on); o.Readable.Text != "## Details\n\n- **issueId**: 42" {
		t.Fatalf("structured: %q", o.Readable.Text)
	}
	if o := w.readableCall(tool("fail"), `{}`, on); !o.Readable.IsError || o.Readable.Text != "The MCP tool `fail` (fixture) reported an error (mcp.tool_error).\n\nno such page" {
		t.Fatalf("isError: %+v", o.Readable)
	}
	w.permit(id, "fail", jsapi.PermissionOff)
	if o := w.readableCall(tool("fail"), `{}`, on); o.Readable.Text != "The MCP tool `fail` (fixture) was not called (mcp.call_permission_off): MCP tool `fail` is Off." {
		t.Fatalf("not_sent: %q", o.Readable.Text)
	}
	if o := w.readableCall(tool("page"), `[]`, on); !strings.Contains(o.Readable.Text, "`Fetch page` (fixture) was not called (mcp.call_arguments_not_object)") {
		t.Fatalf("the title names the tool: %q", o.Readable.Text)
	}
	// At the limit it is included; over it, kept and noted.
	limit := 1000
	if o := w.readableCall(tool("page"), `{"n":1000}`, &jsapi.McpReadableOptions{InlineCharLimit: &limit}); o.Readable.Stored != nil {
		t.Fatalf("1,000 characters at a limit of 1,000 were kept aside")
	}
	zero := 0
	if _, err := w.svc.CallLegacyTool(context.Background(), jsapi.CallLegacyMcpToolDto{ExecutionCallID: "z", ToolID: tool("page"), Readable: &jsapi.McpReadableOptions{InlineCharLimit: &zero}}); domain.CodeOf(err) != "mcp.tool_set_result_inline_char_limit_invalid" {
		t.Fatalf("limit 0: %v", err)
	}
}

// A 200,000-character result reaches the model as the note and a preview;
// the whole is kept (0600), named in the call's audit record, read back by
// lines with continuation, and goes with its server.
// keepLongResult makes a world whose readable server's call returned a
// 200,000-character result, which was kept; it returns the world, the
// registration's id and the call's outcome.
func keepLongResult(t *testing.T) (*world, string, jsapi.McpCallOutcome) {
	w := newWorld(t)
	id := w.register(readableServer(t), true)
	w.discover(id)
	w.permit(id, "page", jsapi.PermissionAllow)
	return w, id, w.readableCall("mcp/"+id+":page", `{"n":200000}`, &jsapi.McpReadableOptions{})
}

func TestLongResultIsKeptAndReadBack(t *testing.T) {
	w, id, o := keepLongResult(t)
	ctx := context.Background()
	r := o.Readable
	if r.Stored == nil || r.Stored.ResultID == nil || r.Stored.CharCount != 199_999 || r.Stored.CharLimit != 50_000 {
		t.Fatalf("stored %+v", r.Stored)
	}
	resultID := *r.Stored.ResultID
	if !strings.HasPrefix(r.Text, "This MCP result is too large to include here (199999 characters; inline limit 50000).") ||
		!strings.Contains(r.Text, "`ttmcp_read_result`") || !strings.Contains(r.Text, resultID) || domain.CountChars(r.Text) > 4000 {
		t.Fatalf("note (%d characters): %.500s", domain.CountChars(r.Text), r.Text)
	}
	if _, ok := o.Response.(*jsapi.McpToolResult); !ok {
		t.Fatal("the outcome itself changed")
	}
	entries, _ := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{})
	if e := entries.Entries[0]; e.ResultID == nil || *e.ResultID != resultID {
		t.Fatalf("audit %+v", e)
	}
	// Read it all back, page by page.
	var got []string
	start, reads := 1, 0
	for {
		page, err := w.svc.ReadToolResult(ctx, jsapi.ReadMcpToolResultDto{ResultID: resultID, StartLine: &start})
		if err != nil {
			t.Fatal(err)
		}
		reads++
		if page.StartLine != start || page.TotalLines != 2500 || page.CharCount != 199_999 || page.RegistrationID != id || domain.CountChars(page.Text) > DefaultResultChars {
			t.Fatalf("page %+v", page)
		}
		got = append(got, page.Text)
		if page.NextStartLine == nil {
			break
		}
		start = *page.NextStartLine
	}
	if strings.Join(got, "\n") != strings.TrimSpace(pageText(200_000)) || reads != 13 {
		t.Fatalf("%d reads; read back %d characters", reads, len(strings.Join(got, "\n")))
	}
	lines, chars := 5, 1_000_000
	if page, _ := w.svc.ReadToolResult(ctx, jsapi.ReadMcpToolResultDto{ResultID: resultID, LineCount: &lines, MaxChars: &chars}); page.EndLine != 5 || *page.NextStartLine != 6 {
		t.Fatalf("5 lines: %+v", page)
	}
	for _, tt := range []struct {
		dto  jsapi.ReadMcpToolResultDto
		code string
	}{
		{jsapi.ReadMcpToolResultDto{ResultID: resultID, StartLine: new(2501)}, CodeResultLineOutOfRange},
		{jsapi.ReadMcpToolResultDto{ResultID: resultID, StartLine: new(0)}, CodeResultReadInvalid},
		{jsapi.ReadMcpToolResultDto{ResultID: resultID, MaxChars: new(10)}, CodeResultReadInvalid},
		{jsapi.ReadMcpToolResultDto{ResultID: "../x"}, "mcp.result_id_invalid"},
		{jsapi.ReadMcpToolResultDto{ResultID: string(domain.NewResultID())}, CodeResultNotFound},
	} {
		if _, err := w.svc.ReadToolResult(ctx, tt.dto); domain.CodeOf(err) != tt.code {
			t.Errorf("%+v: %v, want %s", tt.dto, err, tt.code)
		}
	}
	// Without the reader tool the note says where the user finds it.
	reader := false
	if o := w.readableCall("mcp/"+id+":page", `{"n":60000}`, &jsapi.McpReadableOptions{ReaderTool: &reader}); strings.Contains(o.Readable.Text, "ttmcp_read_result") || !strings.Contains(o.Readable.Text, "Recent calls") {
		t.Fatalf("no reader: %.400s", o.Readable.Text)
	}
	dir := filepath.Join(w.root, "_tauritavern", "mcp", "results", id)
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("%d kept results", len(entries))
	}
	if err := w.svc.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("a removed server's results are still kept")
	}
	if _, err := w.svc.ReadToolResult(ctx, jsapi.ReadMcpToolResultDto{ResultID: resultID}); domain.CodeOf(err) != CodeResultNotFound {
		t.Fatalf("after removal: %v", err)
	}
}

// Issue 27 item 1: a kept result whose file is a link out of the data
// root (to /etc/passwd, or a file of the user's) is never read back, for
// the page nor for the model's reader tool: the read fails and says why.
func TestReadToolResultRefusesALinkOutOfTheDataRoot(t *testing.T) {
	w, id, o := keepLongResult(t)
	ctx := context.Background()
	resultID := *o.Readable.Stored.ResultID
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("the user's own file"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.root, "_tauritavern", "mcp", "results", id, resultID+".txt")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Skip(err) // no symbolic links here
	}
	page, err := w.svc.ReadToolResult(ctx, jsapi.ReadMcpToolResultDto{ResultID: resultID})
	if err == nil || strings.Contains(page.Text, "the user's own file") || !strings.Contains(err.Error(), "leads out of the data root") {
		t.Fatalf("ReadToolResult = %q, %v; want it refused as a link out of the data root", page.Text, err)
	}
}
