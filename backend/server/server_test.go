package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// fixture is a backend on a loopback test server with real files.
type fixture struct {
	srv  *Server
	url  string // http://127.0.0.1:port
	root string
}

func newFixture(t testing.TB, mutate func(*Config)) *fixture {
	t.Helper()
	root := t.TempDir()
	return newFixtureWith(t, root, newService(root), mutate)
}

// newFixtureWith is newFixture over svc, whose files are in root.
func newFixtureWith(t testing.TB, root string, svc *service.Service, mutate func(*Config)) *fixture {
	t.Helper()
	cfg := Config{
		Commands:         NewCommands(svc, nil),
		AllowOrigins:     []string{"http://localhost:8000"},
		Version:          "test",
		HandshakeTimeout: 2 * time.Second,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	f := &fixture{srv: New(cfg), root: root}
	ts := httptest.NewServer(f.srv)
	f.url = ts.URL
	t.Cleanup(func() {
		f.srv.Close()
		ts.Close()
		// A test call's audit record is written after its answer: let the
		// records handed over be written before the files go (a list waits
		// for them).
		cfg.Commands.Invoke(context.Background(), jsapi.CmdListAuditEntries, jsontext.Value(`{"dto":{"limit":1}}`))
	})
	return f
}

func (f *fixture) origin() string { return f.url }

// client speaks SPEC §5 like an independent page would.
type client struct {
	t    testing.TB
	conn *websocket.Conn
	// over, when set, carries the frames instead of conn (a page on the
	// HTTP transport, transport_test.go).
	over pageWire
	mu   sync.Mutex
	next uint64
	// events are the event frames read while reading for something else:
	// every change of a registration is told to every socket.
	events []jsapi.Event
}

func (f *fixture) dial(t testing.TB, origin, token string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url, "http")+jsapi.PathWS, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	c.SetReadLimit(64 << 20)
	if token != "" {
		hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: token})
		if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
			return nil, resp, err
		}
	}
	return c, resp, nil
}

// connect fetches the session the way the loader does, then shakes hands.
func (f *fixture) connect(t testing.TB) *client {
	t.Helper()
	resp, err := http.Get(f.url + jsapi.PathSession)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sess jsapi.Session
	if err := json.UnmarshalRead(resp.Body, &sess); err != nil {
		t.Fatal(err)
	}
	if want := "ws://" + strings.TrimPrefix(f.url, "http://") + "/ws"; sess.WS != want {
		t.Fatalf("session ws = %q, want %q", sess.WS, want)
	}
	c, _, err := f.dial(t, f.origin(), sess.Token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	_, data, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("no welcome: %v", err)
	}
	var w jsapi.Welcome
	if err := json.Unmarshal(data, &w); err != nil || w.Type != jsapi.FrameWelcome || w.Server.Name != "ttmcp" {
		t.Fatalf("welcome = %s (%v)", data, err)
	}
	return &client{t: t, conn: c}
}

type result struct {
	Type  string          `json:"type"`
	ID    uint64          `json:"id"`
	OK    bool            `json:"ok"`
	Value jsontext.Value  `json:"value"`
	Error jsapi.ErrorBody `json:"error"`
	raw   []byte
}

func (c *client) send(id uint64, command string, args any) {
	c.t.Helper()
	frame := map[string]any{"type": jsapi.FrameInvoke, "id": id, "command": command}
	if args != nil {
		frame["args"] = args
	}
	b, err := json.Marshal(frame)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(b)
}

