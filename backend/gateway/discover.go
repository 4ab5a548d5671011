package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Discover pages through the server's tools/list within the limits of
// reference §3.3 and validates every tool (§3.4), on the registration's
// live connection. It returns a whole catalog or an error: never a
// partial one. A listing whose 2025 session had expired runs once more on
// a new one (a listing changes nothing on the server).
func (g *Gateway) Discover(ctx context.Context, r domain.Registration) (domain.Catalog, error) {
	if r.Stdio != nil {
		return g.discoverStdio(ctx, r)
	}
	for fresh := false; ; fresh = true {
		le, err := g.lives.acquire(ctx, r)
		if err != nil {
			return domain.Catalog{}, err
		}
		g.observe(r, le.s.cs.InitializeResult())
		cat, err := g.discoverOn(ctx, le)
		g.lives.release(le)
		if err == errSessionGone && !fresh {
			continue
		}
		if err == errSessionGone {
			err = domain.Errorf(domain.KindUnavailable, CodeListFailed, "the server ended the session again while its tools were listed")
		}
		return cat, err
	}
}

// errSessionGone: the operation's session expired or ended before its
// request was processed; it may run again on a new one.
var errSessionGone = errors.New("the session is gone")

func (g *Gateway) discoverOn(ctx context.Context, le *lease) (domain.Catalog, error) {
	s := le.s
	init := s.cs.InitializeResult()
	cat := catalogHead(init)
	if init.Capabilities == nil || init.Capabilities.Tools == nil {
		return cat, nil // no tools capability: nothing to list
	}
	// A 2025 server learns at initialize whether its client can ask the
	// user, and may list its asking tools only then: the catalog is listed
	// on an eliciting session (kept for the next asking call), which
	// server-everything's trigger-elicitation tools need. A server that
	// refuses a second session is listed on the shared one.
	var put func(keep bool)
	if init.ProtocolVersion < Versions[0] {
		if es, p, err := g.lives.eliciting(ctx, le, sessionKind{eliciting: true, apps: domain.RendersApps(ctx)}); err == nil {
			s, put = es, p
		}
	}
	w := g.warm()
	l, err := g.listTools(ctx, s, "", w.page)
	if put != nil {
		put(err == nil)
	}
	if err != nil {
		w.stop()
		if l.expired {
			if put == nil {
				g.lives.expired(le)
			}
			return domain.Catalog{}, errSessionGone
		}
		if s.tr.refused.Load() != nil {
			g.lives.drop(le)
		}
		return domain.Catalog{}, err
	}
	if put == nil {
		g.lives.kept(le)
	}
	w.finish()
	cat.Tools, cat.Diagnostics = domain.ValidateTools(l.tools, g.schemas)
	cat.Diagnostics = append(cat.Diagnostics, l.excluded...)
	return cat, nil
}

// catalogHead is the part of a catalog that startup tells: the negotiated
// version and the server's name and version.
func catalogHead(init *mcp.InitializeResult) domain.Catalog {
	cat := domain.Catalog{ProtocolVersion: init.ProtocolVersion}
	if info := init.ServerInfo; info != nil {
		if info.Name != "" {
			cat.ServerName = &info.Name
		}
		if info.Version != "" {
			cat.ServerVersion = &info.Version
		}
	}
	return cat
}

// listing is what a tools/list run collected.
type listing struct {
	tools    []domain.DescribedTool
	excluded []domain.Diagnostic // tools go-sdk dropped
	found    bool                // the target was listed (and kept)
	expired  bool                // a page was answered 404 for the session (2025)
}

// listTools pages through tools/list with our own loop: go-sdk's iterator
// has no page cap or cursor-cycle detection. The run stops early once
// target (when not "") appears. Limits: MaxCatalogPages pages,
// MaxCatalogTools tools, MaxCatalogBytes of tool JSON, no repeated cursor,
// only complete results, the whole run within ListTimeout. onPage, when
// set, sees each page's tools as soon as they arrive.
func (g *Gateway) listTools(ctx context.Context, s *session, target string, onPage func([]domain.DescribedTool)) (listing, error) {
	lctx, dl := g.requestContext(ctx, g.cfg.ListTimeout)
	defer dl.done()
	lctx, ex := withExchange(lctx, "")
	failed := func(err error) error {
		if err, ok := g.authFailure(s.r, s.tr); ok {
			return err
		}
		return domain.Errorf(domain.KindUnavailable, CodeListFailed, "%s", s.tr.explain(ex, err))
	}
	l, err := g.listPages(ctx, lctx, s.cs, failed, target, onPage)
	l.expired = ex.expired.Load()
	return l, err
}

