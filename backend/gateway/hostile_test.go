//go:build unix

package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The hostile-server suite (issue 27): servers that misbehave in
// resources, prompts, completions, elicitation in both eras and over
// stdio, and list changes. Each case runs one operation against its
// server on a gateway with short timeouts and checks three things: the bad
// thing got its code or its diagnostics, the request that may act reached
// the server once (nothing ran twice), and the gateway stays responsive (a
// call to a healthy server on the same gateway is answered at once, and so
// is the hostile server's own next operation where the case says so).

// verdict is what an operation gave: its code (an error's, an outcome's,
// an unsupported response's type) and the codes of its diagnostics.
type verdict struct {
	code  string
	diags []string
}

func listVerdict[T any](l domain.Listing[T], err error) verdict {
	v := verdict{code: domain.CodeOf(err)}
	for _, d := range l.Diagnostics {
		v.diags = append(v.diags, d.Code)
	}
	return v
}

func answerVerdict[T any](a domain.Answer[T], diags func(*T) []string) verdict {
	v := verdict{code: a.Code}
	if a.Unsupported != nil {
		v.code = a.Unsupported.ResponseType
	}
	if a.Result != nil {
		v.diags = diags(a.Result)
	}
	return v
}

func callVerdict(out domain.CallOutcome) verdict {
	v := verdict{code: out.Code}
	for _, e := range out.Elicitations {
		v.diags = append(v.diags, e.Action)
	}
	if out.Outcome == domain.OutcomeKnownResponse && out.Result != nil && len(out.Result.TextBlocks) == 1 {
		v.diags = append(v.diags, "text:"+out.Result.TextBlocks[0].Text)
	}
	return v
}

// answering2025 is a hand-written 2025 server whose answers to resources/*,
// prompts/* and completion/complete are answer's result for each method
// and page (nil: method not found).
func answering2025(t *testing.T, answer func(method, cursor string) *string) (domain.Registration, *recorder) {
	_, url, rec := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, params json.RawMessage) bool {
		res := answer(method, cursorOf(params))
		if res == nil {
			return false
		}
		if strings.HasPrefix(*res, `{"error"`) {
			jsonReply(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s`, id, (*res)[1:]))
			return true
		}
		jsonReply(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, *res))
		return true
	})
	return registration(t, url, domain.ProtocolAuto, nil), rec
}

// serves is a server of answering2025 answering method with result alone.
func serves(method, result string) func(t *testing.T) (domain.Registration, *recorder) {
	return func(t *testing.T) (domain.Registration, *recorder) { return answering2025(t, only(method, result)) }
}

func resourcesOp(g *Gateway, r domain.Registration) verdict {
	return listVerdict(g.ListResources(context.Background(), r))
}

func promptsOp(g *Gateway, r domain.Registration) verdict {
	return listVerdict(g.ListPrompts(context.Background(), r))
}

// only answers method with result.
func only(method, result string) func(string, string) *string {
	return func(m, _ string) *string {
		if m != method {
			return nil
		}
		return &result
	}
}

func readOp(g *Gateway, r domain.Registration) verdict {
	return answerVerdict(g.ReadResource(context.Background(), r, "test://a"), func(c *domain.ResourceContents) (out []string) {
		for _, d := range c.Diagnostics {
			out = append(out, d.Code)
		}
		return out
	})
}

func getOp(g *Gateway, r domain.Registration) verdict {
	return answerVerdict(g.GetPrompt(context.Background(), r, "p", nil), func(p *domain.PromptMessages) (out []string) {
		for _, d := range p.Diagnostics {
			out = append(out, d.Code)
		}
		return out
	})
}

func completeOp(g *Gateway, r domain.Registration) verdict {
	c, err := g.Complete(context.Background(), r, domain.CompletionRequest{RefType: domain.RefPrompt, RefName: "p", Argument: "a", Value: "x"})
	v := verdict{code: domain.CodeOf(err)}
	if err == nil {
		v.diags = []string{fmt.Sprintf("%d values, more %v", len(c.Values), c.HasMore)}
	}
	return v
}

func askOp(g *Gateway, r domain.Registration) verdict {
	return callVerdict(g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`),
		Elicit: func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
			return accept(`{"ok":true}`), nil
		}}))
}

// askOn is a server of askFake (or its stdio child) asking set.
func askOn(transport, set string) func(t *testing.T) (domain.Registration, *recorder) {
	return func(t *testing.T) (domain.Registration, *recorder) {
		if transport == "stdio" {
			return askStdio(t, set), nil
		}
		f := &askFake{set: set, stateless: transport == "2026"}
		ts, rec := serve(t, f)
		protocol := domain.Protocol20251125
		if f.stateless {
			protocol = domain.Protocol20260728
		}
		return registration(t, ts.URL, protocol, nil), rec
	}
}