// write sends one frame.
func (c *client) write(frame []byte) {
	c.t.Helper()
	var err error
	if c.over != nil {
		err = c.over.write(frame)
	} else {
		err = c.conn.Write(context.Background(), websocket.MessageText, frame)
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// read reads the next frame that is not an event (those are kept in
// c.events).
func (c *client) read() result {
	c.t.Helper()
	for {
		data := c.readFrame()
		var r result
		if err := json.Unmarshal(data, &r); err != nil {
			c.t.Fatalf("result %s: %v", data, err)
		}
		r.raw = data
		if r.Type != jsapi.FrameEvent {
			return r
		}
		c.keepEvent(data)
	}
}

// readFrame reads the next frame's bytes.
func (c *client) readFrame() []byte {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var data []byte
	var err error
	if c.over != nil {
		data, err = c.over.read(ctx)
	} else {
		_, data, err = c.conn.Read(ctx)
	}
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return data
}

// keepEvent keeps an event frame, its data decoded as a server change.
func (c *client) keepEvent(data []byte) {
	c.t.Helper()
	var ev struct {
		jsapi.Event
		Data jsapi.McpServerChange `json:"data"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		c.t.Fatalf("event %s: %v", data, err)
	}
	ev.Event.Data = ev.Data
	c.events = append(c.events, ev.Event)
}

// event returns the next event frame, kept or read.
func (c *client) event() jsapi.Event {
	c.t.Helper()
	for len(c.events) == 0 {
		data := c.readFrame()
		var r result
		if json.Unmarshal(data, &r) != nil || r.Type != jsapi.FrameEvent {
			c.t.Fatalf("a frame instead of an event: %s", data)
		}
		c.keepEvent(data)
	}
	ev := c.events[0]
	c.events = c.events[1:]
	return ev
}

// call sends one request and waits for its result.
func (c *client) call(command string, args any) result {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	c.send(id, command, args)
	r := c.read()
	if r.ID != id {
		c.t.Fatalf("result id %d, want %d", r.ID, id)
	}
	return r
}

func dto(v any) map[string]any { return map[string]any{"dto": v} }

func (c *client) must(command string, args any, out any) {
	c.t.Helper()
	r := c.call(command, args)
	if !r.OK {
		c.t.Fatalf("%s: %+v", command, r.Error)
	}
	if out != nil {
		if err := json.Unmarshal(r.Value, out); err != nil {
			c.t.Fatalf("%s value %s: %v", command, r.Value, err)
		}
	}
}

// TestSpecClient drives every registration command the way SPEC §5 says,
// and checks the files left behind are strict v1 registrations.
func TestSpecClient(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)

	var created jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "  Search  ", "endpoint": " HTTP://Example.COM:80/mcp?tenant=one "}), &created)
	if created.State != jsapi.StatePaused || created.DisplayName != "Search" || created.Endpoint != "http://example.com/mcp?tenant=one" || created.ProtocolVersion != "auto" {
		t.Fatalf("created = %+v", created)
	}
	var updated jsapi.McpServer
	c.must(jsapi.CmdUpdateServer, dto(map[string]any{
		"registrationId": created.ID, "displayName": "Search 2", "endpoint": "https://user:pass@example.com/mcp",
		"headers": map[string]string{"X-Api-Key": " secret ", "Accept-Language": "en"}, "protocolVersion": "2025-06-18",
	}), &updated)
	c.must(jsapi.CmdSetServerState, dto(map[string]any{"registrationId": created.ID, "state": "active"}), nil)
	c.must(jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": created.ID, "nativeName": "search", "permission": "allow"}), nil)
	c.must(jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": created.ID, "nativeName": "fetch", "permission": "ask"}), nil)
	c.must(jsapi.CmdSetToolDescriptionOverride, dto(map[string]any{"registrationId": created.ID, "nativeName": "search",
		"override": map[string]any{"description": " Find things ", "properties": map[string]string{"q": "query"}}}), nil)

	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != 1 || len(list.StorageIssues) != 0 {
		t.Fatalf("list = %+v", list)
	}
	got := list.Servers[0]
	if got.State != "active" || got.ToolPermissions["search"] != "allow" || got.ToolPermissions["fetch"] != "ask" ||
		*got.ToolDescriptionOverrides["search"].Description != " Find things " || got.Headers["X-Api-Key"] != " secret " {
		t.Fatalf("listed = %+v", got)
	}

	file, err := os.ReadFile(filepath.Join(f.root, "_tauritavern", "mcp", "registrations", created.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "schemaVersion": 1,
  "kind": "tauritavern.mcpServerRegistration",
  "id": "` + created.ID + `",
  "displayName": "Search 2",
  "endpoint": "https://user:pass@example.com/mcp",
  "headers": {
    "Accept-Language": "en",
    "X-Api-Key": " secret "
  },
  "protocolVersion": "2025-06-18",
  "state": "active",
  "toolPermissions": {
    "fetch": "ask",
    "search": "allow"
  },
  "toolDescriptionOverrides": {
    "search": {
      "description": " Find things ",
      "properties": {
        "q": "query"
      }
    }
  }
}`
	if string(file) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", file, want)
	}

	got = jsapi.McpServer{}
	c.must(jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": created.ID, "nativeName": "fetch", "permission": "off"}), &got)
	if _, ok := got.ToolPermissions["fetch"]; ok {
		t.Fatalf("off kept an entry: %+v", got.ToolPermissions)
	}
	got = jsapi.McpServer{}
	c.must(jsapi.CmdSetToolDescriptionOverride, dto(map[string]any{"registrationId": created.ID, "nativeName": "search", "override": nil}), &got)
	if len(got.ToolDescriptionOverrides) != 0 {
		t.Fatalf("null override kept: %+v", got.ToolDescriptionOverrides)
	}
	if r := c.call(jsapi.CmdRemoveServer, dto(map[string]any{"registrationId": created.ID})); !r.OK || string(r.Value) != "null" {
		t.Fatalf("remove = %s", r.raw)
	}
	c.must(jsapi.CmdListServers, map[string]any{}, &list)
	if len(list.Servers) != 0 {
		t.Fatalf("after remove: %+v", list)
	}
}

func TestResultFrameLayout(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	r := c.call(jsapi.CmdListServers, nil)
	if want := jsapi.ResultHead + "1" + jsapi.ResultOK + `{"servers":[],"storageIssues":[]}}`; string(r.raw) != want {
		t.Fatalf("frame %s, want %s", r.raw, want)
	}
	r = c.call("nope", nil)
	if !strings.HasPrefix(string(r.raw), jsapi.ResultHead+"2"+jsapi.ResultError) {
		t.Fatalf("error frame %s", r.raw)
	}
}

func TestCommandErrors(t *testing.T) {
	const missing = "550e8400-e29b-41d4-a716-446655440000"
	f := newFixture(t, nil)
	c := f.connect(t)
	var s jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:1/mcp"}), &s)

	tests := []struct {
		name     string
		command  string
		args     any
		kind     string
		code     string
		contains string
	}{
		{"unknown command", "rename_mcp_server", dto(map[string]any{}), "BadRequest", jsapi.CodeCommandUnknown, "rename_mcp_server"},
		{"unknown dto field", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://a/", "color": "red"}), "BadRequest", jsapi.CodeArgsInvalid, "color"},
		{"field in wrong case", jsapi.CmdCreateServer, dto(map[string]any{"DisplayName": "x", "endpoint": "http://a/"}), "BadRequest", jsapi.CodeArgsInvalid, "DisplayName"},
		{"unknown args member", jsapi.CmdCreateServer, map[string]any{"dto": map[string]any{}, "extra": 1}, "BadRequest", jsapi.CodeArgsInvalid, "extra"},
		{"missing dto", jsapi.CmdCreateServer, nil, "BadRequest", jsapi.CodeArgsInvalid, "dto"},
		{"dto not an object", jsapi.CmdCreateServer, dto("x"), "BadRequest", jsapi.CodeArgsInvalid, "object"},
		{"wrong type", jsapi.CmdCreateServer, dto(map[string]any{"displayName": 5, "endpoint": "http://a/"}), "BadRequest", jsapi.CodeArgsInvalid, "displayName"},
		{"list with args", jsapi.CmdListServers, map[string]any{"dto": map[string]any{}}, "BadRequest", jsapi.CodeArgsInvalid, "dto"},
		{"relative endpoint", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "mcp"}), "BadRequest", "mcp.endpoint_invalid", ""},
		{"file endpoint", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "file:///tmp/mcp"}), "BadRequest", "mcp.endpoint_absolute_required", ""},
		{"fragment", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://a/#"}), "BadRequest", "mcp.endpoint_fragment_forbidden", ""},
		{"ftp", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "ftp://a/"}), "BadRequest", "mcp.endpoint_scheme_invalid", ""},
		{"blank name", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "  ", "endpoint": "http://a/"}), "BadRequest", "mcp.display_name_empty", ""},
		{"bad protocol", jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://a/", "protocolVersion": "2024-11-05"}), "BadRequest", "", "2024-11-05"},
		{"unknown id", jsapi.CmdSetServerState, dto(map[string]any{"registrationId": missing, "state": "active"}), "NotFound", service.CodeRegistrationNotFound, missing},
		{"noncanonical id", jsapi.CmdRemoveServer, dto(map[string]any{"registrationId": strings.ToUpper(s.ID)}), "BadRequest", "mcp.registration_id_noncanonical", ""},
		{"invalid id", jsapi.CmdRemoveServer, dto(map[string]any{"registrationId": "nope"}), "BadRequest", "mcp.registration_id_invalid", ""},
		{"bad state", jsapi.CmdSetServerState, dto(map[string]any{"registrationId": s.ID, "state": "on"}), "BadRequest", "", "on"},
		{"update without headers", jsapi.CmdUpdateServer, dto(map[string]any{"registrationId": s.ID, "displayName": "x", "endpoint": "http://a/", "protocolVersion": "auto"}), "BadRequest", jsapi.CodeArgsInvalid, "headers"},
		{"empty override", jsapi.CmdSetToolDescriptionOverride, dto(map[string]any{"registrationId": s.ID, "nativeName": "t", "override": map[string]any{"properties": map[string]string{}}}), "BadRequest", "mcp.description_override_empty", "`t`"},
		{"override unknown field", jsapi.CmdSetToolDescriptionOverride, dto(map[string]any{"registrationId": s.ID, "nativeName": "t", "override": map[string]any{"title": "x", "properties": map[string]string{}}}), "BadRequest", jsapi.CodeArgsInvalid, "title"},
		{"empty native name", jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": s.ID, "nativeName": "", "permission": "ask"}), "BadRequest", "", ""},
		{"bad permission", jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": s.ID, "nativeName": "t", "permission": "deny"}), "BadRequest", "", "deny"},
		{"paused discover", jsapi.CmdDiscoverTools, dto(map[string]any{"registrationId": s.ID}), "Conflict", service.CodeServerPaused, s.ID},
		{"paused refresh", jsapi.CmdRefreshTools, dto(s.ID), "BadRequest", jsapi.CodeArgsInvalid, "object"},
		{"legacy call without an id", jsapi.CmdStartLegacyToolCall, dto(map[string]any{"executionCallId": ""}), "BadRequest", jsapi.CodeArgsInvalid, "call id"},
		{"legacy list, unknown member", jsapi.CmdListLegacyTools, dto(map[string]any{"toolSet": "x"}), "BadRequest", jsapi.CodeArgsInvalid, "toolSet"},
		{"legacy list, unknown set", jsapi.CmdListLegacyTools, dto(map[string]any{"toolSetId": missing}), "NotFound", service.CodeToolSetNotFound, missing},
		{"legacy list, bad set id", jsapi.CmdListLegacyTools, dto(map[string]any{"toolSetId": 5}), "BadRequest", jsapi.CodeArgsInvalid, "toolSetId"},
		{"tool search, empty query", jsapi.CmdSearchTools, dto(map[string]any{"query": " "}), "BadRequest", service.CodeToolSearchQueryInvalid, "query"},
		{"tool search, limit 0", jsapi.CmdSearchTools, dto(map[string]any{"query": "x", "limit": 0}), "BadRequest", service.CodeToolSearchLimitInvalid, "limit"},
		{"tool search, unknown set", jsapi.CmdSearchTools, dto(map[string]any{"query": "x", "toolSetId": missing}), "NotFound", service.CodeToolSetNotFound, missing},
		{"tool set list with args", jsapi.CmdListToolSets, map[string]any{"dto": map[string]any{}}, "BadRequest", jsapi.CodeArgsInvalid, "dto"},
		{"tool set without tools", jsapi.CmdSaveToolSet, dto(map[string]any{"name": "x"}), "BadRequest", jsapi.CodeArgsInvalid, "tools"},
		{"tool set, bad selector", jsapi.CmdSaveToolSet, dto(map[string]any{"name": "x", "tools": []string{"mcp/" + s.ID}}), "BadRequest", "tool.id_invalid", ""},
		{"tool set, limit 0", jsapi.CmdSaveToolSet, dto(map[string]any{"name": "x", "tools": []string{}, "resultInlineCharLimit": 0}), "BadRequest", "mcp.tool_set_result_inline_char_limit_invalid", ""},
		{"tool set, limit 1.5", jsapi.CmdSaveToolSet, dto(map[string]any{"name": "x", "tools": []string{}, "resultInlineCharLimit": 1.5}), "BadRequest", jsapi.CodeArgsInvalid, "resultInlineCharLimit"},
		{"tool set, unknown member", jsapi.CmdSaveToolSet, dto(map[string]any{"name": "x", "tools": []string{}, "color": "red"}), "BadRequest", jsapi.CodeArgsInvalid, "color"},
		{"remove unknown tool set", jsapi.CmdRemoveToolSet, dto(map[string]any{"id": missing}), "NotFound", service.CodeToolSetNotFound, ""},
		{"read without a result store", jsapi.CmdReadToolResult, dto(map[string]any{"resultId": missing}), "Unavailable", service.CodeResultsUnavailable, ""},
		{"read, unknown member", jsapi.CmdReadToolResult, dto(map[string]any{"resultId": missing, "from": 1}), "BadRequest", jsapi.CodeArgsInvalid, "from"},
		{"readable, unknown member", jsapi.CmdCallLegacyTool, dto(map[string]any{"executionCallId": "x", "toolId": "t", "argumentsJson": "{}", "readable": map[string]any{"limit": 1}}), "BadRequest", jsapi.CodeArgsInvalid, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			r := c.call(tt.command, tt.args)
			if r.OK {
				t.Fatalf("ok: %s", r.Value)
			}
			e := r.Error
			if e.Kind != tt.kind || (tt.code != "" && e.Code != tt.code) || !strings.Contains(e.Message, tt.contains) {
				t.Fatalf("error %+v, want kind %s code %s containing %q", e, tt.kind, tt.code, tt.contains)
			}
			if e.Code != "" && !strings.HasPrefix(e.Message, e.Code+": ") {
				t.Fatalf("message %q does not start with its code", e.Message)
			}
		})
	}
	// Nothing above changed the registration.
	c.t = t
	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != 1 || list.Servers[0].State != "paused" || len(list.Servers[0].ToolPermissions) != 0 {
		t.Fatalf("list after errors: %+v", list)
	}
}

