package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// malformedPages are list answers with entries go-sdk cannot decode
// between good ones: a URI, template or name of the wrong type, null, an
// argument whose name is a number. (Package level: the stdio tests serve
// the same pages from a child process, stdio_fake_test.go.)
var malformedPages = map[string]string{
	"tools/list": `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":5,"inputSchema":{"type":"object"}},null,` +
		`{"name":"b","inputSchema":{"type":"object"}}]}`,
	"resources/list":           `{"resources":[{"uri":"test://a","name":"a"},{"uri":5,"name":"five"},null,{"uri":"test://b","name":"b"}]}`,
	"resources/templates/list": `{"resourceTemplates":[{"uriTemplate":"test://t/{id}","name":"t"},{"uriTemplate":["x"],"name":"x"}]}`,
	"prompts/list":             `{"prompts":[{"name":"p"},{"name":{"x":1}},{"name":"q","arguments":[{"name":5}]},{"name":"r"}]}`,
}

// malformedWant is what each malformed page lists: the names kept, and
// the items of the diagnostics of the entries left out ("" where the entry
// has no name that is a string).
var malformedWant = map[string]keptAndLeft{
	"tools/list":               {[]string{"a", "b"}, []string{"", ""}},
	"resources/list":           {[]string{"test://a", "test://b"}, []string{"", ""}},
	"resources/templates/list": {[]string{"test://t/{id}"}, []string{""}},
	"prompts/list":             {[]string{"p", "r"}, []string{"", "q"}},
}

type keptAndLeft struct{ kept, left []string }

// listAll runs the four listings on r and returns, per method, the names
// kept and the items of the malformed-entry diagnostics.
func listAll(t *testing.T, g *Gateway, r domain.Registration) map[string]keptAndLeft {
	t.Helper()
	ctx := context.Background()
	cat, err := g.Discover(ctx, r)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := keptAndLeft{kept: names(cat)}
	for _, d := range cat.Diagnostics {
		if d.Code == CodeToolMalformed {
			tools.left = append(tools.left, itemOf(d.NativeName))
		}
	}
	res, err := g.ListResources(ctx, r)
	tpl, err2 := g.ListResourceTemplates(ctx, r)
	pr, err3 := g.ListPrompts(ctx, r)
	if err := errors.Join(err, err2, err3); err != nil {
		t.Fatal(err)
	}
	return map[string]keptAndLeft{
		"tools/list":               tools,
		"resources/list":           listedOf(t, res, func(x domain.Resource) string { return x.URI }),
		"resources/templates/list": listedOf(t, tpl, func(x domain.ResourceTemplate) string { return x.URITemplate }),
		"prompts/list":             listedOf(t, pr, func(x domain.Prompt) string { return x.Name }),
	}
}

// listedOf is what a listing kept (by name) and left out as malformed.
func listedOf[T any](t *testing.T, l domain.Listing[T], name func(T) string) keptAndLeft {
	t.Helper()
	var out keptAndLeft
	for _, x := range l.Items {
		out.kept = append(out.kept, name(x))
	}
	for _, d := range l.Diagnostics {
		if d.Code != CodeListEntryMalformed {
			t.Errorf("diagnostic %s: %s", d.Code, d.Message)
		}
		out.left = append(out.left, itemOf(d.Item))
	}
	return out
}

func itemOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func checkMalformed(t *testing.T, got map[string]keptAndLeft) {
	t.Helper()
	for method, want := range malformedWant {
		if !slices.Equal(got[method].kept, want.kept) || !slices.Equal(got[method].left, want.left) {
			t.Errorf("%s: kept %q, left out %q; want %q, %q", method, got[method].kept, got[method].left, want.kept, want.left)
		}
	}
}

// malformedServer is a hand-written 2025 server answering the four lists
// with malformedPages, in JSON bodies or SSE events.
func malformedServer(sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		result := malformedPages[m.Method]
		switch {
		case r.Method != http.MethodPost || m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
			return
		case m.Method == "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"malformed","version":"1"}}`
		case result == "":
			result = `{}`
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			return
		}
		jsonReply(w, http.StatusOK, msg)
	})
}

// One entry go-sdk cannot decode leaves the list's good entries in place
// and gets a diagnostic of its own, for each of the four lists, whether
// the answer is a JSON body or an SSE event (before, the whole listing
// failed: mcp.list_failed, mcp.discovery_list_failed).
func TestMalformedEntriesIsolated(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			ts, _ := serve(t, malformedServer(sse))
			checkMalformed(t, listAll(t, testGateway(t), registration(t, ts.URL, domain.ProtocolAuto, nil)))
		})
	}
}
