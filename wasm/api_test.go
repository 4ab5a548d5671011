//go:build js && wasm

package main

import (
	"strconv"
	"strings"
	"syscall/js"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

func TestPublishSurface(t *testing.T) {
	n, e := newFakeNet(t)
	_ = n
	// a page that already has a host object keeps its properties
	existing, _ := parseJSON(js.ValueOf(`{"keep":1,"api":{"other":2},"invoke":{"mine":3}}`))
	global.Set("__TAURITAVERN__", existing)
	defer global.Delete("__TAURITAVERN__")
	b := newBridge(testOrigin, e)
	publish(b)
	tt := global.Get("__TAURITAVERN__")
	if !tt.Equal(existing) || tt.Get("keep").Int() != 1 || tt.Get("api").Get("other").Int() != 2 || tt.Get("invoke").Get("mine").Int() != 3 {
		t.Fatalf("existing properties lost: %s", stringify(tt))
	}
	keys := func(v js.Value) string {
		return jsObject.Call("keys", v).Call("join", ",").String()
	}
	mcp := tt.Get("api").Get("mcp")
	if k := keys(mcp); k != "servers,tools,audit,stdio,connections,elicitation,toolSets,results,resources,prompts,completions,toolSearch,apps" {
		t.Errorf("api.mcp keys = %s", k)
	}
	if k := keys(mcp.Get("servers")); k != "list,create,update,setState,remove,discover,refresh,signOut,capabilities,setCapabilities,signIn" {
		t.Errorf("servers keys = %s", k)
	}
	if k := keys(mcp.Get("tools")); k != "setPermission,setDescriptionOverride,testCall" {
		t.Errorf("tools keys = %s", k)
	}
	if k := keys(mcp.Get("audit")); k != "list" {
		t.Errorf("audit keys = %s", k)
	}
	if k := keys(mcp.Get("stdio")); k != "status" {
		t.Errorf("stdio keys = %s", k)
	}
	if k := keys(mcp.Get("connections")); k != "status" {
		t.Errorf("connections keys = %s", k)
	}
	if k := keys(mcp.Get("toolSets")); k != "list,save,remove" {
		t.Errorf("toolSets keys = %s", k)
	}
	if k := keys(mcp.Get("resources")); k != "list,templates,read" {
		t.Errorf("resources keys = %s", k)
	}
	if k := keys(mcp.Get("prompts")); k != "list,get" {
		t.Errorf("prompts keys = %s", k)
	}
	if k := keys(mcp.Get("completions")); k != "complete" {
		t.Errorf("completions keys = %s", k)
	}
	if k := keys(mcp.Get("toolSearch")); k != "search" {
		t.Errorf("toolSearch keys = %s", k)
	}
	if k := keys(mcp.Get("apps")); k != "startCall,call,cancelCall,readInterface,setRenderer" {
		t.Errorf("apps keys = %s", k)
	}
	if tt.Get("invoke").Get("safeInvoke").Type() != js.TypeFunction {
		t.Error("no safeInvoke")
	}
	st := tt.Get("mcpBridge")
	if keys(st) != "state,backend,reconnect" || st.Get("state").String() != stateConnecting || st.Get("backend").String() != testOrigin ||
		st.Get("reconnect").Type() != js.TypeFunction {
		t.Errorf("mcpBridge = %s", stringify(st))
	}

	// without a host object, one is created
	global.Delete("__TAURITAVERN__")
	publish(newBridge(testOrigin, e))
	if global.Get("__TAURITAVERN__").Get("api").Get("mcp").Get("servers").Get("list").Type() != js.TypeFunction {
		t.Error("api.mcp not published on a fresh host object")
	}
}

func TestPublishedMethodsSendCommands(t *testing.T) {
	b, _, s := openBridge(t)
	defer global.Delete("__TAURITAVERN__")
	publish(b)
	mcp := global.Get("__TAURITAVERN__").Get("api").Get("mcp")
	servers, tools, audit := mcp.Get("servers"), mcp.Get("tools"), mcp.Get("audit")
	input, _ := parseJSON(js.ValueOf(`{"displayName":" A ","endpoint":"http://x/mcp"}`))
	cases := []struct {
		p       js.Value
		command string
		args    string
	}{
		{servers.Call("list"), jsapi.CmdListServers, `{}`},
		{servers.Call("create", input), jsapi.CmdCreateServer, `{"dto":{"displayName":" A ","endpoint":"http://x/mcp"}}`},
		{servers.Call("update", obj("registrationId", "u")), jsapi.CmdUpdateServer, `{"dto":{"registrationId":"u"}}`},
		{servers.Call("setState", obj("state", "active")), jsapi.CmdSetServerState, `{"dto":{"state":"active"}}`},
		{servers.Call("remove", "id-1"), jsapi.CmdRemoveServer, `{"dto":{"registrationId":"id-1"}}`},
		{servers.Call("discover", obj("registrationId", "id-2")), jsapi.CmdDiscoverTools, `{"dto":{"registrationId":"id-2"}}`},
		{servers.Call("refresh", "id-3"), jsapi.CmdRefreshTools, `{"dto":{"registrationId":"id-3"}}`},
		{servers.Call("signOut", "id-4"), jsapi.CmdSignOut, `{"dto":{"registrationId":"id-4"}}`},
		{tools.Call("setPermission", obj("permission", "ask")), jsapi.CmdSetToolPermission, `{"dto":{"permission":"ask"}}`},
		{tools.Call("setDescriptionOverride", obj("override", js.Null())), jsapi.CmdSetToolDescriptionOverride, `{"dto":{"override":null}}`},
		{audit.Call("list"), jsapi.CmdListAuditEntries, `{"dto":{}}`},
		{audit.Call("list", obj("limit", 5)), jsapi.CmdListAuditEntries, `{"dto":{"limit":5}}`},
		{mcp.Get("stdio").Call("status", "id-4"), jsapi.CmdGetStdioStatus, `{"dto":{"registrationId":"id-4"}}`},
		{mcp.Get("toolSets").Call("list"), jsapi.CmdListToolSets, `{}`},
		{mcp.Get("toolSets").Call("save", obj("name", "Coding")), jsapi.CmdSaveToolSet, `{"dto":{"name":"Coding"}}`},
		{mcp.Get("toolSets").Call("remove", "set-1"), jsapi.CmdRemoveToolSet, `{"dto":{"id":"set-1"}}`},
		{mcp.Get("results").Call("read", obj("resultId", "r")), jsapi.CmdReadToolResult, `{"dto":{"resultId":"r"}}`},
		{servers.Call("capabilities", "id-5"), jsapi.CmdGetServerCapabilities, `{"dto":{"registrationId":"id-5"}}`},
		{servers.Call("setCapabilities", obj("prompts", false)), jsapi.CmdSetServerCapabilities, `{"dto":{"prompts":false}}`},
		{mcp.Get("resources").Call("list", "id-6"), jsapi.CmdListResources, `{"dto":{"registrationId":"id-6"}}`},
		{mcp.Get("resources").Call("templates", obj("refresh", true)), jsapi.CmdListResourceTemplates, `{"dto":{"refresh":true}}`},
		{mcp.Get("resources").Call("read", obj("uri", "test://a")), jsapi.CmdReadResource, `{"dto":{"uri":"test://a"}}`},
		{mcp.Get("prompts").Call("list", "id-7"), jsapi.CmdListPrompts, `{"dto":{"registrationId":"id-7"}}`},
		{mcp.Get("prompts").Call("get", obj("name", "p")), jsapi.CmdGetPrompt, `{"dto":{"name":"p"}}`},
		{mcp.Get("completions").Call("complete", obj("registrationId", "id-8")), jsapi.CmdCompleteArgument, `{"dto":{"registrationId":"id-8"}}`},
		{global.Get("__TAURITAVERN__").Get("invoke").Call("safeInvoke", jsapi.CmdListLegacyTools), jsapi.CmdListLegacyTools, `{}`},
		{global.Get("__TAURITAVERN__").Get("invoke").Call("safeInvoke", jsapi.CmdCallLegacyTool, obj("dto", obj("toolId", "t"))), jsapi.CmdCallLegacyTool, `{"dto":{"toolId":"t"}}`},
		{global.Get("__TAURITAVERN__").Get("invoke").Call("safeInvoke", "no\"such", obj("dto", 1)), `no"such`, `{"dto":1}`},
	}
	for i, c := range cases {
		id, args := s.invoked(t, i+1, c.command)
		if got := stringify(args); got != c.args {
			t.Errorf("%s: args = %s, want %s", c.command, got, c.args)
		}
		s.reply(id, `{"i":`+strconv.Itoa(i)+`}`)
		if v := mustResolve(t, c.p); v.Get("i").Int() != i {
			t.Errorf("%s resolved %s", c.command, stringify(v))
		}
	}
	// a method detached from its object still works (no use of this)
	list := servers.Get("list")
	p := list.Invoke()
	id, _ := s.invoked(t, len(cases)+1, jsapi.CmdListServers)
	s.reply(id, `0`)
	mustResolve(t, p)

	safe := global.Get("__TAURITAVERN__").Get("invoke").Get("safeInvoke")
	mustReject(t, safe.Invoke(), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	mustReject(t, safe.Invoke(jsapi.CmdListServers, "str"), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	mustReject(t, safe.Invoke(jsapi.CmdListServers, js.ValueOf([]any{1})), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	cyclic := jsObject.New()
	cyclic.Set("dto", cyclic)
	mustReject(t, safe.Invoke(jsapi.CmdCreateServer, cyclic), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	mustReject(t, servers.Call("create", obj("n", global.Get("BigInt").Invoke(3))), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	// A BigInt or a Symbol where an object or a string belongs: syscall/js
	// has no Type for a BigInt (Type panics), so each is checked safely.
	big, sym := global.Get("BigInt").Invoke(3), global.Get("Symbol").Invoke("s")
	for _, v := range []js.Value{big, sym} {
		mustReject(t, safe.Invoke(jsapi.CmdCreateServer, v), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
		mustReject(t, safe.Invoke(v, obj("dto", 1)), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	}
	p = servers.Call("remove", big) // no id: sent, refused by the backend
	id, _ = s.invoked(t, len(cases)+2, jsapi.CmdRemoveServer)
	s.replyError(id, `{"kind":"BadRequest","code":"mcp.dto_invalid","message":"mcp.dto_invalid: /dto: missing registrationId"}`)
	mustReject(t, p, jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	if len(s.sent) != len(cases)+3 {
		t.Errorf("refused calls were sent: %d frames", len(s.sent))
	}
}

// Every argument shape, through the transport's stub of a method with that
// shape: the args of the frame it sends.
func TestArgShapes(t *testing.T) {
	b, _, s := openBridge(t)
	obj := func(s string) js.Value { return mustParse(t, s) }
	tests := []struct {
		shape argShape
		input js.Value
		want  string
	}{
		{argsNone, js.Undefined(), `{}`},
		{argsNone, obj(`{"x":1}`), `{}`},
		{argsDTO, obj(`{"displayName":"a","endpoint":"http://x/","headers":{"A":"b"}}`), `{"dto":{"displayName":"a","endpoint":"http://x/","headers":{"A":"b"}}}`},
		{argsDTO, obj(`{"registrationId":"r","nativeName":"n","override":null}`), `{"dto":{"registrationId":"r","nativeName":"n","override":null}}`},
		{argsDTO, js.Undefined(), `{}`},
		{argsDTO, js.Null(), `{"dto":null}`},
		{argsRegistrationID, js.ValueOf("0d9c…id"), `{"dto":{"registrationId":"0d9c…id"}}`},
		{argsRegistrationID, obj(`{"registrationId":"abc","extra":true}`), `{"dto":{"registrationId":"abc"}}`},
		{argsRegistrationID, obj(`{}`), `{"dto":{}}`},
		{argsRegistrationID, js.Undefined(), `{"dto":{}}`},
		{argsRegistrationID, js.Null(), `{"dto":{}}`},
		{argsRegistrationID, js.ValueOf(5), `{"dto":{}}`},
		{argsOptionalDTO, js.Undefined(), `{"dto":{}}`},
		{argsOptionalDTO, js.Null(), `{"dto":{}}`},
		{argsOptionalDTO, obj(`{"limit":5}`), `{"dto":{"limit":5}}`},
		// big integers travel inside argumentsJson strings untouched
		{argsDTO, obj(`{"argumentsJson":"{\"n\":9007199254740993}"}`), `{"dto":{"argumentsJson":"{\"n\":9007199254740993}"}}`},
	}
	for i, tc := range tests {
		stub := b.method(method{"m", "cmd_" + strconv.Itoa(i), tc.shape})
		stub.Invoke(tc.input)
		id, _ := s.invoked(t, len(s.sent)-1, "cmd_"+strconv.Itoa(i))
		if want := `{"type":"invoke","id":` + strconv.Itoa(id) + `,"command":"cmd_` + strconv.Itoa(i) + `","args":` + tc.want + `}`; s.sent[len(s.sent)-1] != want {
			t.Errorf("%d (%s): frame %s, want %s", i, tc.shape, s.sent[len(s.sent)-1], want)
		}
	}

	// inputs without a JSON form are refused with mcp.args_invalid, unsent
	cyclic := jsObject.New()
	cyclic.Set("self", cyclic)
	withBigInt := jsObject.New()
	withBigInt.Set("n", global.Get("BigInt").Invoke(1))
	sent := len(s.sent)
	for _, bad := range []js.Value{cyclic, withBigInt} {
		e := mustReject(t, b.method(method{"m", "cmd", argsDTO}).Invoke(bad), jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
		if m := e.Get("message").String(); !strings.HasPrefix(m, jsapi.CodeArgsInvalid+": the arguments cannot be sent as JSON: JavaScript error: ") {
			t.Errorf("message = %q", m)
		}
	}
	if len(s.sent) != sent {
		t.Errorf("a refused call was sent: %v", s.sent[sent:])
	}
}
