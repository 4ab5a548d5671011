package webtest

import (
	"bufio"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/jsapi"
)

// SillyTavern opened from another device (issue 28), in Chromium, with
// nothing of ours stood in but SillyTavern itself: the stand-in of
// SillyTavern 1.18.0's server (plugin/test/sillytavern.mjs: real Express
// and middleware, basic auth, the IP whitelist, cookie sessions, user
// accounts, CSRF, login, then its plugin loader) listening on the machine's
// own non-loopback address, the real plugin put there by the real
// `ttmcp install-extension`, and the real `ttmcp serve` the plugin starts on
// loopback. The page is opened at http://<that address>:<port>/ and at
// https://…, as a phone on the LAN or a browser behind a TLS proxy would.
//
// What it shows: the page loads the API from SillyTavern's origin and
// lists, creates, discovers and test-calls through it; two SillyTavern
// users in two browser contexts never see each other's servers (an id of
// the other's answers not found); a request without SillyTavern's
// credentials is refused by SillyTavern; ttmcp killed with -9 while both
// pages are open is started again by the plugin, the pages reconnect and
// nothing is lost; SillyTavern's exit stops it; and the network log holds
// no request to any other origin.
func TestSillyTavernFromAnotherDevice(t *testing.T) {
	ip := machineAddress(t)
	demo := newDemoServer(t) // the MCP server, on loopback beside ttmcp
	t.Run("http", func(t *testing.T) {
		st := startSillyTavern(t, ip, false)
		bctx := deviceBrowser(t)
		alice, aliceRequests := st.tab(t, bctx, "alice")
		bob, bobRequests := st.tab(t, bctx, "bob")

		// Through SillyTavern's origin, as alice.
		aliceID := addServer(alice, "Alice demo", demo.endpoint())
		if got := st.testCall(alice, aliceID, "from alice"); !strings.Contains(got, "from alice") {
			t.Fatalf("alice's test call through the plugin: %s", got)
		}

		// A model's call, as the extension's generation hook makes it (the
		// legacy adapter), from this page — plain http at a LAN address is
		// not a secure context, so the page has no crypto.randomUUID.
		type modelCall struct {
			Secure          bool
			RandomUUID      string
			Result, Offered string
		}
		mc := evalJS[modelCall](alice, `
			const tt = window.__TAURITAVERN__;
			await tt.api.mcp.tools.setPermission({ registrationId: %s, nativeName: 'echo', permission: 'allow' });
			const { createLegacyMcpGenerationContext } = await import(new URL('jsapi/legacy-mcp-tools.js', location.href).href);
			const round = (await createLegacyMcpGenerationContext()).createRound();
			const data = { tools: [] };
			round.mergeIntoToolData(data);
			round.finalizeAdvertisedTools(data);
			const name = data.tools.map((t) => t.function.name).find((n) => n.endsWith('echo')) ?? '';
			const out = { secure: window.isSecureContext, randomUUID: typeof crypto.randomUUID, offered: name, result: '' };
			if (name) out.result = (await round.resolveTool(name).invoke({ argumentsJson: JSON.stringify({ text: 'the model asked' }) })).result;
			return out;`, aliceID)
		if mc.Secure || mc.RandomUUID != "undefined" {
			t.Logf("this page is a secure context (%+v): the insecure-context case is not shown", mc)
		}
		if mc.Offered == "" || !strings.Contains(mc.Result, "the model asked") {
			t.Fatalf("alice's model call through the plugin: %+v", mc)
		}

		// Bob, another SillyTavern user on the same SillyTavern: nothing
		// of alice's, and her id is not found for him.
		type bobView struct {
			Servers []string
			Code    string
		}
		bv := evalJS[bobView](bob, `
			const tt = window.__TAURITAVERN__;
			const out = { servers: (await tt.api.mcp.servers.list()).servers.map((s) => s.displayName), code: '' };
			try { out.code = 'resolved ' + JSON.stringify(await tt.api.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{"text":"x"}' })); }
			catch (e) { out.code = String(e?.code ?? e?.message ?? e); }
			return out;`, aliceID)
		t.Logf("bob calling alice's id: %s", bv.Code)
		if len(bv.Servers) != 0 || !strings.Contains(bv.Code, "not_found") {
			t.Fatalf("bob sees %+v; want no servers and alice's id not found", bv)
		}
		// A hostile page of bob's forging the plugin's headers on every
		// request of its own session and transport (another user, admin, a
		// secret) is still bob: the plugin replaces every X-Ttmcp-* header.
		forged := evalJS[[]string](bob, `
			const { HttpSocket } = await import(new URL('jsapi/http-socket.js', location.href).href);
			const forged = { 'X-Ttmcp-User': 'alice', 'X-Ttmcp-User-Admin': '1', 'X-Ttmcp-Plugin': 'guess', 'X-Ttmcp-Origin': 'http://127.0.0.1:1' };
			const f = (url, init = {}) => fetch(url, { ...init, headers: { ...(init.headers ?? {}), ...forged } });
			const session = await (await f('/api/plugins/ttmcp/jsapi/session')).json();
			const s = new HttpSocket(location.origin + '/api/plugins/ttmcp', { fetch: f });
			await new Promise((resolve, reject) => { s.onopen = resolve; s.onclose = (e) => reject(new Error('closed ' + e.code + ' ' + e.reason)); });
			const frames = [];
			s.onmessage = (e) => frames.push(JSON.parse(e.data));
			const until = async (cond) => { for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 25)); };
			s.send(JSON.stringify({ type: 'hello', token: session.token }));
			await until(() => frames.some((f) => f.type === 'welcome'));
			s.send(JSON.stringify({ type: 'invoke', id: 1, command: %s }));
			await until(() => frames.some((f) => f.type === 'result' && f.id === 1));
			s.close();
			const r = frames.find((f) => f.type === 'result' && f.id === 1);
			if (!r?.ok) throw new Error(JSON.stringify(frames));
			return r.value.servers.map((x) => x.displayName);`, jsapi.CmdListServers)
		if len(forged) != 0 {
			t.Errorf("bob's page forging alice's name lists %v", forged)
		}
		calls := len(demo.toolCalls())
		if calls != 2 {
			t.Fatalf("the demo server got %d tool calls; want alice's two (bob's must not reach it)", calls)
		}

		// SillyTavern's own gate refuses a request without its credentials:
		// 401 without basic auth, 403 with it but signed out.
		for _, c := range []struct {
			auth string
			want int
		}{{"", http.StatusUnauthorized}, {st.authorization, http.StatusForbidden}} {
			req, _ := http.NewRequest(http.MethodGet, st.origin+"/api/plugins/ttmcp/jsapi/session", nil)
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			res, err := st.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Errorf("GET session with authorization %q: %d; want %d", c.auth, res.StatusCode, c.want)
			}
		}

		// ttmcp killed with -9 while both pages are open: the plugin starts
		// it again, the pages reconnect, and nothing is lost.
		pid := st.ttmcpPID(t)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the plugin to start ttmcp again", func() bool {
			again, ok := st.findTTMCP()
			return ok && again != pid
		})
		for _, p := range []*page{alice, bob} {
			state := evalJS[string](p, `
				const b = window.__TAURITAVERN__.mcpBridge;
				for (let i = 0; i < 400 && b.state === 'open'; i++) await new Promise((r) => setTimeout(r, 25));
				for (let i = 0; i < 200 && b.state !== 'open'; i++) { await b.reconnect(); if (b.state !== 'open') await new Promise((r) => setTimeout(r, 50)); }
				return b.state;`)
			if state != "open" {
				t.Fatalf("after kill -9: the bridge is %q", state)
			}
		}
		names := evalJS[[]string](alice, `return (await window.__TAURITAVERN__.api.mcp.servers.list()).servers.map((s) => s.displayName);`)
		if len(names) != 1 || names[0] != "Alice demo" {
			t.Fatalf("alice's servers after kill -9: %v", names)
		}
		if got := st.testCall(alice, aliceID, "after kill"); !strings.Contains(got, "after kill") {
			t.Fatalf("alice's test call after kill -9: %s", got)
		}
		if n := len(evalJS[[]string](bob, `return (await window.__TAURITAVERN__.api.mcp.servers.list()).servers.map((s) => s.id);`)); n != 0 {
			t.Fatalf("bob sees %d servers after kill -9", n)
		}

		for who, requests := range map[string]func() []string{"alice": aliceRequests, "bob": bobRequests} {
			wantOnlyOrigin(t, who, requests(), st.origin)
		}

		// SillyTavern exits: the plugin's exit() stops the ttmcp it started.
		last := st.ttmcpPID(t)
		st.stop(t)
		if err := syscall.Kill(last, 0); err == nil {
			t.Errorf("ttmcp (pid %d) still runs after SillyTavern exited", last)
		}
	})
	t.Run("https", func(t *testing.T) {
		st := startSillyTavern(t, ip, true)
		bctx := deviceBrowser(t, chromedp.Flag("ignore-certificate-errors", true))
		p, requests := st.tab(t, bctx, "alice")
		id := addServer(p, "Over https", demo.endpoint())
		if got := st.testCall(p, id, "over https"); !strings.Contains(got, "over https") {
			t.Fatalf("a test call from an https page: %s", got)
		}
		wantOnlyOrigin(t, "the https page", requests(), st.origin)
	})
}

