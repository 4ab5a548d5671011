package webtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Issue 11's acceptance, as a user meets it: the real `ttmcp serve -v` and
// the real `ttmcp demo-server --auth` (access tokens living 5 s), the
// Manager in the playground, Chromium with its popup blocker on. The user
// adds the server, sees "Needs sign-in" after discovery, signs in through
// the window opened in the click and approves; tools and a test call work;
// once the access token has expired a test call still works, through the
// refresh token, without another sign-in; every token is then revoked at
// the authorization server: a test call is refused (not sent) and, once
// the refused refresh ended the sign-in, the row needs sign-in again; sign
// out deletes the tokens. Throughout, no WebSocket frame the page received,
// no line either process wrote and no audit record holds an authorization
// code, an access or refresh token or the client secret.
func TestSignInAcceptance(t *testing.T) {
	needBundle(t)
	bin := buildTTMCP(t)
	demoProc := startTTMCP(t, bin, "demo-server", "--auth", "--listen", "127.0.0.1:0", "--token-ttl", "5s")
	endpoint := demoProc.waitFor(t, regexp.MustCompile(`register (http://127\.0\.0\.1:\d+/mcp)`))[1]
	root := t.TempDir()
	backendProc := startTTMCP(t, bin, "serve", "--listen", "127.0.0.1:0", "--data-root", root, "-v")
	base := backendProc.waitFor(t, regexp.MustCompile(`msg="ttmcp serving" url=(http://127\.0\.0\.1:\d+)/`))[1]

	ctx, cancel := chromedp.NewContext(popupBrowser(t))
	defer cancel()
	p := &page{tb: t, ctx: ctx}
	ws, sent := recordFrames(t, ctx)
	p.navigate(base + "/")
	waitHostReady(p)
	injectUI(t, p)
	p.run(`await ui.withText(/Servers · \d+|No MCP servers yet/, document);`)

	// secrets gathers every credential of the flow: the code from the
	// callback URL, the tokens and the client secret from the auth file.
	secrets := map[string]bool{}
	authPath := func() string {
		files, _ := filepath.Glob(filepath.Join(root, "_tauritavern", "mcp", "auth", "*.json"))
		if len(files) > 1 {
			t.Fatalf("auth files %v", files)
		}
		if len(files) == 0 {
			return ""
		}
		return files[0]
	}
	readAuth := func() *keptAuth {
		path := authPath()
		if path == "" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var a keptAuth
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if tok := a.Token; tok != nil {
			for _, s := range []domain.Secret{tok.AccessToken, tok.RefreshToken, tok.Client.ClientSecret} {
				if s != "" {
					secrets[s.Reveal()] = true
				}
			}
		}
		return &a
	}

	// Add, activate, expand: discovery is refused, the row needs sign-in.
	p.run(`await ui.click('button', 'Add server', document);
		await ui.get('dialog', undefined, document); await ui.withText('Add MCP server');
		await ui.type('Name', 'Signed'); await ui.type('Endpoint', %s);
		await ui.click('button', 'Add server');
		await ui.get('button', 'Paused', await ui.row('Signed'));`, endpoint)
	p.run(`await ui.click('button', 'Paused', await ui.row('Signed'));
		await ui.click('button', 'Activate');
		await ui.get('button', 'Active', await ui.row('Signed'));`)
	p.run(`const row = await ui.row('Signed');
		await ui.click('button', 'Show or hide tools', row);
		await ui.withText('This server asks you to sign in before it can be used.', row);
		await ui.withText('Needs sign-in', row);
		await ui.withText('mcp.auth_required', row);`)
	if a := readAuth(); a == nil || a.Token != nil || a.Challenge == nil || a.Challenge.Status != 401 {
		t.Fatalf("after discovery: %+v", a)
	}

	// Sign in: the window opens in the click; the user approves there.
	popupID := clickSignIn(t, p)
	pctx, pcancel := chromedp.NewContext(ctx, chromedp.WithTargetID(popupID))
	defer pcancel()
	wctx, wcancel := context.WithTimeout(pctx, 30*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
		t.Fatalf("approval page: %v", err)
	}
	var callback struct {
		sync.Mutex
		url string
	}
	if err := chromedp.Listen(pctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.Contains(e.Request.URL, jsapi.PathOAuthCallback) {
			callback.Lock()
			callback.url = e.Request.URL
			callback.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(wctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(wctx, chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	p.run(`const row = await ui.row('Signed');
		await ui.withText('Signed in', row);
		await ui.withText('5 tools', row);`)
	waitForTargetGone(t, ctx, popupID)
	callback.Lock()
	back, _ := url.Parse(callback.url)
	callback.Unlock()
	if back == nil || back.Query().Get("code") == "" || !strings.HasPrefix(back.String(), base+jsapi.PathOAuthCallback+"?") {
		t.Fatalf("the sign-in window was sent back to %q (query left out)", strings.Split(callback.url, "?")[0])
	}
	secrets[back.Query().Get("code")] = true
	signedIn := readAuth()
	if signedIn == nil || signedIn.Token == nil || signedIn.Token.RefreshToken == "" || signedIn.Token.ExpiresAt == nil || signedIn.Challenge != nil {
		t.Fatalf("after sign-in: %+v", signedIn)
	}

	testCall := func(text, want string) {
		t.Helper()
		p.run(`await ui.click('button', 'Test call', document);
			await ui.withText('Test MCP tool');
			await ui.choose('Server', 'Signed');
			await ui.choose('Tool', 'Echo');
			await ui.type(/^text\b/, %s);
			await ui.click('button', 'Run test');
			await ui.withText(%s);
			await ui.click('button', 'Close');
			await ui.gone(() => [...document.querySelectorAll('dialog[open]')].find((d) => d.textContent.includes('Test MCP tool')), 'the test console');`, text, want)
	}
	testCall("signed in", "Server responded")

	// The access token expires; the next call refreshes it first, with no
	// other sign-in.
	before := readAuth().Token
	time.Sleep(time.Until(*before.ExpiresAt) + 200*time.Millisecond)
	testCall("after expiry", "Server responded")
	after := readAuth().Token
	if after == nil || after.RefreshedAt == nil || after.AccessToken == before.AccessToken || !after.ExpiresAt.After(*before.ExpiresAt) {
		t.Fatalf("no refresh: before %+v, after %+v", before, after)
	}
	if n := countFrames(sent.all(), jsapi.CmdStartSignIn); n != 1 {
		t.Fatalf("%d sign-ins started, want the one", n)
	}
	p.run(`await ui.withText('Signed in', await ui.row('Signed'));`)

	// Every token revoked at the authorization server (its "Revoke every
	// token" button): the call is refused, not sent; the refused token is
	// dropped, the next operation's refresh is refused and ends the
	// sign-in: the row needs sign-in again.
	resp, err := http.PostForm(strings.TrimSuffix(endpoint, "/mcp")+"/revoke-all", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke-all: %s", resp.Status)
	}
	testCall("revoked", "The server refused the request because it needs sign-in, so the tool did not run.")
	p.run(`const row = await ui.row('Signed');
		await ui.click('button', 'Refresh tools', row);
		await ui.withText('This server asks you to sign in before it can be used.', row);
		await ui.withText('Needs sign-in', row);
		await ui.gone(() => row.querySelector('.tt-mcp-auth-signed-in'), 'the Signed in chip');`)
	if a := readAuth(); a == nil || a.Token != nil || a.Challenge == nil {
		t.Fatalf("after revocation: %+v", a)
	}
	records := auditRecords(t, root)
	var outcomes []string
	for _, r := range records {
		outcomes = append(outcomes, r.Outcome+" "+r.Code)
	}
	if want := []string{"known_response ", "known_response ", "not_sent mcp.auth_required"}; strings.Join(outcomes, "|") != strings.Join(want, "|") {
		t.Fatalf("audit outcomes %q, want %q", outcomes, want)
	}

	// Sign in again, then sign out: the tokens are deleted.
	popupID = clickSignIn(t, p)
	pctx2, pcancel2 := chromedp.NewContext(ctx, chromedp.WithTargetID(popupID))
	defer pcancel2()
	wctx2, wcancel2 := context.WithTimeout(pctx2, 30*time.Second)
	defer wcancel2()
	if err := chromedp.Do(wctx2, chromedp.WaitVisible(chromedp.ID("approve")), chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatalf("approval page: %v", err)
	}
	p.run(`await ui.withText('Signed in', await ui.row('Signed'));`)
	waitForTargetGone(t, ctx, popupID)
	readAuth()
	p.run(`const row = await ui.row('Signed');
		await ui.click('button', 'Sign out', row);
		await ui.gone(() => row.querySelector('.tt-mcp-auth-signed-in'), 'the Signed in chip');`)
	if path := authPath(); path != "" {
		t.Fatalf("after sign-out the auth file is still there: %s", path)
	}

	// Nothing leaked: the page's frames and document, both processes'
	// output (the backend's at its most verbose, -v), the audit log.
	if len(secrets) < 6 { // a code, 3 access and 3 refresh tokens, a client secret: some may be missed between reads
		t.Fatalf("only %d credentials gathered: the checks would prove little", len(secrets))
	}
	html := evalJS[string](p, `return document.documentElement.outerHTML;`)
	stopped := backendProc.stop(t) + demoProc.stop(t)
	for _, line := range []string{`msg="signed in to an MCP server"`, `msg="MCP sign-in ended: the refresh token was refused"`} {
		if !strings.Contains(stopped, line) {
			t.Fatalf("the backend's log lacks %s: the check would prove little:\n%s", line, stopped)
		}
	}
	var audit []string
	for _, r := range auditRecords(t, root) {
		audit = append(audit, r.Raw)
	}
	places := map[string][]string{"the backend's or the demo's output": {stopped}, "the page": {html}, "the audit log": audit,
		"a WebSocket frame the page received": ws.all(), "a WebSocket frame the page sent": sent.all()}
	if len(ws.all()) < 20 {
		t.Fatalf("only %d frames received: the check would prove little", len(ws.all()))
	}
	for where, texts := range places {
		for _, text := range texts {
			for secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("%s holds a credential (%.6s…)", where, secret)
				}
			}
		}
	}
}

// clickSignIn clicks the Sign in button where the Signed row explains
// the refusal, as a user does (a real mouse click: the popup blocker is
// on), and returns the window it opened.
func clickSignIn(t *testing.T, p *page) target.ID {
	t.Helper()
	p.run(`const notice = (await ui.row('Signed')).querySelector('.tt-mcp-auth-notice');
		(await ui.get('button', 'Sign in', notice)).id = 'sign-in-here';`)
	popup := chromedp.WaitNewTarget(p.ctx, func(info *target.Info) bool { return info.Type == "page" })
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.ID("sign-in-here"))); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-popup:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no sign-in window opened")
	}
	return ""
}

