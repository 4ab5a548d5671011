//go:build unix

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The catalog of a stdio server goes through the same limits and the same
// validation as a remote server's. The test binary, started again with
// fakeListEnv naming a list, answers MCP on its stdin and stdout as fake
// answers over HTTP (a hand-written 2025 server, since a go-sdk server
// will not send invalid tools or loop its cursors), so one list is served
// both ways and the two discoveries are compared.

// fakeListEnv names the list of fakeLists a child serves over stdio.
const fakeListEnv = "TTMCP_TEST_STDIO_FAKE_LIST"

// fakeLists are the tools/list answers served both ways: every hostile
// list, and one page of tools each invalid in its own way.
func fakeLists() map[string]func(cursor string) any {
	lists := map[string]func(string) any{}
	for _, h := range hostileLists {
		lists[h.name] = h.list
	}
	withOutput := rawTool("bad_output", `{"type":"object"}`)
	withOutput["outputSchema"] = map[string]any{"type": 5}
	huge := rawTool("huge", `{"type":"object"}`)
	huge["description"] = strings.Repeat("y", 300<<10)
	invalid := page("",
		rawTool("healthy", `{"type":"object","properties":{"q":{"type":"string"}}}`),
		rawTool("broken_type", `{"type":"object","properties":{"q":{"type":12}}}`),
		rawTool("remote_ref", `{"type":"object","properties":{"q":{"$ref":"https://example.invalid/schema.json"}}}`),
		rawTool("twin", `{"type":"object"}`), rawTool("twin", `{"type":"object"}`),
		huge, withOutput,
		rawTool(strings.Repeat("n", 257), `{"type":"object"}`),
	)
	lists["invalid tools"] = func(string) any { return invalid }
	return lists
}

// serveFakeStdio answers MCP on stdin and stdout with list, as fake does
// over HTTP: no server/discover (2026), initialize at 2025-11-25.
func serveFakeStdio(list func(cursor string) any) {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	answer := func(id json.RawMessage, key string, v any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, key: v})
		out.Write(append(b, '\n'))
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &req) == nil && req.ID != nil {
			switch req.Method {
			case "initialize":
				answer(req.ID, "result", map[string]any{"protocolVersion": "2025-11-25",
					"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "0.1"}})
			case "tools/list":
				answer(req.ID, "result", list(req.Params.Cursor))
			default:
				answer(req.ID, "error", map[string]any{"code": -32601, "message": "Method not found"})
			}
		}
		if err != nil {
			return
		}
	}
}

// runFakeListIfChild serves the list fakeListEnv names and exits, or
// returns at once when it names none.
func runFakeListIfChild() {
	runAskStdioIfChild()
	if name := os.Getenv(fakeListEnv); name == malformedStdio {
		serveMalformedStdio()
		os.Exit(0)
	}
	if name := os.Getenv(fakeListEnv); name != "" {
		serveFakeStdio(fakeLists()[name])
		os.Exit(0)
	}
}

func TestStdioCatalogLikeRemote(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	g := stdioGateway(t, nil)
	for name, list := range fakeLists() {
		t.Run(name, func(t *testing.T) {
			ts, _ := serve(t, &fake{version: "2025-11-25", list: list})
			remote, remoteErr := testGateway(t).Discover(context.Background(), registration(t, ts.URL, domain.ProtocolAuto, nil))
			r, err := domain.NewStdioRegistration("fake "+name, domain.Stdio{Command: exe, Env: map[string]string{fakeListEnv: name}}, domain.ProtocolAuto)
			if err != nil {
				t.Fatal(err)
			}
			r.State = domain.StateActive
			local, localErr := g.Discover(context.Background(), r)
			if domain.CodeOf(localErr) != domain.CodeOf(remoteErr) || (localErr != nil) != (remoteErr != nil) {
				t.Fatalf("stdio: %v\nremote: %v", localErr, remoteErr)
			}
			if remoteErr != nil {
				if !strings.Contains(localErr.Error(), strings.TrimPrefix(remoteErr.Error(), domain.CodeOf(remoteErr)+": ")) {
					t.Fatalf("stdio: %v\nremote: %v", localErr, remoteErr)
				}
				return
			}
			if !slices.Equal(names(local), names(remote)) || !slices.Equal(codes(local), codes(remote)) || len(codes(local)) == 0 {
				t.Fatalf("stdio: tools %v, diagnostics %v\nremote: tools %v, diagnostics %v", names(local), codes(local), names(remote), codes(remote))
			}
		})
	}
}

// malformedStdio names the child that answers the four lists with
// malformedPages.
const malformedStdio = "malformed pages"

// serveMalformedStdio is malformedServer over stdio.
func serveMalformedStdio() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID != nil {
			result := malformedPages[m.Method]
			switch {
			case m.Method == "initialize":
				result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"malformed","version":"1"}}`
			case result == "":
				result = `{}`
			}
			os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + "}\n")
		}
		if err != nil {
			return
		}
	}
}

// The same malformed entries from a stdio server: isolated alike.
func TestStdioMalformedEntriesIsolated(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := domain.NewStdioRegistration("malformed", domain.Stdio{Command: exe, Env: map[string]string{fakeListEnv: malformedStdio}}, domain.ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	r.State = domain.StateActive
	checkMalformed(t, listAll(t, stdioGateway(t, nil), r))
}
