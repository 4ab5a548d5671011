package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// resourceServer is a real go-sdk server with resources (paged by
// pageSize), a template, prompts and completions; stateless serves
// 2026-07-28, stateful the 2025 versions. Lists carry ttlMs 60000.
func resourceServer(t *testing.T, stateless bool, pageSize int) (string, *recorder) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, &mcp.ServerOptions{
		PageSize: pageSize,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = 60000
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			p := req.Params
			var vals []string
			for _, v := range []string{"alpha", "beta", "alphabet"} {
				if strings.HasPrefix(v, p.Argument.Value) {
					vals = append(vals, p.Ref.Type+":"+p.Ref.Name+p.Ref.URI+":"+p.Argument.Name+"="+v)
				}
			}
			if p.Context != nil && p.Context.Arguments["style"] != "" {
				vals = append(vals, "style="+p.Context.Arguments["style"])
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals), HasMore: false}}, nil
		},
	})
	for i := range 5 {
		uri := fmt.Sprintf("test://static/%d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("r%d", i), MIMEType: "text/plain", Size: 5},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "text " + req.Params.URI}}}, nil
			})
	}
	s.AddResource(&mcp.Resource{URI: "test://blob", Name: "blob", MIMEType: "application/octet-stream"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}},
				{URI: req.Params.URI + "#meta", MIMEType: "application/json", Text: `{"n":4}`},
			}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://dynamic/{id}", Name: "dynamic"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "dynamic"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Description: "Summarize a topic",
		Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}, {Name: "style"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Description: "summary", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Summarize " + a["topic"] + " " + a["style"]}},
				{Role: "assistant", Content: &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://static/0", Text: "doc"}}},
				{Role: "user", Content: &mcp.ResourceLink{URI: "test://static/1", Name: "r1"}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "plain"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "plain"}}}}, nil
	})
	ts, rec := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true}))
	return ts.URL, rec
}

