package service

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// appServer is a go-sdk server with an MCP App: board names its
// interface (visible to model and App), move is for the App only, hint for
// the model only, plain says nothing of Apps. It records the tools called.
type appServer struct {
	URL    string
	mu     sync.Mutex
	called []string
}

func (a *appServer) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.called)
}

func newAppServer(t *testing.T) *appServer {
	t.Helper()
	a := &appServer{}
	obj := json.RawMessage(`{"type":"object"}`)
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
	tools := []*mcp.Tool{
		{Name: "board", Description: "Show the board", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html"}}},
		{Name: "move", Description: "Move a piece (App only)", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html", "visibility": []string{"app"}}}},
		{Name: "hint", Description: "A hint (model only)", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"visibility": []string{"model"}}}},
		{Name: "legacy", Description: "Old-style App", InputSchema: obj, Meta: mcp.Meta{"ui/resourceUri": "ui://chess/old.html"}},
		{Name: "plain", Description: "No App", InputSchema: obj},
	}
	for _, tool := range tools {
		s.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a.mu.Lock()
			a.called = append(a.called, req.Params.Name)
			a.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name}}}, nil
		})
	}
	resource := func(uri, mime string, meta mcp.Meta) {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: mime}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: appDocument, Meta: meta}}}, nil
		})
	}
	resource("ui://chess/board.html", "text/html;profile=mcp-app", mcp.Meta{"ui": map[string]any{
		"csp":         map[string]any{"connectDomains": []string{"https://api.chess.example", "*"}, "resourceDomains": []string{"https://cdn.chess.example"}},
		"permissions": map[string]any{"clipboardWrite": map[string]any{}}, "prefersBorder": true}})
	resource("ui://chess/old.html", "text/html", nil) // not an App's MIME type
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(ts.Close)
	a.URL = ts.URL
	return a
}

const appDocument = "<!doctype html><html><body><button>move</button></body></html>"

// serveDiscovered serves s over stateless Streamable HTTP, registered
// active in a new world and discovered.
func serveDiscovered(t *testing.T, s *mcp.Server) (*world, string) {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(ts.Close)
	w := newWorld(t)
	id := w.register(ts.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	return w, id
}

// An App's interface is read through the resource path: the document, a
// policy built from its declaration with what is not an origin dropped,
// the permissions it asked for; a resource of another MIME type is
// refused; a tool without an interface has no App. Each read is audited as
// the App's.
func TestReadAppResource(t *testing.T) {
	srv := newAppServer(t)
	w := newWorld(t)
	ctx := context.Background()
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	app, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: "board"})
	if err != nil {
		t.Fatal(err)
	}
	if app.HTML != appDocument || app.URI != "ui://chess/board.html" || !app.Permissions.ClipboardWrite || app.Permissions.Camera ||
		app.PrefersBorder == nil || !*app.PrefersBorder || len(app.SHA256) != 64 {
		t.Errorf("app %+v", app)
	}
	if !slices.Equal(app.Declared.ConnectDomains, []string{"https://api.chess.example"}) || len(app.Dropped) != 1 {
		t.Errorf("declared %+v dropped %v", app.Declared, app.Dropped)
	}
	for _, part := range []string{"connect-src https://api.chess.example;", "script-src 'unsafe-inline' https://cdn.chess.example;", "frame-src 'none'", "default-src 'none'"} {
		if !strings.Contains(app.CSP, part) {
			t.Errorf("csp %q lacks %q", app.CSP, part)
		}
	}
	e := w.lastAudit()
	if e.Source != jsapi.AuditSourceApp || e.Kind != jsapi.AuditKindResourceRead || e.AppTool == nil || *e.AppTool != "board" ||
		e.URI == nil || *e.URI != "ui://chess/board.html" || e.Outcome != jsapi.OutcomeKnownResponse || e.ContentBytes == nil || *e.ContentBytes != int64(len(appDocument)) {
		t.Errorf("audit %+v", e)
	}
	if _, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: "legacy"}); domain.CodeOf(err) != jsapi.CodeAppResourceInvalid {
		t.Errorf("a text/html resource: %v", err)
	}
	if e := w.lastAudit(); e.Outcome != jsapi.OutcomeKnownResponse {
		t.Errorf("the refused document's read is recorded as %s, but it was read", e.Outcome)
	}
	if _, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: "plain"}); domain.CodeOf(err) != jsapi.CodeAppUnknown {
		t.Errorf("a tool without an interface: %v", err)
	}
	if e := w.lastAudit(); e.Outcome != jsapi.OutcomeRejected {
		t.Errorf("a refused read: %+v", e)
	}
}