// streaming is a 2025 server whose standalone stream the test writes, and
// whose tool "a" answers ok.
func streaming(get func(w http.ResponseWriter, r *http.Request)) func(t *testing.T) (domain.Registration, *recorder) {
	return func(t *testing.T) (domain.Registration, *recorder) {
		ts, rec := serve(t, &streamServer{get: get})
		return registration(t, ts.URL, domain.Protocol20251125, nil), rec
	}
}

// streamWrites writes events on a standalone stream and holds it open.
func streamWrites(events string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, events)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// followed calls tool "a" (opening the shared session and its stream),
// waits until the stream's fate shows in the status (note; "": a change
// was announced, after whatever came before it on the stream), and calls
// again.
func followed(note string) func(g *Gateway, r domain.Registration) verdict {
	return func(g *Gateway, r domain.Registration) verdict {
		out := callA(g, r)
		deadline := time.Now().Add(5 * time.Second)
		seen := func() bool { // the stream's fate; "": it follows
			st := g.Status(r)
			return note == "" && hostileChanges.Load() > 0 || note != "" && strings.Contains(st.Note, note)
		}
		for !seen() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		st := g.Status(r)
		v := callVerdict(callA(g, r))
		v.diags = append(v.diags, fmt.Sprintf("following %v", st.Following))
		if !strings.Contains(st.Note, note) {
			v.code = "note: " + st.Note
		}
		v.code += out.Code
		return v
	}
}

// callWithEvents is a 2025 server whose tools/call answer brings events
// before the result on its response stream.
func callWithEvents(events string) func(t *testing.T) (domain.Registration, *recorder) {
	return func(t *testing.T) (domain.Registration, *recorder) {
		ts, rec := serve(t, &fake{version: "2025-11-25", onCall: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, _ []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, events)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
		}})
		return registration(t, ts.URL, domain.Protocol20251125, nil), rec
	}
}

// hostileChanges counts the list changes the suite's gateway announced.
var hostileChanges atomic.Int32

