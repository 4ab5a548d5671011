package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// Elicitation (issue 20, docs/ARCHITECTURE.md "Live connections"): a server
// asks the user during a call, and the page that made the call answers
// (domain.ToolCall.Elicit). On 2026-07-28 the server answers the call
// input_required and the call's own loop asks and sends the call again with
// the answers (call.go, rounds); on 2025 the server sends elicitation/create
// during the call, on a session whose capability was fixed at initialize —
// an eliciting session, taken by one call at a time, so its question is
// that call's (live.go) — and its handler asks (here).

// maxRounds bounds the tools/call requests of one call (2026 input_required
// rounds, the first request included).
const maxRounds = 8

// maxAnswerTries bounds how often one question is asked again after an
// answer that does not fit its schema; then the backend answers cancel.
const maxAnswerTries = 3

// The questions put to a user (DECISIONS "Elicitation"): at most
// maxQuestionsPerCall in one call (a 2025 server may send any number
// during it, a 2026 round may name any number) and at most
// maxQuestionsPerMinute of one server in any minute, across its calls.
// Beyond either, a question is answered cancel without asking the page,
// and so is every later one of that call.
const (
	maxQuestionsPerCall   = 16
	maxQuestionsPerMinute = 30
)

// askBudget counts the questions each server put to its user in the last
// minute (the per-minute bound).
type askBudget struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[domain.RegistrationID][]time.Time
}

// take reports whether reg's server may ask one more question now, and
// counts it when so.
func (b *askBudget) take(reg domain.RegistrationID) bool {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[domain.RegistrationID][]time.Time{}
	}
	asked := b.m[reg]
	for len(asked) > 0 && now.Sub(asked[0]) >= time.Minute {
		asked = asked[1:]
	}
	if len(asked) >= maxQuestionsPerMinute {
		b.m[reg] = asked
		return false
	}
	b.m[reg] = append(asked, now)
	return true
}

// elicitCaps is the capability a call that may elicit advertises: both
// modes.
var elicitCaps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
	Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}

// asker is one call's way to the user: its ElicitFunc, the record of what
// was asked, and the pause of the call's wait for the server while the
// user answers (the server waits for the user, not the other way round).
type asker struct {
	ctx    context.Context // the call's: a stopped call withdraws its question
	elic   domain.ElicitFunc
	pause  func() (resume func())
	reg    domain.RegistrationID
	budget *askBudget // the per-minute bound, across the server's calls

	mu      sync.Mutex
	records []domain.ElicitRecord
	asked   int  // questions put to the user
	limited bool // a bound was reached: the rest are answered cancel
	// limitedMode is the mode of the first question refused so; its record
	// comes last (trace): questions asked before it may still be answered.
	limitedMode string
}

// admit reports whether one more question may be put to the user; the
// first one refused is recorded as limited (one record, the call's last),
// the later ones are not.
func (a *asker) admit(mode string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.limited && a.asked < maxQuestionsPerCall && (a.budget == nil || a.budget.take(a.reg)) {
		a.asked++
		return true
	}
	if !a.limited {
		a.limited, a.limitedMode = true, mode
	}
	return false
}

// refuse answers a question ttmcp cannot show (it does not parse, or is
// beyond the bounds) without asking: recorded invalid, within the same
// bound as the questions asked, so a flood of them is one record too.
func (a *asker) refuse(mode string) domain.ElicitResponse {
	if a.admit(recordedMode(mode)) {
		a.record(recordedMode(mode), domain.ElicitInvalid)
	}
	return domain.ElicitResponse{Action: domain.ElicitCancel}
}

// recordedMode is a question's mode as the record names it: url, or form
// (the specification's default) for anything else a server wrote.
func recordedMode(mode string) string {
	if mode == domain.ElicitURL {
		return mode
	}
	return domain.ElicitForm
}

