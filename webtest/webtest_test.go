package webtest

// End-to-end tests of the Foundation issue (deliverable 8): the real
// backend and the real wasm shim, driven from host pages in Chromium.

import (
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// unknownID is a canonical UUID no test registers.
const unknownID = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"

// wantRejection checks that got describes an Error rejection with code and
// kind, whose message starts with the code.
func wantRejection(t *testing.T, what string, got *jsError, code, kind string) {
	t.Helper()
	switch {
	case got == nil:
		t.Errorf("%s resolved; want a rejection with %s (%s)", what, code, kind)
	case !got.IsError || got.Code != code || got.Kind != kind || !strings.HasPrefix(got.Message, code+": "):
		t.Errorf("%s rejected with %+v; want an Error with code %s, kind %s and a message starting with %q", what, *got, code, kind, code+": ")
	}
}

// wantFile checks the exact bytes of the registration file of id; want
// holds ID where the id goes and <LS> for U+2028 (written raw, as
// serde_json does).
func wantFile(t *testing.T, b *backend, id, want string) {
	t.Helper()
	got, err := os.ReadFile(b.regPath(id))
	if err != nil {
		t.Fatalf("registration file: %v", err)
	}
	if want = strings.NewReplacer("ID", id, "<LS>", "\u2028").Replace(want); string(got) != want {
		t.Errorf("registration file %s:\n%s\nwant:\n%s", b.regPath(id), got, want)
	}
}

// wantRegistration checks a registration file byte for byte: upstream's
// three leading members, then members, each whole as serde_json's pretty
// printer writes it (two spaces in, no trailing comma).
func wantRegistration(t *testing.T, b *backend, id string, members ...string) {
	t.Helper()
	wantFile(t, b, id, "{\n  \"schemaVersion\": 1,\n  \"kind\": \"tauritavern.mcpServerRegistration\",\n  \"id\": \"ID\",\n"+strings.Join(members, ",\n")+"\n}")
}

// renamed is the registration TestRegistrationMethodsWriteStrictFiles
// updates, up to its state: the members every later step keeps.
const renamed = `  "displayName": "Renamed 🦀 <&><LS>!",
  "endpoint": "https://user:pass@example.com/mcp?tenant=one",
  "headers": {
    "Authorization": "Bearer t",
    "x-api-key": " secret "
  },
  "protocolVersion": "2025-06-18"`

func wantNoFile(t *testing.T, b *backend, id string) {
	t.Helper()
	if _, err := os.Stat(b.regPath(id)); !os.IsNotExist(err) {
		t.Errorf("registration file of %s: %v; want it gone", id, err)
	}
}

// 1. ready resolves and publishes exactly the upstream surface, keeping
// what the host had put on __TAURITAVERN__.
func TestReadyPublishesTheHostAPI(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)

	type surface struct {
		MCP, Servers, Tools []string
		NotFunctions        []string
		SafeInvoke          string
		SameReady           bool
		HostMarker          string
		APIOther            string
		InvokeOther         string
		State               string
		Backend             string
	}
	got := evalJS[surface](p, `
		const tt_ = window.__TAURITAVERN__;
		await tt_.ready;
		const mcp = tt_.api.mcp;
		const fns = [...Object.entries(mcp.servers), ...Object.entries(mcp.tools)];
		return {
			mcp: Object.keys(mcp).sort(),
			servers: Object.keys(mcp.servers).sort(),
			tools: Object.keys(mcp.tools).sort(),
			notFunctions: fns.filter(([, f]) => typeof f !== 'function').map(([k]) => k),
			safeInvoke: typeof tt_.invoke.safeInvoke,
			sameReady: window.__TAURITAVERN_MAIN_READY__ === tt_.ready,
			hostMarker: tt_.hostMarker,
			apiOther: tt_.api.other,
			invokeOther: tt_.invoke.other,
			state: tt_.mcpBridge.state,
			backend: tt_.mcpBridge.backend,
		};`)
	want := surface{
		MCP:          []string{"apps", "audit", "completions", "connections", "elicitation", "prompts", "resources", "results", "servers", "stdio", "toolSearch", "toolSets", "tools"},
		Servers:      []string{"capabilities", "create", "discover", "list", "refresh", "remove", "setCapabilities", "setState", "signIn", "signOut", "update"}, // signIn, signOut, capabilities, setCapabilities: ttmcp's
		Tools:        []string{"setDescriptionOverride", "setPermission", "testCall"},
		NotFunctions: []string{},
		SafeInvoke:   "function",
		SameReady:    true,
		HostMarker:   "kept",
		APIOther:     "kept",
		InvokeOther:  "kept",
		State:        "open",
		Backend:      b.origin(),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("published surface:\n%+v\nwant:\n%+v", got, want)
	}
}

