package service

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// ToolSets is the tool set storage the service needs (SPEC §10 "Tool
// sets"; storage.Store's tool-sets/ files).
type ToolSets interface {
	// ScanToolSets loads every set, with a storage issue per file that
	// cannot be loaded.
	ScanToolSets() ([]domain.ToolSet, []jsapi.StorageIssue, error)
	// LoadToolSet returns false when the set has no file.
	LoadToolSet(id domain.ToolSetID) (domain.ToolSet, bool, error)
	// SaveToolSet writes a set atomically.
	SaveToolSet(ts domain.ToolSet) error
	// DeleteToolSet removes a set's file; an absent file is not an error.
	DeleteToolSet(id domain.ToolSetID) error
}

// Codes of the tool set use cases.
const (
	CodeToolSetsUnavailable = "mcp.tool_sets_unavailable"
	CodeToolSetNotFound     = "mcp.tool_set_not_found"
	CodeToolSetNameTaken    = "mcp.tool_set_name_taken"
	CodeToolSetUnreadable   = "mcp.tool_set_unreadable"
)

func (s *Service) toolSetStore() (ToolSets, error) {
	if s.toolSets == nil {
		return nil, domain.Errorf(domain.KindUnavailable, CodeToolSetsUnavailable, "this backend keeps no tool sets")
	}
	return s.toolSets, nil
}

// ListToolSets returns every set, by name (case-insensitive, then id),
// and a storage issue per set file that could not be loaded.
func (s *Service) ListToolSets(context.Context) (jsapi.McpToolSetList, error) {
	store, err := s.toolSetStore()
	if err != nil {
		return jsapi.McpToolSetList{}, err
	}
	sets, issues, err := store.ScanToolSets()
	if err != nil {
		return jsapi.McpToolSetList{}, internal("cannot list tool sets", err)
	}
	slices.SortFunc(sets, func(a, b domain.ToolSet) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(string(a.ID), string(b.ID))
	})
	out := jsapi.McpToolSetList{ToolSets: make([]jsapi.McpToolSet, 0, len(sets)), StorageIssues: issues}
	for _, ts := range sets {
		out.ToolSets = append(out.ToolSets, ToolSetDTO(ts))
	}
	return out, nil
}

// SaveToolSet creates a set (no id: a fresh one) or replaces set id, which
// must exist and be readable: a damaged file is reported, never silently
// overwritten (remove it instead). Names are unique, case-insensitively,
// among the readable sets. Saves are serialised.
func (s *Service) SaveToolSet(ctx context.Context, dto jsapi.SaveMcpToolSetDto) (jsapi.McpToolSet, error) {
	store, err := s.toolSetStore()
	if err != nil {
		return jsapi.McpToolSet{}, err
	}
	ts, err := toolSetFromDTO(dto)
	if err != nil {
		return jsapi.McpToolSet{}, err
	}
	unlock, err := acquire(ctx, s.toolSetsMu)
	if err != nil {
		return jsapi.McpToolSet{}, err
	}
	defer unlock()
	if dto.ID != nil {
		if _, err := s.existingToolSet(store, ts.ID); err != nil {
			return jsapi.McpToolSet{}, err
		}
	}
	sets, _, err := store.ScanToolSets()
	if err != nil {
		return jsapi.McpToolSet{}, internal("cannot list tool sets", err)
	}
	for _, other := range sets {
		if other.ID != ts.ID && strings.EqualFold(other.Name, ts.Name) {
			return jsapi.McpToolSet{}, domain.Errorf(domain.KindConflict, CodeToolSetNameTaken, "a tool set called `%s` exists already", other.Name)
		}
	}
	if err := store.SaveToolSet(ts); err != nil {
		return jsapi.McpToolSet{}, saveFailed(err)
	}
	return ToolSetDTO(ts), nil
}

// RemoveToolSet deletes a set, also one whose file cannot be read (that is
// how a damaged set goes away). Chats and characters bound to it then use
// the next binding (the page's rule).
func (s *Service) RemoveToolSet(ctx context.Context, dto jsapi.McpToolSetIdDto) error {
	store, err := s.toolSetStore()
	if err != nil {
		return err
	}
	id, err := domain.ParseToolSetID(dto.ID)
	if err != nil {
		return err
	}
	unlock, err := acquire(ctx, s.toolSetsMu)
	if err != nil {
		return err
	}
	defer unlock()
	if _, found, err := store.LoadToolSet(id); !found && err == nil {
		return domain.Errorf(domain.KindNotFound, CodeToolSetNotFound, "tool set `%s` does not exist", id)
	}
	if err := store.DeleteToolSet(id); err != nil {
		return internal("cannot remove the tool set", err)
	}
	return nil
}