// A change one page makes is told to every page on the backend (another
// tab's Manager lists again), as the event its own socket gets too.
func TestRegistrationChangesAreToldToEverySocket(t *testing.T) {
	f := newFixture(t, nil)
	a, b := f.connect(t), f.connect(t)
	var srv jsapi.McpServer
	a.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "Shared", "endpoint": "http://127.0.0.1:9/mcp"}), &srv)
	a.must(jsapi.CmdSetToolPermission, dto(map[string]any{"registrationId": srv.ID, "nativeName": "a", "permission": "allow"}), nil)
	for name, c := range map[string]*client{"the changing socket": a, "another socket": b} {
		for range 2 {
			ev := c.event()
			if ch, ok := ev.Data.(jsapi.McpServerChange); ev.Event != jsapi.EventServersChanged || !ok || ch.RegistrationID != srv.ID || !slices.Equal(ch.Lists, []string{"registration"}) {
				t.Fatalf("%s: event %+v", name, ev)
			}
		}
	}
}

func TestConcurrentCreates(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	const n = 50
	for i := range n {
		c.send(uint64(i+1), jsapi.CmdCreateServer, dto(map[string]any{"displayName": fmt.Sprint("s", i), "endpoint": "http://127.0.0.1:9/mcp"}))
	}
	seen := map[uint64]bool{}
	for range n {
		r := c.read()
		if !r.OK || seen[r.ID] {
			t.Fatalf("result %s", r.raw)
		}
		seen[r.ID] = true
	}
	entries, err := os.ReadDir(filepath.Join(f.root, "_tauritavern", "mcp", "registrations"))
	if err != nil || len(entries) != n {
		t.Fatalf("%d files (%v), want %d", len(entries), err, n)
	}
	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != n {
		t.Fatalf("listed %d", len(list.Servers))
	}
}

