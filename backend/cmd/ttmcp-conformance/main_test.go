package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/demo"
)

// sdkServer serves one tool over Streamable HTTP (stateless, so 2026-07-28
// as well as the legacy versions).
func sdkServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "add_numbers", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func runWith(t *testing.T, url string, vars map[string]string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := run([]string{url}, func(k string) string { return vars[k] }, &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

func TestScenarios(t *testing.T) {
	url := sdkServer(t)
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(unauthorized.Close)

	for _, tt := range []struct {
		scenario, url, protocol string
		status                  int
		stdout, stderr          string
	}{
		{"initialize", url, "", 0, `"ProtocolVersion": "2026-07-28"`, ""},
		{"initialize", url, "2025-06-18", 0, `"ProtocolVersion": "2025-06-18"`, ""},
		{"request-metadata", url, "", 0, `"add_numbers"`, ""},
		{"tools_call", url, "", 0, `"Outcome": "known_response"`, ""},
		{"tools_call", url, "2025-03-26", 0, `"Call": "add_numbers"`, ""},
		{"http-standard-headers", url, "", 0, `"Call": "add_numbers"`, ""},
		{"http-invalid-tool-headers", url, "", 0, `"Call": "add_numbers"`, ""},
		{"http-custom-headers", url, "", exitFailed, "", "lists no toolCalls"},
		{"sse-retry", url, "", exitByDesign, `"ServerName": "fixture"`, "never reconnects"},
		{"auth/metadata-default", unauthorized.URL, "", exitFailed, "", "sign-in 1: mcp.auth_failed"},
		{"auth/client-credentials-basic", unauthorized.URL, "", exitByDesign, "", "authorization code flow"},
		{"no-such-scenario", url, "", exitUsage, "", "unknown scenario"},
		{"initialize", url, "1999-01-01", exitUsage, "", "TTMCP_CONFORMANCE_PROTOCOL"},
		{"", url, "", exitUsage, "", "unknown scenario"},
	} {
		t.Run(tt.scenario+"/"+tt.protocol, func(t *testing.T) {
			status, stdout, stderr := runWith(t, tt.url, map[string]string{
				"MCP_CONFORMANCE_SCENARIO":   tt.scenario,
				"TTMCP_CONFORMANCE_PROTOCOL": tt.protocol,
			})
			if status != tt.status || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", status, tt.status, stdout, stderr)
			}
		})
	}
}

// An authorization scenario: discovery is refused, the runner signs in
// (dynamic registration, the headless browser, the token exchange) and
// plays on with the token.
func TestAuthorizationScenario(t *testing.T) {
	ts := httptest.NewServer(demo.NewAuthServer(demo.AuthOptions{AutoApprove: true}).Handler())
	t.Cleanup(ts.Close)
	status, stdout, stderr := runWith(t, ts.URL+"/mcp", map[string]string{"MCP_CONFORMANCE_SCENARIO": "auth/metadata-default", "TTMCP_CONFORMANCE_PROTOCOL": "2025-06-18"})
	if status != 0 || !strings.Contains(stderr, "signed in") || !strings.Contains(stdout, `"ServerName": "ttmcp-demo"`) || !strings.Contains(stdout, `"Call": "test-tool"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

func TestCallsFromContext(t *testing.T) {
	url := sdkServer(t)
	status, stdout, stderr := runWith(t, url, map[string]string{
		"MCP_CONFORMANCE_SCENARIO": "http-custom-headers",
		"MCP_CONFORMANCE_CONTEXT":  `{"name":"http-custom-headers","toolCalls":[{"name":"add_numbers","arguments":{"a":1}},{"name":"missing"}]}`,
	})
	// Both are answered: add_numbers with its result, missing (a tool the
	// server does not have) with the server's error.
	if status != 0 || strings.Count(stdout, `"Outcome": "known_response"`) != 2 || !strings.Contains(stdout, `"ServerError"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

func TestGatewayFailureExitsOne(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	status, _, stderr := runWith(t, ts.URL, map[string]string{"MCP_CONFORMANCE_SCENARIO": "initialize"})
	if status != exitFailed || !strings.Contains(stderr, "mcp.discovery_initialize_failed") {
		t.Fatalf("exit %d, stderr:\n%s", status, stderr)
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if status := run(nil, func(string) string { return "" }, &bytes.Buffer{}, &stderr); status != exitUsage || !strings.Contains(stderr.String(), "usage") {
		t.Fatalf("exit %d, stderr %q", status, stderr.String())
	}
}
