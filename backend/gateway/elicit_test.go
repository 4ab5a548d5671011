package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// askingServer is a go-sdk server whose tool "greet" asks the user's name
// (a form) and "visit" asks to open a page (URL mode). One handler serves
// both eras: it answers input_required (2026-07-28), and for a 2025 client
// go-sdk puts the question as elicitation/create during the call and runs
// the handler again with the answer. runs counts the runs that finished
// (an answer reached the tool); got keeps what the server received.
type askingServer struct {
	runs atomic.Int32
	mu   sync.Mutex
	got  []string // each answer's action and content
}

// nameSchema lists its properties in an order a Go map would not keep.
const nameSchema = `{"type":"object","properties":{"zeta":{"type":"string","title":"Last"},"name":{"type":"string","minLength":2}},"required":["name"]}`

func (a *askingServer) handler(t *testing.T, stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	ask := func(key string, params *mcp.ElicitParams, done func(*mcp.ElicitResult) string) mcp.ToolHandler {
		return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			resp, ok := req.Params.InputResponses[key].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: params}}, nil
			}
			content, _ := json.Marshal(resp.Content)
			a.mu.Lock()
			a.got = append(a.got, resp.Action+" "+string(content))
			a.mu.Unlock()
			a.runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: done(resp)}}}, nil
		}
	}
	s.AddTool(objectTool("greet"), ask("who", &mcp.ElicitParams{Mode: "form", Message: "Your name?", RequestedSchema: json.RawMessage(nameSchema)},
		func(r *mcp.ElicitResult) string {
			if r.Action != "accept" {
				return "no greeting: the user chose " + r.Action
			}
			return fmt.Sprintf("hello %v", r.Content["name"])
		}))
	s.AddTool(objectTool("visit"), ask("page", &mcp.ElicitParams{Mode: "url", Message: "Sign the form", URL: "https://pay.example/ok", ElicitationID: "e1"},
		func(r *mcp.ElicitResult) string { return "visited: " + r.Action }))
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// elicitEra is one way a server asks its user.
type elicitEra struct {
	name      string
	stateless bool
	protocol  domain.Protocol
	rounds    int // requests of a call that asks once
}

// eachEra runs test once per era, each with an askingServer of its own
// behind a gateway with a 5 s wait: how most of this file's tests begin.
func eachEra(t *testing.T, test func(t *testing.T, era elicitEra, srv *askingServer, rec *recorder, g *Gateway, r domain.Registration)) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			srv := &askingServer{}
			ts, rec := serve(t, srv.handler(t, era.stateless))
			test(t, era, srv, rec, callGateway(t, 5*time.Second), registration(t, ts.URL, era.protocol, nil))
		})
	}
}

// eras are the two ways a server asks: 2025 (elicitation/create during the
// call, on a stateful session) and 2026 (input_required rounds).
var eras = []elicitEra{
	{"2025", false, domain.Protocol20251125, 1},
	{"2026", true, domain.Protocol20260728, 2},
}

// answering returns an ElicitFunc that answers with the given responses in
// turn and records what it was asked.
func answering(asked *[]domain.ElicitRequest, answers ...domain.ElicitResponse) domain.ElicitFunc {
	var mu sync.Mutex
	return func(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		*asked = append(*asked, req)
		a := answers[0]
		if len(answers) > 1 {
			answers = answers[1:]
		}
		return a, nil
	}
}

func accept(content string) domain.ElicitResponse {
	return domain.ElicitResponse{Action: domain.ElicitAccept, Content: json.RawMessage(content)}
}

