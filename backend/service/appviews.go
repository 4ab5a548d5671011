package service

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// App views (MCP Apps, issue 30; docs/DECISIONS.md "MCP Apps: the
// sandbox"): an App's document is served by ttmcp itself, with ttmcp's
// policy as HTTP headers, at a URL that names a view: a random, single-use
// id minted when the interface was read, valid for a short while. The page
// loads it in a sandboxed iframe; nobody can make ttmcp serve a document
// ttmcp did not read from the App's own server, or serve it with another
// policy.

// AppView is one document waiting for its iframe.
type AppView struct {
	HTML        string
	CSP         string
	Permissions []string // the permission policy features declared (camera, microphone, geolocation, clipboard-write)
	expires     time.Time
}

// Bounds of the views waiting: a page that reads interfaces and never
// loads them cannot make the backend hold more than this.
const (
	appViewTTL       = 2 * time.Minute
	maxAppViews      = 64
	maxAppViewsBytes = 32 << 20
)

type appViews struct {
	mu    sync.Mutex
	byID  map[string]*AppView
	order []string // oldest first
	bytes int
}

// put keeps v and returns its id, evicting the oldest views beyond the
// bounds and the expired ones.
func (a *appViews) put(v AppView, now time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = map[string]*AppView{}
	}
	v.expires = now.Add(appViewTTL)
	a.byID[id] = &v
	a.order = append(a.order, id)
	a.bytes += len(v.HTML)
	for len(a.order) > 0 {
		first := a.byID[a.order[0]]
		if first != nil && len(a.order) <= maxAppViews && a.bytes <= maxAppViewsBytes && now.Before(first.expires) {
			break
		}
		a.dropLocked(a.order[0])
	}
	return id
}

func (a *appViews) dropLocked(id string) {
	if v := a.byID[id]; v != nil {
		a.bytes -= len(v.HTML)
		delete(a.byID, id)
	}
	for i, x := range a.order {
		if x == id {
			a.order = append(a.order[:i], a.order[i+1:]...)
			break
		}
	}
}

// take returns the view id names, once: a second load of the same URL
// (a reload, a copy of the URL opened elsewhere) finds nothing.
func (a *appViews) take(id string, now time.Time) (AppView, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.byID[id]
	if v == nil {
		return AppView{}, false
	}
	a.dropLocked(id)
	if !now.Before(v.expires) {
		return AppView{}, false
	}
	return *v, true
}

// TakeAppView hands the document of view id to the sandbox route, once.
func (s *Service) TakeAppView(id string) (AppView, bool) { return s.views.take(id, s.now()) }