// existingToolSet loads set id, which must exist and be readable.
func (s *Service) existingToolSet(store ToolSets, id domain.ToolSetID) (domain.ToolSet, error) {
	ts, found, err := store.LoadToolSet(id)
	switch {
	case err != nil:
		return domain.ToolSet{}, domain.Errorf(domain.KindConflict, CodeToolSetUnreadable, "tool set `%s` cannot be read: %v", id, err)
	case !found:
		return domain.ToolSet{}, domain.Errorf(domain.KindNotFound, CodeToolSetNotFound, "tool set `%s` does not exist", id)
	}
	return ts, nil
}

func toolSetFromDTO(dto jsapi.SaveMcpToolSetDto) (domain.ToolSet, error) {
	ts := domain.ToolSet{ID: domain.NewToolSetID(), ResultInlineCharLimit: domain.DefaultResultInlineCharLimit, ReaderTool: true,
		Overrides: map[domain.ToolID]domain.DescriptionOverride{}}
	if dto.ID != nil {
		id, err := domain.ParseToolSetID(*dto.ID)
		if err != nil {
			return domain.ToolSet{}, err
		}
		ts.ID = id
	}
	name, err := domain.ParseToolSetName(dto.Name)
	if err != nil {
		return domain.ToolSet{}, err
	}
	ts.Name = name
	if ts.Tools, err = domain.ParseToolSelection(dto.Tools); err != nil {
		return domain.ToolSet{}, err
	}
	if dto.DescriptionOverrides != nil {
		for k, o := range *dto.DescriptionOverrides {
			ts.Overrides[domain.ToolID(k)] = domain.DescriptionOverride{Description: o.Description, Properties: orEmptyMap(o.Properties)}
		}
	}
	if dto.ResultInlineCharLimit != nil {
		ts.ResultInlineCharLimit = *dto.ResultInlineCharLimit
	}
	if dto.ReaderTool != nil {
		ts.ReaderTool = *dto.ReaderTool
	}
	if dto.ToolMode != nil {
		if ts.Search.Mode, err = domain.ParseToolMode(*dto.ToolMode); err != nil {
			return domain.ToolSet{}, err
		}
	}
	if dto.SearchMaxTools != nil {
		if *dto.SearchMaxTools < 1 {
			return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, "mcp.tool_set_search_budget_invalid", "searchMaxTools must be at least 1, not %d", *dto.SearchMaxTools)
		}
		ts.Search.MaxTools = *dto.SearchMaxTools
	}
	if dto.SearchContextPercent != nil {
		if *dto.SearchContextPercent < 1 {
			return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, "mcp.tool_set_search_budget_invalid", "searchContextPercent must be at least 1, not %d", *dto.SearchContextPercent)
		}
		ts.Search.ContextPercent = *dto.SearchContextPercent
	}
	if dto.PinnedTools != nil {
		for _, id := range *dto.PinnedTools {
			ts.Search.Pinned = append(ts.Search.Pinned, domain.ToolID(id))
		}
	}
	ts.Search = ts.Search.Normalized()
	return ts, ts.Validate()
}

func orEmptyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// ToolSetDTO projects a set for the page.
func ToolSetDTO(ts domain.ToolSet) jsapi.McpToolSet {
	out := jsapi.McpToolSet{ID: string(ts.ID), Name: ts.Name, Tools: make([]string, len(ts.Tools)),
		DescriptionOverrides:  make(map[string]jsapi.ToolDescriptionOverride, len(ts.Overrides)),
		ResultInlineCharLimit: ts.ResultInlineCharLimit, ReaderTool: ts.ReaderTool,
		ToolMode: ts.Search.Mode.String(), SearchMaxTools: ts.Search.EffectiveMaxTools(),
		SearchContextPercent: ts.Search.EffectiveContextPercent(), PinnedTools: make([]string, len(ts.Search.Pinned))}
	for i, id := range ts.Search.Pinned {
		out.PinnedTools[i] = string(id)
	}
	for i, sel := range ts.Tools {
		out.Tools[i] = sel.String()
	}
	for _, id := range slices.Sorted(maps.Keys(ts.Overrides)) {
		o := ts.Overrides[id]
		out.DescriptionOverrides[string(id)] = jsapi.ToolDescriptionOverride{Description: o.Description, Properties: orEmptyMap(o.Properties)}
	}
	return out
}

// Diagnostic codes of a tool set's resolution (reference §5.1, the Agent
// variant: a Profile's selected ToolIds).
// (A removed registration is CodeRegistrationNotFound, as upstream's.)
const (
	CodeToolPermissionOff  = "mcp.tool_permission_off"
	CodeToolSetOverrideBad = "mcp.tool_set_override_invalid"
	// CodeToolAppOnly: a set selects a tool whose _meta.ui visibility
	// leaves the model out (MCP Apps).
	CodeToolAppOnly = "mcp.tool_app_only"
)

