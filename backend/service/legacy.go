package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Diagnostic codes of model-tool resolution (reference §5.1).
const (
	CodeRegistrationStorageIssue    = "mcp.registration_storage_issue"
	CodeCatalogNotCached            = "mcp.catalog_not_cached"
	CodeCatalogSnapshotInvalid      = "mcp.catalog_snapshot_invalid"
	CodeToolNotInCachedCatalog      = "mcp.tool_not_in_cached_catalog"
	CodeModelInputSchemaUnsupported = "mcp.model_input_schema_unsupported"
	CodeOverrideInvalid             = "mcp.tool_description_override_invalid"
	CodeCallPermissionOff           = "mcp.call_permission_off"
)

// ListLegacyTools lists the tools a model may be offered (reference §5.1):
// of Active registrations, the tools set to Ask or Allow, from cached
// catalogs only (memory, else the file; never the network), with the
// registration's description overrides applied. Every registration or tool
// left out is a diagnostic; one server's problem never hides another's
// tools. The order is by server name (case-insensitive), then ToolId.
//
// With a toolSetId (ttmcp's addition) the set is applied instead, through
// the same resolver (applyToolSet): only what it selects, in its order.
//
// It is served from what the backend holds (modeltools.go): the result
// may be shared with other callers, who must not modify it.
func (s *Service) ListLegacyTools(ctx context.Context, dto jsapi.ListLegacyMcpToolsDto) (jsapi.LegacyMcpToolList, error) {
	l, all, err := s.legacyListing(dto)
	if all != nil {
		return all.list, nil
	}
	return l, err
}

// ListLegacyToolsEncoded is ListLegacyTools encoded with encode; without a
// set, once per version of the listing: every root of an unchanged setup
// gets the same bytes, which callers must not modify.
func (s *Service) ListLegacyToolsEncoded(ctx context.Context, dto jsapi.ListLegacyMcpToolsDto, encode func(any) ([]byte, error)) ([]byte, error) {
	l, all, err := s.legacyListing(dto)
	switch {
	case err != nil:
		return nil, err
	case all != nil:
		return all.encoded(encode)
	}
	return encode(l)
}

// digestSeed seeds LegacyToolsDigest: one per process.
var digestSeed = maphash.MakeSeed()

// LegacyToolsDigest is a digest of what ListLegacyToolsEncoded answers now
// for dto (issue 31): the page keeps a large listing and lists again only
// when the digest changed. It hashes the same bytes the listing sends, so
// it changes whenever they do.
// The upstream listing's digest is kept with its encoding.
func (s *Service) LegacyToolsDigest(ctx context.Context, dto jsapi.ListLegacyMcpToolsDto, encode func(any) ([]byte, error)) (jsapi.LegacyToolsDigest, error) {
	l, all, err := s.legacyListing(dto)
	if err != nil {
		return jsapi.LegacyToolsDigest{}, err
	}
	if all != nil {
		d, err := all.digest(encode)
		return jsapi.LegacyToolsDigest{Digest: d}, err
	}
	data, err := encode(l)
	if err != nil {
		return jsapi.LegacyToolsDigest{}, err
	}
	return jsapi.LegacyToolsDigest{Digest: digestOf(data)}, nil
}

func digestOf(data []byte) string {
	return strconv.FormatUint(maphash.Bytes(digestSeed, data), 36) + "-" + strconv.Itoa(len(data))
}

// legacyListing is a set's listing, or the kept upstream listing (all).
func (s *Service) legacyListing(dto jsapi.ListLegacyMcpToolsDto) (jsapi.LegacyMcpToolList, *allListing, error) {
	var set *domain.ToolSet
	if dto.ToolSetID != nil {
		store, err := s.toolSetStore()
		if err != nil {
			return jsapi.LegacyMcpToolList{}, nil, err
		}
		id, err := domain.ParseToolSetID(*dto.ToolSetID)
		if err != nil {
			return jsapi.LegacyMcpToolList{}, nil, err
		}
		ts, err := s.existingToolSet(store, id)
		if err != nil {
			return jsapi.LegacyMcpToolList{}, nil, err
		}
		set = &ts
	}
	res, err := s.view.current()
	if err != nil {
		return jsapi.LegacyMcpToolList{}, nil, internal("cannot list MCP registrations", err)
	}
	s.models.mu.Lock()
	defer s.models.mu.Unlock()
	resolve := s.resolver(res)
	if set != nil {
		return s.applyToolSet(*set, res, resolve), nil, nil
	}
	return jsapi.LegacyMcpToolList{}, s.listAll(res, resolve), nil
}

