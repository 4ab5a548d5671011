// Package demo is a small MCP server with a few tools of each kind the
// host must handle: paginated, structured output, slow, isError, and a
// SEP-2243 header parameter. `ttmcp demo-server` serves it so a newcomer
// has something real to register, discover and test; the tests use it as
// a fixture.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PageSize is the demo's tools/list page size: small, so that discovery
// pages even through a handful of tools.
const PageSize = 2

// Handler serves the demo server over Streamable HTTP. It is stateless,
// so it speaks MCP 2026-07-28 as well as the 2025 versions.
func Handler() http.Handler {
	s := NewServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		// A client that abandons a 2026 call (cancel, timeout) ends the tool
		// too: the demo slow tool stops instead of running on.
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
}

// NewServer returns the demo MCP server.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ttmcp-demo", Title: "ttmcp demo server", Version: "1.0.0"},
		&mcp.ServerOptions{PageSize: PageSize, Capabilities: &mcp.ServerCapabilities{}})
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"What to echo"}},"required":["text"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, echo)
	s.AddTool(&mcp.Tool{
		Name:         "add",
		Title:        "Add",
		Description:  "Adds two numbers and returns the sum as structured content.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, add)
	s.AddTool(&mcp.Tool{
		Name:        "slow",
		Title:       "Slow",
		Description: "Waits for the given number of milliseconds (default 3000), then answers. Cancel it to see an unknown outcome.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}}}`),
	}, slow)
	s.AddTool(&mcp.Tool{
		Name:        "fail",
		Title:       "Fail",
		Description: "Always answers with a tool error (isError: true).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}}}`),
	}, fail)
	s.AddTool(&mcp.Tool{
		Name:        "forecast",
		Title:       "Forecast",
		Description: "A made-up forecast. Its region travels as the Mcp-Param-Region header on MCP 2026-07-28.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["region"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)},
	}, forecast)
	return s
}

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

func args[T any](req *mcp.CallToolRequest) (T, error) {
	var v T
	if len(req.Params.Arguments) == 0 {
		return v, nil
	}
	err := json.Unmarshal(req.Params.Arguments, &v)
	return v, err
}

func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := args[struct{ Text string }](req)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: text(a.Text)}, nil
}

func add(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := args[struct{ A, B float64 }](req)
	if err != nil {
		return nil, err
	}
	sum := a.A + a.B
	return &mcp.CallToolResult{Content: text(fmt.Sprint(sum)), StructuredContent: map[string]any{"sum": sum}}, nil
}

func slow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := args[struct{ Ms *int64 }](req)
	if err != nil {
		return nil, err
	}
	d := 3 * time.Second
	if a.Ms != nil {
		d = time.Duration(*a.Ms) * time.Millisecond
	}
	select {
	case <-time.After(d):
		return &mcp.CallToolResult{Content: text(fmt.Sprintf("done after %s", d))}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func fail(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, _ := args[struct{ Reason string }](req)
	if a.Reason == "" {
		a.Reason = "the demo tool failed on purpose"
	}
	return &mcp.CallToolResult{IsError: true, Content: text(a.Reason)}, nil
}

func forecast(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := args[struct {
		Region string
		Days   int
	}](req)
	if err != nil {
		return nil, err
	}
	if a.Days == 0 {
		a.Days = 1
	}
	return &mcp.CallToolResult{Content: text(fmt.Sprintf("%s: sunny for %d day(s)", a.Region, a.Days))}, nil
}