func legacyIDs(l jsapi.LegacyMcpToolList) []string {
	out := []string{}
	for _, t := range l.Tools {
		out = append(out, t.NativeName)
	}
	return out
}

// An app-only tool stays in the catalog and the Manager, with its
// permission, but no listing a model sees holds it: the upstream listing,
// a tool set (whole server or by name), the tool search; and a model that
// names it anyway is refused.
func TestAppOnlyToolsAreNeverOfferedToTheModel(t *testing.T) {
	srv := newAppServer(t)
	w := newWorld(t)
	ctx := context.Background()
	id := w.register(srv.URL, true)
	res, err := w.discover(id)
	if err != nil {
		t.Fatal(err)
	}
	ui := map[string]*jsapi.McpToolUI{}
	for _, tool := range res.Tools {
		ui[tool.NativeName] = tool.UI
	}
	if got := ui["move"]; got == nil || got.ResourceURI == nil || *got.ResourceURI != "ui://chess/board.html" || !slices.Equal(got.Visibility, []string{"app"}) {
		t.Errorf("Manager's move: %+v", got)
	}
	if got := ui["legacy"]; got == nil || got.ResourceURI == nil || *got.ResourceURI != "ui://chess/old.html" || got.Visibility != nil {
		t.Errorf("the deprecated flat key: %+v", got)
	}
	if ui["plain"] != nil {
		t.Errorf("plain has ui %+v", ui["plain"])
	}
	for _, name := range []string{"board", "move", "hint", "legacy", "plain"} {
		w.permit(id, name, jsapi.PermissionAllow)
	}
	if got, want := legacyIDs(w.legacyTools()), []string{"board", "hint", "legacy", "plain"}; !slices.Equal(got, want) {
		t.Errorf("model listing = %v, want %v", got, want)
	}
	// Restarted: the same from the catalog file.
	w.restart()
	if got := legacyIDs(w.legacyTools()); slices.Contains(got, "move") {
		t.Errorf("after a restart the model listing has move: %v", got)
	}
	whole := "mcp/" + id + ":*"
	byName := "mcp/" + id + ":move"
	set, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "all", Tools: []string{whole}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := w.svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{ToolSetID: &set.ID})
	if err != nil || slices.Contains(legacyIDs(l), "move") || len(l.Tools) != 4 {
		t.Errorf("whole-server set: %v, %v", legacyIDs(l), err)
	}
	named, err := w.svc.SaveToolSet(ctx, jsapi.SaveMcpToolSetDto{Name: "named", Tools: []string{byName}})
	if err != nil {
		t.Fatal(err)
	}
	l, err = w.svc.ListLegacyTools(ctx, jsapi.ListLegacyMcpToolsDto{ToolSetID: &named.ID})
	if err != nil || len(l.Tools) != 0 || len(l.Diagnostics) != 1 || l.Diagnostics[0].Code != CodeToolAppOnly {
		t.Errorf("a set naming move: %+v, %v", l, err)
	}
	hits, err := w.svc.SearchTools(ctx, jsapi.SearchMcpToolsDto{Query: "move a piece"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Hits {
		if h.NativeName == "move" {
			t.Errorf("the tool search found move: %+v", hits)
		}
	}
	if _, err := w.svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: "m1"}); err != nil {
		t.Fatal(err)
	}
	if o := w.legacyCall("m1", byName, "{}"); o.Outcome != jsapi.OutcomeNotSent || o.Code != jsapi.CodeCallToolAppOnly {
		t.Errorf("a model's call of move: %+v", o)
	}
	if slices.Contains(srv.calls(), "move") {
		t.Error("a model's call of an app-only tool reached the server")
	}
}

