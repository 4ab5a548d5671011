package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// sendingMiddleware is installed on every client session. It sees each
// result before go-sdk does anything more with it, and tells the
// operation (through the exchange of its context) what go-sdk would hide:
//
//   - the tool names of a tools/list page as the server sent them: go-sdk
//     then drops tools with invalid x-mcp-header annotations (SEP-2243)
//     and only logs it; ttmcp reports them in the catalog instead;
//   - a 2026 list or read result's ttlMs, which it then zeroes: go-sdk
//     keeps a per-session cache of list and read results for that long
//     (SEP-2549), and on a kept session an explicit refresh or re-read
//     would be answered from it without a request. ttmcp caches lists
//     itself (the service, for ttlMs), so every request here reaches the
//     server.
//
// Before a request goes out it sets what the request advertises: on
// 2026-07-28 every request carries the client's capabilities in its
// _meta, and a request advertises elicitation only when its operation's
// page answers it (exchange.mayElicit) — go-sdk would put the client's own
// on every request, and a stdio process's client is one for every page.
// A 2025 session advertises at initialize (which has no _meta): the
// session's own choice (session.go, stdio.go).
func sendingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p := req.GetParams(); p != nil {
			if meta := p.GetMeta(); meta != nil {
				if _, ok := meta[mcp.MetaKeyClientCapabilities]; ok {
					ex := exchangeOf(ctx)
					meta[mcp.MetaKeyClientCapabilities] = clientCapsMeta(ex != nil && ex.mayElicit, domain.RendersApps(ctx))
				}
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		ex := exchangeOf(ctx)
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			if ex != nil {
				ex.names = ex.names[:0]
				for _, t := range r.Tools {
					if t != nil {
						ex.names = append(ex.names, t.Name)
					}
				}
			}
			r.TTLMs = ex.keepTTL(r.TTLMs)
		case *mcp.ListPromptsResult:
			r.TTLMs = ex.keepTTL(r.TTLMs)
		case *mcp.ListResourcesResult:
			r.TTLMs = ex.keepTTL(r.TTLMs)
		case *mcp.ListResourceTemplatesResult:
			r.TTLMs = ex.keepTTL(r.TTLMs)
		case *mcp.ReadResourceResult:
			r.TTLMs = ex.keepTTL(r.TTLMs)
		}
		return res, nil
	}
}

// keepTTL records a result's ttlMs for the operation (ex may be nil) and
// returns the value go-sdk's cache is to see: 0, never cached.
func (ex *exchange) keepTTL(ttlMs int) int {
	if ex != nil {
		ex.ttlMs = ttlMs
	}
	return 0
}

// clientCapsMeta is the clientCapabilities a 2026 request's _meta carries, as
// the wire shows them: elicitation in both modes for a request that may
// ask, nothing otherwise. It is written as a JSON object rather than an
// mcp.ClientCapabilities, whose struct-typed Roots field (go-sdk #607) is
// always encoded — "roots":{} would tell the server that ttmcp serves
// roots, and it serves none. Fresh maps per request: go-sdk owns the _meta
// once it is sent.
//
// apps: the operation's page renders MCP Apps (issue 30), so the request
// declares the io.modelcontextprotocol/ui extension with the one MIME type
// ttmcp renders; a page that renders none declares nothing of it, and the
// server may offer that page text only.
func clientCapsMeta(mayElicit, apps bool) map[string]any {
	caps := map[string]any{}
	if mayElicit {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	if apps {
		caps["extensions"] = appsExtension()
	}
	return caps
}

// appsExtension is the extensions member that declares MCP Apps, fresh
// each time (go-sdk owns what it sends).
func appsExtension() map[string]any {
	return map[string]any{domain.AppsExtension: map[string]any{"mimeTypes": []any{domain.AppMIMEType}}}
}
