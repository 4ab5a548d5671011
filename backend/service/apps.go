package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// MCP Apps (issue 30): a tool's interface runs in a sandbox on the page
// and may call tools back. Those calls come here, never through the
// model's path: they name the App (its registration and the tool whose
// interface it is) and the tool it calls, and they pass the App gates
// (below) before the model's own (registration, state, Off / Ask / Allow).

// StartAppCall is the start acknowledgement of an App's tool call.
func (s *Service) StartAppCall(ctx context.Context, dto jsapi.McpExecutionCallIdDto) (any, error) {
	return nil, s.appCalls.start(ctx, dto.ExecutionCallID)
}

// CancelAppCall cancels a prepared or running App tool call (the App was
// torn down, or the user stopped it).
func (s *Service) CancelAppCall(_ context.Context, dto jsapi.McpExecutionCallIdDto) (any, error) {
	s.appCalls.cancel(dto.ExecutionCallID)
	return nil, nil
}

// CallAppTool runs one prepared tools/call an App asked for. Its gates,
// in order: the call was started; the arguments (size, JSON, object); the
// registration loads and is Active; its cached catalog (memory, else the
// file: never the network) names the App's tool with an interface; it
// lists the tool called, whose visibility allows "app"; the permission is
// not Off; an Ask tool carries the user's answer (a page that did not ask
// is refused, so an App never skips Ask; "denied" is not sent). The call
// goes to that registration only: an App has no way to name another, so a
// tool of another server is refused as a tool its own server does not
// list. Every call, sent or refused, appends one audit record, source
// "app", naming the App.
func (s *Service) CallAppTool(ctx context.Context, dto jsapi.CallMcpAppToolDto) (out jsapi.McpCallOutcome, err error) {
	audit := s.beginAudit(domain.SourceApp, dto.ExecutionCallID, dto.ArgumentsJSON, domain.ApprovalNone)
	audit.rec.AppTool = dto.AppToolName
	if id, perr := domain.ParseRegistrationID(dto.RegistrationID); perr == nil {
		audit.tool(id, dto.NativeName)
	}
	defer func() { audit.finish(out, err) }()
	o, err := s.callApp(ctx, dto, audit)
	if err != nil {
		return jsapi.McpCallOutcome{}, err
	}
	return CallOutcomeDTO(o), nil
}

func (s *Service) callApp(ctx context.Context, dto jsapi.CallMcpAppToolDto, audit *callAudit) (domain.CallOutcome, error) {
	p, ok := s.appCalls.get(dto.ExecutionCallID)
	if !ok {
		return domain.NotSent(CodeCallNotStarted, "The App's tool call was not prepared or was cancelled before it started"), nil
	}
	defer s.appCalls.forget(dto.ExecutionCallID, p)
	if !rendersApps(ctx) {
		return domain.NotSent(jsapi.CodeAppsNotRendered, appsNotRendered), nil
	}
	approval := domain.ApprovalNone
	if dto.Approval != nil {
		a, err := domain.ParseApproval(*dto.Approval)
		if err != nil {
			return domain.CallOutcome{}, err
		}
		approval, audit.rec.Approval = a, a
	}
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return domain.CallOutcome{}, err
	}
	if err := domain.ValidateNativeName(dto.NativeName); err != nil {
		return domain.CallOutcome{}, err
	}
	if err := domain.ValidateNativeName(dto.AppToolName); err != nil {
		return domain.CallOutcome{}, err
	}
	text := dto.ArgumentsJSON
	if text == "" {
		text = "{}"
	}
	args, argsOutcome := parseArguments(text)
	if argsOutcome != nil {
		return domain.NotSent(argsOutcome.Code, argsOutcome.Message), nil
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	if callCtx.Err() != nil {
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it started"), nil
	}
	reg, ok, err := s.regs.Load(id)
	switch {
	case err != nil:
		return domain.NotSent(CodeCallRegistrationUnavailable, fmt.Sprintf("MCP registration `%s` cannot be loaded: %v", id, err)), nil
	case !ok:
		return domain.NotSent(CodeCallRegistrationNotFound, fmt.Sprintf("MCP registration not found: %s", id)), nil
	}
	audit.registration(reg)
	if reg.State != domain.StateActive {
		return domain.NotSent(CodeCallServerPaused, fmt.Sprintf("MCP server `%s` is paused", reg.DisplayName)), nil
	}
	if o := s.appGate(reg, dto.AppToolName, dto.NativeName); o != nil {
		return *o, nil
	}
	switch perm := reg.PermissionFor(dto.NativeName); {
	case perm == domain.PermissionOff:
		return domain.NotSent(CodeCallPermissionOff, fmt.Sprintf("MCP tool `%s` is Off", dto.NativeName)), nil
	case approval == domain.ApprovalDenied:
		return domain.NotSent(CodeCallDeniedByUser, fmt.Sprintf("The user denied the call to MCP tool `%s`; it was not sent", dto.NativeName)), nil
	case perm == domain.PermissionAsk && approval == domain.ApprovalNone:
		return domain.NotSent(jsapi.CodeCallApprovalRequired, fmt.Sprintf("MCP tool `%s` is set to Ask and the user was not asked; it was not sent", dto.NativeName)), nil
	}
	call := s.toolCall(reg, dto.NativeName, args)
	call.Elicit = s.elicitFor(ctx, domain.SourceApp, dto.ExecutionCallID, reg, dto.NativeName)
	return s.gateway.Call(callCtx, reg, call), nil
}