// newService is the real service over files in root; its gateway reaches
// real servers (none are registered by these tests).
func newService(root string) *service.Service {
	store := storage.Open(root)
	return service.New(service.Config{Registrations: store, Catalogs: store, Gateway: gateway.New(gateway.Config{}), ToolSets: store, Capabilities: store})
}

// Every command of the contract is served.
func TestEveryCommandIsWired(t *testing.T) {
	c := NewCommands(newService(t.TempDir()), nil)
	for _, name := range jsapi.Commands {
		if _, ok := c.table[name]; !ok {
			t.Errorf("%s is not wired", name)
		}
	}
	if len(c.table) != len(jsapi.Commands) {
		t.Errorf("%d handlers for %d commands", len(c.table), len(jsapi.Commands))
	}
}

// The tool set commands over the socket, and list_legacy_mcp_tools both
// ways: upstream's call without a dto, and ttmcp's {dto: {toolSetId}}.
func TestToolSetCommands(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	var s jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:1/mcp"}), &s)
	var set jsapi.McpToolSet
	c.must(jsapi.CmdSaveToolSet, dto(map[string]any{"name": "Coding", "tools": []string{"mcp/" + s.ID + ":*"}}), &set)
	if set.ID == "" || set.ResultInlineCharLimit != 50_000 || !set.ReaderTool || set.DescriptionOverrides == nil {
		t.Fatalf("saved %+v", set)
	}
	var sets jsapi.McpToolSetList
	c.must(jsapi.CmdListToolSets, nil, &sets)
	if len(sets.ToolSets) != 1 || sets.ToolSets[0].ID != set.ID || sets.StorageIssues == nil {
		t.Fatalf("listed %+v", sets)
	}
	for _, args := range []any{nil, map[string]any{}, dto(map[string]any{})} {
		var l jsapi.LegacyMcpToolList
		c.must(jsapi.CmdListLegacyTools, args, &l)
		if len(l.Tools) != 0 || len(l.Diagnostics) != 0 {
			t.Fatalf("%v: %+v", args, l)
		}
	}
	var l jsapi.LegacyMcpToolList
	c.must(jsapi.CmdListLegacyTools, dto(map[string]any{"toolSetId": set.ID}), &l)
	if len(l.Tools) != 0 || len(l.Diagnostics) != 1 || l.Diagnostics[0].Code != service.CodeServerPaused || *l.Diagnostics[0].ToolID != "mcp/"+s.ID+":*" {
		t.Fatalf("with the set: %+v", l)
	}
	if r := c.call(jsapi.CmdRemoveToolSet, dto(map[string]any{"id": set.ID})); !r.OK || string(r.Value) != "null" {
		t.Fatalf("remove = %s", r.raw)
	}
}