// machineAddress is an IPv4 address of one of this machine's interfaces
// that is up and not loopback: where a phone on the LAN would reach
// SillyTavern. A machine without one cannot show what this test is about.
func machineAddress(t testing.TB) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String()
			}
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address to open SillyTavern at")
	return ""
}

// deviceSillyTavern is a running stand-in of SillyTavern with the plugin.
type deviceSillyTavern struct {
	origin        string // http(s)://<machine address>:<port>
	backend       string // http://127.0.0.1:<port>, where the plugin starts ttmcp
	authorization string // basic auth's header value
	dataRoot      string // the one the plugin starts ttmcp serve with
	client        *http.Client
	cmd           *exec.Cmd
	exited        chan struct{}
}

// startSillyTavern installs the plugin with the real installer into a
// scratch SillyTavern folder and starts the stand-in at ip: listen with
// basic auth, the whitelist naming ip and loopback, user accounts alice
// and bob, server plugins on.
func startSillyTavern(t testing.TB, ip string, https bool) *deviceSillyTavern {
	t.Helper()
	bin := ttmcpBinary(t)
	tools := nodeTools(t)
	node := filepath.Join(tools, "node_modules", ".bin", "node")
	dir := t.TempDir()
	stDir := filepath.Join(dir, "SillyTavern")
	for name, body := range map[string]string{
		"package.json":                 `{"name":"sillytavern","version":"1.18.0"}`,
		"server.js":                    "",
		"config.yaml":                  "listen: true\nenableServerPlugins: true\n",
		"public/scripts/extensions.js": "",
	} {
		path := filepath.Join(stDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port := freeLoopbackPort(t)
	st := &deviceSillyTavern{backend: "http://127.0.0.1:" + port, dataRoot: filepath.Join(dir, "ttmcp-data"), exited: make(chan struct{})}
	install := exec.Command(bin, "install-extension", "--sillytavern", stDir, "--backend", st.backend, "--data-root", st.dataRoot)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install-extension: %v\n%s", err, out)
	}
	opts := map[string]any{
		"host":       ip,
		"port":       0,
		"pluginsDir": filepath.Join(stDir, "plugins"),
		"basicAuth":  map[string]string{"username": "st", "password": "pw"},
		"whitelist":  []string{ip, "127.0.0.1"},
		"accounts": map[string]any{
			"alice": map[string]any{"name": "Alice", "password": "a-pw", "admin": true},
			"bob":   map[string]any{"name": "Bob", "password": "b-pw", "admin": false},
		},
	}
	st.client = &http.Client{Timeout: 10 * time.Second}
	if https {
		cert, key := selfSignedCert(t, dir, ip)
		opts["tls"] = map[string]string{"cert": cert, "key": key}
		st.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	arg, _ := json.Marshal(opts)
	st.cmd = exec.Command(node, filepath.Join("..", "plugin", "test", "serve.mjs"), string(arg))
	st.cmd.Env = append(os.Environ(), "TTMCP_NODE_TOOLS="+tools)
	logs := newTestLog(t, "sillytavern") // before the cleanup that stops it: cleanups run last first
	st.cmd.Stderr = logs
	stdout, err := st.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { st.cmd.Wait(); close(st.exited) }()
	t.Cleanup(func() { st.stop(t) })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if origin, ok := strings.CutPrefix(lines.Text(), "listening "); ok {
			st.origin = origin
			break
		}
		logs.line(lines.Text())
	}
	if st.origin == "" {
		t.Fatal("the SillyTavern stand-in never said where it listens")
	}
	go func() {
		for lines.Scan() {
			logs.line(lines.Text()) // the plugin's [ttmcp] lines among them
		}
	}()
	st.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte("st:pw"))
	return st
}

