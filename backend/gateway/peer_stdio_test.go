//go:build linux

package gateway

// server-everything again, as a stdio server started the way a user adds
// it: `npx -y @modelcontextprotocol/server-everything` (npx finds the
// pinned copy in tools/node, so nothing is downloaded), which is three
// processes deep (npx → npm exec → node). The processes are found by a
// marker in their environment (stdiotest.Marked), so the test sees every
// one of them, not only the one the backend started.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// everythingStdio returns an active registration running server-everything
// through npx, and the marker its processes carry.
func everythingStdio(t *testing.T) (domain.Registration, string) {
	t.Helper()
	dir := os.Getenv(nodeToolsEnv)
	if dir == "" {
		t.Skipf("%s is unset: run `make peers` (or `make test`) to run the tests against @modelcontextprotocol/server-everything", nodeToolsEnv)
	}
	marker := uuid.NewString()
	r, err := domain.NewStdioRegistration("everything", domain.Stdio{
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-everything"},
		Env: map[string]string{
			"PATH":               filepath.Join(dir, "node_modules", ".bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
			stdiotest.MarkerEnv:  marker,
			"npm_config_yes":     "true",
			"npm_config_offline": "true",
		},
		Cwd: dir,
	}, domain.ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	r.State = domain.StateActive
	return r, marker
}

// leader returns the marked process whose parent is this test process:
// the one the gateway started.
func leader(t *testing.T, marker string) int {
	t.Helper()
	for _, pid := range stdiotest.Marked(marker) {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	t.Fatalf("no marked process is a child of the test (marked: %v)", stdiotest.Marked(marker))
	return 0
}

func stdioPeerGateway(t *testing.T) *Gateway {
	g := newGateway(t, Config{StartupTimeout: 60 * time.Second, ListTimeout: 20 * time.Second, CallWait: 20 * time.Second, CloseTimeout: time.Second, StdioStopGrace: time.Second})
	t.Cleanup(func() { g.Close() })
	return g
}

// TestPeerEverythingStdio discovers and calls server-everything over
// stdio, sees the environment reach it, and sees all three processes end
// when the backend stops.
func TestPeerEverythingStdio(t *testing.T) {
	r, marker := everythingStdio(t)
	g := stdioPeerGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cat, err := g.Discover(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if cat.ProtocolVersion != "2025-11-25" || cat.ServerName == nil || *cat.ServerName != "mcp-servers/everything" {
		t.Fatalf("catalog head: %s %v", cat.ProtocolVersion, deref(cat.ServerName))
	}
	if got, want := names(cat), everythingTools(cat.ProtocolVersion); !slices.Equal(got, want) || len(cat.Diagnostics) != 0 {
		t.Fatalf("tools\n got %q\nwant %q\ndiagnostics %+v", got, want, cat.Diagnostics)
	}
	call := func(name, args string) *domain.ToolResult {
		t.Helper()
		o := g.Call(ctx, r, domain.ToolCall{NativeName: name, Arguments: json.RawMessage(args)})
		if o.Outcome != domain.OutcomeKnownResponse || o.Result == nil {
			t.Fatalf("%s: %+v", name, o)
		}
		return o.Result
	}
	if sum := call("get-sum", `{"a":2,"b":3}`); len(sum.TextBlocks) != 1 || sum.TextBlocks[0].Text != "The sum of 2 and 3 is 5." {
		t.Fatalf("get-sum: %+v", sum)
	}
	if env := call("get-env", `{}`); len(env.TextBlocks) != 1 || !strings.Contains(env.TextBlocks[0].Text, marker) {
		t.Fatalf("get-env does not show the configured environment: %+v", env)
	}
	if n := len(stdiotest.Marked(marker)); n < 2 {
		t.Fatalf("%d marked processes: npx should have started node", n)
	}
	g.Close()
	stdiotest.WaitUnmarked(t, marker, 10*time.Second)
}

// TestPeerEverythingStdioLeaderDies kills the process the backend started
// (npx) and leaves node behind: the supervisor ends the rest of the group,
// and the next use starts it again.
func TestPeerEverythingStdioLeaderDies(t *testing.T) {
	r, marker := everythingStdio(t)
	g := stdioPeerGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := g.Discover(ctx, r); err != nil {
		t.Fatal(err)
	}
	before := stdiotest.Marked(marker)
	syscall.Kill(leader(t, marker), syscall.SIGKILL)
	stdiotest.WaitUnmarked(t, marker, 10*time.Second)
	st := waitStatus(t, g, r.ID, func(st domain.ProcessStatus) bool { return st.LastExit != nil })
	if st.LastExit.Code != CodeStdioProcessExited && st.LastExit.Code != CodeStdioConnectionLost {
		t.Fatalf("status after the leader died: %+v (processes were %v)", st, before)
	}
	if o := g.Call(ctx, r, domain.ToolCall{NativeName: "echo", Arguments: json.RawMessage(`{"message":"again"}`)}); o.Outcome != domain.OutcomeKnownResponse {
		t.Fatalf("call after a restart: %+v", o)
	}
}
