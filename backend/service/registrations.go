package service

import (
	"context"
	"maps"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// List returns every healthy registration and one storage issue per file
// that could not be loaded (reference §2.5).
//
// It is served from the service's view of the registrations (listView),
// revalidated against the directory first, so it costs a directory read
// and a Stat per file plus reading what changed. The result is shared with
// the lists that got the same view: callers must not modify it.
func (s *Service) List(ctx context.Context) (jsapi.McpServerList, error) {
	res, err := s.view.current()
	if err != nil {
		return jsapi.McpServerList{}, internal("cannot list MCP registrations", err)
	}
	s.retainStdio(res.regs)
	return s.redirected(ctx, s.authed(res).list), nil
}

// redirected is list as a page whose sign-ins come back elsewhere
// (WithRedirectURL) sees it: each server's auth.redirectUri is that
// callback, the one to register by hand with an authorization server that
// offers no dynamic registration. The shared list is not changed.
func (s *Service) redirected(ctx context.Context, list jsapi.McpServerList) jsapi.McpServerList {
	u := s.redirectFor(ctx)
	if u == s.redirectURL {
		return list
	}
	out := jsapi.McpServerList{Servers: make([]jsapi.McpServer, len(list.Servers)), StorageIssues: list.StorageIssues}
	for i, srv := range list.Servers {
		if srv.Auth != nil {
			a := *srv.Auth
			a.RedirectURI = &u
			srv.Auth = &a
		}
		out.Servers[i] = srv
	}
	return out
}

// ListEncoded is List encoded with encode (the command server's JSON
// encoding), done once per version of the view and of the sign-in states:
// every list of an unchanged folder returns the same bytes, which callers
// must not modify.
func (s *Service) ListEncoded(ctx context.Context, encode func(any) ([]byte, error)) ([]byte, error) {
	res, err := s.view.current()
	if err != nil {
		return nil, internal("cannot list MCP registrations", err)
	}
	s.retainStdio(res.regs)
	a := s.authed(res)
	if u := s.redirectFor(ctx); u != s.redirectURL {
		return a.encodedFor(u, func() ([]byte, error) { return encode(s.redirected(ctx, a.list)) })
	}
	return a.encoded(encode)
}

// scan returns every healthy registration and the storage issues, from the
// revalidated view. The slices are shared: callers must not modify them.
func (s *Service) scan() ([]domain.Registration, []jsapi.StorageIssue, error) {
	res, err := s.view.current()
	if err != nil {
		return nil, nil, err
	}
	return res.regs, res.issues, nil
}

// save writes r, has the view read it again and tells the pages.
func (s *Service) save(r domain.Registration) error {
	defer s.view.forget(r.ID)
	if err := s.regs.Save(r); err != nil {
		return err
	}
	s.registrationChanged(r.ID)
	return nil
}

// Create registers a new server. It always starts paused, with a fresh
// random id and no permissions or overrides: nothing reaches the network
// until the user activates it.
func (s *Service) Create(ctx context.Context, dto jsapi.CreateMcpServerDto) (jsapi.McpServer, error) {
	headers := map[string]string{}
	if dto.Headers != nil && *dto.Headers != nil {
		headers = *dto.Headers
	}
	protocol := jsapi.ProtocolAuto
	if dto.ProtocolVersion != nil {
		protocol = *dto.ProtocolVersion
	}
	if err := refuseStdioEndpoint(dto.Endpoint); err != nil {
		return jsapi.McpServer{}, err
	}
	ep, p, err := connection(dto.Endpoint, protocol)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	r, err := domain.NewRegistration(dto.DisplayName, ep, headers, p)
	if err != nil {
		return jsapi.McpServer{}, err
	}

	unlock, err := s.lock(ctx)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	defer unlock()
	if err := s.save(r); err != nil {
		return jsapi.McpServer{}, saveFailed(err)
	}
	return s.serverDTO(ctx, r), nil
}

// Update replaces a registration's name and connection settings at once.
// When the connection (endpoint, headers or protocol) changes, the catalog
// discovered over the old connection no longer describes the server: it is
// deleted before the new settings are saved, so a crash in between can only
// leave a registration without a catalog, never a stale one.
//
// A stdio registration can only be renamed (updateStdio); no update makes
// a server a stdio one.
func (s *Service) Update(ctx context.Context, dto jsapi.UpdateMcpServerDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	if dto.Headers == nil {
		return jsapi.McpServer{}, domain.Errorf(domain.KindBadRequest, jsapi.CodeArgsInvalid, "headers is required")
	}
	stdioEndpoint := refuseStdioEndpoint(dto.Endpoint)
	var ep domain.Endpoint
	var p domain.Protocol
	if stdioEndpoint == nil {
		if ep, p, err = connection(dto.Endpoint, dto.ProtocolVersion); err != nil {
			return jsapi.McpServer{}, err
		}
	}
	var out jsapi.McpServer
	endpointChanged, connectionChanged := false, false
	err = s.mutate(ctx, id, func(r *domain.Registration) error {
		if r.Stdio != nil {
			if err := updateStdio(r, dto); err != nil {
				return err
			}
			out = s.serverDTO(ctx, *r)
			return nil
		}
		if stdioEndpoint != nil {
			return stdioEndpoint
		}
		endpointChanged = r.Endpoint != ep
		changed, err := r.Update(dto.DisplayName, ep, dto.Headers, p)
		if err != nil {
			return err
		}
		connectionChanged = changed
		if changed {
			s.cache.drop(id)
			if err := s.regs.DeleteCatalog(id); err != nil {
				return internal("cannot invalidate the catalog of the old connection", err)
			}
		}
		if endpointChanged {
			// A token is for the endpoint it was obtained for.
			s.forgetAuth(id, "the endpoint of the server changed")
		}
		out = s.serverDTO(ctx, *r)
		return nil
	})
	if err == nil && connectionChanged {
		s.disconnect(id) // its next use connects as it is now configured
	}
	return out, err
}

// disconnect closes the kept connection of a remote registration that was
// paused, removed or changed (the CLI's service has no gateway).
func (s *Service) disconnect(id domain.RegistrationID) {
	s.lists.drop(id) // listed over a connection that is gone
	if s.gateway != nil {
		s.gateway.Disconnect(id)
	}
}

// SetState activates or pauses a registration.
func (s *Service) SetState(ctx context.Context, dto jsapi.SetMcpServerStateDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	state, err := domain.ParseState(dto.State)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	var out jsapi.McpServer
	var saved domain.Registration
	err = s.mutate(ctx, id, func(r *domain.Registration) error {
		r.State = state
		out, saved = s.serverDTO(ctx, *r), r.Clone()
		return nil
	})
	if err == nil && state == domain.StatePaused {
		s.stopStdio(saved, "paused")
		s.disconnect(id)
	}
	return out, err
}

// Remove deletes a registration, then its catalog. A catalog that cannot
// be deleted is only logged: the registration is gone either way, and an
// orphan catalog is never loaded without its registration.
func (s *Service) Remove(ctx context.Context, dto jsapi.McpRegistrationIdDto) error {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := s.load(id)
	if err != nil {
		return err
	}
	err = s.regs.Delete(id)
	s.view.forget(id)
	if err != nil {
		return internal("cannot remove MCP registration", err)
	}
	s.stopStdio(r, "removed")
	s.disconnect(id)
	s.cache.remove(id)
	if err := s.regs.DeleteCatalog(id); err != nil {
		s.log.Warn("Failed to clean up removed MCP catalog snapshot", "registration", id, "err", err)
	}
	s.forgetAuth(id, "the server was removed")
	s.forgetCapabilities(id)
	s.registrationChanged(id)
	if s.results != nil {
		if err := s.results.DeleteRegistration(id); err != nil {
			s.log.Warn("Failed to remove a removed MCP server's kept results", "registration", id, "err", err)
		}
	}
	return nil
}

// SetPermission stores ask/allow for a native tool name, or deletes the
// entry for off. The tool need not be in the catalog: a permission for a
// tool not (yet) discovered shows up as stale.
func (s *Service) SetPermission(ctx context.Context, dto jsapi.SetMcpToolPermissionDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	perm, err := domain.ParsePermission(dto.Permission)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	var out jsapi.McpServer
	err = s.mutate(ctx, id, func(r *domain.Registration) error {
		if err := r.SetPermission(dto.NativeName, perm); err != nil {
			return err
		}
		out = s.serverDTO(ctx, *r)
		return nil
	})
	return out, err
}

// SetDescriptionOverride sets a tool's description override, or deletes it
// when the override is null. Strings are kept verbatim.
func (s *Service) SetDescriptionOverride(ctx context.Context, dto jsapi.SetMcpToolDescriptionOverrideDto) (jsapi.McpServer, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpServer{}, err
	}
	var o *domain.DescriptionOverride
	if dto.Override != nil {
		o = &domain.DescriptionOverride{Description: dto.Override.Description, Properties: dto.Override.Properties}
	}
	var out jsapi.McpServer
	err = s.mutate(ctx, id, func(r *domain.Registration) error {
		if err := r.SetOverride(dto.NativeName, o); err != nil {
			return err
		}
		out = s.serverDTO(ctx, *r)
		return nil
	})
	return out, err
}