// The three lists, a read of text and of a blob with a second content, a
// get with arguments and every content type, and completions of a prompt
// argument and a template variable, against go-sdk on 2026 and 2025: every
// page fetched (page size 2), the 2026 ttlMs kept (2025: none).
func TestResourcesAgainstGoSDK(t *testing.T) {
	for _, tt := range []struct {
		name      string
		stateless bool
		pref      domain.Protocol
		ttl       *time.Duration
	}{
		{"2026", true, domain.Protocol20260728, new(time.Minute)},
		{"2025", false, domain.Protocol20251125, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, rec := resourceServer(t, tt.stateless, 2)
			g := testGateway(t)
			r := registration(t, url, tt.pref, nil)
			ctx := context.Background()

			res, err := g.ListResources(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, x := range res.Items {
				uris = append(uris, x.URI)
			}
			if !slices.Equal(uris, []string{"test://blob", "test://static/0", "test://static/1", "test://static/2", "test://static/3", "test://static/4"}) || len(res.Diagnostics) != 0 {
				t.Fatalf("resources %v %+v", uris, res.Diagnostics)
			}
			if n := rec.count("resources/list"); n != 3 {
				t.Errorf("%d pages, want 3", n)
			}
			if x := res.Items[1]; *x.MimeType != "text/plain" || *x.Size != 5 || x.Name != "r0" {
				t.Errorf("resource %+v", x)
			}
			if (res.TTL == nil) != (tt.ttl == nil) || res.TTL != nil && *res.TTL != *tt.ttl {
				t.Errorf("ttl %v, want %v", res.TTL, tt.ttl)
			}

			tpl, err := g.ListResourceTemplates(ctx, r)
			if err != nil || len(tpl.Items) != 1 || tpl.Items[0].URITemplate != "test://dynamic/{id}" || !slices.Equal(tpl.Items[0].Variables, []string{"id"}) {
				t.Fatalf("templates %+v %v", tpl, err)
			}
			prompts, err := g.ListPrompts(ctx, r)
			if err != nil || len(prompts.Items) != 2 || prompts.Items[1].Name != "summarize" || len(prompts.Items[1].Arguments) != 2 ||
				!prompts.Items[1].Arguments[0].Required || prompts.Items[1].Arguments[1].Required {
				t.Fatalf("prompts %+v %v", prompts, err)
			}

			read := g.ReadResource(ctx, r, "test://static/3")
			if read.Outcome != domain.OutcomeKnownResponse || read.Result == nil || len(read.Result.Contents) != 1 ||
				*read.Result.Contents[0].Text != "text test://static/3" || !read.Result.Contents[0].IsText {
				t.Fatalf("read %+v", read)
			}
			blob := g.ReadResource(ctx, r, "test://blob").Result
			if blob == nil || len(blob.Contents) != 2 || *blob.Contents[0].Blob != base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255}) ||
				blob.Contents[0].Size != 4 || *blob.Contents[1].Text != `{"n":4}` || blob.TotalBytes != 4+7 || len(blob.Diagnostics) != 0 {
				t.Fatalf("blob %+v", blob)
			}
			dyn := g.ReadResource(ctx, r, "test://dynamic/42").Result
			if dyn == nil || *dyn.Contents[0].Text != "dynamic" {
				t.Fatalf("template read %+v", dyn)
			}
			missing := g.ReadResource(ctx, r, "test://nothing")
			if missing.Outcome != domain.OutcomeKnownResponse || missing.ServerError == nil {
				t.Fatalf("missing resource %+v", missing)
			}

			got := g.GetPrompt(ctx, r, "summarize", map[string]string{"topic": "MCP", "style": "brief"})
			m := got.Result
			if got.Outcome != domain.OutcomeKnownResponse || m == nil || len(m.Messages) != 4 || len(m.Diagnostics) != 0 || *m.Description != "summary" {
				t.Fatalf("get %+v", got)
			}
			var kinds []string
			for _, msg := range m.Messages {
				kinds = append(kinds, msg.Role+":"+msg.Content.Type)
			}
			if !slices.Equal(kinds, []string{"user:text", "assistant:image", "user:resource", "user:resource_link"}) ||
				*m.Messages[0].Content.Text != "Summarize MCP brief" || *m.Messages[2].Content.Resource.Text != "doc" || *m.Messages[3].Content.URI != "test://static/1" {
				t.Fatalf("messages %v %+v", kinds, m.Messages)
			}

			c, err := g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefPrompt, RefName: "summarize", Argument: "topic", Value: "alp",
				Context: map[string]string{"style": "brief"}})
			if err != nil || !slices.Equal(c.Values, []string{"ref/prompt:summarize:topic=alpha", "ref/prompt:summarize:topic=alphabet", "style=brief"}) || *c.Total != 3 {
				t.Fatalf("completion %+v %v", c, err)
			}
			c, err = g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefResource, RefURI: "test://dynamic/{id}", Argument: "id", Value: "b"})
			if err != nil || !slices.Equal(c.Values, []string{"ref/resource:test://dynamic/{id}:id=beta"}) {
				t.Fatalf("template completion %+v %v", c, err)
			}

			caps, ok := g.Advertised(r)
			if !ok || !caps.Resources || !caps.Prompts || !caps.Completions || caps.Tools || caps.ProtocolVersion != string(tt.pref) {
				t.Fatalf("advertised %+v %v", caps, ok)
			}
			// One session for everything: a kept connection.
			if n := rec.count("initialize") + rec.count("server/discover"); n != 1 {
				t.Errorf("%d startups", n)
			}
		})
	}
}