// appGate checks an App's call against reg's cached catalog: the App's
// tool has an interface, and the tool called is listed and visible to
// Apps. nil when the call may go on.
func (s *Service) appGate(reg domain.Registration, appTool, nativeName string) *domain.CallOutcome {
	cat, _, err := s.publishedCatalog(reg)
	refuse := func(code, format string, args ...any) *domain.CallOutcome {
		o := domain.NotSent(code, fmt.Sprintf(format, args...))
		return &o
	}
	switch {
	case err != nil:
		return refuse(CodeCatalogSnapshotInvalid, "MCP server `%s` has an invalid cached tool catalog: %v", reg.DisplayName, err)
	case cat == nil:
		return refuse(CodeCatalogNotCached, "MCP server `%s` has no cached tool catalog; refresh it in MCP Manager", reg.DisplayName)
	}
	app, called := findTool(cat, appTool), findTool(cat, nativeName)
	switch {
	case app == nil || !app.UI.HasInterface():
		return refuse(jsapi.CodeAppUnknown, "MCP server `%s` has no App for tool `%s`", reg.DisplayName, appTool)
	case called == nil:
		return refuse(CodeToolNotInCachedCatalog, "Tool `%s` is absent from the cached catalog of `%s`; an App may call only its own server's tools", nativeName, reg.DisplayName)
	case !called.UI.VisibleTo(domain.VisibleToApp):
		return refuse(jsapi.CodeCallNotVisibleToApp, "MCP tool `%s` is not visible to Apps (its visibility leaves out app)", nativeName)
	}
	return nil
}

func findTool(cat *domain.Catalog, nativeName string) *domain.Tool {
	for i := range cat.Tools {
		if cat.Tools[i].NativeName == nativeName {
			return &cat.Tools[i]
		}
	}
	return nil
}

// modelMayCall reports whether a model may call reg's tool nativeName:
// not when its cached catalog marks it app-only (MCP Apps). A model is
// never offered such a tool; this refuses one it names anyway. Without a
// cached catalog the call goes on as upstream's does.
func (s *Service) modelMayCall(reg domain.Registration, nativeName string) bool {
	cat, _, err := s.publishedCatalog(reg)
	if err != nil || cat == nil {
		return true
	}
	t := findTool(cat, nativeName)
	return t == nil || !t.UI.ModelHidden()
}

// listedUI is the _meta.ui of uri's entry in r's resource list, for an
// App document that carries none (the draft: the content's wins, the
// listing's is the fallback). The list kept in memory serves, fresh or not
// (as a prompt's definition does: it is dropped on the server's
// list-changed notification and on any change of the connection); only
// when none is kept is the server asked, and that list is kept. A list
// that cannot be had leaves the App the restrictive default, said in the
// log.
func (s *Service) listedUI(ctx context.Context, r domain.Registration, uri string) json.RawMessage {
	s.lists.mu.Lock()
	var k *kept[domain.Resource]
	if e := s.lists.byID[r.ID]; e != nil && e.conn.SameConnection(r) {
		k = e.resources
	}
	s.lists.mu.Unlock()
	if k == nil {
		var err error
		if k, _, err = listKept(s, ctx, r, false, func(e *keptLists) **kept[domain.Resource] { return &e.resources }, s.gateway.ListResources); err != nil {
			s.log.Warn("an App's resource list could not be read: its document's policy is the default", "registrationId", r.ID, "uri", uri, "err", err)
			return nil
		}
	}
	return domain.ListedUI(k.listing.Items, uri)
}

// rendersApps reports whether the page in ctx may run Apps: one that said
// it renders them (its requests declare the extension). A context without
// a page (a use inside the backend) is not refused. This is the page's own
// gate, whatever its server was told: a 2025 stdio process is told once,
// at initialize, for every page (DECISIONS "MCP Apps").
func rendersApps(ctx context.Context) bool {
	ap, ok := pageOf(ctx).(AppsPage)
	return !ok || ap.RendersApps()
}

const appsNotRendered = "This page did not say it renders MCP Apps (api.mcp.apps.setRenderer(true)): no App of it may read its interface or call a tool"

// AppsPage is a page that may render MCP Apps: it says so in its handlers
// frame, and only then do the requests it causes (discoveries, calls,
// reads) declare the io.modelcontextprotocol/ui extension to the server
// (WithPage hands the question to the gateway through the context).
type AppsPage interface {
	RendersApps() bool
}