func (w *world) appCall(callID, id, appTool, name string, approval *string) jsapi.McpCallOutcome {
	w.t.Helper()
	ctx := context.Background()
	if _, err := w.svc.StartAppCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: callID}); err != nil {
		w.t.Fatal(err)
	}
	o, err := w.svc.CallAppTool(ctx, jsapi.CallMcpAppToolDto{ExecutionCallID: callID, RegistrationID: id, AppToolName: appTool,
		NativeName: name, ArgumentsJSON: `{"square":"e4"}`, Approval: approval})
	if err != nil {
		w.t.Fatal(err)
	}
	return o
}

// An App's call passes the App gates and then the model's: the App is a
// tool of its registration with an interface, the tool called is of the
// same registration and visible to Apps, not Off, and Ask needs the user's
// answer. Each call is audited as the App's.
func TestAppCallGates(t *testing.T) {
	srv := newAppServer(t)
	other := newAppServer(t)
	w := newWorld(t)
	ctx := context.Background()
	id := w.register(srv.URL, true)
	otherID := w.register(other.URL, true)
	for _, r := range []string{id, otherID} {
		if _, err := w.discover(r); err != nil {
			t.Fatal(err)
		}
	}
	w.permit(id, "move", jsapi.PermissionAsk)
	w.permit(id, "hint", jsapi.PermissionAllow)
	w.permit(id, "board", jsapi.PermissionAllow)
	w.permit(otherID, "move", jsapi.PermissionAllow)
	once, denied := jsapi.ApprovalOnce, jsapi.ApprovalDenied
	tests := []struct {
		name, reg, app, tool string
		approval             *string
		code                 string // "" : sent
	}{
		{"ask without asking", id, "board", "move", nil, jsapi.CodeCallApprovalRequired},
		{"ask denied", id, "board", "move", &denied, CodeCallDeniedByUser},
		{"ask allowed once", id, "board", "move", &once, ""},
		{"allow", id, "board", "board", nil, ""},
		{"model-only tool", id, "board", "hint", nil, jsapi.CodeCallNotVisibleToApp},
		{"off", id, "board", "plain", nil, CodeCallPermissionOff},
		{"not an App", id, "plain", "board", nil, jsapi.CodeAppUnknown},
		{"unknown App", id, "nothing", "board", nil, jsapi.CodeAppUnknown},
		{"another server's tool", id, "board", "elsewhere", nil, CodeToolNotInCachedCatalog},
		{"deprecated flat key is an App", id, "legacy", "board", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := w.appCall("c-"+tt.name, tt.reg, tt.app, tt.tool, tt.approval)
			switch {
			case tt.code == "" && o.Outcome != jsapi.OutcomeKnownResponse:
				t.Fatalf("not sent: %+v", o)
			case tt.code != "" && (o.Outcome != jsapi.OutcomeNotSent || o.Code != tt.code):
				t.Fatalf("outcome %+v, want not_sent %s", o, tt.code)
			}
			e := w.lastAudit()
			if e.Source != jsapi.AuditSourceApp || e.AppTool == nil || *e.AppTool != tt.app || e.RegistrationID != tt.reg || e.NativeName != tt.tool || e.CallID != "c-"+tt.name {
				t.Errorf("audit %+v", e)
			}
			if tt.approval != nil && e.Approval != *tt.approval {
				t.Errorf("audit approval %q", e.Approval)
			}
		})
	}
	if got, want := srv.calls(), []string{"move", "board", "board"}; !slices.Equal(got, want) {
		t.Errorf("server calls = %v, want %v", got, want)
	}
	if got := other.calls(); len(got) != 0 {
		t.Errorf("another server was reached: %v", got)
	}
	if o := func() jsapi.McpCallOutcome {
		o, _ := w.svc.CallAppTool(ctx, jsapi.CallMcpAppToolDto{ExecutionCallID: "never-started", RegistrationID: id, AppToolName: "board", NativeName: "board"})
		return o
	}(); o.Code != CodeCallNotStarted {
		t.Errorf("unstarted: %+v", o)
	}
	// Without a cached catalog nothing is known of the App: refused.
	fresh := w.register(srv.URL, true)
	w.permit(fresh, "board", jsapi.PermissionAllow)
	if o := w.appCall("uncached", fresh, "board", "board", nil); o.Code != CodeCatalogNotCached {
		t.Errorf("uncached: %+v", o)
	}
	w.svc.StartAppCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: "x"})
	if _, err := w.svc.CallAppTool(ctx, jsapi.CallMcpAppToolDto{ExecutionCallID: "x", RegistrationID: "nope", AppToolName: "board", NativeName: "board"}); domain.KindOf(err) != domain.KindBadRequest {
		t.Errorf("a bad registration id: %v", err)
	}
}

