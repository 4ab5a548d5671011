package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// accountServer is a go-sdk MCP server whose tool files needs the user to
// connect an account on its page first: until then it refuses the call
// with a URL-elicitation-required error (-32042) and runs nothing. Its
// page /connect connects the account, and on a 2025 session announces the
// page done (notifications/elicitation/complete).
type accountServer struct {
	mu        sync.Mutex
	connected bool
	refusals  int
	runs      int
	session   *mcp.ServerSession
	page      string // the page's URL
}

func (a *accountServer) counts() (refusals, runs int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refusals, a.runs
}

func (a *accountServer) handler(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "account", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "files", Title: "Files", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			if !a.connected {
				a.refusals++
				a.session = req.Session
				return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: "acct-1",
					URL: a.page, Message: "Connect your Files account."}})
			}
			a.runs++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 files"}}}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// connect is the account page: the user connects there.
func (a *accountServer) connect(announce bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.connected = true
		ss := a.session
		a.mu.Unlock()
		if announce && ss != nil {
			// on the session's standalone stream, which the client opens
			// just after the session starts: until it is there, try again
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if ss.NotifyElicitationComplete(r.Context(), &mcp.ElicitationCompleteParams{ElicitationID: "acct-1"}) == nil {
					break
				}
			}
		}
		fmt.Fprint(w, "<!doctype html><title>Files</title><p>Account connected.")
	})
}

// A server that refuses a call until the user connects an account on its
// page (URL elicitation required, 2025-11-25): the popup says the tool did
// not run and the call goes again once the user is done; Open page opens
// it, and a second popup waits for the user to be done there. On 2025 the
// server announces the page done and that popup closes by itself; on 2026
// (no stream to announce on) the user presses Done. The call then runs
// once, in two requests, and the console says so.
func TestElicitationPageBeforeTheCall(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			acct := &accountServer{}
			acctPage := httptest.NewServer(acct.connect(!era.stateless))
			t.Cleanup(acctPage.Close)
			acct.page = acctPage.URL + "/connect"
			mcpSrv := newMCPServer(t, acct.handler(era.stateless))
			p := consoleWithPopups(t, mcpSrv.endpoint(), era.protocol)
			ctx := p.ctx
			runTest(p, "Files")
			q := waitQuestion(p, "Asker asks you to open a page")
			if !strings.Contains(q.Text, "Asker did not run the tool: it needs you to finish on this page first. Once you are done there, the call is sent again.") ||
				!strings.Contains(q.Text, "Connect your Files account.") {
				t.Errorf("the popup says:\n%s", q.Text)
			}
			if era.name == "2025" {
				shots(p, "elicit-page-first")
			}
			opened := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return info.Type == "page" })
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`dialog.popup:has(.tt-mcp-elicit) .popup-button-ok`))); err != nil {
				t.Fatal(err)
			}
			select {
			case <-opened:
			case <-time.After(20 * time.Second):
				t.Fatal("no tab opened on the click")
			}
			if era.stateless {
				note := evalJS[string](p, `return (await ui.withText('Continue on the page', undefined, 'h3')).closest('.tt-mcp-elicit-opened').innerText;`)
				if !strings.Contains(note, "When you are done there, press Done: the call goes to Asker again.") {
					t.Errorf("after the click the popup says %q", note)
				}
				waitUntil(t, "the account page to be visited", func() bool { acct.mu.Lock(); defer acct.mu.Unlock(); return acct.connected })
				p.run(`await ui.click('button', 'Done');`)
			}
			// 2025: the page's announcement closes the Done popup without a click
			p.run(`await ui.withText('3 files', undefined, 'pre');
				await ui.gone(() => document.querySelector('dialog[open]:not([closing]) .tt-mcp-elicit-opened'), 'the Done popup');`)
			if text := evalJS[string](p, `return document.querySelector('dialog[open] .tt-mcp-test-outcome, dialog[open]')?.innerText ?? '';`); !strings.Contains(text, "2 requests") {
				t.Errorf("the console does not count the two requests:\n%s", text)
			}
			if refusals, runs := acct.counts(); refusals != 1 || runs != 1 {
				t.Errorf("%d refusals and %d runs, want 1 and 1", refusals, runs)
			}
		})
	}
}