// ask puts one question to the user and returns the answer to send: a
// form answer that does not fit the schema is asked again with the reason
// (the server never sees it), at most maxAnswerTries times; a failure to
// ask (the page closed, it timed out, the call was stopped) is cancel.
func (a *asker) ask(req domain.ElicitRequest) domain.ElicitResponse {
	return a.askIn(a.ctx, req)
}

// askIn is ask within ctx, a.ctx or one derived from it: a question ended
// by errPageDone (the server said the page is done) is answered accept.
func (a *asker) askIn(ctx context.Context, req domain.ElicitRequest) domain.ElicitResponse {
	if !a.admit(req.Mode) {
		return domain.ElicitResponse{Action: domain.ElicitCancel}
	}
	resume := func() {}
	if a.pause != nil {
		resume = a.pause()
	}
	defer resume()
	var schema *domain.ElicitSchema
	if req.Mode == domain.ElicitForm && len(req.RequestedSchema) > 0 {
		s, err := domain.ParseElicitSchema(req.RequestedSchema)
		if err != nil {
			// A form ttmcp cannot render or check: the user is not asked
			// (counted as a question already).
			a.record(req.Mode, domain.ElicitInvalid)
			return domain.ElicitResponse{Action: domain.ElicitCancel}
		}
		schema = &s
	}
	for try := 1; ; try++ {
		resp, err := a.elic(ctx, req)
		switch {
		case a.ctx.Err() == nil && errors.Is(context.Cause(ctx), errPageDone):
			// The server says the user is done on the page: that is the
			// answer, whatever the page's popup still shows.
			a.record(req.Mode, domain.ElicitAccept)
			return domain.ElicitResponse{Action: domain.ElicitAccept}
		case ctx.Err() != nil:
			// The call was stopped: the question is withdrawn, and an
			// answer that came anyway is not the user's to send.
			a.record(req.Mode, domain.ElicitCancel)
			return domain.ElicitResponse{Action: domain.ElicitCancel}
		case errors.Is(err, domain.ErrElicitTimedOut):
			a.record(req.Mode, domain.ElicitTimedOut)
			return domain.ElicitResponse{Action: domain.ElicitCancel}
		case err != nil:
			a.record(req.Mode, domain.ElicitCancel)
			return domain.ElicitResponse{Action: domain.ElicitCancel}
		}
		switch resp.Action {
		case domain.ElicitAccept, domain.ElicitDecline, domain.ElicitCancel:
		default:
			resp = domain.ElicitResponse{Action: domain.ElicitCancel}
		}
		if resp.Action != domain.ElicitAccept || req.Mode != domain.ElicitForm {
			resp.Content = nil
			a.record(req.Mode, resp.Action)
			return resp
		}
		if len(resp.Content) == 0 {
			resp.Content = json.RawMessage(`{}`)
		}
		bad := error(nil)
		if schema != nil {
			bad = schema.Check(resp.Content)
		} else if !isObject(resp.Content) {
			bad = errors.New("the answer is not an object")
		}
		if bad == nil {
			a.record(req.Mode, domain.ElicitAccept)
			return resp
		}
		if try == maxAnswerTries {
			a.record(req.Mode, domain.ElicitInvalid)
			return domain.ElicitResponse{Action: domain.ElicitCancel}
		}
		req.Error = bad.Error()
	}
}

func (a *asker) record(mode, action string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, domain.ElicitRecord{Mode: mode, Action: action})
}

