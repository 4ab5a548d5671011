package server

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/jsapi"
)

// withBlock adds a command "block" to the real commands of f: it waits
// until release is closed and answers "released". It stands for any request
// in flight on a socket while another one goes wrong.
func withBlock(started chan<- struct{}, release <-chan struct{}) func(*Config) {
	return func(c *Config) {
		c.Commands.table["block"] = func(ctx context.Context, _ jsontext.Value) (any, error) {
			started <- struct{}{}
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}

// raw sends frame as one text message, byte for byte.
func (c *client) raw(frame string) {
	c.t.Helper()
	c.write([]byte(frame))
}

const validEndpoint = `"endpoint":"http://127.0.0.1:9/mcp"`

// A request whose args cannot be decoded gets a BadRequest result of its
// own, naming where and why; the socket stays open and the request in
// flight beside it still gets its answer.
func TestDecodingFailureIsThatRequestsError(t *testing.T) {
	long := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	tests := []struct {
		name  string
		frame string // invoke frame with id 2
		want  []string
	}{
		{"lone high surrogate", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"Search \ud83d",` + validEndpoint + `}}}`,
			[]string{"/dto/displayName", "lone UTF-16 surrogate", `\ud83d`}},
		{"lone high surrogate at the end", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{` + validEndpoint + `,"displayName":"\ud83d"}}}`,
			[]string{"/dto/displayName", "lone UTF-16 surrogate", `\ud83d`}},
		{"lone low surrogate", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"x\udc00y",` + validEndpoint + `}}}`,
			[]string{"/dto/displayName", "lone UTF-16 surrogate", `\udc00`}},
		{"high surrogate then a letter", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"\ud83d\u0041",` + validEndpoint + `}}}`,
			[]string{"/dto/displayName", "lone UTF-16 surrogate", `\ud83d`}},
		{"surrogate in a header name", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"x",` + validEndpoint + `,"headers":{"X-\udfff":"v"}}}}`,
			[]string{"/dto/headers", "lone UTF-16 surrogate", `\udfff`}},
		{"duplicate dto member", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"a","displayName":"b",` + validEndpoint + `}}}`,
			[]string{"/dto", `duplicate member "displayName"`}},
		{"duplicate header", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"a",` + validEndpoint + `,"headers":{"X-A":"1","X-A":"2"}}}}`,
			[]string{"/dto/headers", `duplicate member "X-A"`}},
		{"duplicate dto", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{},"dto":{}}}`,
			[]string{`duplicate member "dto"`}},
		{"invalid UTF-8", "{\"type\":\"invoke\",\"id\":2,\"command\":\"create_mcp_server\",\"args\":{\"dto\":{\"displayName\":\"a\xffb\"," + validEndpoint + "}}}",
			[]string{"/dto/displayName", "invalid UTF-8"}},
		{"invalid UTF-8 in a member name", "{\"type\":\"invoke\",\"id\":2,\"command\":\"create_mcp_server\",\"args\":{\"dto\":{\"a\xffb\":1}}}",
			[]string{"/dto", "invalid UTF-8"}},
		{"cut short after a name that is not UTF-8", "{\"type\":\"invoke\",\"id\":2,\"command\":\"create_mcp_server\",\"args\":{\"dto\":{\"a\xffb\":",
			[]string{"/dto/a\ufffdb", "unexpected end of the frame"}},
		{"a long pointer cut between characters", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"headers":{"` + strings.Repeat("é", 300) + `":5}}}}`,
			[]string{"/dto/headers/éé", "…éé", "expected a string, got a number"}},
		{"bad escape", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"a\qb",` + validEndpoint + `}}}`,
			[]string{"/dto/displayName", `\q`}},
		{"args cut short", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"a"`,
			[]string{"/dto", "unexpected end of the frame"}},
		{"args deeper than allowed", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":` + long + `}}}`,
			[]string{"/dto/displayName", "deep"}},
		{"args an array", `{"type":"invoke","id":2,"command":"create_mcp_server","args":[1]}`,
			[]string{"args", "expected an object, got an array"}},
		{"trailing data", `{"type":"invoke","id":2,"command":"list_mcp_servers"} {}`,
			[]string{"unexpected data after the invoke frame"}},
		{"unknown frame member", `{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{}},"extra":1}`,
			[]string{`unknown member "extra"`}},
		// The id says whom to answer, so a bad command is that request's
		// error, not the socket's (issue 17).
		{"no command", `{"type":"invoke","id":2}`, []string{"no command"}},
		{"no command, with args", `{"type":"invoke","id":2,"args":{"dto":{}}}`, []string{"no command"}},
		{"cut short before the command", `{"type":"invoke","id":2,"args":{"dto":`, []string{"unexpected end of the frame"}},
		{"null command", `{"type":"invoke","id":2,"command":null}`, []string{"command is not one string"}},
		{"number command", `{"type":"invoke","id":2,"command":7}`, []string{"command is not one string"}},
		{"duplicate command", `{"type":"invoke","id":2,"command":"list_mcp_servers","command":"remove_mcp_server"}`, []string{"command is not one string"}},
		{"surrogate in the command", `{"type":"invoke","id":2,"command":"list_\ud800"}`, []string{"command is not one string"}},
	}
	started, release := make(chan struct{}, 1), make(chan struct{})
	f := newFixture(t, withBlock(started, release))
	c := f.connect(t)
	c.send(1, "block", nil)
	<-started
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.raw(tt.frame)
			r := c.read()
			if r.ID != 2 || r.OK || r.Error.Kind != jsapi.KindBadRequest || r.Error.Code != jsapi.CodeArgsInvalid {
				t.Fatalf("result %s, want a BadRequest %s for id 2", r.raw, jsapi.CodeArgsInvalid)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Error.Message, w) {
					t.Errorf("message %q does not contain %q", r.Error.Message, w)
				}
			}
			if !strings.HasPrefix(r.Error.Message, jsapi.CodeArgsInvalid+": ") {
				t.Errorf("message %q does not start with its code", r.Error.Message)
			}
		})
	}
	c.t = t
	close(release)
	if r := c.read(); r.ID != 1 || !r.OK || string(r.Value) != `"released"` {
		t.Fatalf("the request in flight got %s", r.raw)
	}
	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != 0 {
		t.Fatalf("a refused request left a registration: %+v", list)
	}
}

