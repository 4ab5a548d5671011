package service

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Codes of catalog use cases.
const (
	CodeServerPaused             = "mcp.server_paused"
	CodeCatalogPersistenceFailed = "mcp.catalog_persistence_failed"
	// CodeRegistrationChanged: the connection of a registration changed
	// while its tools were being discovered, so the result describes a
	// connection that no longer exists and is not published.
	CodeRegistrationChanged = "mcp.registration_changed"
)

// snapshots are the published catalogs, in memory. Each registration has
// its own discovery lock, so discover and refresh of one registration run
// one at a time and publish in the order they ran; discoveries of
// different registrations run in parallel.
type snapshots struct {
	mu   sync.Mutex
	byID map[domain.RegistrationID]*snapshot
}

type snapshot struct {
	lock    chan struct{}   // the registration's discovery lock
	catalog *domain.Catalog // nil until one is published
	conn    domain.Registration
}

// entry returns the snapshot slot of id, creating it.
func (c *snapshots) entry(id domain.RegistrationID) *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[id]
	if !ok {
		e = &snapshot{lock: make(chan struct{}, 1)}
		c.byID[id] = e
	}
	return e
}

// get returns the published catalog of r, if it was discovered over r's
// current connection.
func (c *snapshots) get(r domain.Registration) (domain.Catalog, bool) {
	if cat := c.published(r); cat != nil {
		return *cat, true
	}
	return domain.Catalog{}, false
}

// published is get's catalog itself, nil when there is none: the same
// pointer until the next publish (what the model-tool cache keys on).
// Callers must not modify it.
func (c *snapshots) published(r domain.Registration) *domain.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[r.ID]
	if !ok || e.catalog == nil || !e.conn.SameConnection(r) {
		return nil
	}
	return e.catalog
}

func (c *snapshots) put(r domain.Registration, cat domain.Catalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[r.ID]
	if !ok {
		e = &snapshot{lock: make(chan struct{}, 1)}
		c.byID[r.ID] = e
	}
	e.catalog, e.conn = &cat, r.Clone()
}

// drop forgets the published catalog of id (its lock stays: a discovery
// may hold it).
func (c *snapshots) drop(id domain.RegistrationID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		e.catalog = nil
	}
}

// remove forgets everything of a removed registration. A discovery still
// holding the old slot's lock fails anyway: its registration is gone.
func (c *snapshots) remove(id domain.RegistrationID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
}

// Discover returns a registration's tools: from memory, else from its
// catalog file, else from the server (reference §3.6). A paused
// registration is refused before any cache is looked at. A corrupt or
// mismatched file is an error, never silently replaced: refresh repairs it.
func (s *Service) Discover(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpDiscoveryResult, error) {
	return s.discover(ctx, dto, false)
}

// Refresh discovers a registration's tools from the server, always. A
// failed refresh leaves the previous snapshot as it was.
func (s *Service) Refresh(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpDiscoveryResult, error) {
	return s.discover(ctx, dto, true)
}

func (s *Service) discover(ctx context.Context, dto jsapi.McpRegistrationIdDto, network bool) (jsapi.McpDiscoveryResult, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpDiscoveryResult{}, err
	}
	unlock, err := acquire(ctx, s.cache.entry(id).lock)
	if err != nil {
		return jsapi.McpDiscoveryResult{}, err
	}
	defer unlock()
	r, err := s.active(id)
	if err != nil {
		if domain.KindOf(err) == domain.KindNotFound {
			s.cache.remove(id) // the slot made for an id that names nothing
		}
		return jsapi.McpDiscoveryResult{}, err
	}
	if !network {
		if cat, ok := s.cache.get(r); ok {
			return DiscoveryDTO(r, cat), nil
		}
		cat, ok, err := s.catalogs.LoadCatalog(id, r.Endpoint)
		if err != nil {
			return jsapi.McpDiscoveryResult{}, err
		}
		if ok {
			s.cache.put(r, cat)
			return DiscoveryDTO(r, cat), nil
		}
	}
	cat, err := s.gateway.Discover(ctx, r)
	if err != nil {
		return jsapi.McpDiscoveryResult{}, err
	}
	cat, err = s.publish(ctx, r, cat)
	if err != nil {
		return jsapi.McpDiscoveryResult{}, err
	}
	// every page: a Manager that shows this server reads its tools again
	s.tell(jsapi.EventServersChanged, jsapi.McpServerChange{RegistrationID: string(id), Lists: []string{"tools"}})
	current, err := s.load(id) // permissions may have changed meanwhile
	if err != nil {
		return jsapi.McpDiscoveryResult{}, err
	}
	return DiscoveryDTO(current, cat), nil
}

