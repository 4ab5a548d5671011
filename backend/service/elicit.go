package service

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Elicitation (SPEC §10, issue 20): a server asks the user during a call,
// and the page that made the call answers. The server layer puts the
// asking page in the command's context (WithPage); a call takes its
// handler only when the page has one, so a call of a page without one
// advertises no elicitation and its server cannot ask.

// Page is the page a command came from, as far as calls need it.
type Page interface {
	// HasElicitationHandler reports whether the page set a handler.
	HasElicitationHandler() bool
	// Elicit asks the page's handler and waits for its answer or ctx's end.
	Elicit(ctx context.Context, req jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error)
}

type pageKey struct{}

// WithPage returns ctx carrying the page that sent the command.
func WithPage(ctx context.Context, p Page) context.Context {
	if ap, ok := p.(AppsPage); ok {
		ctx = domain.WithAppsRenderer(ctx, ap.RendersApps) // asked when a request goes out
	}
	return context.WithValue(ctx, pageKey{}, p)
}

func pageOf(ctx context.Context) Page {
	p, _ := ctx.Value(pageKey{}).(Page)
	return p
}

// DefaultElicitTimeout bounds the wait for the user's answer to one
// question: then it is answered cancel.
const DefaultElicitTimeout = 10 * time.Minute

// elicitFor returns the ElicitFunc of a call made by the page in ctx, or
// nil when that page has no handler. The page is asked with the call's
// identity (which server and tool ask, for whom); an answer that did not
// come within the timeout is the gateway's "timeout".
func (s *Service) elicitFor(ctx context.Context, source domain.CallSource, callID string, r domain.Registration, nativeName string) domain.ElicitFunc {
	page := pageOf(ctx)
	if page == nil || !page.HasElicitationHandler() {
		return nil
	}
	return func(ctx context.Context, q domain.ElicitRequest) (domain.ElicitResponse, error) {
		req := jsapi.McpElicitationRequest{CallID: callID, RegistrationID: string(r.ID), ServerDisplayName: r.DisplayName,
			NativeName: nativeName, Source: string(source), Mode: q.Mode, Message: q.Message}
		if len(q.RequestedSchema) > 0 {
			req.RequestedSchema = jsapi.RawJSON(q.RequestedSchema)
		}
		if q.URL != "" {
			req.URL = &q.URL
		}
		if q.Error != "" {
			req.Error = &q.Error
		}
		req.Resend = q.Resend
		wctx, cancel := context.WithTimeoutCause(ctx, s.elicitTimeout, domain.ErrElicitTimedOut)
		defer cancel()
		resp, err := page.Elicit(wctx, req)
		switch {
		case ctx.Err() != nil:
			return domain.ElicitResponse{}, context.Cause(ctx)
		case errors.Is(context.Cause(wctx), domain.ErrElicitTimedOut):
			return domain.ElicitResponse{}, domain.ErrElicitTimedOut
		case err != nil:
			return domain.ElicitResponse{}, err
		}
		return domain.ElicitResponse{Action: resp.Action, Content: json.RawMessage(resp.Content)}, nil
	}
}
