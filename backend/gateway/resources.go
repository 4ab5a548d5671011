package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Resources, prompts and completions (SPEC §10 "Resources and prompts"),
// on the same connections as tools: a remote server's live connection
// (live.go), a stdio server's process (stdio.go), with the same headers,
// protocol preference and sign-in. The three lists page with ttmcp's own
// loop (paginate) within the tool catalog's limits; a read and a get are
// judged as a tools/call is (call.go): not_sent while the request provably
// never left, outcome_unknown once it may have reached the server without
// a whole answer, and resent only when the server provably did not
// process it (a request that never left on a session that had ended, a
// 2025 404 for an expired session).

// Codes of lists, reads, gets and completions.
const (
	CodeListingTimeout        = "mcp.list_timeout"
	CodeListingFailed         = "mcp.list_failed"
	CodeListResultType        = "mcp.list_result_type_unsupported"
	CodeListEntryLimit        = "mcp.list_entry_limit"
	CodeListSizeLimit         = "mcp.list_size_limit"
	CodeListCursorCycle       = "mcp.list_cursor_cycle"
	CodeListPageLimit         = "mcp.list_page_limit"
	CodeResourcesUnsupported  = domain.CodeResourcesUnsupported
	CodePromptsUnsupported    = domain.CodePromptsUnsupported
	CodeCompletionUnsupported = "mcp.completions_unsupported"
	CodeCompletionFailed      = "mcp.completion_failed"
	CodeResourceTooLarge      = "mcp.resource_too_large"
	CodePromptTooLarge        = "mcp.prompt_too_large"
	// CodeListEntryMalformed: a list entry that does not decode (a URI
	// that is not a string, null); the others are kept (entries.go).
	CodeListEntryMalformed = "mcp.list_entry_malformed"
)

// ---- what servers advertised

// advertised keeps, per registration, what its server advertised at its
// last startup and over which connection; gen counts the changes, so a
// list of servers built from them is rebuilt only when one changed.
type advertised struct {
	mu   sync.Mutex
	byID map[domain.RegistrationID]observed
	gen  atomic.Uint64
}

type observed struct {
	conn domain.Registration
	caps domain.ServerCapabilities
}

// capabilitiesOf reads a startup's capabilities as flags.
func capabilitiesOf(init *mcp.InitializeResult, at time.Time) domain.ServerCapabilities {
	c := domain.ServerCapabilities{ProtocolVersion: init.ProtocolVersion, ObservedAt: at.UTC()}
	if sc := init.Capabilities; sc != nil {
		if t := sc.Tools; t != nil {
			c.Tools, c.ToolsListChanged = true, t.ListChanged
		}
		if r := sc.Resources; r != nil {
			c.Resources, c.ResourcesSubscribe, c.ResourcesListChanged = true, r.Subscribe, r.ListChanged
		}
		if p := sc.Prompts; p != nil {
			c.Prompts, c.PromptsListChanged = true, p.ListChanged
		}
		c.Completions = sc.Completions != nil
		c.Logging = sc.Logging != nil
	}
	return c
}

// observe records what r's server advertised on the session an operation
// runs on.
func (g *Gateway) observe(r domain.Registration, init *mcp.InitializeResult) {
	if init == nil {
		return
	}
	caps := capabilitiesOf(init, g.cfg.Now())
	a := &g.advertised
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.byID[r.ID]; ok && old.caps.Same(caps) && old.conn.SameConnection(r) {
		return
	}
	a.byID[r.ID] = observed{conn: r.Clone(), caps: caps}
	a.gen.Add(1)
}

// Advertised returns what r's server advertised at its last startup on
// this backend, if that was over r's current connection.
func (g *Gateway) Advertised(r domain.Registration) (domain.ServerCapabilities, bool) {
	a := &g.advertised
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.byID[r.ID]
	if !ok || !o.conn.SameConnection(r) {
		return domain.ServerCapabilities{}, false
	}
	return o.caps, true
}