// listPages is listTools over any session: lctx bounds the run (it ends
// with ctx) and carries the exchange the sending middleware reports the
// pages' tool names to; failed turns a failure of the session's transport
// into the run's error.
func (g *Gateway) listPages(ctx, lctx context.Context, cs *mcp.ClientSession, failed func(error) error, target string, onPage func([]domain.DescribedTool)) (listing, error) {
	var l listing
	ex := exchangeOf(lctx)
	// A list shows what a client that can ask the user would see: some
	// servers offer their asking tools only to such a client, and a page
	// that answers may call them. On 2026-07-28 the requests say so in
	// their _meta; nothing is asked during a list (a 2026 list cannot ask;
	// a 2025 question there finds no call and is answered cancel).
	ex.mayElicit = true
	total := 0
	fetch := func(cursor string) (listPage[*mcp.Tool], error) {
		res, err := cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return listPage[*mcp.Tool]{}, err
		}
		return listPage[*mcp.Tool]{items: res.Tools, next: res.NextCursor, resultType: string(res.ResultType)}, nil
	}
	err := paginate(g, ctx, lctx, toolListCodes, failed, fetch, func(tools []*mcp.Tool) (bool, error) {
		kept := map[string]bool{}
		first := len(l.tools)
		for _, t := range tools {
			kept[t.Name] = true
			d, err := describe(t)
			if err != nil {
				return false, domain.Errorf(domain.KindUnavailable, CodeToolSerializeFailed, "Tool `%s` cannot be serialized: %v", t.Name, err)
			}
			total += d.Size
			l.tools = append(l.tools, d)
			l.found = l.found || t.Name == target
		}
		if onPage != nil {
			onPage(l.tools[first:])
		}
		for _, name := range ex.names {
			if !kept[name] {
				l.excluded = append(l.excluded, domain.Diagnostic{Code: CodeToolHeaderAnnotationInvalid, NativeName: &name,
					Message: fmt.Sprintf("Tool `%s` was excluded: its x-mcp-header annotations are invalid", name)})
			}
		}
		for _, bad := range ex.takeMalformed() {
			l.excluded = append(l.excluded, domain.Diagnostic{Code: CodeToolMalformed, NativeName: bad.item, Message: bad.message("the tool list")})
		}
		if len(l.tools)+len(l.excluded) > domain.MaxCatalogTools {
			return false, domain.Errorf(domain.KindUnavailable, CodeToolLimit, "catalog exceeds %d tools", domain.MaxCatalogTools)
		}
		if total > domain.MaxCatalogBytes {
			return false, domain.Errorf(domain.KindUnavailable, CodeCatalogSizeLimit, "catalog exceeds %d bytes", domain.MaxCatalogBytes)
		}
		return l.found, nil
	})
	if err != nil {
		return listing{}, err
	}
	return l, nil
}

// page is one page of a list method's result.
type listPage[T any] struct {
	items      []T
	next       string
	resultType string
}

// listCodes are the codes a pagination run fails with, and the method it
// names in its messages.
type listCodes struct {
	method, noun                      string // "tools/list", "catalog"
	timeout, resultType, cycle, pages string
}

var toolListCodes = listCodes{method: "tools/list", noun: "catalog", timeout: CodeListTimeout, resultType: CodeResultTypeUnsupported,
	cycle: CodeCursorCycle, pages: CodePageLimit}

// paginate is ttmcp's own pagination loop (go-sdk's iterators have no
// page cap or cursor-cycle detection): it fetches pages from the first
// cursor on, hands each page's items to onPage, and stops at the last
// page or when onPage is done. It fails on a page that is not a complete
// result, a repeated cursor, more than MaxCatalogPages pages, the end of
// lctx (the run's bound; it ends with ctx, the caller's), and whatever
// onPage fails with; failed words a failure of the session's transport.
func paginate[T any](g *Gateway, ctx, lctx context.Context, codes listCodes, failed func(error) error,
	fetch func(cursor string) (listPage[T], error), onPage func([]T) (done bool, err error)) error {
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		p, err := fetch(cursor)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return cancelled(ctx)
			case isTimeout(err) || lctx.Err() != nil:
				return domain.Errorf(domain.KindUnavailable, codes.timeout, "%s did not complete within %s", codes.method, g.cfg.ListTimeout)
			}
			return failed(err)
		}
		if rt := p.resultType; rt != "" && rt != "complete" {
			return domain.Errorf(domain.KindUnavailable, codes.resultType, "%s did not return a complete result", codes.method)
		}
		done, err := onPage(p.items)
		if err != nil {
			return err
		}
		if p.next == "" || done {
			return nil
		}
		if seen[p.next] {
			return domain.Errorf(domain.KindUnavailable, codes.cycle, "server repeated cursor `%s`", p.next)
		}
		if n == domain.MaxCatalogPages {
			return domain.Errorf(domain.KindUnavailable, codes.pages, "%s exceeds %d pages", codes.noun, domain.MaxCatalogPages)
		}
		seen[p.next] = true
		cursor = p.next
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
	if len(t.Meta) > 0 { // MCP Apps' _meta.ui, read by validation
		if d.Meta, err = json.Marshal(t.Meta); err != nil {
			return domain.DescribedTool{}, err
		}
	}
	return d, nil
}

// warmer compiles the schemas of each page into the gateway's cache on its
// own goroutine while the page loop waits for the next page, so at network
// distance a first discovery's validation overlaps the round trips instead
// of following them; what is left when the last page arrives is compiled
// on every core. Validation then finds the verdicts (a schema is never
// compiled twice at once: the cache makes the second asker wait).
type warmer struct {
	cache   *domain.SchemaCache
	queue   chan json.RawMessage
	done    chan struct{}
	stopped atomic.Bool
}

func (g *Gateway) warm() *warmer {
	w := &warmer{cache: g.schemas, queue: make(chan json.RawMessage, 2*domain.MaxCatalogTools), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.drain()
	}()
	return w
}

func (w *warmer) drain() {
	for raw := range w.queue {
		if !w.stopped.Load() {
			w.cache.Compile(raw)
		}
	}
}

// page queues the schemas of tools; a full queue drops them (validation
// compiles what the warmer did not).
func (w *warmer) page(tools []domain.DescribedTool) {
	for _, t := range tools {
		for _, raw := range []json.RawMessage{t.InputSchema, t.OutputSchema} {
			if raw == nil {
				continue
			}
			select {
			case w.queue <- raw:
			default:
			}
		}
	}
}

// finish compiles what is still queued on every core and returns when all
// of it is done.
func (w *warmer) finish() {
	close(w.queue)
	var helpers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) - 1 {
		helpers.Go(w.drain)
	}
	w.drain()
	helpers.Wait()
	<-w.done
}

// stop drops what is still queued and waits for the schema being compiled.
func (w *warmer) stop() {
	w.stopped.Store(true)
	close(w.queue)
	<-w.done
}