// A form the server asks is put to the call's asker as the server wrote
// it (its schema's property order kept); an answer that does not fit the
// schema is asked again with the reason and never reaches the server; the
// server's answer uses the value; one user action is one call, its rounds
// and answers recorded.
func TestElicitationFormBothEras(t *testing.T) {
	eachEra(t, func(t *testing.T, era elicitEra, srv *askingServer, rec *recorder, g *Gateway, r domain.Registration) {
		var asked []domain.ElicitRequest
		out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`),
			Elicit: answering(&asked, accept(`{"name":5}`), accept(`{"name":"octo","zeta":"cat"}`))})
		if got := callText(t, out); got != "hello octo" {
			t.Fatalf("result %q", got)
		}
		if len(asked) != 2 || asked[0].Mode != "form" || asked[0].Message != "Your name?" || asked[0].Error != "" ||
			!strings.Contains(asked[1].Error, "name") {
			t.Fatalf("asked %+v", asked)
		}
		if s := string(asked[0].RequestedSchema); strings.Index(s, "zeta") > strings.Index(s, `"name"`) {
			t.Fatalf("the form's properties were reordered: %s", s)
		}
		if runs := srv.runs.Load(); runs != 1 || len(srv.got) != 1 || srv.got[0] != `accept {"name":"octo","zeta":"cat"}` {
			t.Fatalf("the server ran %d times and received %q", runs, srv.got)
		}
		if out.Rounds != era.rounds || len(out.Elicitations) != 1 || out.Elicitations[0] != (domain.ElicitRecord{Mode: "form", Action: "accept"}) {
			t.Fatalf("rounds %d, elicitations %+v", out.Rounds, out.Elicitations)
		}
		if calls := rec.count("tools/call"); calls != era.rounds {
			t.Fatalf("%d tools/call requests for one call", calls)
		}
	})
}

// Decline and cancel go to the server as the user's choice, with no
// content; URL mode asks with the URL and goes on once the user agreed.
func TestElicitationDeclineCancelURL(t *testing.T) {
	eachEra(t, func(t *testing.T, era elicitEra, srv *askingServer, rec *recorder, g *Gateway, r domain.Registration) {
		for _, action := range []string{"decline", "cancel"} {
			var asked []domain.ElicitRequest
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`),
				Elicit: answering(&asked, domain.ElicitResponse{Action: action, Content: json.RawMessage(`{"name":"leak"}`)})})
			if got := callText(t, out); got != "no greeting: the user chose "+action {
				t.Fatalf("%s: result %q", action, got)
			}
		}
		var asked []domain.ElicitRequest
		out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "visit", Arguments: json.RawMessage(`{}`),
			Elicit: answering(&asked, domain.ElicitResponse{Action: "accept"})})
		if got := callText(t, out); got != "visited: accept" || len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != "https://pay.example/ok" {
			t.Fatalf("url mode: %q, asked %+v", got, asked)
		}
		for _, got := range srv.got {
			if strings.Contains(got, "leak") {
				t.Fatalf("content the user did not accept reached the server: %q", srv.got)
			}
		}
	})
}

// A call whose page has no handler advertises no elicitation: the server
// cannot ask (2025: go-sdk refuses its question, the tool fails; 2026: an
// input_required it should not have sent is not continued).
func TestNoHandlerNoElicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			srv := &askingServer{}
			ts, rec := serve(t, srv.handler(t, era.stateless))
			g := callGateway(t, 5*time.Second)
			r := registration(t, ts.URL, era.protocol, nil)
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`)})
			if out.Outcome != domain.OutcomeKnownResponse || srv.runs.Load() != 0 || rec.count("tools/call") != 1 || out.Rounds != 0 {
				t.Fatalf("outcome %+v, %d runs, %d calls", out, srv.runs.Load(), rec.count("tools/call"))
			}
		})
	}
	// What a call without a handler advertises: nothing (2026, in the
	// request's _meta).
	fake := &mrtrFake{times: 1}
	ts, _ := serve(t, fake)
	out := callGateway(t, 5*time.Second).Call(context.Background(), registration(t, ts.URL, domain.Protocol20260728, nil),
		domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`)})
	if out.Unsupported == nil || len(fake.bodies) != 1 || strings.Contains(fake.bodies[0], "elicitation") {
		t.Fatalf("outcome %+v, requests %q", out, fake.bodies)
	}
}