// CapabilitiesGeneration changes whenever a server's advertised
// capabilities were observed to change.
func (g *Gateway) CapabilitiesGeneration() uint64 { return g.advertised.gen.Load() }

// Capabilities returns what r's server advertises, connecting to it when
// no session is open (an Active registration's live connection or stdio
// process).
func (g *Gateway) Capabilities(ctx context.Context, r domain.Registration) (domain.ServerCapabilities, error) {
	return onSession(g, ctx, r, "its capabilities were read", func(s *opSession) (domain.ServerCapabilities, error) {
		return capabilitiesOf(s.cs.InitializeResult(), g.cfg.Now()), nil
	})
}

// ---- sessions of queries

// opSession is the session an operation runs on: a live connection's
// (HTTP) or a stdio server's.
type opSession struct {
	g   *Gateway
	cs  *mcp.ClientSession
	r   domain.Registration
	le  *lease       // HTTP
	srv *stdioServer // stdio
}

// caps returns the server's advertised capabilities (never nil).
func (s *opSession) caps() *mcp.ServerCapabilities {
	if c := s.cs.InitializeResult().Capabilities; c != nil {
		return c
	}
	return &mcp.ServerCapabilities{}
}

// modern reports whether the session speaks 2026-07-28.
func (s *opSession) modern() bool { return s.cs.InitializeResult().ProtocolVersion >= Versions[0] }

// failure words a failure of the session under an operation whose
// requests ex tracked, with code when nothing more telling is known: an
// authorization refusal, a stdio server's end, a body over the cap.
func (s *opSession) failure(ex *exchange, err error, code string) error {
	if s.srv != nil {
		if c, msg := s.srv.failure(s.g.stdio); c != "" {
			return domain.Errorf(domain.KindUnavailable, c, "%s", msg)
		}
		return domain.Errorf(domain.KindUnavailable, code, "%s", err)
	}
	if err, ok := s.g.authFailure(s.r, s.le.s.tr); ok {
		return err
	}
	return domain.Errorf(domain.KindUnavailable, code, "%s", s.le.s.tr.explain(ex, err))
}

// explain is failure's text, for outcomes.
func (s *opSession) explain(ex *exchange, err error) string {
	if s.srv != nil {
		if c, msg := s.srv.failure(s.g.stdio); c != "" {
			return msg
		}
		return err.Error()
	}
	return s.le.s.tr.explain(ex, err)
}

// onSession runs a query (a listing, a completion) on a session of r and
// records what the server advertised. A query whose 2025 session had
// expired (it returns errSessionGone) runs once more on a new session: a
// query changes nothing on the server. gone words the second expiry.
func onSession[T any](g *Gateway, ctx context.Context, r domain.Registration, gone string, op func(*opSession) (T, error)) (T, error) {
	var zero T
	if r.Stdio != nil {
		srv, err := g.stdio.acquire(ctx, r)
		if err != nil {
			return zero, err
		}
		defer g.stdio.release(srv)
		g.observe(r, srv.cs.InitializeResult())
		return op(&opSession{g: g, cs: srv.cs, r: r, srv: srv})
	}
	for fresh := false; ; fresh = true {
		le, err := g.lives.acquire(ctx, r)
		if err != nil {
			return zero, err
		}
		g.observe(r, le.s.cs.InitializeResult())
		v, err := op(&opSession{g: g, cs: le.s.cs, r: r, le: le})
		switch {
		case errors.Is(err, errSessionGone):
			g.lives.expired(le)
		case err != nil && le.s.tr.refused.Load() != nil:
			g.lives.drop(le)
		case err == nil:
			g.lives.kept(le)
		}
		g.lives.release(le)
		if errors.Is(err, errSessionGone) {
			if !fresh {
				continue
			}
			return zero, domain.Errorf(domain.KindUnavailable, CodeListingFailed, "the server ended the session again while %s", gone)
		}
		return v, err
	}
}

// ---- lists

