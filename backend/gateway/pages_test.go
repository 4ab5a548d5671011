package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// pagedServer is a go-sdk server whose tool "files" needs the user to
// connect an account first: until done, it refuses the call with a
// URL-elicitation-required error (-32042) naming one page, and runs
// nothing; after, it runs (runs counts the runs). never keeps it refusing.
type pagedServer struct {
	done, never atomic.Bool
	runs        atomic.Int32
	session     atomic.Pointer[mcp.ServerSession]
}

var connectPage = &mcp.ElicitParams{Mode: "url", ElicitationID: "p1", URL: "https://files.example/connect?e=p1",
	Message: "Connect your Files account."}

func (p *pagedServer) handler(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, nil)
	s.AddTool(objectTool("files"), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p.session.Store(req.Session)
		if !p.done.Load() || p.never.Load() {
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{connectPage})
		}
		p.runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 files"}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// A server that refuses a call until the user is done on a page
// (URL elicitation required, 2025-11-25): the page is put to the user,
// marked as one after which the call is sent again; once the user is done
// the call goes once more and runs once. Declined, it stays the server's
// answer, sent once; a server that refuses again gets no third request.
// Without a handler the refusal is the answer, as before.
func TestPagesRequiredBeforeTheCall(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cases := []struct {
				name      string
				never     bool
				answer    string // the user's answer to the page
				handler   bool
				calls     int    // tools/call requests
				runs      int32  // tool runs
				wantText  string // the result, or "" for the refusal
				wantPages int
			}{
				{"done", false, domain.ElicitAccept, true, 2, 1, "3 files", 1},
				{"declined", false, domain.ElicitDecline, true, 1, 0, "", 1},
				{"cancelled", false, domain.ElicitCancel, true, 1, 0, "", 1},
				{"refused again", true, domain.ElicitAccept, true, 2, 0, "", 1},
				{"no handler", false, "", false, 1, 0, "", 0},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					srv := &pagedServer{}
					srv.never.Store(c.never)
					ts, rec := serve(t, srv.handler(era.stateless))
					g := callGateway(t, 5*time.Second)
					r := registration(t, ts.URL, era.protocol, nil)
					var asked []domain.ElicitRequest
					call := domain.ToolCall{NativeName: "files", Arguments: json.RawMessage(`{}`)}
					if c.handler {
						call.Elicit = func(_ context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
							asked = append(asked, req)
							srv.done.Store(true) // the user connected the account on the page
							return domain.ElicitResponse{Action: c.answer}, nil
						}
					}
					out := g.Call(context.Background(), r, call)
					if n := rec.count("tools/call"); n != c.calls {
						t.Errorf("%d tools/call requests, want %d", n, c.calls)
					}
					if n := srv.runs.Load(); n != c.runs {
						t.Errorf("the tool ran %d times, want %d", n, c.runs)
					}
					if len(asked) != c.wantPages {
						t.Fatalf("asked %+v", asked)
					}
					if c.wantPages > 0 {
						want := domain.ElicitRequest{Mode: "url", Message: connectPage.Message, URL: connectPage.URL, ElicitationID: "p1", Resend: true}
						if !reflect.DeepEqual(asked[0], want) {
							t.Errorf("asked %+v, want %+v", asked[0], want)
						}
						wantRecs := []domain.ElicitRecord{{Mode: "url", Action: c.answer}}
						if len(out.Elicitations) != 1 || out.Elicitations[0] != wantRecs[0] || out.Rounds != c.calls {
							t.Errorf("recorded %d rounds %+v", out.Rounds, out.Elicitations)
						}
					}
					if c.wantText != "" {
						if got := callText(t, out); got != c.wantText {
							t.Fatalf("result %q", got)
						}
						return
					}
					if out.Outcome != domain.OutcomeKnownResponse || out.ServerError == nil || out.ServerError.Code != codeURLElicitationRequired ||
						out.ServerError.DataJSON == nil || !strings.Contains(*out.ServerError.DataJSON, connectPage.URL) {
						t.Fatalf("outcome %+v (server error %+v)", out, out.ServerError)
					}
				})
			}
		})
	}
}