func TestHostileServers(t *testing.T) {
	resource := func(uri string) string { return fmt.Sprintf(`{"uri":%q,"name":%q}`, uri, uri) }
	huge := `{"contents":[{"uri":"test://a","text":"` + strings.Repeat("x", 13<<20) + `"}]}`
	notification := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	flooded := append(slices.Repeat([]string{"accept"}, maxQuestionsPerCall), domain.ElicitLimited, "text:accept=16 cancel=184")
	for _, c := range []struct {
		name   string
		server func(t *testing.T) (domain.Registration, *recorder)
		op     func(g *Gateway, r domain.Registration) verdict
		want   verdict
		once   string        // the method that must have reached the server exactly once
		wait   time.Duration // the gateway's wait for an answer; 0: 10 s (200 answers under -race)
	}{
		// resources
		{"resources: entries that do not decode", serves("resources/list", malformedPages["resources/list"]), resourcesOp, verdict{diags: []string{CodeListEntryMalformed, CodeListEntryMalformed}}, "resources/list", 0},
		{"resources: the list changes under pagination (the cursor is refused)", func(t *testing.T) (domain.Registration, *recorder) {
			return answering2025(t, func(m, cursor string) *string {
				page := `{"resources":[` + resource("test://a") + `],"nextCursor":"2"}`
				if cursor == "2" {
					page = `{"error":{"code":-32602,"message":"invalid cursor: the list changed"}}`
				}
				return &page
			})
		}, resourcesOp, verdict{code: CodeListingFailed}, "", 0},
		{"resources: the list changes under pagination (page 2 repeats page 1)", func(t *testing.T) (domain.Registration, *recorder) {
			return answering2025(t, func(m, cursor string) *string {
				page := `{"resources":[` + resource("test://a") + `,` + resource("test://b") + `],"nextCursor":"2"}`
				if cursor == "2" {
					page = `{"resources":[` + resource("test://b") + `,` + resource("test://c") + `]}`
				}
				return &page
			})
		}, resourcesOp, verdict{diags: []string{domain.CodeResourceDuplicateURI}}, "", 0},
		{"resources: a read whose contents are a number", serves("resources/read", `{"contents":5}`), readOp, verdict{code: "invalid_result"}, "resources/read", 0},
		{"resources: a read with contents that are null or nameless", serves("resources/read", `{"contents":[{"uri":5,"text":"x"},null,{"uri":"test://a","text":"ok"}]}`), readOp, verdict{diags: []string{domain.CodeResourceContentInvalid, domain.CodeResourceContentInvalid}}, "resources/read", 0},
		{"resources: a read over 12 MiB", serves("resources/read", huge), readOp, verdict{code: CodeResourceTooLarge}, "resources/read", 0},
		{"resources: a read never answered", func(t *testing.T) (domain.Registration, *recorder) {
			stop := make(chan struct{})
			r, rec := answering2025(t, func(m, _ string) *string {
				if m == "resources/read" {
					<-stop // never answered while the test runs
				}
				return nil
			})
			t.Cleanup(func() { close(stop) }) // before the server closes
			return r, rec
		}, readOp, verdict{code: CodeCallTimeout}, "resources/read", 300 * time.Millisecond},
		// prompts
		{"prompts: entries that do not decode", serves("prompts/list", malformedPages["prompts/list"]), promptsOp, verdict{diags: []string{CodeListEntryMalformed, CodeListEntryMalformed}}, "prompts/list", 0},
		{"prompts: a get with null and roleless messages", serves("prompts/get", `{"messages":[null,{"role":"user","content":{"type":"text","text":"hi"}},{"role":5,"content":{}}]}`), getOp, verdict{diags: []string{domain.CodePromptMessageInvalid, domain.CodePromptMessageInvalid}}, "prompts/get", 0},
		// completions
		{"completions: 10,000 values", func(t *testing.T) (domain.Registration, *recorder) {
			return answering2025(t, only("completion/complete", `{"completion":{"values":[`+strings.TrimSuffix(strings.Repeat(`"v",`, 10000), ",")+`]}}`))
		}, completeOp, verdict{diags: []string{"100 values, more true"}}, "completion/complete", 0},
		{"completions: values that are not strings", serves("completion/complete", `{"completion":{"values":[5,null,"ok"]}}`), completeOp, verdict{code: CodeCompletionFailed}, "completion/complete", 0},
		// elicitation, both eras and stdio
		{"elicitation 2025: 200 questions in one call", askOn("2025", "flood"), askOp, verdict{diags: flooded}, "tools/call", 0},
		{"elicitation 2026: 200 questions in one round", askOn("2026", "flood"), askOp, verdict{diags: flooded}, "", 0},
		{"elicitation stdio: 200 questions in one call", askOn("stdio", "flood"), askOp, verdict{diags: flooded}, "", 0},
		{"elicitation 2025: a schema 5,000 deep", askOn("2025", "deep 5000"), askOp, verdict{diags: []string{"invalid", "text:cancel=1"}}, "tools/call", 0},
		{"elicitation 2026: a schema 5,000 deep", askOn("2026", "deep 5000"), askOp, verdict{diags: []string{"invalid", "text:cancel=1"}}, "", 0},
		{"elicitation stdio: a schema 5,000 deep", askOn("stdio", "deep 5000"), askOp, verdict{diags: []string{"invalid", "text:cancel=1"}}, "", 0},
		{"notifications stdio: one nested 2,000 deep before the answer", askOn("stdio", deepNote),
			func(g *Gateway, r domain.Registration) verdict {
				return callVerdict(g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`)}))
			}, verdict{diags: []string{"text:ok"}}, "", 0},
		// list changes and notifications
		{"list changes: a flood of list_changed", streaming(streamWrites(strings.Repeat(notification, 500))),
			followed("flooded"), verdict{diags: []string{"text:ok", "following false"}}, "", 0},
		{"list changes: a notification of 2 MiB", streaming(streamWrites("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" +
			strings.Repeat("x", 2<<20) + "\"}}\n\n")), followed("more than 1 MiB"), verdict{diags: []string{"text:ok", "following false"}}, "", 0},
		{"list changes: garbage on the stream", streaming(streamWrites(strings.Repeat("data: not json\n\nevent: x\n\n: comment\n\ndata: [1]\n\n", 20) + notification)),
			followed(""), verdict{diags: []string{"text:ok", "following true"}}, "", 0},
		{"a call's stream: garbage, a deep and a 3 MiB notification before the answer", callWithEvents("data: not json\n\n" +
			`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + nested(2000) + "}}\n\n" +
			`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 3<<20) + "\"}}\n\n"),
			func(g *Gateway, r domain.Registration) verdict {
				return callVerdict(g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`)}))
			}, verdict{diags: []string{"text:ok"}}, "tools/call", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			hostileChanges.Store(0)
			healthy, _ := sdkServer(t, true, 0, nil, objectTool("a"))
			r, rec := c.server(t)
			g := stdioGateway(t, func(cfg *Config) {
				cfg.CallWait, cfg.ListTimeout, cfg.CloseTimeout = cmp.Or(c.wait, 10*time.Second), 10*time.Second, 200*time.Millisecond
				cfg.Changed = func(domain.ListChange) { hostileChanges.Add(1) }
			})
			done := make(chan verdict, 1)
			go func() { done <- c.op(g, r) }()
			// The backend answers another server while the hostile one runs.
			mustKnow(t, callA(g, registration(t, healthy.URL, domain.ProtocolAuto, nil)))
			got := <-done
			if got.code != c.want.code || !slices.Equal(got.diags, c.want.diags) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if c.once != "" {
				if n := rec.count(c.once); n != 1 {
					t.Fatalf("%s reached the server %d times", c.once, n)
				}
			}
			mustKnow(t, callA(g, registration(t, healthy.URL, domain.ProtocolAuto, nil)))
		})
	}
}
