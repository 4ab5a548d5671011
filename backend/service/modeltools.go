package service

import (
	"slices"
	"sync"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// modelTools keeps what the model-tool listing worked out, so that a root
// generation is served from what the backend already holds (issue 19 item
// 6): every root used to re-read and re-parse the catalog files it had no
// snapshot of, check every schema root, apply every override and encode a
// few MiB, for an answer that had not changed.
//
// Per registration it keeps the resolution (serverTools) of one version
// of its file (the list view's entry) over one published catalog (the
// snapshot's pointer): a changed registration file, a publish (discovery,
// refresh, a connection change) or a removal makes a new key, so nothing
// stale is served and nothing needs an explicit invalidation. The upstream
// listing (no tool set) is kept whole, with its encoding, for as long as
// the view and every resolution in it are the same. A tool set's listing
// is built per call from the kept resolutions, which costs what the set
// offers.
type modelTools struct {
	mu      sync.Mutex // one listing is worked out at a time; the others share it
	servers map[domain.RegistrationID]*resolvedServer
	all     *allListing
}

type resolvedServer struct {
	version *viewEntry
	catalog *domain.Catalog
	tools   *serverTools
}

// allListing is the listing without a set, shared by every caller while
// nothing in it changed. Nobody modifies it.
type allListing struct {
	view    *viewResult
	servers []*serverTools // per registration of view (nil: skipped)
	list    jsapi.LegacyMcpToolList

	encOnce sync.Once
	enc     []byte
	encErr  error

	digOnce sync.Once // issue 31: digest_legacy_mcp_tools, once per listing
	dig     string
}

func (a *allListing) encoded(encode func(any) ([]byte, error)) ([]byte, error) {
	a.encOnce.Do(func() { a.enc, a.encErr = encode(a.list) })
	return a.enc, a.encErr
}

func (a *allListing) digest(encode func(any) ([]byte, error)) (string, error) {
	data, err := a.encoded(encode)
	if err != nil {
		return "", err
	}
	a.digOnce.Do(func() { a.dig = digestOf(data) })
	return a.dig, nil
}

// resolver returns the resolution of a registration of res, from the kept
// ones when its version and catalog are unchanged. Call with m.mu held.
func (s *Service) resolver(res *viewResult) func(i int) *serverTools {
	m := &s.models
	if m.servers == nil {
		m.servers = map[domain.RegistrationID]*resolvedServer{}
	}
	listed := make(map[domain.RegistrationID]bool, len(res.regs))
	for _, r := range res.regs {
		listed[r.ID] = true
	}
	for id := range m.servers {
		if !listed[id] {
			delete(m.servers, id) // removed, or unreadable now
		}
	}
	return func(i int) *serverTools {
		r, version := res.regs[i], res.versions[i]
		cat, keep, err := s.publishedCatalog(r)
		if cat == nil {
			return catalogProblem(r, err) // said again each time, until it is repaired
		}
		if c := m.servers[r.ID]; c != nil && c.version == version && c.catalog == cat {
			return c.tools
		}
		st := resolveServerTools(r, *cat)
		if keep {
			m.servers[r.ID] = &resolvedServer{version: version, catalog: cat, tools: st}
		}
		return st
	}
}

// publishedCatalog returns r's snapshot from memory, else from its file,
// published to memory as discovery's disk hit publishes it: under the
// registration's discovery lock, so it can never put back an older
// snapshot than a refresh publishes. When a discovery holds the lock, the
// file is read without publishing (keep is false: the caller must not keep
// what it derives). nil when there is no snapshot (err nil) or it cannot be
// loaded (err).
func (s *Service) publishedCatalog(r domain.Registration) (cat *domain.Catalog, keep bool, err error) {
	if cat := s.cache.published(r); cat != nil {
		return cat, true, nil
	}
	lock := s.cache.entry(r.ID).lock
	select {
	case lock <- struct{}{}:
		defer func() { <-lock }()
	default: // a discovery runs; it will publish
		c, ok, err := s.catalogs.LoadCatalog(r.ID, r.Endpoint)
		if !ok || err != nil {
			return nil, false, err
		}
		return &c, false, nil
	}
	if cat := s.cache.published(r); cat != nil {
		return cat, true, nil
	}
	c, ok, err := s.catalogs.LoadCatalog(r.ID, r.Endpoint)
	if !ok || err != nil {
		return nil, false, err
	}
	s.cache.put(r, c)
	return s.cache.published(r), true, nil
}

// listAll returns the upstream listing, kept while nothing in it changed.
// Call with m.mu held.
func (s *Service) listAll(res *viewResult, resolve func(int) *serverTools) *allListing {
	servers := make([]*serverTools, len(res.regs))
	for i, r := range res.regs {
		if r.State == domain.StateActive && len(r.Permissions) > 0 { // others never touch the catalog
			servers[i] = resolve(i)
		}
	}
	if a := s.models.all; a != nil && a.view == res && slices.Equal(a.servers, servers) {
		return a
	}
	a := &allListing{view: res, servers: servers, list: allTools(res, servers)}
	s.models.all = a
	return a
}