// resourceFake is a hand-written 2025 server whose resources/*,
// prompts/* and completion/complete answers the test writes.
func resourceFake(t *testing.T, caps map[string]any, answer func(w http.ResponseWriter, method string, id json.RawMessage, params json.RawMessage) bool) (*fake, string, *recorder) {
	t.Helper()
	f := &fake{version: "2025-11-25", caps: caps, onOther: func(w http.ResponseWriter, method string, id json.RawMessage, body []byte) bool {
		var req struct {
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(body, &req)
		return answer(w, method, id, req.Params)
	}}
	ts, rec := serve(t, f)
	return f, ts.URL, rec
}

var allCaps = map[string]any{"resources": map[string]any{}, "prompts": map[string]any{}, "completions": map[string]any{}}

func replyResult(w http.ResponseWriter, id json.RawMessage, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	jsonReply(w, http.StatusOK, string(b))
}

func jsonReply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func cursorOf(params json.RawMessage) string {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	return p.Cursor
}

// Hostile lists fail as a whole with their code, never half: a cursor
// loop, 10,000 entries, more than 8 MiB, more than 32 pages, an answer
// that is not complete; entries with invalid URIs, names, types or
// templates are isolated with diagnostics while the others stay.
func TestHostileLists(t *testing.T) {
	entry := func(i int) map[string]any {
		return map[string]any{"uri": "test://r/" + strconv.Itoa(i), "name": "r" + strconv.Itoa(i)}
	}
	tests := []struct {
		name string
		list func(cursor string) any
		code string
		ok   func(t *testing.T, l domain.Listing[domain.Resource])
	}{
		{"cursor loop", func(c string) any {
			return map[string]any{"resources": []any{entry(len(c))}, "nextCursor": "again"}
		}, CodeListCursorCycle, nil},
		{"10,000 entries", func(c string) any {
			n, _ := strconv.Atoi(c)
			items := []any{}
			for i := n; i < n+1000; i++ {
				items = append(items, entry(i))
			}
			if n+1000 >= 10000 {
				return map[string]any{"resources": items}
			}
			return map[string]any{"resources": items, "nextCursor": strconv.Itoa(n + 1000)}
		}, CodeListEntryLimit, nil},
		{"over 8 MiB", func(c string) any {
			n, _ := strconv.Atoi(c)
			items := []any{}
			for i := range 20 {
				e := entry(n*20 + i)
				e["description"] = strings.Repeat("d", 200<<10)
				items = append(items, e)
			}
			return map[string]any{"resources": items, "nextCursor": strconv.Itoa(n + 1)}
		}, CodeListSizeLimit, nil},
		{"33 pages", func(c string) any {
			n, _ := strconv.Atoi(c)
			return map[string]any{"resources": []any{entry(n)}, "nextCursor": strconv.Itoa(n + 1)}
		}, CodeListPageLimit, nil},
		{"not complete", func(string) any {
			return map[string]any{"resources": []any{}, "resultType": "input_required"}
		}, CodeListResultType, nil},
		{"bad entries isolated", func(string) any {
			return map[string]any{"resources": []any{
				entry(1),
				map[string]any{"uri": "no-scheme", "name": "x"},
				map[string]any{"uri": "test://ctl\u0007", "name": "x"},
				map[string]any{"uri": "test://n", "name": ""},
				map[string]any{"uri": "test://m", "name": "m", "mimeType": "text"},
				entry(2),
			}}
		}, "", func(t *testing.T, l domain.Listing[domain.Resource]) {
			if len(l.Items) != 2 || l.Items[0].URI != "test://r/1" || l.Items[1].URI != "test://r/2" {
				t.Fatalf("items %+v", l.Items)
			}
			var got []string
			for _, d := range l.Diagnostics {
				got = append(got, d.Code)
			}
			want := []string{domain.CodeResourceURIInvalid, domain.CodeResourceURIInvalid, domain.CodeResourceNameInvalid, domain.CodeResourceMimeTypeInvalid}
			if !slices.Equal(got, want) {
				t.Fatalf("diagnostics %v", l.Diagnostics)
			}
			if l.TTL != nil {
				t.Errorf("a 2025 list has a ttl: %v", *l.TTL)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url, _ := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, params json.RawMessage) bool {
				if method != "resources/list" {
					return false
				}
				replyResult(w, id, tt.list(cursorOf(params)))
				return true
			})
			l, err := testGateway(t).ListResources(context.Background(), registration(t, url, domain.ProtocolAuto, nil))
			if tt.code != "" {
				if domain.CodeOf(err) != tt.code || l.Items != nil {
					t.Fatalf("got %d items, %v; want %s", len(l.Items), err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.ok(t, l)
		})
	}
}

// A server that advertises nothing is asked nothing: its lists are empty
// with a diagnostic, a read or get is not_sent, a completion refused.
func TestServerAdvertisingNothing(t *testing.T) {
	_, url, rec := resourceFake(t, map[string]any{}, func(http.ResponseWriter, string, json.RawMessage, json.RawMessage) bool { return false })
	g := testGateway(t)
	r := registration(t, url, domain.ProtocolAuto, nil)
	ctx := context.Background()
	for name, list := range map[string]func() ([]domain.ListDiagnostic, int, error){
		"resources": func() ([]domain.ListDiagnostic, int, error) {
			l, err := g.ListResources(ctx, r)
			return l.Diagnostics, len(l.Items), err
		},
		"templates": func() ([]domain.ListDiagnostic, int, error) {
			l, err := g.ListResourceTemplates(ctx, r)
			return l.Diagnostics, len(l.Items), err
		},
		"prompts": func() ([]domain.ListDiagnostic, int, error) {
			l, err := g.ListPrompts(ctx, r)
			return l.Diagnostics, len(l.Items), err
		},
	} {
		diags, n, err := list()
		want := CodeResourcesUnsupported
		if name == "prompts" {
			want = CodePromptsUnsupported
		}
		if err != nil || n != 0 || len(diags) != 1 || diags[0].Code != want {
			t.Errorf("%s: %d items, %+v, %v", name, n, diags, err)
		}
	}
	if a := g.ReadResource(ctx, r, "test://x"); a.Outcome != domain.OutcomeNotSent || a.Code != CodeResourcesUnsupported {
		t.Errorf("read %+v", a)
	}
	if a := g.GetPrompt(ctx, r, "p", nil); a.Outcome != domain.OutcomeNotSent || a.Code != CodePromptsUnsupported {
		t.Errorf("get %+v", a)
	}
	if _, err := g.Complete(ctx, r, domain.CompletionRequest{RefType: domain.RefPrompt, RefName: "p", Argument: "a"}); domain.CodeOf(err) != CodeCompletionUnsupported {
		t.Errorf("complete %v", err)
	}
	for _, m := range rec.seen() {
		if m != "initialize" && m != "notifications/initialized" && m != "server/discover" {
			t.Errorf("sent %s", m)
		}
	}
	caps, ok := g.Advertised(r)
	if !ok || caps.Resources || caps.Prompts || caps.Completions || caps.Tools {
		t.Errorf("advertised %+v", caps)
	}
}

// A read's answer: a 20 MiB blob goes over the read cap and is refused
// (outcome_unknown, its code, nothing kept); a blob just over 8 MiB within
// the cap keeps its place without its data; malformed contents are
// reported in place; an answer cut off mid-body, a 2026 input_required,
// a server error and a result that is no read result each say so.
func TestReadAnswers(t *testing.T) {
	over8 := base64.StdEncoding.EncodeToString(make([]byte, domain.MaxContentBytes+1))
	tests := []struct {
		name    string
		answer  func(w http.ResponseWriter, id json.RawMessage)
		outcome domain.Outcome
		code    string
		check   func(t *testing.T, a domain.Answer[domain.ResourceContents])
	}{
		{"20 MiB blob", func(w http.ResponseWriter, id json.RawMessage) {
			replyResult(w, id, map[string]any{"contents": []any{map[string]any{"uri": "test://x", "blob": base64.StdEncoding.EncodeToString(make([]byte, 20<<20))}}})
		}, domain.OutcomeUnknown, CodeResourceTooLarge, func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			if a.Result != nil || !strings.Contains(a.Message, "12582912 bytes") {
				t.Errorf("%+v", a.Message)
			}
		}},
		{"a blob over 8 MiB among others", func(w http.ResponseWriter, id json.RawMessage) {
			replyResult(w, id, map[string]any{"contents": []any{
				map[string]any{"uri": "test://x", "text": "first"},
				map[string]any{"uri": "test://x/big", "blob": over8, "mimeType": "application/zip"},
				map[string]any{"uri": "test://x/bad", "blob": 12},
				map[string]any{"uri": "test://x/last", "text": "last"},
			}})
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			c := a.Result.Contents
			if len(c) != 4 || *c[0].Text != "first" || c[1].Blob != nil || c[1].Size != domain.MaxContentBytes+1 || *c[1].MimeType != "application/zip" ||
				c[2].Blob != nil || *c[3].Text != "last" {
				t.Fatalf("%+v", c)
			}
			if d := a.Result.Diagnostics; len(d) != 2 || d[0].Code != domain.CodeResourceContentTooLarge || *d[0].ContentIndex != 1 ||
				d[1].Code != domain.CodeResourceContentInvalid || *d[1].ContentIndex != 2 {
				t.Fatalf("diagnostics %+v", d)
			}
		}},
		{"cut off mid-answer", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":"test://x","text":"abc`, id)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}, domain.OutcomeUnknown, CodeCallResponseFailed, func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			if !strings.Contains(a.Message, "may have processed") {
				t.Errorf("%q", a.Message)
			}
		}},
		{"input required", func(w http.ResponseWriter, id json.RawMessage) {
			replyResult(w, id, map[string]any{"resultType": "input_required", "inputRequests": map[string]any{}})
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			if a.Unsupported == nil || a.Unsupported.ResponseType != "input_required" {
				t.Fatalf("%+v", a)
			}
		}},
		{"server error", func(w http.ResponseWriter, id json.RawMessage) {
			jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://x"}}}`)
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			if a.ServerError == nil || a.ServerError.Code != -32002 || *a.ServerError.DataJSON != `{"uri":"test://x"}` {
				t.Fatalf("%+v", a)
			}
		}},
		{"not a read result", func(w http.ResponseWriter, id json.RawMessage) {
			replyResult(w, id, map[string]any{"contents": "nope"})
		}, domain.OutcomeKnownResponse, "", func(t *testing.T, a domain.Answer[domain.ResourceContents]) {
			if a.Unsupported == nil || a.Unsupported.ResponseType != "invalid_result" {
				t.Fatalf("%+v", a)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url, rec := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, _ json.RawMessage) bool {
				if method != "resources/read" {
					return false
				}
				tt.answer(w, id)
				return true
			})
			a := testGateway(t).ReadResource(context.Background(), registration(t, url, domain.ProtocolAuto, nil), "test://x")
			if a.Outcome != tt.outcome || a.Code != tt.code {
				t.Fatalf("%s %s: %s", a.Outcome, a.Code, a.Message)
			}
			tt.check(t, a)
			if n := rec.count("resources/read"); n != 1 {
				t.Errorf("%d reads sent", n)
			}
		})
	}
}