// ReadAppResource reads the interface of the App of a tool
// (read_mcp_app_resource): the registration Active with resources allowed
// (the read goes the resource path's way), the tool in its cached catalog
// with a ui:// resourceUri; then one resources/read of that URI, whose
// answer must be one App document (domain.ParseAppInterface: MIME type,
// size, UTF-8). The policy is ttmcp's, built from what the document
// declares — or, when it declares nothing, its resources/list entry
// (listedUI) — never looser. The read is audited as the App's (source app,
// kind resource_read), its outcome as the server answered; a document that
// cannot be rendered is this command's error, not the read's.
func (s *Service) ReadAppResource(ctx context.Context, dto jsapi.ReadMcpAppResourceDto) (_ jsapi.McpAppResource, err error) {
	audit := s.beginAudit(domain.SourceApp, domain.NewRecordID(), "", domain.ApprovalNone)
	audit.rec.Kind, audit.rec.AppTool = domain.AuditResourceRead, dto.AppToolName
	audit.rec.RegistrationID, _ = domain.ParseRegistrationID(dto.RegistrationID)
	var sent *jsapi.McpCallOutcome
	defer func() {
		if sent != nil {
			audit.finish(*sent, nil)
		} else {
			audit.finish(jsapi.McpCallOutcome{}, err)
		}
	}()
	if !rendersApps(ctx) {
		return jsapi.McpAppResource{}, domain.Errorf(domain.KindConflict, jsapi.CodeAppsNotRendered, "%s", appsNotRendered)
	}
	r, err := s.primitiveServer(dto.RegistrationID, primResources, "an App's interface is read")
	if err != nil {
		return jsapi.McpAppResource{}, err
	}
	audit.server(r)
	cat, _, err := s.publishedCatalog(r)
	switch {
	case err != nil:
		return jsapi.McpAppResource{}, domain.Errorf(domain.KindUnavailable, CodeCatalogSnapshotInvalid, "MCP server `%s` has an invalid cached tool catalog: %v", r.DisplayName, err)
	case cat == nil:
		return jsapi.McpAppResource{}, domain.Errorf(domain.KindUnavailable, CodeCatalogNotCached, "MCP server `%s` has no cached tool catalog; refresh it in MCP Manager", r.DisplayName)
	}
	t := findTool(cat, dto.AppToolName)
	if t == nil || !t.UI.HasInterface() {
		return jsapi.McpAppResource{}, domain.Errorf(domain.KindNotFound, jsapi.CodeAppUnknown, "MCP server `%s` has no App for tool `%s`", r.DisplayName, dto.AppToolName)
	}
	uri := t.UI.ResourceURI
	audit.rec.URI = uri
	answer := s.gateway.ReadResource(ctx, r, uri)
	out := readOutcomeDTO(answer)
	sent = &out
	if answer.Outcome != domain.OutcomeKnownResponse || answer.Result == nil {
		code, msg := answer.Code, answer.Message
		if answer.ServerError != nil {
			code, msg = jsapi.CodeAppResourceInvalid, "the server answered the read with an error: "+answer.ServerError.Message
		} else if answer.Unsupported != nil {
			code, msg = jsapi.CodeAppResourceInvalid, answer.Unsupported.Message
		}
		return jsapi.McpAppResource{}, domain.Errorf(domain.KindUnavailable, code, "the App's interface `%s` was not read: %s", uri, msg)
	}
	app, err := domain.ParseAppInterface(uri, answer.Result.Contents, func() json.RawMessage { return s.listedUI(ctx, r, uri) })
	if err != nil {
		return jsapi.McpAppResource{}, err
	}
	var perms []string
	for _, p := range []struct {
		on      bool
		feature string
	}{{app.Permissions.Camera, "camera"}, {app.Permissions.Microphone, "microphone"}, {app.Permissions.Geolocation, "geolocation"}, {app.Permissions.ClipboardWrite, "clipboard-write"}} {
		if p.on {
			perms = append(perms, p.feature)
		}
	}
	csp := domain.AppCSPHeader(app.CSP)
	view := s.views.put(AppView{HTML: app.HTML, CSP: csp, Permissions: perms}, s.now())
	if len(app.Dropped) > 0 {
		s.log.Warn("an App's declared policy was narrowed", "registrationId", r.ID, "tool", dto.AppToolName, "uri", uri, "dropped", app.Dropped)
	}
	return jsapi.McpAppResource{
		RegistrationID: string(r.ID), AppToolName: dto.AppToolName, URI: uri, HTML: app.HTML,
		CSP: csp, ViewID: view,
		Declared: jsapi.McpAppCSP{ConnectDomains: orEmpty(app.CSP.ConnectDomains), ResourceDomains: orEmpty(app.CSP.ResourceDomains),
			FrameDomains: orEmpty(app.CSP.FrameDomains), BaseURIDomains: orEmpty(app.CSP.BaseURIDomains)},
		Permissions: jsapi.McpAppPerms{Camera: app.Permissions.Camera, Microphone: app.Permissions.Microphone,
			Geolocation: app.Permissions.Geolocation, ClipboardWrite: app.Permissions.ClipboardWrite},
		PrefersBorder: app.PrefersBorder, SHA256: app.SHA256, Dropped: orEmpty(app.Dropped),
	}, nil
}