// A reload takes the shim's files (the content-versioned URLs the loader
// names: the wasm, wasm_exec.js, the data plane, the extension store) from
// the HTTP cache without asking the backend, and revalidates the loader,
// which names them (docs/DECISIONS.md, "Content-versioned shim URLs").
func TestLoaderReloadTakesTheShimFromTheCache(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type entry struct {
		Path, Version string
		TransferSize  float64
	}
	const read = `await tt.hostReady;
		return performance.getEntriesByType('resource').filter((r) => new URL(r.name).pathname.startsWith('/jsapi/'))
			.map((r) => { const u = new URL(r.name); return { path: u.pathname, version: u.searchParams.get('v') ?? '', transferSize: r.transferSize }; });`
	first := evalJS[[]entry](p, read)
	p.navigate(b.url("/webtest/host.html"))
	reload := evalJS[[]entry](p, read)
	find := func(entries []entry, path string) (entry, bool) {
		for _, e := range entries {
			if e.Path == path {
				return e, true
			}
		}
		return entry{}, false
	}
	for _, name := range jsapi.Versioned {
		data, err := fs.ReadFile(jsapi.Assets(), name)
		if err != nil {
			t.Fatal(err)
		}
		f, ok1 := find(first, "/jsapi/"+name)
		r, ok2 := find(reload, "/jsapi/"+name)
		if !ok1 || !ok2 || f.Version != jsapi.ContentVersion(data) || r.Version != f.Version || f.TransferSize == 0 || r.TransferSize != 0 {
			t.Errorf("%s: first load %+v, reload %+v; want ?v=%s from the network, then from the cache (transferSize 0)",
				name, f, r, jsapi.ContentVersion(data))
		}
	}
	if l, ok := find(reload, "/jsapi/"+jsapi.LoaderName); !ok || l.Version != "" || l.TransferSize == 0 {
		t.Errorf("the loader on reload: %+v; want its plain URL, revalidated", l)
	}
}

