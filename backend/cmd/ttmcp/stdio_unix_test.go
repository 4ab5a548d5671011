//go:build unix

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// socket is one page connection to a ttmcp process: commands on it share
// it (a test call's start and call must).
type socket struct {
	t    *testing.T
	conn *websocket.Conn
	id   int
}

func dial(t *testing.T, base string) *socket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.Get(base + jsapi.PathSession)
	if err != nil {
		t.Fatal(err)
	}
	var s jsapi.Session
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.Dial(ctx, s.WS, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 24)
	t.Cleanup(func() { c.CloseNow() })
	hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: s.Token})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	return &socket{t: t, conn: c}
}

// do runs one command and returns its result frame.
func (s *socket) do(command, args string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.id++
	frame := `{"type":"invoke","id":` + strconv.Itoa(s.id) + `,"command":"` + command + `","args":` + args + `}`
	if err := s.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		s.t.Fatal(err)
	}
	for {
		_, b, err := s.conn.Read(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		if strings.Contains(string(b), `"id":`+strconv.Itoa(s.id)+`,`) || strings.Contains(string(b), `"id":`+strconv.Itoa(s.id)+`}`) {
			return string(b)
		}
	}
}

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
