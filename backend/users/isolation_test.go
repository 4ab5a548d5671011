package users

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/jsapi"
)

func TestMain(m *testing.M) {
	stdiotest.RunIfChild()
	os.Exit(m.Run())
}

// answer runs one command and renders what came back, a result or an
// error with its kind and code, so two users' answers can be compared.
func answer(t *testing.T, cmds *server.Commands, name, args string) string {
	t.Helper()
	v, err := cmds.Invoke(context.Background(), name, jsontext.Value(args))
	if err != nil {
		return "error " + domain.KindOf(err).String() + " " + domain.CodeOf(err) + ": " + err.Error()
	}
	return "ok " + string(v)
}

// must runs a command that must succeed and returns its result.
func must(t *testing.T, cmds *server.Commands, name, args string) string {
	t.Helper()
	got := answer(t, cmds, name, args)
	if !strings.HasPrefix(got, "ok ") {
		t.Fatalf("%s %s: %s", name, args, got)
	}
	return strings.TrimPrefix(got, "ok ")
}

// field returns the first string value of member name in a result.
func field(t *testing.T, result, name string) string {
	t.Helper()
	m := regexp.MustCompile(`"` + name + `":"([^"]+)"`).FindStringSubmatch(result)
	if m == nil {
		t.Fatalf("no %s in %s", name, result)
	}
	return m[1]
}

func openTestUsers(t *testing.T, cfg Config) *Users {
	t.Helper()
	if cfg.DataRoot == "" {
		cfg.DataRoot = t.TempDir()
	}
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = "http://127.0.0.1:1/oauth/callback"
	}
	u, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	return u
}

func forUser(t *testing.T, u *Users, handle string) *server.Commands {
	t.Helper()
	c, err := u.ForUser(handle)
	if err != nil {
		t.Fatalf("ForUser(%s): %v", handle, err)
	}
	return c
}

