//go:build linux

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// TestPeerEverythingStdioThroughTtmcp is issue 10's acceptance with the
// real programs: the user runs `ttmcp stdio add everything -- npx -y
// @modelcontextprotocol/server-everything`, and a page talking to `ttmcp
// serve` over its WebSocket sees it as stdio with that command line,
// activates it, discovers its tools, test-calls one, allows it, and the
// model calls it (call_legacy_mcp_tool); then ttmcp is stopped by SIGTERM,
// and again (started anew) by SIGKILL, and each time none of the processes
// npx started is left. npx finds the pinned copy
// in tools/node (offline), so nothing is downloaded. Without
// TTMCP_NODE_TOOLS (`make peers` sets it) it skips.
func TestPeerEverythingStdioThroughTtmcp(t *testing.T) {
	tools := os.Getenv("TTMCP_NODE_TOOLS")
	if tools == "" {
		t.Skip("TTMCP_NODE_TOOLS is unset: run `make peers` (or `make test`) to run the tests against @modelcontextprotocol/server-everything")
	}
	// The user's PATH has Node 22 (npx itself may be the system's).
	t.Setenv("PATH", filepath.Join(tools, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	root, marker := t.TempDir(), uuid.NewString()
	out, err := runOut(t, "stdio", "add", "everything", "--data-root", root, "--cwd", tools,
		"--env", stdiotest.MarkerEnv+"="+marker, "--env", "npm_config_offline=true",
		"--", "npx", "-y", "@modelcontextprotocol/server-everything")
	if err != nil || !strings.Contains(out, "command: npx -y @modelcontextprotocol/server-everything") {
		t.Fatalf("stdio add: %v\n%s", err, out)
	}

	p := startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	page := dial(t, p.url)
	list := page.do(jsapi.CmdListServers, `{}`)
	m := regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindStringSubmatch(list)
	if m == nil || !strings.Contains(list, `"transport":"stdio"`) ||
		!strings.Contains(list, `"commandLine":"npx -y @modelcontextprotocol/server-everything"`) ||
		!strings.Contains(list, `"envNames":["`+stdiotest.MarkerEnv+`","npm_config_offline"]`) || strings.Contains(list, marker) {
		t.Fatalf("list: %s", list)
	}
	id := m[1]
	if got := page.do(jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+id+`","state":"active"}}`); !strings.Contains(got, `"state":"active"`) {
		t.Fatalf("activate: %s", got)
	}
	if got := page.do(jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+id+`"}}`); !strings.Contains(got, `"nativeName":"get-sum"`) ||
		!strings.Contains(got, `"serverName":"mcp-servers/everything"`) {
		t.Fatalf("discover: %s", got)
	}
	if len(stdiotest.Marked(marker)) < 2 {
		t.Fatalf("marked processes %v: npx should have started node", stdiotest.Marked(marker))
	}

	// A test call from the Manager.
	page.do(jsapi.CmdStartTestCall, `{"dto":{"callId":"t1"}}`)
	got := page.do(jsapi.CmdTestToolCall, `{"dto":{"callId":"t1","registrationId":"`+id+`","nativeName":"get-sum","argumentsJson":"{\"a\":2,\"b\":3}"}}`)
	if !strings.Contains(got, `"outcome":"known_response"`) || !strings.Contains(got, `The sum of 2 and 3 is 5.`) {
		t.Fatalf("test call: %s", got)
	}

	// The user allows the tool; the model gets it and calls it.
	if got := page.do(jsapi.CmdSetToolPermission, `{"dto":{"registrationId":"`+id+`","nativeName":"get-sum","permission":"allow"}}`); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("allow: %s", got)
	}
	toolID := "mcp/" + id + ":get-sum"
	if got := page.do(jsapi.CmdListLegacyTools, `{}`); !strings.Contains(got, `"toolId":"`+toolID+`"`) || !strings.Contains(got, `"serverDisplayName":"everything"`) {
		t.Fatalf("model tools: %s", got)
	}
	page.do(jsapi.CmdStartLegacyToolCall, `{"dto":{"executionCallId":"m1"}}`)
	got = page.do(jsapi.CmdCallLegacyTool, `{"dto":{"executionCallId":"m1","toolId":"`+toolID+`","argumentsJson":"{\"a\":40,\"b\":2}"}}`)
	if !strings.Contains(got, `"outcome":"known_response"`) || !strings.Contains(got, `The sum of 40 and 2 is 42.`) {
		t.Fatalf("model call: %s", got)
	}
	if got := page.do(jsapi.CmdGetStdioStatus, `{"dto":{"registrationId":"`+id+`"}}`); !strings.Contains(got, `"state":"running"`) {
		t.Fatalf("status: %s", got)
	}

	page.conn.CloseNow()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
	stdiotest.WaitUnmarked(t, marker, 10*time.Second)

	// ttmcp killed outright (no clean-up of its own runs): the guard in the
	// server's process group ends npx, npm and node all the same.
	p = startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	page = dial(t, p.url)
	if got := page.do(jsapi.CmdRefreshTools, `{"dto":{"registrationId":"`+id+`"}}`); !strings.Contains(got, `"nativeName":"get-sum"`) {
		t.Fatalf("refresh: %s", got)
	}
	if len(stdiotest.Marked(marker)) < 2 {
		t.Fatalf("marked processes %v after the refresh", stdiotest.Marked(marker))
	}
	p.cmd.Process.Kill()
	p.wait(t)
	stdiotest.WaitUnmarked(t, marker, 10*time.Second)
}