func (a *asker) trace() []domain.ElicitRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append([]domain.ElicitRecord(nil), a.records...)
	if a.limited {
		out = append(out, domain.ElicitRecord{Mode: a.limitedMode, Action: domain.ElicitLimited})
	}
	return out
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// elicitRequest turns a question as sent (its JSON params) into the
// domain's; the mode is inferred as go-sdk does when the server left it
// out (a URL or an id: url; else form).
func elicitRequest(params json.RawMessage) (domain.ElicitRequest, bool) {
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
	}
	if domain.CheckElicitParams(params) != nil || json.Unmarshal(params, &p) != nil {
		return domain.ElicitRequest{}, false
	}
	if _, ok := refusedMode(params); ok {
		return domain.ElicitRequest{}, false // a stand-in (guard.go): nobody is asked
	}
	if p.Mode == "" {
		p.Mode = domain.ElicitForm
		if p.URL != "" || p.ElicitationID != "" {
			p.Mode = domain.ElicitURL
		}
	}
	if p.Mode != domain.ElicitForm && p.Mode != domain.ElicitURL || p.Mode == domain.ElicitURL && p.URL == "" {
		return domain.ElicitRequest{}, false
	}
	return domain.ElicitRequest{Mode: p.Mode, Message: p.Message, RequestedSchema: p.RequestedSchema, URL: p.URL,
		ElicitationID: p.ElicitationID}, true
}

// elicitResult is the answer as go-sdk sends it.
func elicitResult(resp domain.ElicitResponse) *mcp.ElicitResult {
	out := &mcp.ElicitResult{Action: resp.Action}
	if len(resp.Content) > 0 {
		dec := json.NewDecoder(bytes.NewReader(resp.Content))
		dec.UseNumber()
		var content map[string]any
		if dec.Decode(&content) == nil {
			// go-sdk checks the content against the requested schema
			// before it sends it, and takes a json.Number for a string:
			// a whole number goes as an int64 (exact), any other as a
			// float64. The values are flat (domain.ElicitSchema).
			for k, v := range content {
				if n, ok := v.(json.Number); ok {
					if i, err := n.Int64(); err == nil {
						content[k] = i
					} else if f, err := n.Float64(); err == nil {
						content[k] = f
					}
				}
			}
			out.Content = content
		}
	}
	return out
}

// answer puts a question that came during cur's call to cur's user; one
// that comes between calls (cur nil) is answered cancel: nobody asked it.
func (cur *asking) answer(req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if cur == nil || req.Params == nil {
		return &mcp.ElicitResult{Action: domain.ElicitCancel}, nil
	}
	if mode, ok := req.Params.Meta[metaRefused].(string); ok {
		// beyond the bounds as sent: the transport put this in its place
		return elicitResult(cur.a.refuse(mode)), nil
	}
	raw := cur.ex.question(req.Params)
	if raw == nil {
		raw, _ = json.Marshal(req.Params)
	}
	q, ok := elicitRequest(raw)
	if !ok {
		return elicitResult(cur.a.refuse(req.Params.Mode)), nil
	}
	return elicitResult(cur.a.ask(q)), nil
}

// keep keeps the raw params of a question read from a stdio server while
// the tracked request runs (stdio_conn.go).
func (ex *exchange) keep(params json.RawMessage) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.questions) < 16 {
		ex.questions = append(ex.questions, bytes.Clone(params))
	}
}

// question returns the raw params of the question p that the tracked
// request's server asked: go-sdk hands its handler the params decoded (a
// requested schema as a Go map, the order of its properties lost), and the
// page is to show the form as the server wrote it. A 2025 server asks on
// the call's response stream (the body the exchange keeps); a stdio
// server's questions are kept as they are read (stdio_conn.go). The first
// question not yet taken with p's message and mode; nil when none is kept.
func (ex *exchange) question(p *mcp.ElicitParams) json.RawMessage {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	kept := append(append([]json.RawMessage(nil), ex.questions...), rawQuestions(ex.contentType, ex.body.Bytes())...)
	for i := ex.asked; i < len(kept); i++ {
		r, ok := elicitRequest(kept[i])
		if ok && r.Message == p.Message && (p.Mode == "" || r.Mode == p.Mode) {
			ex.asked = i + 1
			return kept[i]
		}
	}
	return nil
}

// rawQuestions reads the elicitation/create requests in an SSE or JSON body
// (a 2025 call's response stream, where its server's questions come).
func rawQuestions(contentType string, body []byte) []json.RawMessage {
	var out []json.RawMessage
	for _, msg := range responseMessages(contentType, body) {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(msg, &m) == nil && m.Method == "elicitation/create" {
			out = append(out, m.Params)
		}
	}
	return out
}