// 2. Every registration method works from the page, and the files on disk
// are upstream's strict v1 format, byte for byte.
func TestRegistrationMethodsWriteStrictFiles(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)

	// create: trimmed, normalised, paused, nothing optional.
	type created struct {
		Server jsapi.McpServer
		Keys   []string
	}
	c := evalJS[created](p, `
		const s = await tt.mcp.servers.create(%s);
		return { server: s, keys: Object.keys(s).sort() };`,
		map[string]any{"displayName": "  Local MCP \n", "endpoint": "  HTTP://LocalHost:80/mcp  "})
	s := c.Server
	id := s.ID
	if !canonicalUUID.MatchString(id) {
		t.Fatalf("create returned id %q; want a canonical UUID", id)
	}
	// upstream's members, and ttmcp's auth (the sign-in state) and capabilities (the allowlist)
	if wantKeys := []string{"auth", "capabilities", "displayName", "endpoint", "headers", "id", "protocolVersion", "state", "toolDescriptionOverrides", "toolPermissions"}; !slices.Equal(c.Keys, wantKeys) {
		t.Errorf("server keys %v; want %v", c.Keys, wantKeys)
	}
	if s.DisplayName != "Local MCP" || s.Endpoint != "http://localhost/mcp" || s.State != "paused" || s.ProtocolVersion != "auto" ||
		s.Headers == nil || len(s.Headers) != 0 || s.ToolPermissions == nil || len(s.ToolPermissions) != 0 ||
		s.ToolDescriptionOverrides == nil || len(s.ToolDescriptionOverrides) != 0 {
		t.Errorf("create returned %+v", s)
	}
	wantRegistration(t, b, id, `  "displayName": "Local MCP"`, `  "endpoint": "http://localhost/mcp"`, `  "protocolVersion": "auto"`, `  "state": "paused"`)

	// update: headers verbatim, protocol, userinfo and query kept.
	s = evalJS[jsapi.McpServer](p, `return await tt.mcp.servers.update(%s);`, map[string]any{
		"registrationId":  id,
		"displayName":     "Renamed 🦀 <&>\u2028!",
		"endpoint":        "https://user:pass@Example.COM:443/mcp?tenant=one",
		"headers":         map[string]string{"x-api-key": " secret ", "Authorization": "Bearer t"},
		"protocolVersion": "2025-06-18",
	})
	if s.ID != id || s.DisplayName != "Renamed 🦀 <&>\u2028!" || s.Endpoint != "https://user:pass@example.com/mcp?tenant=one" ||
		!maps.Equal(s.Headers, map[string]string{"x-api-key": " secret ", "Authorization": "Bearer t"}) ||
		s.ProtocolVersion != "2025-06-18" || s.State != "paused" {
		t.Errorf("update returned %+v", s)
	}
	wantRegistration(t, b, id, renamed, `  "state": "paused"`)

	// setState, setPermission, setDescriptionOverride.
	s = evalJS[jsapi.McpServer](p, `
		const mcp = tt.mcp;
		await mcp.servers.setState({ registrationId: %[1]s, state: 'active' });
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'search', permission: 'allow' });
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'fetch', permission: 'ask' });
		await mcp.tools.setDescriptionOverride({ registrationId: %[1]s, nativeName: 'search',
			override: { description: '  Search "local" files\n', properties: {} } });
		return await mcp.tools.setDescriptionOverride({ registrationId: %[1]s, nativeName: 'fetch',
			override: { properties: { url: '  The URL  ' } } });`, id)
	if s.State != "active" || !maps.Equal(s.ToolPermissions, map[string]string{"search": "allow", "fetch": "ask"}) ||
		len(s.ToolDescriptionOverrides) != 2 || s.ToolDescriptionOverrides["search"].Description == nil ||
		*s.ToolDescriptionOverrides["search"].Description != "  Search \"local\" files\n" ||
		s.ToolDescriptionOverrides["fetch"].Description != nil ||
		!maps.Equal(s.ToolDescriptionOverrides["fetch"].Properties, map[string]string{"url": "  The URL  "}) {
		t.Errorf("after setState, setPermission and setDescriptionOverride: %+v", s)
	}
	wantRegistration(t, b, id, renamed, `  "state": "active"`, `  "toolPermissions": {
    "fetch": "ask",
    "search": "allow"
  }`, `  "toolDescriptionOverrides": {
    "fetch": {
      "properties": {
        "url": "  The URL  "
      }
    },
    "search": {
      "description": "  Search \"local\" files\n",
      "properties": {}
    }
  }`)

	// off removes the permission entry; a null override deletes it.
	p.run(`
		const mcp = tt.mcp;
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'fetch', permission: 'off' });
		await mcp.tools.setDescriptionOverride({ registrationId: %[1]s, nativeName: 'search', override: null });`, id)
	wantRegistration(t, b, id, renamed, `  "state": "active"`, `  "toolPermissions": {
    "search": "allow"
  }`, `  "toolDescriptionOverrides": {
    "fetch": {
      "properties": {
        "url": "  The URL  "
      }
    }
  }`)
	p.run(`
		const mcp = tt.mcp;
		await mcp.tools.setPermission({ registrationId: %[1]s, nativeName: 'search', permission: 'off' });
		await mcp.tools.setDescriptionOverride({ registrationId: %[1]s, nativeName: 'fetch', override: null });
		await mcp.servers.setState({ registrationId: %[1]s, state: 'paused' });`, id)
	wantRegistration(t, b, id, renamed, `  "state": "paused"`)

	// discover and refresh take a string id or {registrationId}; both
	// become {dto: {registrationId}} on the wire.
	discovery := evalJS[[]*jsError](p, `
		const s = tt.mcp.servers;
		return [
			await tt.err(s.discover(%[1]s)),
			await tt.err(s.discover({ registrationId: %[1]s })),
			await tt.err(s.refresh(%[1]s)),
			await tt.err(s.refresh({ registrationId: %[1]s })),
		];`, id)
	for i, e := range discovery {
		wantRejection(t, []string{"discover(id)", "discover({registrationId})", "refresh(id)", "refresh({registrationId})"}[i], e, "mcp.server_paused", jsapi.KindConflict)
	}
	wantArgs := `"args":{"dto":{"registrationId":"` + id + `"}}`
	for _, cmd := range []string{jsapi.CmdDiscoverTools, jsapi.CmdRefreshTools} {
		n := 0
		for _, f := range b.seenInvokes() {
			if f.Command == cmd {
				n++
				if !strings.Contains(f.Head, wantArgs) {
					t.Errorf("%s frame %s; want args %s", cmd, f.Head, wantArgs)
				}
			}
		}
		if n != 2 {
			t.Errorf("the backend read %d %s frames; want 2", n, cmd)
		}
	}

	// remove, by string id and by {registrationId}.
	second := evalJS[string](p, `
		await tt.mcp.servers.remove(%s);
		const s = await tt.mcp.servers.create({ displayName: 'Second', endpoint: 'http://127.0.0.1:9/mcp' });
		return s.id;`, id)
	wantNoFile(t, b, id)
	if _, err := os.Stat(b.regPath(second)); err != nil {
		t.Fatalf("second registration: %v", err)
	}
	left := evalJS[jsapi.McpServerList](p, `
		await tt.mcp.servers.remove({ registrationId: %s });
		return await tt.mcp.servers.list();`, second)
	wantNoFile(t, b, second)
	if len(left.Servers) != 0 || left.StorageIssues == nil || len(left.StorageIssues) != 0 {
		t.Errorf("list after removing both: %+v", left)
	}
	if files := b.regFiles(); len(files) != 0 {
		t.Errorf("registrations directory holds %v; want nothing", slices.Sorted(maps.Keys(files)))
	}

	// safeInvoke, as the upstream legacy hooks call it.
	type viaSafeInvoke struct {
		Created jsapi.McpServer
		List    jsapi.McpServerList
	}
	v := evalJS[viaSafeInvoke](p, `
		const inv = window.__TAURITAVERN__.invoke.safeInvoke;
		const created = await inv('create_mcp_server', { dto: { displayName: 'Via safeInvoke', endpoint: 'http://127.0.0.1:9/mcp' } });
		return { created, list: await inv('list_mcp_servers') };`)
	if v.Created.DisplayName != "Via safeInvoke" || v.Created.State != "paused" || len(v.List.Servers) != 1 || v.List.Servers[0].ID != v.Created.ID {
		t.Errorf("safeInvoke: %+v", v)
	}
	wantRegistration(t, b, v.Created.ID, `  "displayName": "Via safeInvoke"`, `  "endpoint": "http://127.0.0.1:9/mcp"`, `  "protocolVersion": "auto"`, `  "state": "paused"`)
}

