package webtest

// Contract C2 from a real page whose origin the backend does not allow
// (C3): the bridge goes to "refused" with the backend's explanation, every
// API rejects at once with it, nothing hammers the backend, and once the
// backend allows the origin, mcpBridge.reconnect() opens the bridge.

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/jsapi"
)

func TestRefusedOriginBridge(t *testing.T) {
	b := newBackend(t)
	foreign := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(foreign.Close)
	p := openPage(t, foreign.URL+"/foreign.html")

	state := evalJS[string](p, `return await foreign.loadBridge(%s);`, b.origin())
	if state != "refused" {
		t.Fatalf("bridge state %q after ready; want refused", state)
	}
	type status struct {
		State, Backend string
		Error          struct{ Code, Message string }
		Reconnect      string
	}
	st := evalJS[status](p, `const s = window.__TAURITAVERN__.mcpBridge;
		return { state: s.state, backend: s.backend, error: s.error, reconnect: typeof s.reconnect };`)
	wantMessage := "mcp.origin_not_allowed: the ttmcp backend does not allow requests from " + foreign.URL + "; restart it with --allow-origin " + foreign.URL
	if st.Backend != b.origin() || st.Error.Code != jsapi.CodeOriginNotAllowed || st.Error.Message != wantMessage || st.Reconnect != "function" {
		t.Errorf("mcpBridge = %+v; want refused with the backend's message %q", st, wantMessage)
	}

	type result struct {
		Errs    []*jsError
		Outcome map[string]string
		Events  []string
	}
	r := evalJS[result](p, `
		const tt2 = window.__TAURITAVERN__;
		const errs = [
			await tt.err(tt2.api.mcp.servers.list()),
			await tt.err(tt2.api.mcp.tools.setPermission({ registrationId: 'x', nativeName: 'y', permission: 'ask' })),
			await tt.err(tt2.invoke.safeInvoke('list_legacy_mcp_tools')),
			await tt.err(tt2.api.extension.store.tryGetJson({ namespace: 'n', key: 'k' })),
		];
		const outcome = await tt2.api.mcp.tools.testCall({ registrationId: 'x', nativeName: 'y', argumentsJson: '{}' });
		return { errs, outcome, events: tt.states };`)
	for i, e := range r.Errs {
		what := []string{"servers.list()", "tools.setPermission()", "safeInvoke()", "extension.store.tryGetJson()"}[i]
		wantRejection(t, what+" while refused", e, jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
		if e != nil && e.Message != wantMessage {
			t.Errorf("%s message %q", what, e.Message)
		}
	}
	if r.Outcome["outcome"] != "not_sent" || r.Outcome["code"] != jsapi.CodeOriginNotAllowed || r.Outcome["message"] != wantMessage {
		t.Errorf("testCall while refused = %v; want not_sent with the refusal", r.Outcome)
	}
	if len(r.Events) == 0 || r.Events[len(r.Events)-1] != "refused" {
		t.Errorf("state events %v; want the last to be refused", r.Events)
	}

	// No hammering: an unreachable backend would be retried five times in
	// these 2.5 s (0.1, 0.2, 0.4, 0.8 s apart); a refusing one is asked once (the loader's session fetch,
	// which the shim's first attempt uses) and never again by itself.
	time.Sleep(2500 * time.Millisecond)
	sessions := func() int {
		n := 0
		for _, req := range b.seenRequests() {
			if req.Origin == foreign.URL && (req.Path == jsapi.PathSession || req.Path == jsapi.PathWS) {
				n++
			}
		}
		return n
	}
	if n := sessions(); n != 1 {
		t.Errorf("the refused page made %d session or socket requests; want 1 (requests: %+v)", n, b.seenRequests())
	}
	if n := len(b.seenInvokes()); n != 0 {
		t.Errorf("the backend read %d invoke frames from the refused page", n)
	}

	// reconnect() while still refused: one attempt, refused again.
	p.run(`await window.__TAURITAVERN__.mcpBridge.reconnect();`)
	if n := sessions(); n != 2 {
		t.Errorf("%d requests after reconnect(); want 2", n)
	}
	if s := evalJS[string](p, `return tt.state();`); s != "refused" {
		t.Errorf("state %s after a refused reconnect", s)
	}

	// The backend restarts allowing the origin: reconnect() opens the
	// bridge, the error is gone and the API works.
	b.stop()
	b.allow = []string{foreign.URL}
	b.start()
	after := evalJS[status](p, `await window.__TAURITAVERN__.mcpBridge.reconnect();
		const s = window.__TAURITAVERN__.mcpBridge;
		return { state: s.state, backend: s.backend, error: s.error ?? { code: '', message: '' }, reconnect: typeof s.reconnect };`)
	if after.State != "open" || after.Error.Code != "" {
		t.Fatalf("after reconnect to an allowing backend: %+v", after)
	}
	list := evalJS[jsapi.McpServerList](p, `return await window.__TAURITAVERN__.api.mcp.servers.list();`)
	if list.Servers == nil {
		t.Errorf("list() after the reconnect: %+v", list)
	}
	if strings.Contains(b.origin(), foreign.URL) {
		t.Fatal("the foreign page is not foreign")
	}
}

// An unreachable backend keeps the capped backoff, and mcpBridge.error
// names the backend URL with mcp.host_unavailable.
func TestUnreachableBackendStatus(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	b.stop()
	evalJS[string](p, `return await tt.until((s) => s === 'closed', 'the bridge to close');`)
	st := evalJS[map[string]string](p, `return window.__TAURITAVERN__.mcpBridge.error;`)
	if st["code"] != jsapi.CodeHostUnavailable || !strings.Contains(st["message"], b.origin()) {
		t.Errorf("mcpBridge.error = %v; want mcp.host_unavailable naming %s", st, b.origin())
	}
	// it keeps trying: the backend comes back and the bridge opens by itself
	b.start()
	evalJS[string](p, `return await tt.until((s) => s === 'open', 'the bridge to reopen by itself');`)
	if e := evalJS[any](p, `return window.__TAURITAVERN__.mcpBridge.error ?? null;`); e != nil {
		t.Errorf("error while open: %v", e)
	}
}

// hidingAssets serves jsapi.Assets() but answers 404 for the .wasm while
// hide is set: the shim cannot be loaded.
type hidingAssets struct {
	fs.FS
	hide *atomic.Bool
}

func (a hidingAssets) Open(name string) (fs.File, error) {
	if a.hide.Load() && name == "tauritavern-mcp.wasm" {
		return nil, fs.ErrNotExist
	}
	return a.FS.Open(name)
}

// When the shim cannot be loaded, the loader's fallback says so in the
// status (closed, mcp.host_unavailable naming the backend and why) and its
// reconnect() loads the shim again.
func TestLoaderFallbackStatus(t *testing.T) {
	b := newBackend(t)
	var hide atomic.Bool
	hide.Store(true)
	b.stop()
	b.assets = hidingAssets{jsapi.Assets(), &hide}
	b.start()
	p := b.openHost(t)
	type status struct {
		State string
		Error struct{ Code, Message string }
		Err   *jsError
	}
	st := evalJS[status](p, `const s = window.__TAURITAVERN__.mcpBridge;
		return { state: s.state, error: s.error, err: await tt.err(tt.mcp.servers.list()) };`)
	if st.State != "closed" || st.Error.Code != jsapi.CodeHostUnavailable ||
		!strings.Contains(st.Error.Message, b.origin()) || !strings.Contains(st.Error.Message, "tauritavern-mcp.wasm") {
		t.Errorf("fallback status %+v; want closed with mcp.host_unavailable naming the backend and the .wasm", st)
	}
	wantRejection(t, "list() in the fallback", st.Err, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)

	hide.Store(false)
	after := evalJS[status](p, `await window.__TAURITAVERN__.mcpBridge.reconnect();
		const s = window.__TAURITAVERN__.mcpBridge;
		return { state: s.state, error: s.error ?? { code: '', message: '' }, err: await tt.err(tt.mcp.servers.list()) };`)
	if after.State != "open" || after.Error.Code != "" || after.Err != nil {
		t.Errorf("after reconnect: %+v; want the shim loaded and open", after)
	}
	if got := evalJS[[]string](p, `return tt.states;`); len(got) < 3 || got[len(got)-1] != "open" {
		t.Errorf("state events %v", got)
	}
}