// allTools is the upstream listing of res, from the resolution of each
// registration that is Active and has permissions (servers[i], nil for the
// others): storage issues, then per registration in file order its
// catalog's problem, or its diagnostics and its Ask and Allow tools; the
// tools sorted by server name (case-insensitive), then ToolId.
func allTools(res *viewResult, servers []*serverTools) jsapi.LegacyMcpToolList {
	out := jsapi.LegacyMcpToolList{Tools: []jsapi.LegacyMcpTool{}, Diagnostics: []jsapi.LegacyMcpDiagnostic{}}
	for _, issue := range res.issues {
		out.Diagnostics = append(out.Diagnostics, diagnostic(nil, CodeRegistrationStorageIssue, "MCP registration file `%s` could not be loaded: %s", issue.FileName, issue.Message))
	}
	for _, st := range servers {
		if st == nil {
			continue // never touches the catalog
		}
		if st.problem != nil {
			out.Diagnostics = append(out.Diagnostics, *st.problem)
			continue
		}
		out.Diagnostics = append(append(out.Diagnostics, st.catalogDiags...), st.absent...)
		for _, t := range st.tools {
			switch {
			case t.perm == domain.PermissionOff, t.appOnly:
			case t.problem != nil:
				out.Diagnostics = append(out.Diagnostics, *t.problem)
			default:
				out.Tools = append(out.Tools, t.dto)
			}
		}
	}
	slices.SortStableFunc(out.Tools, func(a, b jsapi.LegacyMcpTool) int {
		if c := strings.Compare(strings.ToLower(a.ServerDisplayName), strings.ToLower(b.ServerDisplayName)); c != 0 {
			return c
		}
		return strings.Compare(a.ToolID, b.ToolID)
	})
	return out
}

// serverTools is what one registration offers a model from its cached
// catalog (the shared resolver of reference §5.1, before any tool set):
// every catalog tool with its permission, and for the Ask and Allow ones
// the descriptor with the registration's override applied, or why it
// cannot be offered.
type serverTools struct {
	// problem: the catalog is not cached or invalid; nothing else is set.
	problem *jsapi.LegacyMcpDiagnostic
	// catalogDiags are the snapshot's discovery diagnostics.
	catalogDiags []jsapi.LegacyMcpDiagnostic
	// absent: the permitted names the catalog lacks, by name.
	absent []jsapi.LegacyMcpDiagnostic
	tools  []modelTool // catalog order
	byName map[string]int
}

type modelTool struct {
	id   domain.ToolID
	perm domain.Permission
	// appOnly: the tool's _meta.ui leaves the model out (MCP Apps): it
	// keeps its permission, for its App's calls, and is never offered to
	// a model, whatever the permission or a tool set says.
	appOnly bool
	// tool has the registration's override applied (Ask and Allow only).
	tool domain.Tool
	// problem says why an Ask or Allow tool cannot be offered (its schema
	// root, or an override that does not fit).
	problem *jsapi.LegacyMcpDiagnostic
	dto     jsapi.LegacyMcpTool
}

// catalogProblem is the resolution of a registration without a usable
// snapshot: none cached (err nil), or one that cannot be loaded.
func catalogProblem(r domain.Registration, err error) *serverTools {
	d := diagnostic(nil, CodeCatalogNotCached, "MCP server `%s` has no cached tool catalog; refresh it in MCP Manager", r.DisplayName)
	if err != nil {
		d = diagnostic(nil, CodeCatalogSnapshotInvalid, "MCP server `%s` has an invalid cached tool catalog: %v", r.DisplayName, err)
	}
	return &serverTools{problem: &d}
}

// resolveServerTools resolves r's catalog (r Active: it was read).
func resolveServerTools(r domain.Registration, cat domain.Catalog) *serverTools {
	st := &serverTools{tools: make([]modelTool, 0, len(cat.Tools)), byName: make(map[string]int, len(cat.Tools))}
	for _, d := range cat.Diagnostics {
		var id *domain.ToolID
		if d.NativeName != nil {
			if tid, err := domain.NewToolID(r.ID, *d.NativeName); err == nil {
				id = &tid
			}
		}
		st.catalogDiags = append(st.catalogDiags, jsapi.LegacyMcpDiagnostic{ToolID: toolIDString(id), Code: d.Code, Message: d.Message})
	}
	for _, t := range cat.Tools {
		st.byName[t.NativeName] = len(st.tools)
		tid, _ := domain.NewToolID(r.ID, t.NativeName) // names were validated with the catalog
		mt := modelTool{id: tid, perm: r.PermissionFor(t.NativeName), appOnly: t.UI.ModelHidden()}
		if mt.perm != domain.PermissionOff && !mt.appOnly {
			mt.tool, mt.problem = offerable(r, tid, t)
			if mt.problem == nil {
				mt.dto = legacyToolDTO(r, tid, mt.tool)
			}
		}
		st.tools = append(st.tools, mt)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Permissions)) {
		if _, listed := st.byName[name]; !listed {
			tid, _ := domain.NewToolID(r.ID, name)
			st.absent = append(st.absent, diagnostic(&tid, CodeToolNotInCachedCatalog, "Tool `%s` is absent from the cached catalog; refresh `%s` in MCP Manager", name, r.DisplayName))
		}
	}
	return st
}