// TestUsersCannotReachEachOther is issue 28's isolation, over every
// command family: alice has a remote server (discovered, allowed,
// test-called, model-called, a long result kept), one that needs sign-in
// (a sign-in pending), a stdio server, a tool set and extension store
// entries. bob, naming every one of her identifiers, gets exactly what
// carol — a user who never had anything — gets for the same identifiers:
// the same not-found errors with the same codes, the same empty lists. So
// bob can neither use alice's things nor tell that they exist. alice's
// answers to the same commands differ (each row tests something), and
// after bob tried everything, hers are all still there.
func TestUsersCannotReachEachOther(t *testing.T) {
	// Closed after the users' stacks (cleanups run last first): a live
	// connection's stream would hold Close.
	remote := httptest.NewServer(demo.Handler())
	t.Cleanup(remote.Close)
	authed := httptest.NewServer(demo.NewAuthServer(demo.AuthOptions{}).Handler())
	t.Cleanup(authed.Close)

	u := openTestUsers(t, Config{})
	alice, bob, carol := forUser(t, u, "alice"), forUser(t, u, "bob"), forUser(t, u, "carol")

	// alice's events, and bob's: only alice's changes reach alice's pages.
	aliceEvents, bobEvents := make(chan jsapi.Event, 64), make(chan jsapi.Event, 64)
	defer u.stackOf(t, "alice").svc.Watch(func(e jsapi.Event) { aliceEvents <- e })()
	defer u.stackOf(t, "bob").svc.Watch(func(e jsapi.Event) { bobEvents <- e })()

	endpoint := remote.URL + "/mcp"
	id := field(t, must(t, alice, jsapi.CmdCreateServer, `{"dto":{"displayName":"alice's demo","endpoint":"`+endpoint+`"}}`), "id")
	must(t, alice, jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+id+`","state":"active"}}`)
	must(t, alice, jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+id+`"}}`)
	must(t, alice, jsapi.CmdSetToolPermission, `{"dto":{"registrationId":"`+id+`","nativeName":"echo","permission":"allow"}}`)
	must(t, alice, jsapi.CmdStartTestCall, `{"dto":{"callId":"alice-t1"}}`)
	must(t, alice, jsapi.CmdTestToolCall, `{"dto":{"callId":"alice-t1","registrationId":"`+id+`","nativeName":"echo","argumentsJson":"{\"text\":\"hi\"}"}}`)
	tool := "mcp/" + id + ":echo"
	must(t, alice, jsapi.CmdStartLegacyToolCall, `{"dto":{"executionCallId":"alice-m1"}}`)
	called := must(t, alice, jsapi.CmdCallLegacyTool, `{"dto":{"executionCallId":"alice-m1","toolId":"`+tool+`","argumentsJson":"{\"text\":\"a text longer than the limit\"}","readable":{"inlineCharLimit":5}}}`)
	result := field(t, called, "resultId")
	set := field(t, must(t, alice, jsapi.CmdSaveToolSet, `{"dto":{"name":"alice's set","tools":["`+tool+`"]}}`), "id")

	authID := field(t, must(t, alice, jsapi.CmdCreateServer, `{"dto":{"displayName":"alice's signed","endpoint":"`+authed.URL+`/mcp"}}`), "id")
	must(t, alice, jsapi.CmdSetServerState, `{"dto":{"registrationId":"`+authID+`","state":"active"}}`)
	started := must(t, alice, jsapi.CmdStartSignIn, `{"dto":{"registrationId":"`+authID+`"}}`)
	signIn := field(t, started, "signInId")
	authURL, err := url.Parse(field(t, started, "authorizationUrl"))
	if err != nil {
		t.Fatal(err)
	}
	state := authURL.Query().Get("state")

	stdio := u.addStdio(t, "alice", "alice's stdio", stdiotest.Stdio(t, "tools", t.TempDir()))

	must(t, alice, jsapi.CmdSetExtensionStoreJSON, `{"namespace":"ttmcp-test","key":"secret","value":{"owner":"alice"}}`)
	must(t, alice, jsapi.CmdSetExtensionStoreBlob, `{"namespace":"ttmcp-test","key":"blob","dataBase64":"YWxpY2U="}`)

	swap := strings.NewReplacer("{ID}", id, "{EP}", endpoint, "{TOOL}", tool, "{SET}", set, "{RESULT}", result,
		"{AUTH}", authID, "{SIGNIN}", signIn, "{STDIO}", string(stdio))
	reg := `{"dto":{"registrationId":"{ID}"}}`
	// Read-only rows first: a refused call is in the caller's own audit
	// log (with the id he sent), so the audit rows come before the calls.
	rows := []struct {
		family, name, args string
		pre                []string // name, args: run first by the same user
	}{
		{family: "servers", name: jsapi.CmdListServers, args: `{}`},
		{family: "audit", name: jsapi.CmdListAuditEntries, args: `{"dto":{}}`},
		{family: "audit", name: jsapi.CmdListAuditEntries, args: `{"dto":{"registrationId":"{ID}"}}`},
		{family: "model calls", name: jsapi.CmdListLegacyTools, args: `{}`},
		{family: "tool sets", name: jsapi.CmdListLegacyTools, args: `{"dto":{"toolSetId":"{SET}"}}`},
		{family: "tool sets", name: jsapi.CmdListToolSets, args: `{}`},
		{family: "servers", name: jsapi.CmdGetConnectionStatus, args: reg},
		{family: "stdio", name: jsapi.CmdGetStdioStatus, args: `{"dto":{"registrationId":"{STDIO}"}}`},
		{family: "tools", name: jsapi.CmdDiscoverTools, args: reg},
		{family: "tools", name: jsapi.CmdRefreshTools, args: reg},
		{family: "results", name: jsapi.CmdReadToolResult, args: `{"dto":{"resultId":"{RESULT}"}}`},
		{family: "resources", name: jsapi.CmdListResources, args: reg},
		{family: "resources", name: jsapi.CmdListResourceTemplates, args: reg},
		{family: "resources", name: jsapi.CmdReadResource, args: `{"dto":{"registrationId":"{ID}","uri":"file:///x"}}`},
		{family: "prompts", name: jsapi.CmdListPrompts, args: reg},
		{family: "prompts", name: jsapi.CmdGetPrompt, args: `{"dto":{"registrationId":"{ID}","name":"p"}}`},
		{family: "completions", name: jsapi.CmdCompleteArgument, args: `{"dto":{"registrationId":"{ID}","ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}`},
		{family: "capabilities", name: jsapi.CmdGetServerCapabilities, args: reg},
		{family: "extension store", name: jsapi.CmdGetExtensionStoreJSON, args: `{"namespace":"ttmcp-test","key":"secret"}`},
		{family: "extension store", name: jsapi.CmdTryGetExtensionStoreJSON, args: `{"namespace":"ttmcp-test","key":"secret"}`},
		{family: "extension store", name: jsapi.CmdListExtensionStoreKeys, args: `{"namespace":"ttmcp-test"}`},
		{family: "extension store", name: jsapi.CmdListExtensionStoreTables, args: `{"namespace":"ttmcp-test"}`},
		{family: "extension store", name: jsapi.CmdGetExtensionStoreBlob, args: `{"namespace":"ttmcp-test","key":"blob"}`},
		{family: "extension store", name: jsapi.CmdListExtensionStoreBlobKeys, args: `{"namespace":"ttmcp-test"}`},
		// Calls and changes.
		{family: "test calls", name: jsapi.CmdTestToolCall, args: `{"dto":{"callId":"t2","registrationId":"{ID}","nativeName":"echo","argumentsJson":"{}"}}`,
			pre: []string{jsapi.CmdStartTestCall, `{"dto":{"callId":"t2"}}`}},
		{family: "test calls", name: jsapi.CmdCancelTestCall, args: `{"dto":{"callId":"alice-t1"}}`},
		{family: "model calls", name: jsapi.CmdCallLegacyTool, args: `{"dto":{"executionCallId":"m2","toolId":"{TOOL}","argumentsJson":"{\"text\":\"x\"}","approval":"once"}}`,
			pre: []string{jsapi.CmdStartLegacyToolCall, `{"dto":{"executionCallId":"m2"}}`}},
		{family: "model calls", name: jsapi.CmdCancelLegacyToolCall, args: `{"dto":{"executionCallId":"alice-m1"}}`},
		{family: "servers", name: jsapi.CmdUpdateServer, args: `{"dto":{"registrationId":"{ID}","displayName":"bob's now","endpoint":"{EP}","headers":{},"protocolVersion":"auto"}}`},
		{family: "servers", name: jsapi.CmdSetServerState, args: `{"dto":{"registrationId":"{ID}","state":"paused"}}`},
		{family: "tools", name: jsapi.CmdSetToolPermission, args: `{"dto":{"registrationId":"{ID}","nativeName":"echo","permission":"deny"}}`},
		{family: "tools", name: jsapi.CmdSetToolDescriptionOverride, args: `{"dto":{"registrationId":"{ID}","nativeName":"echo","override":null}}`},
		{family: "capabilities", name: jsapi.CmdSetServerCapabilities, args: `{"dto":{"registrationId":"{ID}","resources":false}}`},
		{family: "tool sets", name: jsapi.CmdSaveToolSet, args: `{"dto":{"id":"{SET}","name":"bob's","tools":[]}}`},
		{family: "tool sets", name: jsapi.CmdRemoveToolSet, args: `{"dto":{"id":"{SET}"}}`},
		{family: "sign-in", name: jsapi.CmdStartSignIn, args: `{"dto":{"registrationId":"{AUTH}"}}`},
		{family: "sign-in", name: jsapi.CmdFinishSignIn, args: `{"dto":{"signInId":"{SIGNIN}"}}`},
		{family: "sign-in", name: jsapi.CmdCancelSignIn, args: `{"dto":{"signInId":"{SIGNIN}"}}`},
		{family: "sign-in", name: jsapi.CmdSignOut, args: `{"dto":{"registrationId":"{AUTH}"}}`},
		{family: "extension store", name: jsapi.CmdRenameExtensionStoreKey, args: `{"namespace":"ttmcp-test","key":"secret","newKey":"mine"}`},
		{family: "extension store", name: jsapi.CmdDeleteExtensionStoreJSON, args: `{"namespace":"ttmcp-test","key":"secret"}`},
		{family: "extension store", name: jsapi.CmdDeleteExtensionStoreBlob, args: `{"namespace":"ttmcp-test","key":"blob"}`},
		{family: "extension store", name: jsapi.CmdDeleteExtensionStoreTable, args: `{"namespace":"ttmcp-test","table":"main"}`},
		{family: "servers", name: jsapi.CmdRemoveServer, args: reg},
		{family: "stdio", name: jsapi.CmdRemoveServer, args: `{"dto":{"registrationId":"{STDIO}"}}`},
	}
	ids := []string{id, authID, string(stdio), set, result, signIn, "alice's", `"secret"`, `"blob"`}
	for _, row := range rows {
		args := swap.Replace(row.args)
		t.Run(row.family+"/"+row.name, func(t *testing.T) {
			// alice first, read-only rows only: her answer must not be
			// the empty user's (else the row tests nothing).
			if !strings.Contains(row.name, "remove") && !strings.Contains(row.name, "delete") && !strings.Contains(row.name, "rename") &&
				!strings.Contains(row.name, "set_") && !strings.Contains(row.name, "update") && !strings.Contains(row.name, "save") &&
				!strings.Contains(row.name, "cancel") && !strings.Contains(row.name, "sign") && !strings.Contains(row.name, "call") {
				if a, c := answer(t, alice, row.name, args), answer(t, carol, row.name, args); a == c {
					t.Errorf("alice's answer is the empty user's, the row proves nothing: %s", a)
				}
			}
			var got [2]string
			for i, cmds := range []*server.Commands{bob, carol} {
				if row.pre != nil {
					must(t, cmds, row.pre[0], row.pre[1])
				}
				got[i] = answer(t, cmds, row.name, args)
			}
			if got[0] != got[1] {
				t.Errorf("bob, naming alice's things, is answered\n  %s\nand a user who never had any\n  %s", got[0], got[1])
			}
			if strings.HasPrefix(got[0], "error ") && !strings.HasPrefix(got[0], "error NotFound ") && !strings.HasPrefix(got[0], "error BadRequest ") {
				t.Errorf("bob's refusal is not a not-found: %s", got[0])
			}
			if strings.HasPrefix(got[0], "ok ") {
				for _, s := range ids {
					if strings.Contains(got[0], s) && !strings.Contains(args, strings.Trim(s, `"`)) {
						t.Errorf("bob's answer names alice's %s: %s", s, got[0])
					}
				}
			}
		})
	}

	// The sign-in callback: alice's state, completed in bob's service, is
	// unknown there; alice's flow still waits for it.
	if known, _ := u.stackOf(t, "bob").svc.CompleteSignIn(context.Background(), url.Values{"state": {state}, "code": {"x"}}); known {
		t.Error("bob's service completed alice's sign-in")
	}

	// alice has everything still, as she left it.
	list := must(t, alice, jsapi.CmdListServers, `{}`)
	for _, want := range []string{id, authID, string(stdio), `"displayName":"alice's demo"`, `"state":"active"`} {
		if !strings.Contains(list, want) {
			t.Errorf("alice's list lost %s: %s", want, list)
		}
	}
	if got := must(t, alice, jsapi.CmdListLegacyTools, `{}`); !strings.Contains(got, tool) {
		t.Errorf("alice's model tools: %s", got)
	}
	if got := must(t, alice, jsapi.CmdListToolSets, `{}`); !strings.Contains(got, set) {
		t.Errorf("alice's tool sets: %s", got)
	}
	if got := must(t, alice, jsapi.CmdReadToolResult, swap.Replace(`{"dto":{"resultId":"{RESULT}"}}`)); !strings.Contains(got, "longer than the limit") {
		t.Errorf("alice's result: %s", got)
	}
	if got := must(t, alice, jsapi.CmdGetExtensionStoreJSON, `{"namespace":"ttmcp-test","key":"secret"}`); !strings.Contains(got, `"owner":"alice"`) {
		t.Errorf("alice's store entry: %s", got)
	}
	if got := must(t, alice, jsapi.CmdListAuditEntries, `{"dto":{}}`); strings.Contains(got, `"m2"`) || !strings.Contains(got, `"alice-m1"`) {
		t.Errorf("alice's audit log: %s", got)
	}
	must(t, alice, jsapi.CmdCancelSignIn, swap.Replace(`{"dto":{"signInId":"{SIGNIN}"}}`)) // still hers to cancel

	// Binding: bob's own tool set naming alice's tool gives his model
	// nothing of hers (answered as the empty user's set of it is).
	bind := `{"dto":{"name":"bound","tools":["` + tool + `"]}}`
	bobSet := field(t, must(t, bob, jsapi.CmdSaveToolSet, bind), "id")
	carolSet := field(t, must(t, carol, jsapi.CmdSaveToolSet, bind), "id")
	gotBob := must(t, bob, jsapi.CmdListLegacyTools, `{"dto":{"toolSetId":"`+bobSet+`"}}`)
	gotCarol := must(t, carol, jsapi.CmdListLegacyTools, `{"dto":{"toolSetId":"`+carolSet+`"}}`)
	if strings.ReplaceAll(gotBob, bobSet, "SET") != strings.ReplaceAll(gotCarol, carolSet, "SET") || strings.Contains(gotBob, `"serverDisplayName":"alice's demo"`) {
		t.Errorf("bob's set bound to alice's tool lists\n  %s\nan empty user's\n  %s", gotBob, gotCarol)
	}

	// The other way round: bob's own server is his alone.
	bobs := field(t, must(t, bob, jsapi.CmdCreateServer, `{"dto":{"displayName":"bob's","endpoint":"`+endpoint+`"}}`), "id")
	if got := answer(t, alice, jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"`+bobs+`"}}`); !strings.Contains(got, "error NotFound "+"mcp.registration_not_found") {
		t.Errorf("alice discovering bob's server: %s", got)
	}
	if got := must(t, alice, jsapi.CmdListServers, `{}`); strings.Contains(got, bobs) {
		t.Errorf("alice sees bob's server: %s", got)
	}

	// Events: alice heard her changes; bob heard only his own create.
	drain := func(ch chan jsapi.Event) (out []jsapi.Event) {
		for {
			select {
			case e := <-ch:
				out = append(out, e)
			default: // events are told on the goroutine that made the change: all are in
				return out
			}
		}
	}
	if evs := drain(aliceEvents); len(evs) == 0 {
		t.Error("alice's pages heard nothing of her changes")
	}
	for _, e := range drain(bobEvents) {
		if b, _ := jsontextMarshal(e.Data); strings.Contains(b, id) || strings.Contains(b, authID) {
			t.Errorf("bob's pages heard of alice's server: %s %s", e.Event, b)
		}
	}
}
