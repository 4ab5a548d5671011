package service

import (
	"context"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// What changed, told to every page that watches (the server's sockets:
// jsapi.FrameEvent), whoever changed it — ttmcp following its server's
// announcement (issue 21), another page or tab, a script calling api.mcp:
// a server's lists (its tools after every published discovery), and a
// registration that was created, changed or removed. So every Manager
// lists again instead of showing what it last read.

// watchers are the functions Watch registered.
type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(jsapi.Event)
}

// Watch calls fn with every event from now on, until stop. fn must not
// block: it runs on the goroutine that made the change.
func (s *Service) Watch(fn func(jsapi.Event)) (stop func()) {
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(jsapi.Event){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns, id)
	}
}

// Watching reports how many watchers Watch registered are still there:
// each open page's socket is one. Whoever owns a Service may close it
// once none is (ttmcp's per-user stacks close a user's idle one); a
// Service does not close itself.
func (s *Service) Watching() int {
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.fns)
}

// tell tells every watcher.
func (s *Service) tell(name string, data any) {
	ev := jsapi.Event{Type: jsapi.FrameEvent, Event: name, Data: data}
	w := &s.watchers
	w.mu.Lock()
	fns := make([]func(jsapi.Event), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// followTimeout bounds the refresh that follows an announced change.
const followTimeout = 5 * time.Minute

// ListChanged follows a change a server announced on its live connection
// (the gateway debounces them): the catalog is refreshed with every rule
// of a user's refresh — complete pagination and validation before it is
// published, new tools Off, stale tools kept and reported, a memory-only
// diagnostic when the file cannot be written — and the pages are told.
// A paused or removed registration, or a failed refresh, changes nothing
// (the last snapshot stays); the user's own refresh says why.
func (s *Service) ListChanged(c domain.ListChange) {
	ctx, cancel := context.WithTimeout(context.Background(), followTimeout)
	defer cancel()
	if c.Tools {
		// a published refresh tells the pages itself, as every discovery does
		if _, err := s.discover(ctx, jsapi.McpRegistrationIdDto{RegistrationID: string(c.RegistrationID)}, true); err != nil {
			s.log.Info("an MCP server announced a tools change; the refresh that followed failed", "registration", c.RegistrationID, "err", err)
		}
	}
	if lists := s.listsChanged(c); len(lists) > 0 {
		s.tell(jsapi.EventServersChanged, jsapi.McpServerChange{RegistrationID: string(c.RegistrationID), Lists: lists})
	}
}

// registrationChanged tells the pages that a registration was written or
// removed.
func (s *Service) registrationChanged(id domain.RegistrationID) {
	s.tell(jsapi.EventServersChanged, jsapi.McpServerChange{RegistrationID: string(id), Lists: []string{jsapi.ListRegistration}})
}

// listsChanged forgets what is kept of the lists other than tools that c
// names, and returns their names for the event.
func (s *Service) listsChanged(c domain.ListChange) []string {
	s.lists.dropSome(c.RegistrationID, c.Resources, c.Prompts)
	var lists []string
	if c.Resources {
		lists = append(lists, "resources")
	}
	if c.Prompts {
		lists = append(lists, "prompts")
	}
	return lists
}

// ConnectionStatus says how a registration is connected now: a remote
// server's live connection (kept or short-lived sessions, following its
// list changes or why not), or a stdio server's process (its session is
// the process's). It never connects.
func (s *Service) ConnectionStatus(_ context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpConnectionStatus, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpConnectionStatus{}, err
	}
	r, err := s.load(id)
	if err != nil {
		return jsapi.McpConnectionStatus{}, err
	}
	st := s.gateway.Status(r)
	out := jsapi.McpConnectionStatus{RegistrationID: string(id), State: string(st.State), Sessions: string(st.Sessions), Following: st.Following}
	if st.ProtocolVersion != "" {
		out.ProtocolVersion = &st.ProtocolVersion
	}
	if st.Note != "" {
		out.Note = &st.Note
	}
	return out, nil
}