// offerable returns t as the model sees it under r's override, or why it
// cannot be offered: a schema root that is not type object, or an override
// that does not fit (the tool is dropped, never offered with raw text).
func offerable(r domain.Registration, tid domain.ToolID, t domain.Tool) (domain.Tool, *jsapi.LegacyMcpDiagnostic) {
	if !rootIsObject(t.InputSchema) {
		d := diagnostic(&tid, CodeModelInputSchemaUnsupported, "MCP tool `%s` cannot be advertised to a model because its input schema root is not explicitly type object", tid)
		return domain.Tool{}, &d
	}
	if o, ok := r.Overrides[t.NativeName]; ok {
		applied, err := o.Apply(tid, t)
		if err != nil {
			d := diagnostic(&tid, CodeOverrideInvalid, "%v", err)
			return domain.Tool{}, &d
		}
		t = applied
	}
	return t, nil
}

func legacyToolDTO(r domain.Registration, tid domain.ToolID, t domain.Tool) jsapi.LegacyMcpTool {
	return jsapi.LegacyMcpTool{
		ToolID: string(tid), NativeName: t.NativeName, ServerDisplayName: r.DisplayName,
		Title: t.Title, Description: t.Description, InputSchema: jsapi.RawJSON(t.InputSchema),
		UI: toolUIDTO(t.UI),
	}
}

func diagnostic(id *domain.ToolID, code, format string, args ...any) jsapi.LegacyMcpDiagnostic {
	return jsapi.LegacyMcpDiagnostic{ToolID: toolIDString(id), Code: code, Message: fmt.Sprintf(format, args...)}
}

// rootIsObject reports whether a schema's root says "type": "object"
// exactly: models are only offered tools whose arguments are an object.
// It reads the root's members and skips their values unparsed (a catalog's
// schemas are valid JSON, checked when it was discovered or loaded), which
// matters when 5,000 tools are listed for every root generation.
func rootIsObject(schema json.RawMessage) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(schema))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	isObject := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if name.String() != "type" {
			if dec.SkipValue() != nil {
				return false
			}
			continue
		}
		if dec.PeekKind() != '"' {
			if dec.SkipValue() != nil {
				return false
			}
			isObject = false
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return false // also a repeated "type": the decoder refuses it
		}
		isObject = v.String() == "object"
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return false
	}
	return isObject
}

func toolIDString(id *domain.ToolID) *string {
	if id == nil {
		return nil
	}
	s := string(*id)
	return &s
}

// StartLegacyCall is the start acknowledgement of a model tool call.
func (s *Service) StartLegacyCall(ctx context.Context, dto jsapi.McpExecutionCallIdDto) (any, error) {
	return nil, s.legacyCalls.start(ctx, dto.ExecutionCallID)
}

// CancelLegacyCall cancels a prepared or running model tool call.
func (s *Service) CancelLegacyCall(_ context.Context, dto jsapi.McpExecutionCallIdDto) (any, error) {
	s.legacyCalls.cancel(dto.ExecutionCallID)
	return nil, nil
}

// CallLegacyTool runs one prepared model tool call (reference §6.1, §5.4).
// Unlike a test call it re-checks the permission: a tool set to Off since
// the model was offered it is not called. An empty argumentsJson means {}.
//
// approval (a ttmcp addition) is what the user answered an Ask prompt: it
// is recorded; "denied" is answered not_sent mcp.call_denied_by_user
// without a call. Without one (upstream's hooks) Ask behaves as Allow, as
// upstream's does (docs/DECISIONS.md). Every call, sent or refused,
// appends one audit record.
func (s *Service) CallLegacyTool(ctx context.Context, dto jsapi.CallLegacyMcpToolDto) (out jsapi.McpCallOutcome, err error) {
	audit := s.beginAudit(domain.SourceModel, dto.ExecutionCallID, dto.ArgumentsJSON, domain.ApprovalNone)
	if id, name, err := domain.ParseToolID(dto.ToolID); err == nil {
		audit.tool(id, name)
	}
	defer func() { audit.finish(out, err) }()
	var readable readableOptions
	if dto.Readable != nil {
		if readable, err = parseReadable(*dto.Readable); err != nil {
			return jsapi.McpCallOutcome{}, err
		}
	}
	o, r, err := s.callLegacy(ctx, dto, audit)
	if err != nil {
		return jsapi.McpCallOutcome{}, err
	}
	out = CallOutcomeDTO(o)
	if dto.Readable != nil {
		out.Readable = s.readable(o, r, dto.ToolID, readable, audit)
	}
	return out, nil
}