// listSpec describes one of the three lists: W is go-sdk's entry, T the
// domain's.
type listSpec[W, T any] struct {
	codes       listCodes
	capable     func(*mcp.ServerCapabilities) bool
	unsupported string // the diagnostic code when the server does not advertise the primitive
	fetch       func(ctx context.Context, cs *mcp.ClientSession, cursor string) (listPage[W], error)
	entry       func(W) T
	validate    func([]domain.Described[T]) ([]T, []domain.ListDiagnostic)
}

func listCodesOf(method, noun string) listCodes {
	return listCodes{method: method, noun: noun, timeout: CodeListingTimeout, resultType: CodeListResultType,
		cycle: CodeListCursorCycle, pages: CodeListPageLimit}
}

var resourceList = listSpec[*mcp.Resource, domain.Resource]{
	codes:       listCodesOf("resources/list", "the resource list"),
	capable:     func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
	unsupported: CodeResourcesUnsupported,
	fetch: func(ctx context.Context, cs *mcp.ClientSession, cursor string) (listPage[*mcp.Resource], error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return listPage[*mcp.Resource]{}, err
		}
		return listPage[*mcp.Resource]{items: res.Resources, next: res.NextCursor, resultType: string(res.ResultType)}, nil
	},
	entry: func(w *mcp.Resource) domain.Resource {
		r := domain.Resource{URI: w.URI, Name: w.Name, Title: nonEmpty(w.Title), Description: nonEmpty(w.Description),
			MimeType: nonEmpty(w.MIMEType), Annotations: annotationsOf(w.Annotations)}
		if w.Size > 0 {
			r.Size = &w.Size
		}
		if ui, ok := w.Meta["ui"].(map[string]any); ok { // an MCP App's policy (issue 30)
			r.UI, _ = json.Marshal(ui)
		}
		return r
	},
	validate: domain.ValidateResources,
}

var templateList = listSpec[*mcp.ResourceTemplate, domain.ResourceTemplate]{
	codes:       listCodesOf("resources/templates/list", "the resource template list"),
	capable:     func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
	unsupported: CodeResourcesUnsupported,
	fetch: func(ctx context.Context, cs *mcp.ClientSession, cursor string) (listPage[*mcp.ResourceTemplate], error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return listPage[*mcp.ResourceTemplate]{}, err
		}
		return listPage[*mcp.ResourceTemplate]{items: res.ResourceTemplates, next: res.NextCursor, resultType: string(res.ResultType)}, nil
	},
	entry: func(w *mcp.ResourceTemplate) domain.ResourceTemplate {
		return domain.ResourceTemplate{URITemplate: w.URITemplate, Name: w.Name, Title: nonEmpty(w.Title), Description: nonEmpty(w.Description),
			MimeType: nonEmpty(w.MIMEType), Annotations: annotationsOf(w.Annotations)}
	},
	validate: domain.ValidateResourceTemplates,
}

var promptList = listSpec[*mcp.Prompt, domain.Prompt]{
	codes:       listCodesOf("prompts/list", "the prompt list"),
	capable:     func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil },
	unsupported: CodePromptsUnsupported,
	fetch: func(ctx context.Context, cs *mcp.ClientSession, cursor string) (listPage[*mcp.Prompt], error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return listPage[*mcp.Prompt]{}, err
		}
		return listPage[*mcp.Prompt]{items: res.Prompts, next: res.NextCursor, resultType: string(res.ResultType)}, nil
	},
	entry: func(w *mcp.Prompt) domain.Prompt {
		p := domain.Prompt{Name: w.Name, Title: nonEmpty(w.Title), Description: nonEmpty(w.Description), Arguments: []domain.PromptArgument{}}
		for _, a := range w.Arguments {
			if a == nil {
				a = &mcp.PromptArgument{} // a null entry: an argument without a name, which validation refuses
			}
			p.Arguments = append(p.Arguments, domain.PromptArgument{Name: a.Name, Title: nonEmpty(a.Title), Description: nonEmpty(a.Description), Required: a.Required})
		}
		return p
	},
	validate: domain.ValidatePrompts,
}

// ListResources lists r's resources (every page, within the catalog's
// limits) and validates each.
func (g *Gateway) ListResources(ctx context.Context, r domain.Registration) (domain.Listing[domain.Resource], error) {
	return listEntries(g, ctx, r, resourceList)
}

