//go:build unix

package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The acceptance of stdio servers, end to end through the real ttmcp
// process: `ttmcp stdio add`, activate and discover from a page, call a
// tool that starts a grandchild ignoring SIGTERM; then ttmcp exits — on
// SIGINT, on SIGTERM, and killed outright — and no process it started is
// left.
func TestServeLeavesNoStdioProcess(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := runOut(t, "stdio", "add", "local tools", "--data-root", root,
				"--env", stdiotest.ModeEnv+"=tools", "--env", stdiotest.DirEnv+"="+dir, "--", exe); err != nil {
				t.Fatal(err)
			}
			p := startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
			page := dial(t, p.url)
			list := page.do(jsapi.CmdListServers, `{}`)
			m := regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindStringSubmatch(list)
			if m == nil || !strings.Contains(list, `"transport":"stdio"`) || !strings.Contains(list, `"commandLine":"`+exe+`"`) ||
				!strings.Contains(list, `"envNames":["`+stdiotest.DirEnv+`","`+stdiotest.ModeEnv+`"]`) || strings.Contains(list, dir) {
				t.Fatalf("list: %s", list)
			}
			id := m[1]
			if got := page.do(jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+id+`","state":"active"}}`); !strings.Contains(got, `"state":"active"`) {
				t.Fatalf("activate: %s", got)
			}
			if got := page.do(jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+id+`"}}`); !strings.Contains(got, `"nativeName":"spawn"`) {
				t.Fatalf("discover: %s", got)
			}
			page.do(jsapi.CmdStartTestCall, `{"dto":{"callId":"c1"}}`)
			got := page.do(jsapi.CmdTestToolCall, `{"dto":{"callId":"c1","registrationId":"`+id+`","nativeName":"spawn","argumentsJson":"{}"}}`)
			g := regexp.MustCompile(`"text":"(\d+)"`).FindStringSubmatch(got)
			if g == nil {
				t.Fatalf("spawn: %s", got)
			}
			grandchild, _ := strconv.Atoi(g[1])
			server := stdiotest.Pids(t, dir, "tools")
			if len(server) != 1 || !stdiotest.Alive(grandchild) {
				t.Fatalf("server %v, grandchild %d", server, grandchild)
			}
			if got := page.do(jsapi.CmdGetStdioStatus, `{"dto":{"registrationId":"`+id+`"}}`); !strings.Contains(got, `"state":"running"`) {
				t.Fatalf("status: %s", got)
			}

			page.conn.CloseNow() // a page that answers no close handshake holds the shutdown
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = p.wait(t)
			if sig != syscall.SIGKILL && err != nil {
				t.Fatalf("exit after %v: %v\n%s", sig, err, p.stderr)
			}
			stdiotest.WaitGone(t, append(server, grandchild)...)
			if sig != syscall.SIGKILL && !strings.Contains(p.stderr.String(), "stdio servers stopped") {
				t.Fatalf("no stop logged:\n%s", p.stderr)
			}
		})
	}
}