// Not sent: cancelled before preparation, or before the request left;
// unknown: the caller stopped waiting after it was written, or the wait
// ran out. Nothing is sent twice.
func TestReadSentOrNot(t *testing.T) {
	hold := make(chan struct{})
	_, url, rec := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, _ json.RawMessage) bool {
		if method != "resources/read" && method != "prompts/get" {
			return false
		}
		<-hold
		return true
	})
	t.Cleanup(func() { close(hold) }) // before the server's Close, which waits for the handlers
	r := registration(t, url, domain.ProtocolAuto, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := newGateway(t, Config{CallWait: 200 * time.Millisecond, CloseTimeout: 100 * time.Millisecond})
	if a := g.ReadResource(ctx, r, "test://x"); a.Outcome != domain.OutcomeNotSent || a.Code != CodeCallCancelledBeforeSend {
		t.Fatalf("cancelled first: %+v", a)
	}
	if a := g.ReadResource(context.Background(), r, "test://x"); a.Outcome != domain.OutcomeUnknown || a.Code != CodeCallTimeout {
		t.Fatalf("timed out: %+v", a)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if a := g.GetPrompt(ctx, r, "p", nil); a.Outcome != domain.OutcomeUnknown || a.Code != CodeCallCancelled {
		t.Fatalf("stopped waiting: %+v", a)
	}
	if n := rec.count("resources/read"); n != 1 {
		t.Errorf("%d reads sent", n)
	}
}

// A 2025 server that answers 404 for an expired session gets the read
// again on a new session (it provably did not process it); twice in a row
// is not_sent.
func TestReadOnExpiredSession(t *testing.T) {
	var expire atomic.Int32
	inner := &fake{version: "2025-11-25", caps: allCaps, onOther: func(w http.ResponseWriter, method string, id json.RawMessage, _ []byte) bool {
		if method == "resources/read" {
			replyResult(w, id, map[string]any{"contents": []any{map[string]any{"uri": "test://x", "text": "ok"}}})
			return true
		}
		return false
	}}
	sessions := &sessionFake{next: inner, expire: &expire}
	ts, rec := serve(t, sessions)
	g := testGateway(t)
	r := registration(t, ts.URL, domain.ProtocolAuto, nil)
	if a := g.ReadResource(context.Background(), r, "test://x"); a.Result == nil {
		t.Fatalf("first read %+v", a)
	}
	expire.Store(1)
	if a := g.ReadResource(context.Background(), r, "test://x"); a.Result == nil || *a.Result.Contents[0].Text != "ok" {
		t.Fatalf("after an expiry %+v", a)
	}
	expire.Store(2)
	if a := g.ReadResource(context.Background(), r, "test://x"); a.Outcome != domain.OutcomeNotSent || a.Code != CodeCallSessionExpired {
		t.Fatalf("after two expiries %+v", a)
	}
	if n, reads := rec.count("initialize"), rec.count("resources/read"); n != 3 || reads != 5 {
		t.Errorf("%d sessions and %d reads, want 3 and 5", n, reads)
	}
}

// sessionFake gives the sessions of next an id, and answers the next
// `expire` reads on a session with a 404, as a server that dropped it.
type sessionFake struct {
	next   http.Handler
	expire *atomic.Int32
	n      atomic.Int32
}

func (s *sessionFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.Header.Get("Mcp-Session-Id") != "" && bytes.Contains(body, []byte(`"resources/read"`)) {
		if s.expire.Load() > 0 {
			s.expire.Add(-1)
			http.Error(w, "session expired", http.StatusNotFound)
			return
		}
	}
	if r.Header.Get("Mcp-Session-Id") == "" {
		w.Header().Set("Mcp-Session-Id", "s"+strconv.Itoa(int(s.n.Add(1))))
	}
	s.next.ServeHTTP(w, r)
}

// A prompt's messages as received: roles other than user and assistant,
// unknown content types and malformed messages are left out with a
// diagnostic naming their index; the others keep their order.
func TestPromptAnswers(t *testing.T) {
	_, url, _ := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, params json.RawMessage) bool {
		if method != "prompts/get" {
			return false
		}
		var p struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		json.Unmarshal(params, &p)
		jsonReply(w, 200, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"description":"d","messages":[
			{"role":"user","content":{"type":"text","text":"`+p.Name+` `+p.Arguments["topic"]+`"}},
			{"role":"system","content":{"type":"text","text":"x"}},
			{"role":"user","content":{"type":"video","uri":"x"}},
			"not a message",
			{"role":"assistant","content":{"type":"audio","data":"AAAA","mimeType":"audio/wav","annotations":{"priority":"high"}}},
			{"role":"user","content":{"type":"resource_link","uri":"test://l","name":"l","size":12,"annotations":{"audience":["user"]}}}
		]}}`)
		return true
	})
	a := testGateway(t).GetPrompt(context.Background(), registration(t, url, domain.ProtocolAuto, nil), "summarize", map[string]string{"topic": "x"})
	m := a.Result
	if a.Outcome != domain.OutcomeKnownResponse || m == nil || len(m.Messages) != 3 || *m.Messages[0].Content.Text != "summarize x" {
		t.Fatalf("%+v", a)
	}
	if m.Messages[1].Content.Annotations != nil || m.Messages[2].Content.Annotations == nil || *m.Messages[2].Content.Size != 12 {
		t.Errorf("annotations %+v %+v", m.Messages[1].Content, m.Messages[2].Content)
	}
	var left []int
	for _, d := range m.Diagnostics {
		left = append(left, *d.ContentIndex)
	}
	if !slices.Equal(left, []int{1, 2, 3}) {
		t.Errorf("left out %v", m.Diagnostics)
	}
}

// The shared connection's capabilities are observed by every operation
// and change the generation only when they change.
func TestAdvertisedGeneration(t *testing.T) {
	url, _ := resourceServer(t, false, 0)
	g := testGateway(t)
	r := registration(t, url, domain.Protocol20251125, nil)
	gen := g.CapabilitiesGeneration()
	if _, ok := g.Advertised(r); ok {
		t.Fatal("known before any operation")
	}
	caps, err := g.Capabilities(context.Background(), r)
	if err != nil || !caps.Resources || g.CapabilitiesGeneration() == gen {
		t.Fatalf("%+v %v", caps, err)
	}
	gen = g.CapabilitiesGeneration()
	if _, err := g.ListPrompts(context.Background(), r); err != nil || g.CapabilitiesGeneration() != gen {
		t.Fatalf("an unchanged server moved the generation: %v", err)
	}
	other := r
	other.Headers = map[string]string{"X-Other": "1"}
	if _, ok := g.Advertised(other); ok {
		t.Error("known for another connection")
	}
}

// A read the server refuses for want of authorization is not_sent with
// mcp.auth_required (a 401 says it was not applied), never re-sent, and
// the session is dropped as a call's is.
func TestReadRefusedForAuthorization(t *testing.T) {
	_, url, rec := resourceFake(t, allCaps, func(w http.ResponseWriter, method string, id, _ json.RawMessage) bool {
		if method != "resources/read" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", scope="docs:read"`)
		http.Error(w, "sign in", http.StatusUnauthorized)
		return true
	})
	g := testGateway(t)
	a := g.ReadResource(context.Background(), registration(t, url, domain.ProtocolAuto, nil), "test://x")
	if a.Outcome != domain.OutcomeNotSent || a.Code != CodeAuthRequired || !strings.Contains(a.Message, "docs:read") {
		t.Fatalf("%s %s %s", a.Outcome, a.Code, a.Message)
	}
	if n := rec.count("resources/read"); n != 1 {
		t.Fatalf("%d reads sent", n)
	}
}
