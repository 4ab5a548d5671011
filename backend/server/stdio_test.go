package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// stdioWorld is the real service over a data root, with a gateway that
// runs stdio servers, as `ttmcp serve` wires it.
func stdioWorld(t *testing.T) (*Commands, *service.Service, *gateway.Gateway, string) {
	t.Helper()
	root := t.TempDir()
	store := storage.Open(root)
	gw := gateway.New(gateway.Config{StartupTimeout: 5 * time.Second, StdioStopGrace: 100 * time.Millisecond})
	t.Cleanup(func() { gw.Close() })
	svc := service.New(service.Config{Registrations: store.Registry(), Catalogs: store, Gateway: gw, Processes: gw})
	return NewCommands(svc, nil), svc, gw, root
}

func invoke(c *Commands, name, args string) (jsontext.Value, error) {
	return c.Invoke(context.Background(), name, jsontext.Value(args))
}

// Every command, sent by a page over the WebSocket with a member that
// could carry a command to run (in its dto or beside it), is refused with
// a BadRequest that says where stdio servers are configured, whatever else
// the request holds — and nothing runs: neither the page's command nor the
// one of a server the user configured and activated, whose id every
// request names. The control at the end shows both markers would have
// been seen.
func TestNoCommandTakesACommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses /bin/sh")
	}
	_, svc, gw, root := stdioWorld(t)
	page := newFixtureWith(t, root, svc, nil).connect(t)
	ctx := context.Background()
	dir := t.TempDir()
	pwned, ran := filepath.Join(dir, "pwned"), filepath.Join(dir, "ran")
	mine, err := svc.AddStdio(ctx, "mine", domain.Stdio{Command: "/bin/sh", Args: []string{"-c", "touch " + ran}})
	if err != nil {
		t.Fatal(err)
	}
	id := string(mine.ID)
	if _, err := svc.SetState(ctx, jsapi.SetMcpServerStateDto{RegistrationID: id, State: "active"}); err != nil {
		t.Fatal(err)
	}
	touch := `["-c","touch ` + pwned + `"]`
	values := map[string]string{
		"command": `"/bin/sh"`, "args": touch, "env": `{"LD_PRELOAD":"/tmp/x.so"}`,
		"cwd": `"/"`, "transport": `"stdio"`, "stdio": `{"command":"/bin/sh","args":` + touch + `}`,
	}
	// Every member any command's dto has, so the request is otherwise one
	// the command could run.
	dto := `"registrationId":"` + id + `","displayName":"x","endpoint":"http://127.0.0.1:9/","headers":{},"protocolVersion":"auto",` +
		`"state":"active","callId":"c","executionCallId":"e","toolId":"mcp/` + id + `:x","nativeName":"x","argumentsJson":"{}"`
	for _, name := range jsapi.Commands {
		for member, value := range values {
			for _, args := range []string{
				`{"dto":{` + dto + `,"` + member + `":` + value + `}}`,
				`{"dto":{` + dto + `},"` + member + `":` + value + `}`,
			} {
				r := page.call(name, jsontext.Value(args))
				if r.OK || r.Error.Code != domain.CodeStdioConfigReadOnly || r.Error.Kind != jsapi.KindBadRequest ||
					!strings.Contains(r.Error.Message, "ttmcp stdio add") || !strings.Contains(r.Error.Message, member) {
					t.Errorf("%s %s: %s", name, args, r.raw)
				}
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	for _, marker := range []string{pwned, ran} {
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: a command ran", marker)
		}
	}
	if running := gw.RunningStdio(); len(running) != 0 {
		t.Fatalf("processes started: %v", running)
	}

	// Control: the same page discovers the user's server; it runs.
	if r := page.call(jsapi.CmdDiscoverTools, jsontext.Value(`{"dto":{"registrationId":"`+id+`"}}`)); r.Error.Code != gateway.CodeStdioExitedAtStart {
		t.Fatalf("discovery of the configured command: %s", r.raw)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatal("the control did not run: the test could not have seen a command run")
	}
}

// No sequence of WebSocket commands starts a process the user did not
// configure: every way a page could hand the backend a command (a stdio:
// endpoint on create or update, command members, a remote server made a
// stdio one) is refused, and then activating, discovering, refreshing and
// calling everything that exists starts nothing. The control at the end
// shows the marker would have been seen: a server the user configured
// does run.
func TestNoWebSocketSequenceStartsAProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses /bin/sh")
	}
	c, svc, gw, root := stdioWorld(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	shell := `stdio:/bin/sh -c 'touch ` + marker + `'`
	attempts := []struct{ command, args string }{
		{jsapi.CmdCreateServer, `{"dto":{"displayName":"x","endpoint":` + quote(shell) + `}}`},
		{jsapi.CmdCreateServer, `{"dto":{"displayName":"x","endpoint":"stdio:/bin/sh"}}`},
		{jsapi.CmdCreateServer, `{"dto":{"displayName":"x","endpoint":"file:///bin/sh"}}`},
		{jsapi.CmdCreateServer, `{"dto":{"displayName":"x","endpoint":"http://127.0.0.1:9/mcp","command":"/bin/sh"}}`},
		{jsapi.CmdCreateServer, `{"dto":{"displayName":"remote","endpoint":"http://127.0.0.1:9/mcp"}}`}, // accepted: a remote server
	}
	for _, a := range attempts {
		invoke(c, a.command, a.args)
	}
	list, err := svc.List(context.Background())
	if err != nil || len(list.Servers) != 1 || list.Servers[0].Stdio != nil {
		t.Fatalf("servers after the attempts: %+v %v", list, err)
	}
	id := list.Servers[0].ID
	for _, a := range []struct{ command, args string }{
		{jsapi.CmdUpdateServer, `{"dto":{"registrationId":"` + id + `","displayName":"x","endpoint":` + quote(shell) + `,"headers":{},"protocolVersion":"auto"}}`},
		{jsapi.CmdUpdateServer, `{"dto":{"registrationId":"` + id + `","displayName":"x","endpoint":"http://127.0.0.1:9/mcp","headers":{},"protocolVersion":"auto","transport":"stdio"}}`},
		{jsapi.CmdSetServerState, `{"dto":{"registrationId":"` + id + `","state":"active"}}`},
		{jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"` + id + `"}}`},
		{jsapi.CmdRefreshTools, `{"dto":{"registrationId":"` + id + `"}}`},
		{jsapi.CmdStartTestCall, `{"dto":{"callId":"c1"}}`},
		{jsapi.CmdTestToolCall, `{"dto":{"callId":"c1","registrationId":"` + id + `","nativeName":"echo","argumentsJson":"{}"}}`},
		{jsapi.CmdStartLegacyToolCall, `{"dto":{"executionCallId":"e1"}}`},
		{jsapi.CmdCallLegacyTool, `{"dto":{"executionCallId":"e1","toolId":"mcp/` + id + `:echo","argumentsJson":"{}"}}`},
		{jsapi.CmdGetStdioStatus, `{"dto":{"registrationId":"` + id + `"}}`},
	} {
		invoke(c, a.command, a.args)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a page's command ran")
	}
	if _, err := os.Stat(filepath.Join(root, "_tauritavern", "mcp", storage.StdioDirName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a page wrote a stdio server file")
	}
	if st := gw.StdioStatus(domain.RegistrationID(id)); st.State != domain.ProcessStopped || st.LastExit != nil {
		t.Fatalf("process status of the remote server: %+v", st)
	}

	// Control: the user configures the same command on the backend's
	// machine; activating and discovering it from the page runs it.
	added, err := svc.AddStdio(context.Background(), "mine", domain.Stdio{Command: "/bin/sh", Args: []string{"-c", "touch " + marker}})
	if err != nil {
		t.Fatal(err)
	}
	invoke(c, jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+string(added.ID)+`","state":"active"}}`)
	_, err = invoke(c, jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+string(added.ID)+`"}}`)
	if domain.CodeOf(err) != gateway.CodeStdioExitedAtStart {
		t.Fatalf("discovery of the configured command: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the control did not run: the test could not have seen a page's command run")
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