// callLegacy runs CallLegacyTool's gates and call; r is the registration
// the call was decided against (nil when none was loaded).
func (s *Service) callLegacy(ctx context.Context, dto jsapi.CallLegacyMcpToolDto, audit *callAudit) (_ domain.CallOutcome, r *domain.Registration, err error) {
	p, ok := s.legacyCalls.get(dto.ExecutionCallID)
	if !ok {
		return domain.NotSent(CodeCallNotStarted, "The Legacy tool call was not prepared or was cancelled before it started"), nil, nil
	}
	defer s.legacyCalls.forget(dto.ExecutionCallID, p)
	approval := domain.ApprovalNone
	if dto.Approval != nil {
		if approval, err = domain.ParseApproval(*dto.Approval); err != nil {
			return domain.CallOutcome{}, nil, err
		}
		audit.rec.Approval = approval
	}
	if approval == domain.ApprovalDenied {
		if _, _, err := domain.ParseToolID(dto.ToolID); err != nil {
			return domain.CallOutcome{}, nil, err
		}
		// Named as the model knows the tool (its title, else its native
		// name), never by the ToolId, which tells the model nothing.
		r := s.loaded(dto.ToolID)
		return domain.NotSent(CodeCallDeniedByUser, fmt.Sprintf("The user denied the call to MCP tool `%s`; it was not sent", s.toolLabel(r, dto.ToolID).Title)), r, nil
	}
	// The upstream order: the call's own arguments (§6.1), then the shared
	// gate (§5.4): cancelled, tool id, object, registration, permission.
	text := dto.ArgumentsJSON
	if text == "" {
		text = "{}"
	}
	args, argsOutcome := parseArguments(text)
	if argsOutcome != nil && argsOutcome.Code != CodeCallArgumentsNotObject {
		return domain.NotSent(argsOutcome.Code, argsOutcome.Message), nil, nil // too large, or not JSON
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	if callCtx.Err() != nil {
		return domain.NotSent(CodeCallCancelledBeforeSend, "The tool request was cancelled before it started"), nil, nil
	}
	id, name, err := domain.ParseToolID(dto.ToolID)
	if err != nil {
		return domain.CallOutcome{}, nil, err
	}
	if argsOutcome != nil {
		return domain.NotSent(argsOutcome.Code, argsOutcome.Message), nil, nil // not an object
	}
	reg, ok, err := s.regs.Load(id)
	switch {
	case err != nil:
		return domain.NotSent(CodeCallRegistrationUnavailable, fmt.Sprintf("MCP registration `%s` cannot be loaded: %v", id, err)), nil, nil
	case !ok:
		return domain.NotSent(CodeCallRegistrationNotFound, fmt.Sprintf("MCP registration not found: %s", id)), nil, nil
	}
	audit.registration(reg)
	switch {
	case reg.State != domain.StateActive:
		return domain.NotSent(CodeCallServerPaused, fmt.Sprintf("MCP server `%s` is paused", reg.DisplayName)), &reg, nil
	case reg.PermissionFor(name) == domain.PermissionOff:
		return domain.NotSent(CodeCallPermissionOff, fmt.Sprintf("MCP tool `%s` is Off", dto.ToolID)), &reg, nil
	case !s.modelMayCall(reg, name):
		return domain.NotSent(jsapi.CodeCallToolAppOnly, fmt.Sprintf("MCP tool `%s` is for its App only and is never called by a model", dto.ToolID)), &reg, nil
	}
	call := s.toolCall(reg, name, args)
	call.Elicit = s.elicitFor(ctx, domain.SourceModel, dto.ExecutionCallID, reg, name)
	endProgress := s.progressFor(ctx, &call, audit)
	o := s.gateway.Call(callCtx, reg, call)
	endProgress()
	return o, &reg, nil
}

// loaded returns the registration of toolID, if it can be loaded (to name
// its tool for the model); nil otherwise.
func (s *Service) loaded(toolID string) *domain.Registration {
	id, _, err := domain.ParseToolID(toolID)
	if err != nil {
		return nil
	}
	r, ok, err := s.regs.Load(id)
	if !ok || err != nil {
		return nil
	}
	return &r
}