// Only a frame whose envelope cannot be read closes the socket (1008, with
// a reason); what was in flight on it is cancelled.
func TestUnreadableEnvelopeClosesSocket(t *testing.T) {
	tests := []struct{ name, frame string }{
		{"not JSON", `hello`},
		{"an array", `[1]`},
		{"no id", `{"type":"invoke","command":"list_mcp_servers"}`},
		{"null type", `{"type":null,"id":2,"command":"list_mcp_servers"}`},
		{"string id", `{"type":"invoke","id":"2","command":"list_mcp_servers"}`},
		{"negative id", `{"type":"invoke","id":-2,"command":"list_mcp_servers"}`},
		{"fractional id", `{"type":"invoke","id":2.5,"command":"list_mcp_servers"}`},
		{"duplicate id", `{"type":"invoke","id":2,"id":3,"command":"list_mcp_servers"}`},
		{"duplicate type", `{"type":"invoke","type":"invoke","id":2,"command":"list_mcp_servers"}`},
		{"a second hello", `{"type":"hello","token":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			c := f.connect(t)
			c.raw(tt.frame)
			code, reason := closeStatus(t, c.conn)
			if code != jsapi.ClosePolicyViolation || !strings.Contains(reason, "invoke frame") {
				t.Fatalf("close %d %q, want 1008 naming the invoke frame", code, reason)
			}
		})
	}
}

// A binary frame is not part of the protocol: 1003 (unsupported data).
func TestBinaryFrameCloses1003(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	if err := c.conn.Write(context.Background(), websocket.MessageBinary, []byte(`{"type":"invoke","id":1,"command":"list_mcp_servers"}`)); err != nil {
		t.Fatal(err)
	}
	code, reason := closeStatus(t, c.conn)
	if code != jsapi.CloseUnsupportedData || !strings.Contains(reason, "text") {
		t.Fatalf("close %d %q, want 1003 asking for text frames", code, reason)
	}
}

// Every decoding error says what was expected and what came, never a Go
// type or "<nil>"; a null where the dto has no Option is a BadRequest, not
// an empty string.
func TestDecodingMessagesAreClear(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	var s jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:9/mcp"}), &s)
	tests := []struct {
		name    string
		command string
		args    string
		want    string
	}{
		{"number for a string", jsapi.CmdCreateServer, `{"dto":{"displayName":5,` + validEndpoint + `}}`, "/dto/displayName: expected a string, got a number"},
		{"object for a string", jsapi.CmdCreateServer, `{"dto":{"displayName":{},` + validEndpoint + `}}`, "/dto/displayName: expected a string, got an object"},
		{"null endpoint", jsapi.CmdCreateServer, `{"dto":{"displayName":"x","endpoint":null}}`, "/dto/endpoint: expected a string, got null"},
		{"null display name", jsapi.CmdCreateServer, `{"dto":{"displayName":null,` + validEndpoint + `}}`, "/dto/displayName: expected a string, got null"},
		{"null header value", jsapi.CmdCreateServer, `{"dto":{"displayName":"x",` + validEndpoint + `,"headers":{"a":null}}}`, "/dto/headers/a: expected a string, got null"},
		{"number header value", jsapi.CmdCreateServer, `{"dto":{"displayName":"x",` + validEndpoint + `,"headers":{"a":1}}}`, "/dto/headers/a: expected a string, got a number"},
		{"array headers", jsapi.CmdCreateServer, `{"dto":{"displayName":"x",` + validEndpoint + `,"headers":[]}}`, "/dto/headers: expected an object, got an array"},
		{"null update headers", jsapi.CmdUpdateServer, `{"dto":{"registrationId":"` + s.ID + `","displayName":"x",` + validEndpoint + `,"headers":null,"protocolVersion":"auto"}}`, "/dto/headers: expected an object, got null"},
		{"null dto", jsapi.CmdCreateServer, `{"dto":null}`, "/dto: expected an object, got null"},
		{"bool dto", jsapi.CmdCreateServer, `{"dto":true}`, "/dto: expected an object, got a boolean"},
		{"null state", jsapi.CmdSetServerState, `{"dto":{"registrationId":"` + s.ID + `","state":null}}`, "/dto/state: expected a string, got null"},
		{"null properties", jsapi.CmdSetToolDescriptionOverride, `{"dto":{"registrationId":"` + s.ID + `","nativeName":"t","override":{"description":"d","properties":null}}}`, "/dto/override/properties: expected an object, got null"},
		{"unknown field", jsapi.CmdCreateServer, `{"dto":{"displayName":"x",` + validEndpoint + `,"color":"red"}}`, `/dto: unknown field "color"`},
		// serde requires every member that is not an Option or a default.
		{"missing display name", jsapi.CmdCreateServer, `{"dto":{` + validEndpoint + `}}`, `/dto: missing field "displayName"`},
		{"missing update headers", jsapi.CmdUpdateServer, `{"dto":{"registrationId":"` + s.ID + `","displayName":"x",` + validEndpoint + `,"protocolVersion":"auto"}}`, `/dto: missing field "headers"`},
		{"missing test arguments", jsapi.CmdTestToolCall, `{"dto":{"callId":"c","registrationId":"` + s.ID + `","nativeName":"t"}}`, `/dto: missing field "argumentsJson"`},
		{"missing legacy arguments", jsapi.CmdCallLegacyTool, `{"dto":{"executionCallId":"c","toolId":"mcp/` + s.ID + `:t"}}`, `/dto: missing field "argumentsJson"`},
		{"missing permission", jsapi.CmdSetToolPermission, `{"dto":{"registrationId":"` + s.ID + `","nativeName":"t"}}`, `/dto: missing field "permission"`},
		{"missing registration id", jsapi.CmdSetServerState, `{"dto":{"state":"active"}}`, `/dto: missing field "registrationId"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.mu.Lock()
			c.next++
			id := c.next
			c.mu.Unlock()
			c.raw(`{"type":"invoke","id":` + strconv.FormatUint(id, 10) + `,"command":"` + tt.command + `","args":` + tt.args + `}`)
			r := c.read()
			if r.OK || r.Error.Kind != jsapi.KindBadRequest || r.Error.Code != jsapi.CodeArgsInvalid {
				t.Fatalf("result %s, want a BadRequest %s", r.raw, jsapi.CodeArgsInvalid)
			}
			if want := jsapi.CodeArgsInvalid + ": " + tt.want; r.Error.Message != want {
				t.Fatalf("message %q, want %q", r.Error.Message, want)
			}
		})
	}
	c.t = t
	var list jsapi.McpServerList
	c.must(jsapi.CmdListServers, nil, &list)
	if len(list.Servers) != 1 || list.Servers[0].DisplayName != "x" || list.Servers[0].State != jsapi.StatePaused {
		t.Fatalf("a refused request changed the registration: %+v", list)
	}
}

// An override whose description is "" keeps it on the wire as in the file
// (found by the page fuzz: the result used to leave it out, so the page saw
// another override than the one stored).
func TestEmptyOverrideDescriptionIsAnswered(t *testing.T) {
	f := newFixture(t, nil)
	c := f.connect(t)
	var s jsapi.McpServer
	c.must(jsapi.CmdCreateServer, dto(map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:9/mcp"}), &s)
	r := c.call(jsapi.CmdSetToolDescriptionOverride, dto(map[string]any{"registrationId": s.ID, "nativeName": "t",
		"override": map[string]any{"description": "", "properties": map[string]string{"q": "query"}}}))
	if !r.OK || !strings.Contains(string(r.Value), `"t":{"description":"","properties":{"q":"query"}}`) {
		t.Fatalf("result %s; want the override with its empty description", r.raw)
	}
	list := c.call(jsapi.CmdListServers, nil)
	if !strings.Contains(string(list.Value), `"t":{"description":"","properties":{"q":"query"}}`) {
		t.Fatalf("list %s; want the override with its empty description", list.raw)
	}
}
