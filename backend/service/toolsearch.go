package service

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Tool search (issue 31): search_mcp_tools ranks exactly what the model
// listing offers — the upstream listing (every Ask and Allow tool of an
// active server with a cached catalog; Off tools are never in it) or a
// tool set's (its selection, with its description overrides) — so every
// consumer finds what it could offer, and nothing else.
const (
	CodeToolSearchQueryInvalid = "mcp.tool_search_query_invalid"
	CodeToolSearchLimitInvalid = "mcp.tool_search_limit_invalid"
)

// toolSearchCache keeps the index of the upstream listing: the listing is
// itself kept while nothing in it changed (modeltools.go), and any change
// (a list change, a refresh, a permission, a new file) makes a new one,
// so the index is rebuilt at the first search after it, and only then. A
// tool set's index is built per search from its listing (a few ms for 300
// tools).
type toolSearchCache struct {
	mu  sync.Mutex
	of  *allListing
	idx *domain.ToolIndex
}

// SearchTools is search_mcp_tools.
func (s *Service) SearchTools(_ context.Context, dto jsapi.SearchMcpToolsDto) (jsapi.McpToolSearchResult, error) {
	query := strings.TrimSpace(dto.Query)
	switch {
	case query == "":
		return jsapi.McpToolSearchResult{}, domain.Errorf(domain.KindBadRequest, CodeToolSearchQueryInvalid, "the tool search needs a query")
	case len(query) > jsapi.MaxToolSearchQuery:
		return jsapi.McpToolSearchResult{}, domain.Errorf(domain.KindBadRequest, CodeToolSearchQueryInvalid, "the tool search query has %d bytes, at most %d", len(query), jsapi.MaxToolSearchQuery)
	}
	limit := jsapi.DefaultToolSearchLimit
	if dto.Limit != nil {
		limit = *dto.Limit
		if limit < 1 || limit > jsapi.MaxToolSearchLimit {
			return jsapi.McpToolSearchResult{}, domain.Errorf(domain.KindBadRequest, CodeToolSearchLimitInvalid, "the tool search limit is %d, it must be 1 to %d", limit, jsapi.MaxToolSearchLimit)
		}
	}
	var only string
	if dto.RegistrationID != nil {
		id, err := domain.ParseRegistrationID(*dto.RegistrationID)
		if err != nil {
			return jsapi.McpToolSearchResult{}, err
		}
		if _, err := s.load(id); err != nil {
			return jsapi.McpToolSearchResult{}, err
		}
		only = "mcp/" + id.String() + ":"
	}
	l, all, err := s.legacyListing(jsapi.ListLegacyMcpToolsDto{ToolSetID: dto.ToolSetID})
	if err != nil {
		return jsapi.McpToolSearchResult{}, err
	}
	tools, idx := l.Tools, (*domain.ToolIndex)(nil)
	if all != nil {
		tools, idx = all.list.Tools, s.search.index(all)
	} else {
		idx = buildToolIndex(tools)
	}
	keep := func(i int) bool {
		// An app-only tool (MCP Apps) is never found: the listing the
		// index is built from never holds one (resolveServerTools).
		return strings.HasPrefix(tools[i].ToolID, only)
	}
	out := jsapi.McpToolSearchResult{Hits: []jsapi.McpToolSearchHit{}}
	for _, h := range idx.Search(query, limit, keep) {
		t := tools[h.Doc]
		reg, _, _ := strings.Cut(strings.TrimPrefix(t.ToolID, "mcp/"), ":")
		out.Hits = append(out.Hits, jsapi.McpToolSearchHit{
			ToolID: t.ToolID, RegistrationID: reg, ServerDisplayName: t.ServerDisplayName,
			NativeName: t.NativeName, Title: t.Title, Description: oneLine(t.Description), Score: h.Score,
		})
	}
	return out, nil
}

func (c *toolSearchCache) index(all *allListing) *domain.ToolIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.of != all {
		c.of, c.idx = all, buildToolIndex(all.list.Tools)
	}
	return c.idx
}

func buildToolIndex(tools []jsapi.LegacyMcpTool) *domain.ToolIndex {
	docs := make([]domain.SearchDoc, len(tools))
	for i, t := range tools {
		d := domain.SearchDoc{Name: t.NativeName, Params: domain.SearchParamsOf([]byte(t.InputSchema))}
		if t.Title != nil {
			d.Title = *t.Title
		}
		if t.Description != nil {
			d.Description = *t.Description
		}
		docs[i] = d
	}
	return domain.BuildToolIndex(docs)
}

// oneLine is a description's first line, cut at 200 characters.
func oneLine(d *string) string {
	if d == nil {
		return ""
	}
	s, _, _ := strings.Cut(strings.TrimSpace(*d), "\n")
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	return strings.TrimSpace(s)
}