// ListResourceTemplates lists r's resource templates.
func (g *Gateway) ListResourceTemplates(ctx context.Context, r domain.Registration) (domain.Listing[domain.ResourceTemplate], error) {
	return listEntries(g, ctx, r, templateList)
}

// ListPrompts lists r's prompts.
func (g *Gateway) ListPrompts(ctx context.Context, r domain.Registration) (domain.Listing[domain.Prompt], error) {
	return listEntries(g, ctx, r, promptList)
}

// listEntries runs one listing: a whole, validated list or an error, never a
// partial one. A server that does not advertise the primitive has an
// empty list with a diagnostic saying so (nothing is asked of it).
func listEntries[W, T any](g *Gateway, ctx context.Context, r domain.Registration, spec listSpec[W, T]) (domain.Listing[T], error) {
	return onSession(g, ctx, r, spec.codes.noun+" was read", func(s *opSession) (domain.Listing[T], error) {
		if !spec.capable(s.caps()) {
			return domain.Listing[T]{Items: []T{}, Diagnostics: []domain.ListDiagnostic{{Code: spec.unsupported,
				Message: fmt.Sprintf("The server does not offer %s", primitiveOf(spec.unsupported))}}}, nil
		}
		lctx, dl := g.requestContext(ctx, g.cfg.ListTimeout)
		defer dl.done()
		lctx, ex := withExchange(lctx, "")
		var described []domain.Described[T]
		var malformed []domain.ListDiagnostic
		total := 0
		ttl := -1
		fetch := func(cursor string) (listPage[W], error) {
			p, err := spec.fetch(lctx, s.cs, cursor)
			if err == nil && (ttl < 0 || ex.ttlMs < ttl) {
				ttl = ex.ttlMs // the page's, as the server sent it (go-sdk's copy is zeroed: middleware.go)
			}
			return p, err
		}
		err := paginate(g, ctx, lctx, spec.codes, func(err error) error { return s.failure(ex, err, CodeListingFailed) }, fetch,
			func(items []W) (bool, error) {
				for _, w := range items {
					whole, err := json.Marshal(w)
					if err != nil {
						return false, domain.Errorf(domain.KindUnavailable, CodeListingFailed, "an entry of %s cannot be serialized: %v", spec.codes.noun, err)
					}
					total += len(whole)
					described = append(described, domain.Described[T]{Entry: spec.entry(w), Size: len(whole)})
				}
				for _, bad := range ex.takeMalformed() {
					malformed = append(malformed, domain.ListDiagnostic{Code: CodeListEntryMalformed, Item: bad.item, Message: bad.message(spec.codes.noun)})
				}
				if len(described)+len(malformed) > domain.MaxListEntries {
					return false, domain.Errorf(domain.KindUnavailable, CodeListEntryLimit, "%s exceeds %d entries", spec.codes.noun, domain.MaxListEntries)
				}
				if total > domain.MaxListBytes {
					return false, domain.Errorf(domain.KindUnavailable, CodeListSizeLimit, "%s exceeds %d bytes", spec.codes.noun, domain.MaxListBytes)
				}
				return false, nil
			})
		if err != nil {
			if ex.expired.Load() {
				return domain.Listing[T]{}, errSessionGone
			}
			return domain.Listing[T]{}, err
		}
		out := domain.Listing[T]{}
		out.Items, out.Diagnostics = spec.validate(described)
		out.Diagnostics = append(out.Diagnostics, malformed...)
		if s.modern() {
			d := time.Duration(max(ttl, 0)) * time.Millisecond
			out.TTL = &d
		}
		return out, nil
	})
}