// mutate loads a registration under the mutation lock, applies change to a
// copy and saves the copy. Nothing is saved when change fails.
func (s *Service) mutate(ctx context.Context, id domain.RegistrationID, change func(*domain.Registration) error) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := s.load(id)
	if err != nil {
		return err
	}
	next := r.Clone()
	if err := change(&next); err != nil {
		return err
	}
	if err := s.save(next); err != nil {
		return saveFailed(err)
	}
	return nil
}

// load returns the registration or a NotFound error.
func (s *Service) load(id domain.RegistrationID) (domain.Registration, error) {
	r, ok, err := s.regs.Load(id)
	if err != nil {
		return domain.Registration{}, domain.Errorf(domain.KindInternal, CodeRegistrationUnavailable, "MCP registration %s cannot be loaded: %v", id, err)
	}
	if !ok {
		return domain.Registration{}, domain.Errorf(domain.KindNotFound, CodeRegistrationNotFound, "MCP registration not found: %s", id)
	}
	return r, nil
}

// connection parses the endpoint and protocol of a create or update, in
// upstream's order (the display name is checked after the endpoint).
func connection(endpoint, protocol string) (domain.Endpoint, domain.Protocol, error) {
	ep, err := domain.ParseEndpoint(endpoint)
	if err != nil {
		return domain.Endpoint{}, "", err
	}
	p, err := domain.ParseProtocol(protocol)
	if err != nil {
		return domain.Endpoint{}, "", err
	}
	return ep, p, nil
}