// codeURLElicitationRequired is 2025-11-25's URLElicitationRequiredError.
// The specification has the server give it "when a request cannot be
// processed until an elicitation is completed" and never otherwise: the
// tool did not run, so the call may be sent again once the pages are done.
const codeURLElicitationRequired = -32042

// maxPages bounds the pages one refusal may ask the user to visit; a
// refusal with more is left as the server's answer.
const maxPages = 4

// errPageDone ends a page's question when its server announced the page
// done (notifications/elicitation/complete).
var errPageDone = errors.New("the server says the page is done")

// pagesRequired reports the pages a call's answer asks the user to finish
// before the server takes the call: a URL-elicitation-required error whose
// data lists URL-mode elicitations, each with its id and URL. ok is false
// for any other answer, and for such an error ttmcp cannot read or show
// (then it stays the server's answer).
func pagesRequired(out domain.CallOutcome) (pages []domain.ElicitRequest, ok bool) {
	se := out.ServerError
	if out.Outcome != domain.OutcomeKnownResponse || se == nil || se.Code != codeURLElicitationRequired || se.DataJSON == nil {
		return nil, false
	}
	var data struct {
		Elicitations []json.RawMessage `json:"elicitations"`
	}
	if json.Unmarshal([]byte(*se.DataJSON), &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxPages {
		return nil, false
	}
	for _, raw := range data.Elicitations {
		q, ok := elicitRequest(raw)
		if !ok || q.Mode != domain.ElicitURL || q.ElicitationID == "" {
			return nil, false
		}
		q.Resend = true
		pages = append(pages, q)
	}
	return pages, true
}

// visitPages puts each page of a refusal to the user in turn; a question
// ends with the user's answer or with the server's announcement that the
// page is done. It reports whether every page was done (accepted): only
// then is the call sent again. No request is in flight meanwhile.
func (g *Gateway) visitPages(a *asker, reg domain.RegistrationID, pages []domain.ElicitRequest) bool {
	a.pause = nil
	// Watch for each announcement before the first question: the server
	// may announce a page done the moment the user finishes it.
	ctxs := make([]context.Context, len(pages))
	for i, p := range pages {
		ctx, cancel := context.WithCancelCause(a.ctx)
		defer cancel(nil)
		defer g.pages.watch(reg, p.ElicitationID, cancel)()
		ctxs[i] = ctx
	}
	for i, p := range pages {
		if a.askIn(ctxs[i], p).Action != domain.ElicitAccept || a.ctx.Err() != nil {
			return false
		}
	}
	return true
}

// pageWatch routes a server's notifications/elicitation/complete to the
// questions waiting for that page, by registration and elicitation id (an
// id is scoped to its server). A notification nobody waits for is dropped.
type pageWatch struct {
	mu sync.Mutex
	m  map[pageKey]map[*context.CancelCauseFunc]struct{}
}

type pageKey struct {
	reg domain.RegistrationID
	id  string
}

// watch has done called when reg's server announces page id done, until
// the returned stop is called.
func (w *pageWatch) watch(reg domain.RegistrationID, id string, done context.CancelCauseFunc) (stop func()) {
	k, f := pageKey{reg, id}, &done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[pageKey]map[*context.CancelCauseFunc]struct{}{}
	}
	if w.m[k] == nil {
		w.m[k] = map[*context.CancelCauseFunc]struct{}{}
	}
	w.m[k][f] = struct{}{}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.m[k], f)
		if len(w.m[k]) == 0 {
			delete(w.m, k)
		}
	}
}

// completed is a session's ElicitationCompleteHandler for reg's server.
func (w *pageWatch) completed(reg domain.RegistrationID) func(context.Context, *mcp.ElicitationCompleteNotificationRequest) {
	return func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
		if req.Params == nil {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for f := range w.m[pageKey{reg, req.Params.ElicitationID}] {
			(*f)(errPageDone) // a CancelCauseFunc does not block
		}
	}
}