// primitiveOf names what an unsupported code is about.
func primitiveOf(code string) string {
	switch code {
	case CodePromptsUnsupported:
		return "prompts"
	case CodeCompletionUnsupported:
		return "completions"
	}
	return "resources"
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func annotationsOf(a *mcp.Annotations) *domain.Annotations {
	if a == nil {
		return nil
	}
	out := &domain.Annotations{}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	if a.Priority != 0 {
		out.Priority = &a.Priority
	}
	out.LastModified = nonEmpty(a.LastModified)
	if out.Audience == nil && out.Priority == nil && out.LastModified == nil {
		return nil
	}
	return out
}

// ---- completions

// Complete asks r's server for completions of a prompt's argument or a
// resource template's variable. A server that does not advertise
// completions is refused before anything is sent.
func (g *Gateway) Complete(ctx context.Context, r domain.Registration, req domain.CompletionRequest) (domain.Completion, error) {
	return onSession(g, ctx, r, "a completion was asked for", func(s *opSession) (domain.Completion, error) {
		if s.caps().Completions == nil {
			return domain.Completion{}, domain.Errorf(domain.KindBadRequest, CodeCompletionUnsupported, "the server does not offer completions")
		}
		cctx, dl := g.requestContext(ctx, g.cfg.CallWait)
		defer dl.done()
		cctx, ex := withExchange(cctx, "completion/complete")
		params := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: req.RefType, Name: req.RefName, URI: req.RefURI},
			Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
		if len(req.Context) > 0 {
			params.Context = &mcp.CompleteContext{Arguments: req.Context}
		}
		res, err := s.cs.Complete(cctx, params)
		ex.end()
		if err != nil {
			var je *jsonrpc.Error
			switch {
			case ex.expired.Load():
				return domain.Completion{}, errSessionGone
			case ctx.Err() != nil:
				return domain.Completion{}, cancelled(ctx)
			case cctx.Err() != nil:
				return domain.Completion{}, domain.Errorf(domain.KindUnavailable, CodeCompletionFailed, "the server did not answer the completion within %s", g.cfg.CallWait)
			case errors.As(err, &je) && je.Code != codeTransport:
				return domain.Completion{}, domain.Errorf(domain.KindUnavailable, CodeCompletionFailed, "the server answered %d: %s", je.Code, je.Message)
			}
			return domain.Completion{}, s.failure(ex, err, CodeCompletionFailed)
		}
		c := domain.Completion{Values: res.Completion.Values, HasMore: res.Completion.HasMore}
		if res.Completion.Total > 0 {
			c.Total = &res.Completion.Total
		}
		return domain.ProjectCompletion(c), nil
	})
}

// ---- reads and gets

// answerSpec describes a request judged as a call is: method is tracked
// (written? its raw answer?), what names it in messages.
type answerSpec[T any] struct {
	method, what string
	capable      func(*mcp.ServerCapabilities) bool
	unsupported  string
	tooLarge     string
	send         func(ctx context.Context, cs *mcp.ClientSession) error
	decode       func(raw json.RawMessage) domain.Answer[T]
}

// ReadResource makes one resources/read of uri and returns every content
// of its answer (domain.ProjectContents).
func (g *Gateway) ReadResource(ctx context.Context, r domain.Registration, uri string) domain.Answer[domain.ResourceContents] {
	return request(g, ctx, r, answerSpec[domain.ResourceContents]{
		method: "resources/read", what: "resource read", unsupported: CodeResourcesUnsupported, tooLarge: CodeResourceTooLarge,
		capable: func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
		send: func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			return err
		},
		decode: func(raw json.RawMessage) domain.Answer[domain.ResourceContents] { return decodeRead(uri, raw) },
	})
}

// GetPrompt makes one prompts/get of name with args and returns its
// messages (domain.ProjectMessages). The caller checked the arguments
// against the prompt's definition.
func (g *Gateway) GetPrompt(ctx context.Context, r domain.Registration, name string, args map[string]string) domain.Answer[domain.PromptMessages] {
	return request(g, ctx, r, answerSpec[domain.PromptMessages]{
		method: "prompts/get", what: "prompt request", unsupported: CodePromptsUnsupported, tooLarge: CodePromptTooLarge,
		capable: func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil },
		send: func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
			return err
		},
		decode: func(raw json.RawMessage) domain.Answer[domain.PromptMessages] { return decodePrompt(name, raw) },
	})
}