// stop ends SillyTavern as Ctrl-C does (SIGINT: the plugins' exit() runs)
// and waits for it.
func (st *deviceSillyTavern) stop(t testing.TB) {
	select {
	case <-st.exited:
		return
	default:
	}
	st.cmd.Process.Signal(os.Interrupt)
	select {
	case <-st.exited:
	case <-time.After(15 * time.Second):
		st.cmd.Process.Kill()
		<-st.exited
		t.Error("SillyTavern did not exit within 15 s of SIGINT")
	}
}

// tab opens a page of a fresh browser context (its own cookies) with
// SillyTavern's basic auth, signs in as handle through SillyTavern's login
// and loads the API from the plugin's path; requests is its network log.
func (st *deviceSillyTavern) tab(t testing.TB, bctx context.Context, handle string) (*page, func() []string) {
	t.Helper()
	p, requests := logTab(t, bctx, true)
	if _, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": st.authorization}}); err != nil {
		t.Fatal(err)
	}
	p.navigate(st.origin + "/api/plugins/ttmcp/")
	passwords := map[string]string{"alice": "a-pw", "bob": "b-pw"}
	type ready struct{ Login, State, Backend, Error string }
	got := evalJS[ready](p, `
		const csrf = (await (await fetch('/csrf-token')).json()).token;
		const login = await fetch('/api/users/login', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ handle: %s, password: %s }) });
		if (!login.ok) return { login: String(login.status) };
		await import(new URL('jsapi/tauritavern-mcp.js', location.href).href);
		const tt = window.__TAURITAVERN__;
		await tt.ready;
		for (let i = 0; i < 200 && tt.mcpBridge.state !== 'open'; i++) { await tt.mcpBridge.reconnect(); if (tt.mcpBridge.state !== 'open') await new Promise((r) => setTimeout(r, 100)); }
		return { login: 'ok', state: tt.mcpBridge.state, backend: tt.mcpBridge.backend, error: tt.mcpBridge.error?.message ?? '' };`,
		handle, passwords[handle])
	if got.Login != "ok" || got.State != "open" || got.Backend != st.origin+"/api/plugins/ttmcp" {
		t.Fatalf("%s's page: %+v (want signed in, open at %s/api/plugins/ttmcp)", handle, got, st.origin)
	}
	return p, requests
}