// 3. Bad input rejects with an Error carrying the code and kind, and
// nothing changes on disk.
func TestErrorsRejectWithCodeAndChangeNothing(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	id := evalJS[string](p, `
		const s = await tt.mcp.servers.create({ displayName: 'Kept', endpoint: 'http://127.0.0.1:9/mcp', headers: { A: 'b' } });
		await tt.mcp.tools.setPermission({ registrationId: s.id, nativeName: 'search', permission: 'ask' });
		return s.id;`)
	before := b.regFiles()

	cases := []struct {
		name, call string
		arg        any
		code, kind string
	}{
		{"relative endpoint", "servers.create", map[string]any{"displayName": "x", "endpoint": "mcp"}, "mcp.endpoint_invalid", "BadRequest"},
		{"path-only endpoint", "servers.create", map[string]any{"displayName": "x", "endpoint": "/mcp"}, "mcp.endpoint_invalid", "BadRequest"},
		{"file endpoint", "servers.create", map[string]any{"displayName": "x", "endpoint": "file:///tmp/mcp"}, "mcp.endpoint_absolute_required", "BadRequest"},
		{"fragment", "servers.create", map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:9/mcp#tools"}, "mcp.endpoint_fragment_forbidden", "BadRequest"},
		{"empty fragment", "servers.create", map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:9/mcp#"}, "mcp.endpoint_fragment_forbidden", "BadRequest"},
		{"ftp endpoint", "servers.create", map[string]any{"displayName": "x", "endpoint": "ftp://example.com/mcp"}, "mcp.endpoint_scheme_invalid", "BadRequest"},
		{"blank display name", "servers.create", map[string]any{"displayName": " \t ", "endpoint": "http://127.0.0.1:9/mcp"}, "mcp.display_name_empty", "BadRequest"},
		{"bad endpoint on update", "servers.update", map[string]any{"registrationId": id, "displayName": "x", "endpoint": "ftp://example.com/", "headers": map[string]string{}, "protocolVersion": "auto"}, "mcp.endpoint_scheme_invalid", "BadRequest"},
		{"unknown field on create", "servers.create", map[string]any{"displayName": "x", "endpoint": "http://127.0.0.1:9/mcp", "extra": 1}, jsapi.CodeArgsInvalid, "BadRequest"},
		{"unknown field on setState", "servers.setState", map[string]any{"registrationId": id, "state": "active", "force": true}, jsapi.CodeArgsInvalid, "BadRequest"},
		{"unknown id on update", "servers.update", map[string]any{"registrationId": unknownID, "displayName": "x", "endpoint": "http://127.0.0.1:9/mcp", "headers": map[string]string{}, "protocolVersion": "auto"}, "mcp.registration_not_found", "NotFound"},
		{"unknown id on setState", "servers.setState", map[string]any{"registrationId": unknownID, "state": "active"}, "mcp.registration_not_found", "NotFound"},
		{"unknown id on remove", "servers.remove", unknownID, "mcp.registration_not_found", "NotFound"},
		{"unknown id on setPermission", "tools.setPermission", map[string]any{"registrationId": unknownID, "nativeName": "search", "permission": "allow"}, "mcp.registration_not_found", "NotFound"},
		{"unknown id on setDescriptionOverride", "tools.setDescriptionOverride", map[string]any{"registrationId": unknownID, "nativeName": "search", "override": map[string]any{"description": "d", "properties": map[string]string{}}}, "mcp.registration_not_found", "NotFound"},
		{"empty override", "tools.setDescriptionOverride", map[string]any{"registrationId": id, "nativeName": "search", "override": map[string]any{"properties": map[string]string{}}}, "mcp.description_override_empty", "BadRequest"},
		{"discover paused", "servers.discover", id, "mcp.server_paused", "Conflict"},
		{"refresh paused", "servers.refresh", map[string]any{"registrationId": id}, "mcp.server_paused", "Conflict"},
		{"discover unknown id", "servers.discover", unknownID, "mcp.registration_not_found", "NotFound"},
	}
	for _, c := range cases {
		got := evalJS[*jsError](p, `return await tt.err(tt.mcp.`+c.call+`(%s));`, c.arg)
		wantRejection(t, c.name+" ("+c.call+")", got, c.code, c.kind)
	}
	got := evalJS[*jsError](p, `return await tt.err(window.__TAURITAVERN__.invoke.safeInvoke('no_such_command', {}));`)
	wantRejection(t, "safeInvoke of an unknown command", got, jsapi.CodeCommandUnknown, "BadRequest")

	// A request above the backend's 4 MiB read limit is refused in the page
	// and never sent; the socket stays usable.
	creates := b.countInvokes(jsapi.CmdCreateServer)
	got = evalJS[*jsError](p, `
		const e = await tt.err(tt.mcp.servers.create({ displayName: 'big', endpoint: 'http://127.0.0.1:9/mcp',
			headers: { 'x-big': 'x'.repeat(%s) } }));
		await tt.mcp.servers.list();
		return e;`, jsapi.MaxInboundFrame)
	wantRejection(t, "a create above 4 MiB", got, jsapi.CodeRequestTooLarge, "BadRequest")
	if n := b.countInvokes(jsapi.CmdCreateServer) - creates; n != 0 {
		t.Errorf("the too-large create reached the backend (%d frames)", n)
	}

	if after := b.regFiles(); !maps.Equal(before, after) {
		t.Errorf("the registrations directory changed:\nbefore %v\nafter  %v", before, after)
	}
}

// 4. 50 parallel creates: 50 files and one consistent list.
func TestParallelCreates(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type result struct {
		Created []jsapi.McpServer
		List    jsapi.McpServerList
	}
	r := evalJS[result](p, `
		const created = await Promise.all(Array.from({ length: 50 }, (_, i) =>
			tt.mcp.servers.create({ displayName: 'Server ' + i, endpoint: 'http://127.0.0.1:9/mcp/' + i })));
		return { created, list: await tt.mcp.servers.list() };`)
	if len(r.Created) != 50 {
		t.Fatalf("%d creates resolved; want 50", len(r.Created))
	}
	files := b.regFiles()
	listed := map[string]jsapi.McpServer{}
	for _, s := range r.List.Servers {
		listed[s.ID] = s
	}
	if len(files) != 50 || len(listed) != 50 || len(r.List.Servers) != 50 || len(r.List.StorageIssues) != 0 {
		t.Errorf("%d files, list of %d servers (%d distinct) and %d storage issues; want 50, 50, 50, 0",
			len(files), len(r.List.Servers), len(listed), len(r.List.StorageIssues))
	}
	for i, c := range r.Created {
		l, ok := listed[c.ID]
		if _, onDisk := files[c.ID+".json"]; !ok || !onDisk {
			t.Errorf("created %s (%s): listed %v, on disk %v", c.ID, c.DisplayName, ok, onDisk)
			continue
		}
		if want := "Server " + strconv.Itoa(i); c.DisplayName != want || l.DisplayName != want || l.Endpoint != "http://127.0.0.1:9/mcp/"+strconv.Itoa(i) {
			t.Errorf("create %d returned %+v, list has %+v", i, c, l)
		}
	}
}

// 5. A page of a foreign origin cannot open the socket or read the token;
// the loader imported there settles ready and rejects with host_unavailable.
func TestForeignOriginIsRefused(t *testing.T) {
	b := newBackend(t)
	foreign := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(foreign.Close)
	p := openPage(t, foreign.URL+"/foreign.html")

	type closed struct {
		Opened   bool
		Received int
		Code     int
		Reason   string
	}
	ws := evalJS[closed](p, `return await foreign.socket(%s);`, "ws://"+b.addr+jsapi.PathWS)
	if ws.Opened || ws.Received != 0 || ws.Code != 1006 {
		t.Errorf("foreign WebSocket: %+v; want it never opened, close code 1006", ws)
	}

	type fetched struct {
		OK     bool
		Status int
		Body   string
		Name   string
	}
	// The page can read why it was refused (C3), but not the token.
	f := evalJS[fetched](p, `return await foreign.fetchSession(%s);`, b.origin())
	want := `{"code":"mcp.origin_not_allowed","origin":"` + foreign.URL + `","message":"mcp.origin_not_allowed: the ttmcp backend does not allow requests from ` +
		foreign.URL + `; restart it with --allow-origin ` + foreign.URL + `","command":"ttmcp serve --allow-origin ` + foreign.URL + `"}`
	if !f.OK || f.Status != http.StatusForbidden || f.Body != want || strings.Contains(f.Body, b.srv.Token()) {
		t.Errorf("foreign fetch of the session: %+v; want it to read the 403 %s", f, want)
	}

	type scripted struct {
		Loaded     bool
		NewGlobals []string
	}
	s := evalJS[scripted](p, `return await foreign.scriptTag(%s);`, b.origin())
	if s.Loaded || len(s.NewGlobals) != 0 {
		t.Errorf("foreign <script src=/jsapi/session>: %+v; want an error and no new globals", s)
	}

	// What the backend answered: 403 to all three, before anything else.
	var wsStatus, fetchStatus, scriptStatus []int
	for _, r := range b.seenRequests() {
		switch {
		case r.Path == jsapi.PathWS && r.Origin == foreign.URL:
			wsStatus = append(wsStatus, r.Status)
		case r.Path == jsapi.PathSession && r.Origin == foreign.URL:
			fetchStatus = append(fetchStatus, r.Status)
		case r.Path == jsapi.PathSession && r.Origin == "":
			scriptStatus = append(scriptStatus, r.Status)
		}
	}
	for _, c := range []struct {
		what string
		got  []int
	}{{"/ws upgrade", wsStatus}, {"session fetch", fetchStatus}, {"session <script>", scriptStatus}} {
		if !slices.Equal(c.got, []int{http.StatusForbidden}) {
			t.Errorf("backend answered the foreign %s with %v; want [403] (all requests: %+v)", c.what, c.got, b.seenRequests())
		}
	}

	// The loader, imported by the foreign page.
	state := evalJS[string](p, `return await foreign.loadBridge(%s);`, b.origin())
	if state == "open" {
		t.Fatalf("the bridge opened from a foreign origin")
	}
	errs := evalJS[[]*jsError](p, `return [
		await tt.err(tt.mcp.servers.list()),
		await tt.err(tt.mcp.servers.create({ displayName: 'x', endpoint: 'http://127.0.0.1:9/mcp' })),
		await tt.err(window.__TAURITAVERN__.invoke.safeInvoke('list_mcp_servers')),
	];`)
	for i, e := range errs {
		what := []string{"list()", "create()", "safeInvoke()"}[i]
		wantRejection(t, what+" from a foreign origin", e, jsapi.CodeOriginNotAllowed, jsapi.KindUnavailable)
		if e != nil && !strings.Contains(e.Message, "--allow-origin "+foreign.URL) {
			t.Errorf("%s message %q does not name the flag and origin %s", what, e.Message, foreign.URL)
		}
	}
	if n := len(b.seenInvokes()); n != 0 {
		t.Errorf("the backend read %d invoke frames from the foreign page", n)
	}
	if files := b.regFiles(); len(files) != 0 {
		t.Errorf("the foreign page created %v", files)
	}
}

// 6. A hello with a wrong or missing token closes the socket with 1008.
func TestWrongTokenClosesWith1008(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	type closed struct {
		Code     int
		Reason   string
		Welcomed bool
	}
	type result struct {
		TokenLen       int
		Wrong, Missing closed
	}
	r := evalJS[result](p, `
		const s = await (await fetch('/jsapi/session', { cache: 'no-store' })).json();
		const probe = (hello) => new Promise((resolve) => {
			const ws = new WebSocket(s.ws);
			let welcomed = false;
			ws.onopen = () => ws.send(JSON.stringify(hello));
			ws.onmessage = () => { welcomed = true; };
			ws.onclose = (e) => resolve({ code: e.code, reason: e.reason, welcomed });
		});
		return {
			tokenLen: s.token.length,
			wrong: await probe({ type: 'hello', token: s.token.slice(0, -1) + (s.token.endsWith('0') ? '1' : '0') }),
			missing: await probe({ type: 'hello' }),
		};`)
	if r.TokenLen < 32 {
		t.Errorf("session token of %d characters; want ≥ 128 bits", r.TokenLen)
	}
	for what, c := range map[string]closed{"wrong token": r.Wrong, "missing token": r.Missing} {
		if c.Code != jsapi.ClosePolicyViolation || c.Reason == "" || c.Welcomed {
			t.Errorf("%s: %+v; want close 1008 with a reason and no welcome", what, c)
		} else {
			t.Logf("%s: close %d %q", what, c.Code, c.Reason)
		}
	}
	// The bridge's own socket is unaffected.
	if e := evalJS[*jsError](p, `return await tt.err(tt.mcp.servers.list());`); e != nil {
		t.Errorf("list() after the refused sockets: %+v", *e)
	}
}

// 7. The bridge survives a backend restart on the same port with a new
// token; the call in flight at the drop rejects with host_connection_lost.
func TestBackendRestart(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	id := evalJS[string](p, `return (await tt.mcp.servers.create({ displayName: 'Survivor', endpoint: 'http://127.0.0.1:9/mcp' })).id;`)

	// Hold the next list inside the backend, so it is in flight for sure.
	entered, release := b.store.holdNextScan()
	defer release()
	p.run(`tt.inflight = tt.err(tt.mcp.servers.list()); tt.states.length = 0;`)
	<-entered
	oldToken := b.srv.Token()
	b.cancel() // Serve shuts down: sockets close with 1001

	left := evalJS[string](p, `return await tt.until((s) => s !== 'open', 'the bridge to leave open');`)
	t.Logf("bridge state after the drop: %s", left)
	lost := evalJS[*jsError](p, `return await tt.inflight;`)
	wantRejection(t, "the list() in flight at the drop", lost, jsapi.CodeHostConnectionLost, jsapi.KindUnavailable)
	release()
	b.wait()

	// A call made while the backend is down rejects (host_unavailable) or,
	// if it was queued behind an attempt that outlives the outage,
	// resolves; it never hangs.
	if e := evalJS[*jsError](p, `return await tt.err(tt.mcp.servers.list());`); e != nil {
		wantRejection(t, "list() while the backend is down", e, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	}

	b.start()
	if b.srv.Token() == oldToken {
		t.Fatal("the restarted backend has the same token")
	}
	evalJS[string](p, `return await tt.until((s) => s === 'open', 'the bridge to reopen');`)
	list := evalJS[jsapi.McpServerList](p, `return await tt.mcp.servers.list();`)
	if len(list.Servers) != 1 || list.Servers[0].ID != id || list.Servers[0].DisplayName != "Survivor" {
		t.Errorf("list after the restart: %+v; want the registration %s", list, id)
	}
	states := evalJS[[]string](p, `return tt.states;`)
	if len(states) < 2 || states[0] == "open" || states[len(states)-1] != "open" {
		t.Errorf("state events during the restart: %v; want it to leave open and come back", states)
	}
}

// 8. testCall with a pre-aborted signal resolves the local not_sent outcome
// without sending anything; without a signal it reaches the backend.
func TestTestCallFromThePage(t *testing.T) {
	b := newBackend(t)
	p := b.openHost(t)
	id := evalJS[string](p, `return (await tt.mcp.servers.create({ displayName: 'T', endpoint: 'http://127.0.0.1:9/mcp' })).id;`)
	listsBefore := b.countInvokes(jsapi.CmdListServers)

	out := evalJS[jsapi.McpCallOutcome](p, `
		const c = new AbortController();
		c.abort();
		const out = await tt.mcp.tools.testCall({ registrationId: %s, nativeName: 'echo', argumentsJson: '{}' }, { signal: c.signal });
		await tt.mcp.servers.list(); // every frame sent before this one has been read by the backend
		return out;`, id)
	if out.Outcome != jsapi.OutcomeNotSent || out.Code != jsapi.CodeCallCancelledBeforeSend || out.Message != jsapi.MessageCallCancelledBeforeSend || out.Response != nil {
		t.Errorf("pre-aborted testCall: %+v; want the local not_sent %s", out, jsapi.CodeCallCancelledBeforeSend)
	}
	if n := b.countInvokes(jsapi.CmdListServers) - listsBefore; n != 1 {
		t.Fatalf("the backend read %d list frames; want 1 (the frame tap is broken)", n)
	}
	for _, cmd := range []string{jsapi.CmdStartTestCall, jsapi.CmdTestToolCall, jsapi.CmdRunTestCall, jsapi.CmdCancelTestCall} {
		if n := b.countInvokes(cmd); n != 0 {
			t.Errorf("a pre-aborted testCall sent %d %s frames; want none", n, cmd)
		}
	}

	// Without a signal the call reaches the backend: the registration,
	// paused, makes the call not_sent mcp.call_server_paused after one
	// run_mcp_test_call frame (the start and the call in one command,
	// issue 31). The input is captured when testCall is called (reference
	// §1.5 step 2), and argumentsJson stays the caller's string (an
	// integer beyond 2^53).
	type result struct {
		Err *jsError
		Out *jsapi.McpCallOutcome
	}
	r := evalJS[result](p, `
		const input = { registrationId: %s, nativeName: 'echo', argumentsJson: '{"n":9007199254740993}' };
		const call = tt.mcp.tools.testCall(input);
		input.nativeName = 'mutated';
		input.argumentsJson = '{}';
		const err = await tt.err(call);
		const out = err ? null : await call;
		await tt.mcp.servers.list();
		return { err, out };`, id)
	runs, others := b.countInvokes(jsapi.CmdRunTestCall), b.countInvokes(jsapi.CmdStartTestCall)+b.countInvokes(jsapi.CmdTestToolCall)
	if r.Err != nil {
		t.Fatalf("testCall without a signal rejected: %+v", *r.Err)
	}
	if r.Out == nil || r.Out.Outcome != jsapi.OutcomeNotSent || r.Out.Code != "mcp.call_server_paused" {
		t.Errorf("testCall of a paused registration: %+v; want not_sent mcp.call_server_paused", r.Out)
	}
	if runs != 1 || others != 0 {
		t.Fatalf("the backend read %d %s and %d start or test frames; want 1 and 0", runs, jsapi.CmdRunTestCall, others)
	}
	var run string
	for _, f := range b.seenInvokes() {
		if f.Command == jsapi.CmdRunTestCall {
			run = f.Head
		}
	}
	callID := regexp.MustCompile(`"callId":"([0-9a-f-]{36})"`)
	if callID.FindStringSubmatch(run) == nil ||
		!strings.Contains(run, `"nativeName":"echo"`) || !strings.Contains(run, `"argumentsJson":"{\"n\":9007199254740993}"`) {
		t.Errorf("run frame %s\nwant a callId, and the input as it was when testCall was called", run)
	}
}