// request makes one request of spec on r: on its stdio server, or on its
// live connection, where it is sent once more on a new session only when
// the server provably did not process it (as Call).
func request[T any](g *Gateway, ctx context.Context, r domain.Registration, spec answerSpec[T]) domain.Answer[T] {
	if ctx.Err() != nil {
		return notSentAnswer[T](CodeCallCancelledBeforeSend, "The "+spec.what+" was cancelled before preparation started")
	}
	if r.Stdio != nil {
		srv, err := g.stdio.acquire(ctx, r)
		if err != nil {
			return answerOf[T](stdioStartNotSentAs(err, spec.what))
		}
		defer g.stdio.release(srv)
		g.observe(r, srv.cs.InitializeResult())
		ans, _ := requestOn(g, ctx, &opSession{g: g, cs: srv.cs, r: r, srv: srv}, spec)
		return ans
	}
	for fresh := false; ; fresh = true {
		le, err := g.lives.acquire(ctx, r)
		if err != nil {
			return answerOf[T](startupNotSentAs(err, spec.what))
		}
		g.observe(r, le.s.cs.InitializeResult())
		ans, ex := requestOn(g, ctx, &opSession{g: g, cs: le.s.cs, r: r, le: le}, spec)
		again := false
		switch {
		case ex == nil: // refused before sending
		case ex.refused:
			// Written, but refused before it was applied (see callOn).
			g.lives.drop(le)
			err, _ := g.authFailure(r, le.s.tr)
			ans = notSentAnswer[T](CodeAuthRequired, "The "+spec.what+" was refused before it was processed: "+detailOf(err))
		case ex.expired.Load():
			g.lives.expired(le)
			again = !fresh
			if fresh {
				ans = notSentAnswer[T](CodeCallSessionExpired, "The MCP server ended the session again before the "+spec.what+" was processed")
			}
		case !ex.written.Load() && ctx.Err() == nil && le.s.over() && !fresh:
			g.lives.drop(le) // nothing left this host, and the kept session had ended
			again = true
		case ans.Outcome == domain.OutcomeKnownResponse:
			g.lives.kept(le)
		}
		g.lives.release(le)
		if !again {
			return ans
		}
	}
}

// requestOn sends spec's request on s and words what happened; ex is nil
// when nothing was attempted.
func requestOn[T any](g *Gateway, ctx context.Context, s *opSession, spec answerSpec[T]) (domain.Answer[T], *exchange) {
	if !spec.capable(s.caps()) {
		return notSentAnswer[T](spec.unsupported, fmt.Sprintf("The MCP server does not offer %s; the %s was not sent", primitiveOf(spec.unsupported), spec.what)), nil
	}
	rctx, dl := g.requestContext(ctx, g.cfg.CallWait)
	defer dl.done()
	rctx, ex := withExchange(rctx, spec.method)
	ex.limit = g.cfg.MaxReadBytes
	err := spec.send(rctx, s.cs)
	answer, known := ex.end()
	if !ex.written.Load() {
		// Nothing reached the server.
		if ctx.Err() != nil {
			return notSentAnswer[T](CodeCallCancelledBeforeSend, "The "+spec.what+" was cancelled before it was queued"), ex
		}
		if err == nil {
			err = errors.New("no request was written")
		}
		if s.srv != nil {
			if code, msg := s.srv.failure(g.stdio); code != "" {
				return notSentAnswer[T](code, msg+"; the "+spec.what+" was not sent"), ex
			}
		}
		return notSentAnswer[T](CodeCallNotQueued, "The "+spec.what+" could not be queued: "+s.explain(ex, err)), ex
	}
	tooLarge := fmt.Sprintf("The answer to the %s exceeded %d bytes (a content may hold at most %d); nothing of it was kept",
		spec.what, g.cfg.MaxReadBytes, domain.MaxContentBytes)
	if known {
		if int64(len(answer.result)) > g.cfg.MaxReadBytes {
			return unknownAnswer[T](spec.tooLarge, tooLarge), ex
		}
		if answer.err != nil {
			se := serverError(answer.err.Code, answer.err.Message, answer.err.Data).ServerError
			return domain.Answer[T]{Outcome: domain.OutcomeKnownResponse, ServerError: se}, ex
		}
		return spec.decode(answer.result), ex
	}
	var je *jsonrpc.Error
	switch {
	case ex.overflow.Load():
		return unknownAnswer[T](spec.tooLarge, tooLarge), ex
	case errors.As(err, &je) && je.Code != codeTransport:
		se := serverError(je.Code, je.Message, je.Data).ServerError
		return domain.Answer[T]{Outcome: domain.OutcomeKnownResponse, ServerError: se}, ex
	case ctx.Err() != nil:
		return unknownAnswer[T](CodeCallCancelled, "Stopped waiting for the answer to the "+spec.what+"; the server may have processed it"), ex
	case rctx.Err() != nil:
		return unknownAnswer[T](CodeCallTimeout, fmt.Sprintf("Timed out after %s waiting for the answer to the %s; the server may have processed it", g.cfg.CallWait, spec.what)), ex
	}
	if err == nil {
		err = errors.New("no answer was received")
	}
	if s.srv != nil {
		if code, msg := s.srv.failure(g.stdio); code != "" {
			return unknownAnswer[T](code, msg+"; the server may have processed the "+spec.what), ex
		}
	}
	return unknownAnswer[T](CodeCallResponseFailed, "The answer to the "+spec.what+" could not be confirmed: "+s.explain(ex, err)+"; the server may have processed it"), ex
}

