package server

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/jsapi"
)

// What the backend asks a page (SPEC §10 "Elicitation"): a server's
// question during a call the page made goes to that page's handler as a
// request frame, and the page answers with a response frame; a cancel frame
// withdraws a question. The page says with a handlers frame whether it has
// a handler; it is read in the read loop, in order with the invoke frames,
// so a call sent after it sees it. The socket is the service's
// service.Page for the calls it starts.

// asks are a socket's questions to its page.
type asks struct {
	elicitation atomic.Bool // the page has an elicitation handler
	apps        atomic.Bool // the page renders MCP Apps (issue 30)

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan jsontext.Value
	closed  bool
}

// pageFrame handles a frame that is not an invoke frame: handlers or
// response. It reports false for anything else (the socket then closes).
func (sk *socket) pageFrame(data []byte) bool {
	var f struct {
		Type        string         `json:"type"`
		ID          *uint64        `json:"id"`
		OK          *bool          `json:"ok"`
		Value       jsontext.Value `json:"value"`
		Error       jsontext.Value `json:"error"`
		Elicitation *bool          `json:"elicitation"`
		Apps        *bool          `json:"apps"`
	}
	if json.Unmarshal(data, &f, json.RejectUnknownMembers(true)) != nil {
		return false
	}
	switch {
	case f.Type == jsapi.FrameHandlers && (f.Elicitation != nil || f.Apps != nil) && f.ID == nil && f.OK == nil:
		if f.Elicitation != nil {
			sk.asks.elicitation.Store(*f.Elicitation)
		}
		if f.Apps != nil {
			sk.asks.apps.Store(*f.Apps)
		}
		return true
	case f.Type == jsapi.FrameResponse && f.ID != nil && f.OK != nil && f.Elicitation == nil && f.Apps == nil:
		answer := f.Value
		if !*f.OK {
			answer = nil // the page could not answer: as a cancel
		}
		sk.asks.deliver(*f.ID, answer)
		return true
	}
	return false
}

// deliver hands a page's answer to the question waiting for it; an answer
// nobody waits for (withdrawn, or made up) is dropped.
func (a *asks) deliver(id uint64, answer jsontext.Value) {
	a.mu.Lock()
	ch := a.waiting[id]
	delete(a.waiting, id)
	a.mu.Unlock()
	if ch != nil {
		ch <- answer
	}
}

// end withdraws every question: the socket closed, and nobody will answer.
func (a *asks) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for id, ch := range a.waiting {
		close(ch)
		delete(a.waiting, id)
	}
}

// errPageGone: the page closed before it answered.
var errPageGone = errors.New("the page closed before it answered")

// HasElicitationHandler reports whether the page set a handler
// (service.Page).
func (sk *socket) HasElicitationHandler() bool { return sk.asks.elicitation.Load() }

// RendersApps reports whether the page said it renders MCP Apps
// (service.AppsPage).
func (sk *socket) RendersApps() bool { return sk.asks.apps.Load() }

// Elicit asks the page's handler and waits for its answer, ctx's end or
// the socket's (service.Page). A question ctx withdraws is withdrawn on the
// page too (a cancel frame), so its popup closes.
func (sk *socket) Elicit(ctx context.Context, req jsapi.McpElicitationRequest) (jsapi.McpElicitationResponse, error) {
	a := &sk.asks
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return jsapi.McpElicitationResponse{}, errPageGone
	}
	if a.waiting == nil {
		a.waiting = map[uint64]chan jsontext.Value{}
	}
	a.next++
	id := a.next
	ch := make(chan jsontext.Value, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	frame, err := json.Marshal(jsapi.Request{Type: jsapi.FrameRequest, ID: id, Method: jsapi.RequestElicitation, Params: req})
	if err != nil {
		a.deliver(id, nil)
		return jsapi.McpElicitationResponse{}, err
	}
	if err := sk.writeResult(frame, nil, nil); err != nil {
		a.deliver(id, nil)
		return jsapi.McpElicitationResponse{}, errPageGone
	}
	select {
	case answer, open := <-ch:
		if !open {
			return jsapi.McpElicitationResponse{}, errPageGone
		}
		var resp jsapi.McpElicitationResponse
		if answer == nil || json.Unmarshal(answer, &resp, json.RejectUnknownMembers(true)) != nil {
			return jsapi.McpElicitationResponse{Action: jsapi.ElicitCancel}, nil // an answer it could not give, or garbled
		}
		return resp, nil
	case <-ctx.Done():
		a.mu.Lock()
		_, waiting := a.waiting[id]
		delete(a.waiting, id)
		a.mu.Unlock()
		if waiting {
			cancel := []byte(`{"type":"` + jsapi.FrameCancel + `","id":` + strconv.FormatUint(id, 10) + `}`)
			go sk.writeResult(cancel, nil, nil)
		}
		return jsapi.McpElicitationResponse{}, context.Cause(ctx)
	}
}

var _ service.Page = (*socket)(nil)