// applyToolSet resolves a set over the registrations as the Agent resolves
// a Profile (reference §5.1, §5.2), in the set's order: for each selected
// ToolId, the registration (missing, unreadable, paused), the permission
// (Off is never offered), then the shared resolver's catalog, schema and
// registration-override checks, and last the set's own override, which
// wins per field. A whole server ("mcp/<uuid>:*") takes its Ask and Allow
// tools in ToolId order; its Off tools are not "selected" and say
// nothing. Every selected tool that cannot be offered is a diagnostic
// whose toolId is the selection's entry; a tool selected twice is offered
// at its first place.
func (s *Service) applyToolSet(ts domain.ToolSet, res *viewResult, resolve func(i int) *serverTools) jsapi.LegacyMcpToolList {
	out := jsapi.LegacyMcpToolList{Tools: []jsapi.LegacyMcpTool{}, Diagnostics: []jsapi.LegacyMcpDiagnostic{}}
	index := make(map[domain.RegistrationID]int, len(res.regs))
	for i, r := range res.regs {
		index[r.ID] = i
	}
	issueOf := make(map[domain.RegistrationID]jsapi.StorageIssue, len(res.issues))
	for _, is := range res.issues {
		stem := strings.TrimSuffix(is.FileName[strings.LastIndexByte(is.FileName, '/')+1:], ".json")
		if id, err := domain.ParseRegistrationID(stem); err == nil {
			issueOf[id] = is
		}
	}
	resolved := map[int]*serverTools{}
	server := func(i int) *serverTools {
		st, ok := resolved[i]
		if !ok {
			st = resolve(i)
			resolved[i] = st
		}
		return st
	}
	seenDiag := map[string]bool{}
	diag := func(d jsapi.LegacyMcpDiagnostic) {
		key := d.Code + "\x00" + d.Message
		if d.ToolID != nil {
			key += "\x00" + *d.ToolID
		}
		if !seenDiag[key] {
			seenDiag[key] = true
			out.Diagnostics = append(out.Diagnostics, d)
		}
	}
	offered := map[domain.ToolID]bool{}
	offer := func(r domain.Registration, t modelTool) {
		if offered[t.id] {
			return
		}
		offered[t.id] = true
		tool := t.tool
		if o, ok := ts.Overrides[t.id]; ok {
			applied, err := o.Apply(t.id, tool)
			if err != nil {
				diag(diagnostic(&t.id, CodeToolSetOverrideBad, "The tool set's description override does not fit the tool: %v", err))
				return
			}
			tool = applied
		}
		out.Tools = append(out.Tools, legacyToolDTO(r, t.id, tool))
	}
	for _, sel := range ts.Tools {
		at := domain.ToolID(sel.String())
		withTool := func(d jsapi.LegacyMcpDiagnostic) jsapi.LegacyMcpDiagnostic {
			d.ToolID = toolIDString(&at)
			return d
		}
		i, ok := index[sel.Registration]
		var r domain.Registration
		if ok {
			r = res.regs[i]
		}
		switch {
		case !ok:
			if is, bad := issueOf[sel.Registration]; bad {
				diag(diagnostic(&at, CodeRegistrationStorageIssue, "MCP registration `%s` could not be loaded: %s", sel.Registration, is.Message))
			} else {
				diag(diagnostic(&at, CodeRegistrationNotFound, "MCP registration `%s` no longer exists", sel.Registration))
			}
			continue
		case r.State != domain.StateActive:
			diag(diagnostic(&at, CodeServerPaused, "MCP server `%s` is paused", r.DisplayName))
			continue
		}
		if sel.All {
			if len(r.Permissions) == 0 {
				continue // nothing allowed: the catalog is not read
			}
			st := server(i)
			if st.problem != nil {
				diag(withTool(*st.problem))
				continue
			}
			for _, d := range append(slices.Clip(st.catalogDiags), st.absent...) {
				diag(d)
			}
			byID := slices.Clone(st.tools)
			slices.SortFunc(byID, func(a, b modelTool) int { return strings.Compare(string(a.id), string(b.id)) })
			for _, t := range byID {
				switch {
				case t.perm == domain.PermissionOff, t.appOnly:
				case t.problem != nil:
					diag(*t.problem)
				default:
					offer(r, t)
				}
			}
			continue
		}
		if r.PermissionFor(sel.NativeName) == domain.PermissionOff {
			diag(diagnostic(&at, CodeToolPermissionOff, "The tool is Off in MCP Manager"))
			continue
		}
		st := server(i)
		if st.problem != nil {
			diag(withTool(*st.problem))
			continue
		}
		for _, d := range st.catalogDiags {
			if d.ToolID != nil && *d.ToolID == string(at) {
				diag(d)
			}
		}
		pos, listed := st.byName[sel.NativeName]
		if !listed {
			diag(diagnostic(&at, CodeToolNotInCachedCatalog, "Tool `%s` is absent from the cached catalog; refresh `%s` in MCP Manager", sel.NativeName, r.DisplayName))
			continue
		}
		if t := st.tools[pos]; t.appOnly {
			diag(diagnostic(&at, CodeToolAppOnly, "The tool is for its MCP App only; it is never offered to a model"))
		} else if t.problem != nil {
			diag(*t.problem)
		} else {
			offer(r, t)
		}
	}
	return out
}
