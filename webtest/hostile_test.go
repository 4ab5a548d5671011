package webtest

// Hostile input from a real page (issue 9): a request the backend cannot
// decode is that request's failure, never the socket's.

import (
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

// A string cut inside an emoji (JSON.stringify writes the lone half as
// \ud83d) is refused with a BadRequest naming the field; the bridge stays
// open and the requests beside it succeed.
func TestLoneSurrogateFromThePage(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type result struct {
		Frame   string
		Cut     *jsError
		Whole   jsapi.McpServer
		List    jsapi.McpServerList
		States  []string
		Bridge  string
		Invokes int
	}
	r := evalJS[result](p, `
		tt.states.length = 0;
		const cut = 'Search 😀'.slice(0, -1);
		const [e, whole, list] = await Promise.all([
			tt.err(tt.mcp.servers.create({ displayName: cut, endpoint: 'http://127.0.0.1:9/mcp' })),
			tt.mcp.servers.create({ displayName: 'Search 😀', endpoint: 'http://127.0.0.1:9/mcp' }),
			tt.mcp.servers.list(),
		]);
		return { frame: JSON.stringify({ displayName: cut }), cut: e, whole, list, states: tt.states.slice(), bridge: tt.state() };`)
	if !strings.Contains(r.Frame, `\ud83d`) {
		t.Fatalf("JSON.stringify wrote %s; the test needs the escape", r.Frame)
	}
	wantRejection(t, "create with a lone surrogate", r.Cut, jsapi.CodeArgsInvalid, jsapi.KindBadRequest)
	if r.Cut != nil && (!strings.Contains(r.Cut.Message, "/dto/displayName") || !strings.Contains(r.Cut.Message, `lone UTF-16 surrogate \ud83d`)) {
		t.Errorf("message %q; want it to name /dto/displayName and the lone surrogate", r.Cut.Message)
	}
	if r.Whole.DisplayName != "Search 😀" {
		t.Errorf("the create beside it returned %+v", r.Whole)
	}
	if len(r.States) != 0 || r.Bridge != "open" {
		t.Errorf("bridge state events %v, now %q; want none, still open", r.States, r.Bridge)
	}
	files := b.regFiles()
	if len(files) != 1 || files[r.Whole.ID+".json"] == "" {
		t.Errorf("registration files %v; want only %s", files, r.Whole.ID)
	}
}

// Frames no JavaScript object produces (a repeated member, a repeated
// header) sent on a raw socket from the page: each gets its own error
// result, and the socket answers the next request.
func TestMalformedArgsFromARawPageSocket(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type answer struct {
		ID      int
		OK      bool
		Code    string
		Message string
	}
	type result struct {
		Answers []answer
		Closed  string
	}
	frames := []string{
		`{"type":"invoke","id":1,"command":"create_mcp_server","args":{"dto":{"displayName":"a","displayName":"b","endpoint":"http://127.0.0.1:9/mcp"}}}`,
		`{"type":"invoke","id":2,"command":"create_mcp_server","args":{"dto":{"displayName":"a","endpoint":"http://127.0.0.1:9/mcp","headers":{"X-A":"1","X-A":"2"}}}}`,
		`{"type":"invoke","id":3,"command":"create_mcp_server","args":{"dto":{"displayName":"a","endpoint":null}}}`,
		`{"type":"invoke","id":4,"command":"create_mcp_server","args":{"dto":{"displayName":"\udc00","endpoint":"http://127.0.0.1:9/mcp"}}}`,
		`{"type":"invoke","id":5,"command":"list_mcp_servers","args":{}}`,
	}
	r := evalJS[result](p, `
		const frames = %s;
		const s = await (await fetch('/jsapi/session', { cache: 'no-store' })).json();
		const ws = new WebSocket(s.ws);
		const answers = [];
		let closed = '';
		await new Promise((resolve) => {
			ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', token: s.token }));
			ws.onmessage = (e) => {
				const m = JSON.parse(e.data);
				if (m.type === 'welcome') { for (const f of frames) ws.send(f); return; }
				answers.push({ id: m.id, ok: m.ok, code: m.error?.code ?? '', message: m.error?.message ?? '' });
				if (answers.length === frames.length) resolve();
			};
			ws.onclose = (e) => { closed = e.code + ' ' + e.reason; resolve(); };
		});
		ws.close();
		answers.sort((a, b) => a.id - b.id);
		return { answers, closed };`, frames)
	if r.Closed != "" || len(r.Answers) != len(frames) {
		t.Fatalf("answers %+v, socket closed %q; want %d answers on an open socket", r.Answers, r.Closed, len(frames))
	}
	wants := []string{`/dto: duplicate member "displayName"`, `/dto/headers: duplicate member "X-A"`, "/dto/endpoint: expected a string, got null", `/dto/displayName: lone UTF-16 surrogate \udc00`}
	for i, w := range wants {
		a := r.Answers[i]
		if a.OK || a.Code != jsapi.CodeArgsInvalid || !strings.Contains(a.Message, w) {
			t.Errorf("answer %d: %+v; want %s containing %q", i+1, a, jsapi.CodeArgsInvalid, w)
		}
	}
	if !r.Answers[4].OK {
		t.Errorf("list after the refused requests: %+v", r.Answers[4])
	}
	if files := b.regFiles(); len(files) != 0 {
		t.Errorf("refused requests wrote %v", files)
	}
}
