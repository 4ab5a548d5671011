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
	// go-sdk drops tools with invalid x-mcp-header annotations after
	// decoding a page; a sending middleware sees the page before that, so
	// the dropped tools can be reported instead of vanishing.
	var unfiltered []string
	capture := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if page, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				unfiltered = unfiltered[:0]
				for _, t := range page.Tools {
					if t != nil {
						unfiltered = append(unfiltered, t.Name)
					}
				}
			}
			return res, err
		}
	}
	s, err := g.openWith(ctx, r, capture)
	if err != nil {
		return domain.Catalog{}, err
	}
	defer s.close(g.cfg.CloseTimeout)

	init := s.cs.InitializeResult()
	cat := domain.Catalog{ProtocolVersion: init.ProtocolVersion}
	if name := init.ServerInfo.Name; name != "" {
		cat.ServerName = &name
	}
	if v := init.ServerInfo.Version; v != "" {
		cat.ServerVersion = &v
	}
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return cat, nil // no tools capability: nothing to list
	}

	lctx, cancel := context.WithTimeout(ctx, g.cfg.ListTimeout)
	defer cancel()
	var described []domain.DescribedTool
	var dropped []domain.Diagnostic
	total := 0
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		res, err := s.cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return domain.Catalog{}, cancelled(ctx)
			case isTimeout(err) || lctx.Err() != nil:
				return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeListTimeout, "tools/list did not complete within %s", g.cfg.ListTimeout)
			}
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeListFailed, "%s", s.tr.explain(err))
		}
		if rt := string(res.ResultType); rt != "" && rt != "complete" {
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeResultTypeUnsupported, "tools/list did not return a complete result")
		}
		kept := map[string]bool{}
		for _, t := range res.Tools {
			kept[t.Name] = true
			d, size, err := describe(t)
			if err != nil {
				return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeToolSerializeFailed, "Tool `%s` cannot be serialized: %v", t.Name, err)
			}
			total += size
			described = append(described, d)
		}
		for _, name := range unfiltered {
			if !kept[name] {
				n := name
				dropped = append(dropped, domain.Diagnostic{Code: CodeToolHeaderAnnotationInvalid, NativeName: &n,
					Message: fmt.Sprintf("Tool `%s` was excluded: its x-mcp-header annotations are invalid", name)})
			}
		}
		if len(described)+len(dropped) > domain.MaxCatalogTools {
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeToolLimit, "catalog exceeds %d tools", domain.MaxCatalogTools)
		}
		if total > domain.MaxCatalogBytes {
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeCatalogSizeLimit, "catalog exceeds %d bytes", domain.MaxCatalogBytes)
		}
		next := res.NextCursor
		if next == "" {
			break
		}
		if seen[next] {
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodeCursorCycle, "server repeated cursor `%s`", next)
		}
		if page == domain.MaxCatalogPages {
			return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, CodePageLimit, "catalog exceeds %d pages", domain.MaxCatalogPages)
		}
		seen[next] = true
		cursor = next
	}
	cat.Tools, cat.Diagnostics = domain.ValidateTools(described)
	cat.Diagnostics = append(cat.Diagnostics, dropped...)
	return cat, nil
}

// describe turns a go-sdk tool into the domain's view of it, with the size
// of its JSON. Empty title and description are absent, as on the wire
// (go-sdk omits them when empty).
func describe(t *mcp.Tool) (domain.DescribedTool, int, error) {
	whole, err := json.Marshal(t)
	if err != nil {
		return domain.DescribedTool{}, 0, err
	}
	d := domain.DescribedTool{Tool: domain.Tool{NativeName: t.Name}, Size: len(whole)}
	if t.Title != "" {
		d.Title = &t.Title
	}
	if t.Description != "" {
		d.Description = &t.Description
	}
	if d.InputSchema, err = json.Marshal(t.InputSchema); err != nil {
		return domain.DescribedTool{}, 0, err
	}
	if t.OutputSchema != nil {
		if d.OutputSchema, err = json.Marshal(t.OutputSchema); err != nil {
			return domain.DescribedTool{}, 0, err
		}
	}
	if t.Annotations != nil {
		if d.Annotations, err = json.Marshal(t.Annotations); err != nil {
			return domain.DescribedTool{}, 0, err
		}
	}
	return d, len(whole), nil
}