// What a 2026 request advertises in its _meta: elicitation (form and URL)
// on the requests of a call whose page answers and on a list (made as a
// client that can ask, DECISIONS), an empty set on every other request
// (server/discover, a call that may not ask), and
// never roots or sampling, which ttmcp does not serve: a server told so
// could ask for them.
func TestAdvertisedCapabilities2026(t *testing.T) {
	srv := &askingServer{}
	h := srv.handler(t, true)
	ts, seen := capsRecorder(t, h)
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.Protocol20260728, nil)
	if _, err := g.Discover(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`)})
	var asked []domain.ElicitRequest
	out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`),
		Elicit: answering(&asked, accept(`{"name":"octo"}`))})
	if got := callText(t, out); got != "hello octo" {
		t.Fatalf("result %q", got)
	}
	const none, eliciting = `{}`, `{"elicitation":{"form":{},"url":{}}}`
	want := []string{"server/discover " + none, "tools/list " + eliciting, "tools/call " + none, "tools/call " + eliciting, "tools/call " + eliciting}
	if got := seen(); !reflect.DeepEqual(got, want) {
		t.Fatalf("advertised\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// mrtrFake is a hand-written 2026 server for what a go-sdk server will not
// do: it asks round after round (times), or for sampling, and checks that
// each retry echoes its requestState exactly (or sends none when it sent
// none). bodies keeps every tools/call it received.
type mrtrFake struct {
	state  *string // the requestState it sends; nil: none
	times  int     // rounds it asks before it answers
	method string  // what it asks, elicitation/create by default
	mu     sync.Mutex
	bodies []string
	bad    []string // what was wrong with a retry
}

func (f *mrtrFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestState   *string         `json:"requestState"`
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	json.Unmarshal(body, &m)
	w.Header().Set("Content-Type", "application/json")
	switch m.Method {
	case "server/discover":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mrtr","version":"1"}}}}`, m.ID)
	case "tools/call":
		f.mu.Lock()
		defer f.mu.Unlock()
		f.bodies = append(f.bodies, string(body))
		n := len(f.bodies)
		if n > 1 {
			switch {
			case f.state == nil && m.Params.RequestState != nil:
				f.bad = append(f.bad, "a requestState was sent back though none was given")
			case f.state != nil && (m.Params.RequestState == nil || *m.Params.RequestState != *f.state):
				f.bad = append(f.bad, fmt.Sprintf("requestState %v, want %q", m.Params.RequestState, *f.state))
			}
			if len(m.Params.InputResponses) == 0 {
				f.bad = append(f.bad, "no inputResponses")
			}
		}
		if n <= f.times {
			method := f.method
			if method == "" {
				method = "elicitation/create"
			}
			state := ""
			if f.state != nil {
				s, _ := json.Marshal(*f.state)
				state = `,"requestState":` + string(s)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"q":{"method":%q,"params":{"mode":"form","message":"Again?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}%s}}`, m.ID, method, state)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done after %d"}]}}`, m.ID, n)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// The rounds of 2026: the requestState is echoed exactly as received (an
// opaque string whatever it holds) or not at all; each round is its own
// request; at most maxRounds requests, then a clear outcome; a request
// ttmcp does not serve (sampling) stops the call with nothing more sent.
func TestMRTRRounds(t *testing.T) {
	tricky := "v1.\u00e9\u2028\"quoted\"\\/<>&=?base64?x?=" + strings.Repeat("Z", 300)
	for _, tt := range []struct {
		name     string
		fake     *mrtrFake
		requests int
		text     string // the result's, "" for an unsupported outcome
	}{
		{"state echoed", &mrtrFake{state: &tricky, times: 2}, 3, "done after 3"},
		{"no state", &mrtrFake{times: 1}, 2, "done after 2"},
		{"too many rounds", &mrtrFake{state: &tricky, times: 100}, maxRounds, ""},
		{"sampling", &mrtrFake{times: 1, method: "sampling/createMessage"}, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := serve(t, tt.fake)
			g := callGateway(t, 5*time.Second)
			r := registration(t, ts.URL, domain.Protocol20260728, nil)
			var asked []domain.ElicitRequest
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`),
				Elicit: answering(&asked, accept(`{"ok":true}`))})
			tt.fake.mu.Lock()
			defer tt.fake.mu.Unlock()
			if len(tt.fake.bad) > 0 || len(tt.fake.bodies) != tt.requests {
				t.Fatalf("%d requests (want %d); wrong retries: %q", len(tt.fake.bodies), tt.requests, tt.fake.bad)
			}
			if tt.text != "" {
				if got := callText(t, out); got != tt.text || out.Rounds != tt.requests {
					t.Fatalf("result %q, rounds %d", got, out.Rounds)
				}
				return
			}
			if out.Outcome != domain.OutcomeKnownResponse || out.Unsupported == nil || out.Unsupported.ResponseType != "input_required" {
				t.Fatalf("outcome %+v", out)
			}
			if tt.name == "sampling" && (!strings.Contains(out.Unsupported.Message, "sampling/createMessage") || len(asked) != 0) {
				t.Fatalf("sampling: %+v, asked %d", out.Unsupported, len(asked))
			}
			for _, b := range tt.fake.bodies {
				if !strings.Contains(b, `"elicitation":{"form":{},"url":{}}`) {
					t.Fatalf("a round did not advertise elicitation: %s", b)
				}
			}
		})
	}
}