// Codes of the service's own errors.
const (
	CodeRegistrationNotFound    = "mcp.registration_not_found"
	CodeRegistrationUnavailable = "mcp.registration_unavailable"
)

// saveFailed reports a registration that could not be saved: the caller's
// fault when the store refused it (too large to read back), else the
// store's.
func saveFailed(err error) error {
	if domain.KindOf(err) == domain.KindBadRequest {
		return err
	}
	return internal("cannot save MCP registration", err)
}

// internal wraps an adapter failure: the caller did nothing wrong.
func internal(what string, err error) error {
	return domain.Errorf(domain.KindInternal, jsapi.CodeInternal, "%s: %v", what, err)
}

// ServerDTO projects a registration for the page. Maps are never nil, so
// the page always sees objects.
func ServerDTO(r domain.Registration) jsapi.McpServer {
	perms := make(map[string]string, len(r.Permissions))
	for name, p := range r.Permissions {
		perms[name] = string(p)
	}
	overrides := make(map[string]jsapi.ToolDescriptionOverride, len(r.Overrides))
	for name, o := range r.Overrides {
		props := maps.Clone(o.Properties)
		if props == nil {
			props = map[string]string{}
		}
		overrides[name] = jsapi.ToolDescriptionOverride{Description: o.Description, Properties: props}
	}
	headers := maps.Clone(r.Headers)
	if headers == nil {
		headers = map[string]string{}
	}
	transport, stdio := stdioConfigDTO(r)
	return jsapi.McpServer{
		Transport:                transport,
		Stdio:                    stdio,
		ID:                       string(r.ID),
		DisplayName:              r.DisplayName,
		Endpoint:                 r.Endpoint.String(),
		Headers:                  headers,
		ProtocolVersion:          string(r.Protocol),
		State:                    string(r.State),
		ToolPermissions:          perms,
		ToolDescriptionOverrides: overrides,
	}
}