// An App document without _meta.ui takes its policy from its
// resources/list entry; one with its own keeps it (the content wins). The
// list comes from memory once kept (listed once for both documents, and
// not again on a re-read), and a resource the list leaves out gets the
// restrictive default.
func TestReadAppResourceListedUI(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	s := mcp.NewServer(&mcp.Implementation{Name: "dice", Version: "1"}, nil)
	for _, tool := range []*mcp.Tool{
		{Name: "roll", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://dice/roll.html"}}},
		{Name: "board", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://dice/board.html"}}},
		{Name: "hidden", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://dice/hidden.html"}}},
	} {
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	document := func(uri string, content mcp.Meta) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: domain.AppMIMEType, Text: appDocument, Meta: content}}}, nil
		}
	}
	listedUI := func(origin string) mcp.Meta {
		return mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{origin, "'unsafe-eval'"}}, "permissions": map[string]any{"camera": map[string]any{}}}}
	}
	s.AddResource(&mcp.Resource{URI: "ui://dice/roll.html", Name: "roll", MIMEType: domain.AppMIMEType, Meta: listedUI("https://listed.dice.example")},
		document("ui://dice/roll.html", nil))
	s.AddResource(&mcp.Resource{URI: "ui://dice/board.html", Name: "board", MIMEType: domain.AppMIMEType, Meta: listedUI("https://listed.dice.example")},
		document("ui://dice/board.html", mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{"https://content.dice.example"}}}}))
	// hidden.html is readable but not listed (a server may leave it out)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "ui://dice/{name}.html", Name: "any"}, document("ui://dice/hidden.html", nil))
	var mu sync.Mutex
	lists := 0
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				mu.Lock()
				lists++
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	w, id := serveDiscovered(t, s)
	ctx := context.Background()
	read := func(tool string) jsapi.McpAppResource {
		t.Helper()
		app, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: tool})
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	for range 2 {
		roll := read("roll")
		if !slices.Equal(roll.Declared.ConnectDomains, []string{"https://listed.dice.example"}) || !roll.Permissions.Camera ||
			!strings.Contains(roll.CSP, "connect-src https://listed.dice.example;") || len(roll.Dropped) != 1 {
			t.Errorf("roll, from its listing: %+v", roll)
		}
	}
	board := read("board")
	if !slices.Equal(board.Declared.ConnectDomains, []string{"https://content.dice.example"}) || board.Permissions.Camera || strings.Contains(board.CSP, "listed") {
		t.Errorf("board, its content's own: %+v", board)
	}
	hidden := read("hidden")
	if len(hidden.Declared.ConnectDomains) != 0 || !strings.Contains(hidden.CSP, "connect-src 'none'") {
		t.Errorf("hidden, unlisted: %+v", hidden)
	}
	mu.Lock()
	defer mu.Unlock()
	if lists != 1 {
		t.Errorf("%d resources/list requests, want 1 (then kept)", lists)
	}
}

// appsPage is a page that says (or not) that it renders MCP Apps.
type appsPage struct {
	pageDouble
	apps bool
}

func (p *appsPage) RendersApps() bool { return p.apps }