func notSentAnswer[T any](code, message string) domain.Answer[T] {
	return domain.Answer[T]{Outcome: domain.OutcomeNotSent, Code: code, Message: message}
}

func unknownAnswer[T any](code, message string) domain.Answer[T] {
	return domain.Answer[T]{Outcome: domain.OutcomeUnknown, Code: code, Message: message}
}

// answerOf carries a not_sent or unknown call outcome over.
func answerOf[T any](o domain.CallOutcome) domain.Answer[T] {
	return domain.Answer[T]{Outcome: o.Outcome, Code: o.Code, Message: o.Message}
}

// unsupportedAnswer is a known response ttmcp does not drive further.
func unsupportedAnswer[T any](responseType, message string) domain.Answer[T] {
	return domain.Answer[T]{Outcome: domain.OutcomeKnownResponse, Unsupported: &domain.UnsupportedResponse{ResponseType: responseType, Message: message}}
}

// resultTypeAnswer reports a 2026 result that is not complete: an
// input_required round (issue 20 adds elicitation) or anything else.
func resultTypeAnswer[T any](rt, what string) (domain.Answer[T], bool) {
	if rt == "" || rt == "complete" {
		return domain.Answer[T]{}, false
	}
	msg := fmt.Sprintf("The server answered the %s with a %s result, which ttmcp does not support", what, rt)
	if rt == "input_required" {
		msg = fmt.Sprintf("The server needs more input to answer the %s (input_required); ttmcp does not answer such requests yet", what)
	}
	return unsupportedAnswer[T](rt, msg), true
}

// wireContents is one content of a read (or an embedded resource) as
// received: members absent, null and "" stay apart.
type wireContents struct {
	URI      string         `json:"uri"`
	MimeType *string        `json:"mimeType"`
	Text     *string        `json:"text"`
	Blob     *string        `json:"blob"`
	Meta     jsontext.Value `json:"_meta"` // an MCP App's _meta.ui (issue 30)
}

func (w wireContents) domain() domain.ResourceContent {
	c := domain.ResourceContent{URI: w.URI, MimeType: w.MimeType, Text: w.Text, Blob: w.Blob}
	if len(w.Meta) > 0 && w.Meta.Kind() == '{' {
		c.Meta = json.RawMessage(w.Meta.Clone())
	}
	return c
}

