package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Discover connects to the registration's server, pages through tools/list
// within the limits of reference §3.3 and validates every tool (§3.4). It
// returns a whole catalog or an error: never a partial one.
func (g *Gateway) Discover(ctx context.Context, r domain.Registration) (domain.Catalog, error) {
	filtered := &filterWatch{}
	s, err := g.openWith(ctx, r, filtered.middleware)
	if err != nil {
		return domain.Catalog{}, err
	}
	defer s.close(g.cfg.CloseTimeout)

	init := s.cs.InitializeResult()
	cat := domain.Catalog{ProtocolVersion: init.ProtocolVersion}
	if info := init.ServerInfo; info != nil {
		if info.Name != "" {
			cat.ServerName = &info.Name
		}
		if info.Version != "" {
			cat.ServerVersion = &info.Version
		}
	}
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return cat, nil // no tools capability: nothing to list
	}
	l, err := g.listTools(ctx, s, filtered, "")
	if err != nil {
		return domain.Catalog{}, err
	}
	cat.Tools, cat.Diagnostics = domain.ValidateTools(l.tools)
	cat.Diagnostics = append(cat.Diagnostics, l.excluded...)
	return cat, nil
}

// filterWatch remembers the tool names of the last tools/list page as the
// server sent them. go-sdk drops tools with invalid x-mcp-header
// annotations after decoding a page (SEP-2243); a sending middleware sees
// the page before that, so the dropped tools can be reported instead of
// vanishing without a trace.
type filterWatch struct {
	names []string
}

func (f *filterWatch) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if page, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			f.names = f.names[:0]
			for _, t := range page.Tools {
				if t != nil {
					f.names = append(f.names, t.Name)
				}
			}
		}
		return res, err
	}
}

// listing is what a tools/list run collected.
type listing struct {
	tools    []domain.DescribedTool
	excluded []domain.Diagnostic // tools go-sdk dropped
	found    bool                // the target was listed (and kept)
}

// listTools pages through tools/list with our own loop: go-sdk's iterator
// has no page cap or cursor-cycle detection. The run stops early once
// target (when not "") appears. Limits: MaxCatalogPages pages,
// MaxCatalogTools tools, MaxCatalogBytes of tool JSON, no repeated cursor,
// only complete results, the whole run within ListTimeout.
func (g *Gateway) listTools(ctx context.Context, s *session, filtered *filterWatch, target string) (listing, error) {
	lctx, cancel := context.WithTimeout(ctx, g.cfg.ListTimeout)
	defer cancel()
	var l listing
	total := 0
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := s.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return listing{}, cancelled(ctx)
			case isTimeout(err) || lctx.Err() != nil:
				return listing{}, domain.Errorf(domain.KindUnavailable, CodeListTimeout, "tools/list did not complete within %s", g.cfg.ListTimeout)
			}
			return listing{}, domain.Errorf(domain.KindUnavailable, CodeListFailed, "%s", s.tr.explain(err))
		}
		if rt := string(res.ResultType); rt != "" && rt != "complete" {
			return listing{}, domain.Errorf(domain.KindUnavailable, CodeResultTypeUnsupported, "tools/list did not return a complete result")
		}
		kept := map[string]bool{}
		for _, t := range res.Tools {
			kept[t.Name] = true
			d, err := describe(t)
			if err != nil {
				return listing{}, domain.Errorf(domain.KindUnavailable, CodeToolSerializeFailed, "Tool `%s` cannot be serialized: %v", t.Name, err)
			}
			total += d.Size
			l.tools = append(l.tools, d)
			l.found = l.found || t.Name == target
		}
		for _, name := range filtered.names {
			if !kept[name] {
				l.excluded = append(l.excluded, domain.Diagnostic{Code: CodeToolHeaderAnnotationInvalid, NativeName: &name,
					Message: fmt.Sprintf("Tool `%s` was excluded: its x-mcp-header annotations are invalid", name)})
			}
		}
		if len(l.tools)+len(l.excluded) > domain.MaxCatalogTools {
			return listing{}, domain.Errorf(domain.KindUnavailable, CodeToolLimit, "catalog exceeds %d tools", domain.MaxCatalogTools)
		}
		if total > domain.MaxCatalogBytes {
			return listing{}, domain.Errorf(domain.KindUnavailable, CodeCatalogSizeLimit, "catalog exceeds %d bytes", domain.MaxCatalogBytes)
		}
		next := res.NextCursor
		if next == "" || l.found {
			return l, nil
		}
		if seen[next] {
			return listing{}, domain.Errorf(domain.KindUnavailable, CodeCursorCycle, "server repeated cursor `%s`", next)
		}
		if page == domain.MaxCatalogPages {
			return listing{}, domain.Errorf(domain.KindUnavailable, CodePageLimit, "catalog exceeds %d pages", domain.MaxCatalogPages)
		}
		seen[next] = true
		cursor = next
	}
}

// describe turns a go-sdk tool into the domain's view of it, with the size
// of its JSON. Empty title and description are absent, as on the wire
// (go-sdk omits them when empty).
func describe(t *mcp.Tool) (domain.DescribedTool, error) {
	whole, err := json.Marshal(t)
	if err != nil {
		return domain.DescribedTool{}, err
	}
	d := domain.DescribedTool{Tool: domain.Tool{NativeName: t.Name}, Size: len(whole)}
	if t.Title != "" {
		d.Title = &t.Title
	}
	if t.Description != "" {
		d.Description = &t.Description
	}
	if d.InputSchema, err = json.Marshal(t.InputSchema); err != nil {
		return domain.DescribedTool{}, err
	}
	if t.OutputSchema != nil {
		if d.OutputSchema, err = json.Marshal(t.OutputSchema); err != nil {
			return domain.DescribedTool{}, err
		}
	}
	if t.Annotations != nil {
		if d.Annotations, err = json.Marshal(t.Annotations); err != nil {
			return domain.DescribedTool{}, err
		}
	}
	return d, nil
}