// Stopping a call while the user answers: on 2025 the server is mid-call,
// so whether the tool ran is unknown; on 2026 the server answered the last
// request and holds nothing, so the outcome says so and nothing more is
// sent. Either way the question is withdrawn (the asker's context ends),
// and an answer that comes after is never sent: on 2025 the server gets
// cancel for it.
func TestStopWhileTheUserAnswers(t *testing.T) {
	eachEra(t, func(t *testing.T, era elicitEra, srv *askingServer, rec *recorder, g *Gateway, r domain.Registration) {
		ctx, stop := context.WithCancel(context.Background())
		withdrawn := make(chan struct{})
		elicit := func(qctx context.Context, _ domain.ElicitRequest) (domain.ElicitResponse, error) {
			stop() // the user pressed Stop while the form was open
			<-qctx.Done()
			close(withdrawn)
			return accept(`{"name":"late"}`), nil
		}
		out := g.Call(ctx, r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`), Elicit: elicit})
		<-withdrawn
		switch era.name {
		case "2025":
			// Stopped mid-call: unknown, unless the server's answer to the
			// withdrawn question's cancel came in before the stop was seen —
			// then that answer, which is the truth, and never not_sent.
			answered := out.Outcome == domain.OutcomeKnownResponse && out.Result != nil && len(out.Result.TextBlocks) == 1 &&
				out.Result.TextBlocks[0].Text == "no greeting: the user chose cancel"
			if !answered && (out.Outcome != domain.OutcomeUnknown || out.Code != CodeCallCancelled) {
				t.Fatalf("outcome %+v", out)
			}
		case "2026":
			if out.Outcome != domain.OutcomeKnownResponse || out.Unsupported == nil || !strings.Contains(out.Unsupported.Message, "keeps nothing") ||
				rec.count("tools/call") != 1 {
				t.Fatalf("outcome %+v after %d calls", out, rec.count("tools/call"))
			}
		}
		// The answer that came after Stop never reaches the server: on 2025
		// the withdrawn question is answered cancel (the server, mid-call,
		// may go on with that); on 2026 nothing more is sent.
		time.Sleep(50 * time.Millisecond) // an answer sent late would arrive by now
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for _, got := range srv.got {
			if strings.Contains(got, "late") || era.name == "2026" || got != "cancel null" {
				t.Fatalf("the server received %q", srv.got)
			}
		}
	})
}

// A question the user leaves unanswered (the ElicitFunc times out) is
// answered cancel and recorded as a timeout; one whose answers keep not
// fitting is answered cancel too, after maxAnswerTries.
func TestUnansweredAndInvalidQuestions(t *testing.T) {
	eachEra(t, func(t *testing.T, era elicitEra, srv *askingServer, rec *recorder, g *Gateway, r domain.Registration) {
		timeout := func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
			return domain.ElicitResponse{}, domain.ErrElicitTimedOut
		}
		out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`), Elicit: timeout})
		if got := callText(t, out); got != "no greeting: the user chose cancel" || len(out.Elicitations) != 1 || out.Elicitations[0].Action != "timeout" {
			t.Fatalf("timeout: %q %+v", got, out.Elicitations)
		}
		var asked []domain.ElicitRequest
		out = g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`),
			Elicit: answering(&asked, accept(`{"name":"x"}`))})
		if got := callText(t, out); got != "no greeting: the user chose cancel" || len(asked) != maxAnswerTries || out.Elicitations[0].Action != "invalid" {
			t.Fatalf("invalid: %q, asked %d, %+v", got, len(asked), out.Elicitations)
		}
	})
}

// Concurrent asking calls on one 2025 server each get their own session:
// every question reaches the call that caused it.
func TestConcurrentAskingCallsAreKeptApart(t *testing.T) {
	srv := &askingServer{}
	ts, _ := serve(t, srv.handler(t, false))
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.Protocol20251125, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("user%d", i)
			out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "greet", Arguments: json.RawMessage(`{}`),
				Elicit: func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
					time.Sleep(time.Duration(i%3) * 5 * time.Millisecond)
					return accept(`{"name":"` + name + `"}`), nil
				}})
			if out.Result == nil || len(out.Result.TextBlocks) != 1 || out.Result.TextBlocks[0].Text != "hello "+name {
				errs <- errors.New(fmt.Sprint(name, ": ", out))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// a warm asking call reuses the kept eliciting session
	before := g.lives.byID[r.ID].idleEliciting
	if len(before) != 1 {
		t.Fatalf("%d idle eliciting sessions kept", len(before))
	}
}

// An accepted form's numbers reach go-sdk as numbers: it checks the
// content against the requested schema before sending, and would take a
// json.Number for a string (server-everything's integer field failed so).
func TestElicitResultNumbers(t *testing.T) {
	got := elicitResult(domain.ElicitResponse{Action: domain.ElicitAccept,
		Content: json.RawMessage(`{"i":7,"big":9007199254740993,"f":2.5,"w":7.0,"s":"7","b":true,"m":["a"]}`)})
	want := map[string]any{"i": int64(7), "big": int64(9007199254740993), "f": 2.5, "w": 7.0, "s": "7", "b": true, "m": []any{"a"}}
	if got.Action != domain.ElicitAccept || !reflect.DeepEqual(got.Content, want) {
		t.Fatalf("got %#v", got)
	}
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"i": {Type: "integer"}, "w": {Type: "integer"}, "f": {Type: "number"}}}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(map[string]any{"i": got.Content["i"], "w": got.Content["w"], "f": got.Content["f"]}); err != nil {
		t.Fatalf("go-sdk's validator: %v", err)
	}
}