// decodeRead projects a resources/read answer as received. Each content
// is decoded on its own, so one malformed content is reported in its
// place while the others are kept.
func decodeRead(uri string, raw json.RawMessage) domain.Answer[domain.ResourceContents] {
	// One pass in the common case (a megabyte of text costs a pass);
	// only when it fails is each content decoded on its own.
	var whole struct {
		ResultType string         `json:"resultType"`
		Contents   []wireContents `json:"contents"`
	}
	var contents []domain.ResourceContent
	if err := jsonv2.Unmarshal(raw, &whole, lenient); err == nil {
		if a, ok := resultTypeAnswer[domain.ResourceContents](whole.ResultType, "resource read"); ok {
			return a
		}
		contents = make([]domain.ResourceContent, len(whole.Contents))
		for i, c := range whole.Contents {
			contents[i] = c.domain()
		}
	} else {
		var w struct {
			ResultType string           `json:"resultType"`
			Contents   []jsontext.Value `json:"contents"`
		}
		if err := jsonv2.Unmarshal(raw, &w, lenient); err != nil {
			return unsupportedAnswer[domain.ResourceContents]("invalid_result", "The server's answer is not a resources/read result: "+err.Error())
		}
		if a, ok := resultTypeAnswer[domain.ResourceContents](w.ResultType, "resource read"); ok {
			return a
		}
		contents = make([]domain.ResourceContent, len(w.Contents))
		for i, c := range w.Contents {
			var wc wireContents
			if jsonv2.Unmarshal(c, &wc, lenient) == nil {
				contents[i] = wc.domain() // else neither text nor blob: reported as such
			}
		}
	}
	out := domain.ProjectContents(uri, contents)
	return domain.Answer[domain.ResourceContents]{Outcome: domain.OutcomeKnownResponse, Result: &out}
}

// wireBlock is one content block of a prompt message as received.
type wireBlock struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Data        *string         `json:"data"`
	MimeType    *string         `json:"mimeType"`
	Resource    *wireContents   `json:"resource"`
	URI         *string         `json:"uri"`
	Name        *string         `json:"name"`
	Title       *string         `json:"title"`
	Description *string         `json:"description"`
	Size        *int64          `json:"size"`
	Annotations json.RawMessage `json:"annotations"`
}

// domain is the block as received (a prompt message's content, or a tool
// result's resource block).
func (c wireBlock) domain() domain.ContentBlock {
	b := domain.ContentBlock{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name,
		Title: c.Title, Description: c.Description, Size: c.Size, Annotations: rawAnnotations(c.Annotations)}
	if c.Resource != nil {
		rc := c.Resource.domain()
		b.Resource = &rc
	}
	return b
}

// decodePrompt projects a prompts/get answer as received, each message on
// its own.
func decodePrompt(name string, raw json.RawMessage) domain.Answer[domain.PromptMessages] {
	var w struct {
		ResultType  string            `json:"resultType"`
		Description *string           `json:"description"`
		Messages    []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return unsupportedAnswer[domain.PromptMessages]("invalid_result", "The server's answer is not a prompts/get result: "+err.Error())
	}
	if a, ok := resultTypeAnswer[domain.PromptMessages](w.ResultType, "prompt request"); ok {
		return a
	}
	messages := make([]domain.PromptMessage, len(w.Messages))
	for i, m := range w.Messages {
		var wm struct {
			Role    string    `json:"role"`
			Content wireBlock `json:"content"`
		}
		if json.Unmarshal(m, &wm) != nil {
			continue // no type: reported as a message ttmcp cannot read
		}
		messages[i] = domain.PromptMessage{Role: wm.Role, Content: wm.Content.domain()}
	}
	out := domain.ProjectMessages(name, w.Description, messages)
	return domain.Answer[domain.PromptMessages]{Outcome: domain.OutcomeKnownResponse, Result: &out}
}

// rawAnnotations reads a content's annotations leniently: hints that do
// not decode are left out rather than failing the message.
func rawAnnotations(raw json.RawMessage) *domain.Annotations {
	if len(raw) == 0 {
		return nil
	}
	var a mcp.Annotations
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return annotationsOf(&a)
}