// keptAuth is what the test reads of an auth file.
type keptAuth struct {
	Challenge *struct {
		Status int `json:"status"`
	} `json:"challenge"`
	Token *struct {
		AccessToken  domain.Secret `json:"accessToken"` // Secret: a failure message never prints it
		RefreshToken domain.Secret `json:"refreshToken"`
		ExpiresAt    *time.Time    `json:"expiresAt"`
		RefreshedAt  *time.Time    `json:"refreshedAt"`
		Client       struct {
			ClientSecret domain.Secret `json:"clientSecret"`
		} `json:"client"`
	} `json:"token"`
}

// auditRecord is what the test reads of an audit record.
type auditRecord struct {
	Outcome string `json:"outcome"`
	Code    string `json:"code"`
	Raw     string `json:"-"`
}

// auditRecords reads every audit record under root, oldest first.
func auditRecords(t *testing.T, root string) []auditRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "_tauritavern", "mcp", "audit", "*"))
	var out []auditRecord
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			var r auditRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			r.Raw = line
			out = append(out, r)
		}
	}
	return out
}

// countFrames counts the frames that invoke command.
func countFrames(frames []string, command string) int {
	n := 0
	for _, f := range frames {
		if strings.Contains(f, `"`+command+`"`) {
			n++
		}
	}
	return n
}

// injectUI evaluates testdata/ui.js in a page the backend under test does
// not serve it to (a real `ttmcp serve`).
func injectUI(t *testing.T, p *page) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "ui.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](string(src))); err != nil {
		t.Fatalf("ui.js: %v", err)
	}
}

// buildTTMCP builds the ttmcp command, with what it embeds (the shim, the
// playground, the extension: built by `make webtest`).
func buildTTMCP(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ttmcp")
	cmd := exec.Command("go", "build", "-o", out, "./backend/cmd/ttmcp")
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./backend/cmd/ttmcp: %v\n%s", err, b)
	}
	return out
}

// process is a ttmcp process whose output (stdout and stderr) is kept.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startTTMCP starts bin with args; it is interrupted when the test ends.
func startTTMCP(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// waitFor waits for a line of output that matches re and returns its
// submatches.
func (p *process) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.output()))
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				return m
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.cmd.Args, p.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s: no line matches %s:\n%s", p.cmd.Args, re, p.output())
	return nil
}

// stop interrupts the process (as Ctrl+C does), waits for it and returns
// its whole output.
func (p *process) stop(t *testing.T) string {
	select {
	case <-p.done:
		return p.output()
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop on an interrupt", p.cmd.Args)
	}
	return p.output()
}