// active loads a registration and requires it to be Active.
func (s *Service) active(id domain.RegistrationID) (domain.Registration, error) {
	return s.activeFor(id, "discovery")
}

// activeFor is active, the refusal naming what needs it.
func (s *Service) activeFor(id domain.RegistrationID, what string) (domain.Registration, error) {
	r, err := s.load(id)
	if err != nil {
		return domain.Registration{}, err
	}
	if r.State != domain.StateActive {
		return domain.Registration{}, domain.Errorf(domain.KindConflict, CodeServerPaused, "registration `%s` must be Active before %s", id, what)
	}
	return r, nil
}

// publish saves a freshly discovered catalog and puts it in memory, under
// the mutation lock: an update or removal that ran during discovery either
// happened before (the connection check below refuses the stale result)
// or waits until the catalog is saved (and then deletes it). When the file
// cannot be saved, the catalog is still published, in memory only, with a
// diagnostic saying so; the old file stays as it was.
func (s *Service) publish(ctx context.Context, discovered domain.Registration, cat domain.Catalog) (domain.Catalog, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return domain.Catalog{}, err
	}
	defer unlock()
	r, err := s.load(discovered.ID)
	if err != nil {
		return domain.Catalog{}, err
	}
	if !r.SameConnection(discovered) {
		return domain.Catalog{}, domain.Errorf(domain.KindConflict, CodeRegistrationChanged,
			"the connection of registration `%s` changed during discovery; discover again", r.ID)
	}
	if err := s.catalogs.SaveCatalog(r.ID, r.Endpoint, cat); err != nil {
		s.log.Warn("MCP catalog remains memory-only", "registration", r.ID, "err", err)
		cat.Diagnostics = append(slices.Clip(cat.Diagnostics), domain.Diagnostic{
			Code:    CodeCatalogPersistenceFailed,
			Message: "Tools are available for this session, but the catalog snapshot could not be saved: " + err.Error(),
		})
	}
	s.cache.put(r, cat)
	return cat, nil
}

// DiscoveryDTO projects a catalog for the Manager (reference §3.7): the
// tools in ToolId order with the registration's permission for each (off
// by default), the server's raw descriptions (overrides are for the model,
// not the Manager), and every stored permission whose tool is not in the
// catalog as a stale tool.
func DiscoveryDTO(r domain.Registration, cat domain.Catalog) jsapi.McpDiscoveryResult {
	out := jsapi.McpDiscoveryResult{
		RegistrationID:  string(r.ID),
		ProtocolVersion: cat.ProtocolVersion,
		ServerName:      cat.ServerName,
		ServerVersion:   cat.ServerVersion,
		Tools:           make([]jsapi.McpTool, 0, len(cat.Tools)),
		Diagnostics:     make([]jsapi.McpDiagnostic, 0, len(cat.Diagnostics)),
		StaleTools:      []jsapi.McpStaleTool{},
	}
	present := map[string]bool{}
	for _, t := range cat.Tools {
		present[t.NativeName] = true
		tid, _ := domain.NewToolID(r.ID, t.NativeName) // names were validated with the catalog
		out.Tools = append(out.Tools, jsapi.McpTool{
			ID:           string(tid),
			NativeName:   t.NativeName,
			Title:        t.Title,
			Description:  t.Description,
			InputSchema:  jsapi.RawJSON(t.InputSchema),
			OutputSchema: jsapi.RawJSON(t.OutputSchema),
			Annotations:  jsapi.RawJSON(t.Annotations),
			Permission:   string(r.PermissionFor(t.NativeName)),
			UI:           toolUIDTO(t.UI),
		})
	}
	slices.SortFunc(out.Tools, func(a, b jsapi.McpTool) int { return strings.Compare(a.ID, b.ID) })
	for _, d := range cat.Diagnostics {
		out.Diagnostics = append(out.Diagnostics, jsapi.McpDiagnostic{Code: d.Code, NativeName: d.NativeName, Message: d.Message})
	}
	for _, name := range slices.Sorted(maps.Keys(r.Permissions)) {
		if !present[name] {
			out.StaleTools = append(out.StaleTools, jsapi.McpStaleTool{NativeName: name, Permission: string(r.Permissions[name])})
		}
	}
	return out
}

// toolUIDTO is a tool's MCP Apps metadata for a page; nil for none.
func toolUIDTO(u *domain.ToolUI) *jsapi.McpToolUI {
	if u == nil {
		return nil
	}
	out := &jsapi.McpToolUI{Visibility: u.Visibility} // [] ("nobody") is written, nil left out
	if u.ResourceURI != "" {
		uri := u.ResourceURI
		out.ResourceURI = &uri
	}
	return out
}