// addServer registers endpoint as name from the page, activates it,
// discovers its tools and returns its id.
func addServer(p *page, name, endpoint string) string {
	return evalJS[string](p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: %s, endpoint: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await mcp.servers.discover(s.id);
		return s.id;`, name, endpoint)
}

// testCall test-calls the demo's echo with text and returns the outcome as
// JSON (the result, or the error's code and message).
func (st *deviceSillyTavern) testCall(p *page, id, text string) string {
	return evalJS[string](p, `
		try { return JSON.stringify(await window.__TAURITAVERN__.api.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: JSON.stringify({ text: %s }) })); }
		catch (e) { return 'error ' + (e?.code ?? '') + ' ' + (e?.message ?? e); }`, id, text)
}

// findTTMCP is the pid of the ttmcp serve running with st's data root.
func (st *deviceSillyTavern) findTTMCP() (int, bool) {
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[1] == "serve" && strings.Contains(string(cmdline), "\x00"+st.dataRoot+"\x00") {
			if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // exited, not yet reaped
			}
			return pid, true
		}
	}
	return 0, false
}

func (st *deviceSillyTavern) ttmcpPID(t testing.TB) int {
	t.Helper()
	pid, ok := st.findTTMCP()
	if !ok {
		t.Fatalf("no ttmcp serve runs with the data root %s", st.dataRoot)
	}
	return pid
}

// deviceBrowser is a Chromium of its own (the suite's shares no flags).
func deviceBrowser(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bctx, stop, err := launchBrowser(t.TempDir(), extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return bctx
}

// wantOnlyOrigin fails for a request the page made to anywhere but origin.
func wantOnlyOrigin(t *testing.T, who string, requests []string, origin string) {
	t.Helper()
	if len(requests) == 0 {
		t.Errorf("%s: an empty network log", who)
	}
	for _, r := range requests {
		u := strings.SplitN(r, " ", 2)[1]
		if !strings.HasPrefix(u, origin+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("%s made a request to another origin: %s", who, r)
		}
	}
}

// ttmcpBinary is the ttmcp that make built (TTMCP_BIN, set by make
// webtest), else ../bin/ttmcp.
func ttmcpBinary(t testing.TB) string {
	t.Helper()
	bin := cmp.Or(os.Getenv("TTMCP_BIN"), filepath.Join("..", "bin", "ttmcp"))
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s: %v (make backend builds it; make webtest does)", abs, err)
	}
	return abs
}

func freeLoopbackPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// selfSignedCert writes a certificate for ip and its key as PEM files.
func selfSignedCert(t testing.TB, dir, ip string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: ip},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// testLog writes a process's output into the test's log, line by line,
// until the test ends (a log call after that would panic).
type testLog struct {
	t    testing.TB
	name string

	mu   sync.Mutex
	done bool
}

func newTestLog(t testing.TB, name string) *testLog {
	l := &testLog{t: t, name: name}
	t.Cleanup(func() { l.mu.Lock(); l.done = true; l.mu.Unlock() })
	return l
}

func (l *testLog) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(l.name + ": " + s)
	}
}

func (l *testLog) Write(b []byte) (int, error) {
	for line := range strings.Lines(string(b)) {
		l.line(strings.TrimRight(line, "\n"))
	}
	return len(b), nil
}