// Only a page that renders Apps may run one: a page that did not say so is
// refused its App's interface and its App's calls (nothing reaches the
// server; the call is audited as refused), whatever its server was told —
// a 2025 stdio process hears once, at initialize, that its client renders
// Apps, for every page.
func TestAppCommandsNeedAnAppsPage(t *testing.T) {
	srv := newAppServer(t)
	w := newWorld(t)
	id := w.register(srv.URL, true)
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	w.permit(id, "board", jsapi.PermissionAllow)
	page := &appsPage{}
	ctx := WithPage(context.Background(), page)
	call := func(callID string) jsapi.McpCallOutcome {
		t.Helper()
		if _, err := w.svc.StartAppCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: callID}); err != nil {
			t.Fatal(err)
		}
		o, err := w.svc.CallAppTool(ctx, jsapi.CallMcpAppToolDto{ExecutionCallID: callID, RegistrationID: id, AppToolName: "board", NativeName: "board", ArgumentsJSON: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if _, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: "board"}); domain.CodeOf(err) != jsapi.CodeAppsNotRendered {
		t.Errorf("read from a page without Apps: %v", err)
	}
	if o := call("c1"); o.Outcome != jsapi.OutcomeNotSent || o.Code != jsapi.CodeAppsNotRendered {
		t.Errorf("call from a page without Apps: %+v", o)
	}
	if e := w.lastAudit(); e.Source != jsapi.AuditSourceApp || e.Outcome != jsapi.OutcomeNotSent || e.Code != jsapi.CodeAppsNotRendered {
		t.Errorf("audit %+v", e)
	}
	if got := srv.calls(); len(got) != 0 {
		t.Errorf("the server was reached: %v", got)
	}
	page.apps = true
	if _, err := w.svc.ReadAppResource(ctx, jsapi.ReadMcpAppResourceDto{RegistrationID: id, AppToolName: "board"}); err != nil {
		t.Errorf("read from an Apps page: %v", err)
	}
	if o := call("c2"); o.Outcome != jsapi.OutcomeKnownResponse {
		t.Errorf("call from an Apps page: %+v", o)
	}
}

// The model's listing carries each offered tool's ui (the App host needs
// no catalog per call); a tool without one is listed with upstream's
// members only, byte for byte. A changed ui is in the next listing, under
// a new digest (the page's kept listing, issue 31).
func TestLegacyListingCarriesToolUI(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
	run := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	board := func(uri string) *mcp.Tool {
		return &mcp.Tool{Name: "board", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri, "visibility": []string{"model", "app"}}}}
	}
	s.AddTool(board("ui://chess/board.html"), run)
	s.AddTool(&mcp.Tool{Name: "move", InputSchema: obj, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://chess/board.html", "visibility": []string{"app"}}}}, run)
	s.AddTool(&mcp.Tool{Name: "plain", Description: "No App", InputSchema: obj}, run)
	w, id := serveDiscovered(t, s)
	ctx := context.Background()
	for _, name := range []string{"board", "move", "plain"} {
		w.permit(id, name, jsapi.PermissionAllow)
	}
	listed := func() (map[string]*jsapi.McpToolUI, string, string) {
		t.Helper()
		l := w.legacyTools()
		ui := map[string]*jsapi.McpToolUI{}
		for _, tool := range l.Tools {
			ui[tool.NativeName] = tool.UI
		}
		enc, err := w.svc.ListLegacyToolsEncoded(ctx, jsapi.ListLegacyMcpToolsDto{}, encodeJSON)
		if err != nil {
			t.Fatal(err)
		}
		d, err := w.svc.LegacyToolsDigest(ctx, jsapi.ListLegacyMcpToolsDto{}, encodeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return ui, string(enc), d.Digest
	}
	ui, enc, first := listed()
	if got := ui["board"]; len(ui) != 2 || got == nil || got.ResourceURI == nil || *got.ResourceURI != "ui://chess/board.html" || !slices.Equal(got.Visibility, []string{"model", "app"}) {
		t.Fatalf("listed %+v", ui)
	}
	plain := `{"toolId":"mcp/` + id + `:plain","nativeName":"plain","serverDisplayName":"fixture","description":"No App","inputSchema":{"type":"object"}}`
	if !strings.Contains(enc, plain) || !strings.Contains(enc, `"inputSchema":{"type":"object"},"ui":{"resourceUri":"ui://chess/board.html","visibility":["model","app"]}}`) {
		t.Errorf("encoded listing %s", enc)
	}
	s.AddTool(board("ui://chess/board2.html"), run) // the server's next version
	if _, err := w.refresh(id); err != nil {
		t.Fatal(err)
	}
	ui, _, changed := listed()
	if got := ui["board"]; got == nil || got.ResourceURI == nil || *got.ResourceURI != "ui://chess/board2.html" {
		t.Errorf("after the refresh: %+v", got)
	}
	if changed == first {
		t.Error("a changed ui left the listing's digest as it was")
	}
}