// announce sends notifications/elicitation/complete on ss, as a server
// does when the user is done on the page. It goes on the session's
// standalone stream, which the client opens just after the session starts:
// until it is there, the server cannot announce, and tries again.
func announce(ss *mcp.ServerSession, id string) error {
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err = ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: id}); err == nil {
			return nil
		}
	}
	return err
}

// A 2025 server may announce the page done (notifications/elicitation/
// complete) while the user's popup still shows it: that ends the question
// as done — the popup is withdrawn — and the call goes once more.
func TestPageAnnouncedDone(t *testing.T) {
	srv := &pagedServer{}
	ts, rec := serve(t, srv.handler(false))
	g := callGateway(t, 5*time.Second)
	r := registration(t, ts.URL, domain.Protocol20251125, nil)
	withdrawn := make(chan error, 1)
	call := domain.ToolCall{NativeName: "files", Arguments: json.RawMessage(`{}`),
		Elicit: func(ctx context.Context, req domain.ElicitRequest) (domain.ElicitResponse, error) {
			srv.done.Store(true)
			if err := announce(srv.session.Load(), "p1"); err != nil {
				t.Error(err)
			}
			select {
			case <-ctx.Done():
				withdrawn <- context.Cause(ctx)
				return domain.ElicitResponse{}, ctx.Err()
			case <-time.After(5 * time.Second):
				withdrawn <- nil
				return domain.ElicitResponse{Action: domain.ElicitCancel}, nil
			}
		}}
	out := g.Call(context.Background(), r, call)
	if err := <-withdrawn; err != errPageDone {
		t.Fatalf("the question ended with %v, not the server's announcement", err)
	}
	if got := callText(t, out); got != "3 files" || srv.runs.Load() != 1 || rec.count("tools/call") != 2 {
		t.Fatalf("result %q, %d runs, %d requests", got, srv.runs.Load(), rec.count("tools/call"))
	}
	if len(out.Elicitations) != 1 || out.Elicitations[0] != (domain.ElicitRecord{Mode: "url", Action: domain.ElicitAccept}) {
		t.Fatalf("recorded %+v", out.Elicitations)
	}
	// an announcement nobody waits for is dropped
	if err := srv.session.Load().NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "p1"}); err != nil {
		t.Fatal(err)
	}
}

// What the refusal names is read strictly: only URL pages with an id and
// an address, at most maxPages; anything else stays the server's answer
// and nobody is asked.
func TestPagesRequired(t *testing.T) {
	page := `{"mode":"url","elicitationId":"a","url":"https://x.example/","message":"m"}`
	many := strings.Repeat(page+",", maxPages) + page
	for _, c := range []struct {
		name string
		code int32
		data string
		ok   bool
	}{
		{"one page", codeURLElicitationRequired, `{"elicitations":[` + page + `]}`, true},
		{"mode inferred from the url", codeURLElicitationRequired, `{"elicitations":[{"elicitationId":"a","url":"https://x.example/"}]}`, true},
		{"another code", -32603, `{"elicitations":[` + page + `]}`, false},
		{"no data", codeURLElicitationRequired, ``, false},
		{"no pages", codeURLElicitationRequired, `{"elicitations":[]}`, false},
		{"a form", codeURLElicitationRequired, `{"elicitations":[{"mode":"form","message":"m","requestedSchema":{"type":"object"}}]}`, false},
		{"no id", codeURLElicitationRequired, `{"elicitations":[{"mode":"url","url":"https://x.example/"}]}`, false},
		{"no url", codeURLElicitationRequired, `{"elicitations":[{"mode":"url","elicitationId":"a"}]}`, false},
		{"too many", codeURLElicitationRequired, `{"elicitations":[` + many + `]}`, false},
		{"not an object", codeURLElicitationRequired, `[1]`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := serverError(int64(c.code), "m", json.RawMessage(c.data))
			pages, ok := pagesRequired(out)
			if ok != c.ok || ok && (len(pages) != 1 || !pages[0].Resend || pages[0].Mode != domain.ElicitURL) {
				t.Fatalf("pagesRequired = %+v, %v", pages, ok)
			}
		})
	}
}
