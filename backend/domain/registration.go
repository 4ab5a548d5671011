package domain

import (
	"maps"
	"slices"
	"strings"
)

// Protocol is a registration's MCP protocol version preference.
type Protocol string

// The protocol preferences (jsapi.Protocol*). Auto offers the newest
// version and accepts all four; a fixed version offers and accepts only
// itself.
const (
	ProtocolAuto     Protocol = "auto"
	Protocol20260728 Protocol = "2026-07-28"
	Protocol20251125 Protocol = "2025-11-25"
	Protocol20250618 Protocol = "2025-06-18"
	Protocol20250326 Protocol = "2025-03-26"
)

// protocols lists every preference, in the order upstream declares them.
var protocols = []Protocol{ProtocolAuto, Protocol20260728, Protocol20251125, Protocol20250618, Protocol20250326}

// ParseProtocol accepts exactly one of the five preferences.
func ParseProtocol(raw string) (Protocol, error) {
	if p := Protocol(raw); slices.Contains(protocols, p) {
		return p, nil
	}
	return "", invalid("mcp.protocol_version_unsupported",
		"unsupported protocol version `%s`, expected one of %s", raw, quoteList(protocols))
}

// State tells whether a registration may reach the network on its own
// (discovery on open, model tools). A paused one is only edited.
type State string

// The registration states (jsapi.State*).
const (
	StateActive State = "active"
	StatePaused State = "paused"
)

// ParseState accepts "active" or "paused".
func ParseState(raw string) (State, error) {
	switch s := State(raw); s {
	case StateActive, StatePaused:
		return s, nil
	}
	return "", invalid("mcp.state_invalid", "unknown state `%s`, expected `active` or `paused`", raw)
}

// Permission is what the user allows a tool to do with the model.
type Permission string

// The permissions (jsapi.Permission*). Off is the default and is never
// stored: it is the absence of an entry.
const (
	PermissionOff   Permission = "off"
	PermissionAsk   Permission = "ask"
	PermissionAllow Permission = "allow"
)

// ParsePermission accepts "off", "ask" or "allow".
func ParsePermission(raw string) (Permission, error) {
	switch p := Permission(raw); p {
	case PermissionOff, PermissionAsk, PermissionAllow:
		return p, nil
	}
	return "", invalid("mcp.permission_invalid", "unknown permission `%s`, expected one of `off`, `ask`, `allow`", raw)
}

// ParseDisplayName trims raw (Unicode white space, like Rust's str::trim)
// and rejects an empty result.
func ParseDisplayName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	if name == "" {
		return "", invalid("mcp.display_name_empty", "display name cannot be empty")
	}
	return name, nil
}

// DescriptionOverride replaces, for the model only, a tool's description
// (when Description is set) and the descriptions of properties of its input
// schema. The strings are kept verbatim, white space included: they are
// the user's text for the model.
type DescriptionOverride struct {
	Description *string
	Properties  map[string]string
}

// Validate rejects an override that overrides nothing: an empty one would
// be stored but have no effect, so "no override" must be said with nil.
// A set but empty Description does override (with "").
func (o DescriptionOverride) Validate(nativeName string) error {
	if o.Description == nil && len(o.Properties) == 0 {
		return invalid("mcp.description_override_empty", "`%s` must contain a tool or property description", nativeName)
	}
	return nil
}

// clone returns a deep copy of o.
func (o DescriptionOverride) clone() DescriptionOverride {
	c := DescriptionOverride{Properties: maps.Clone(o.Properties)}
	if o.Description != nil {
		d := *o.Description
		c.Description = &d
	}
	return c
}

// Registration is one registered MCP server. Headers, permission and
// override keys, native names and override strings are kept verbatim.
type Registration struct {
	ID          RegistrationID
	DisplayName string
	Endpoint    Endpoint
	// Headers are sent on every HTTP request to the server. They are only
	// checked as HTTP headers when used, so a registration with a bad header
	// can still be stored, listed and fixed.
	Headers  map[string]string
	Protocol Protocol
	State    State
	// Permissions maps native tool names to ask or allow; it never holds
	// PermissionOff (see SetPermission).
	Permissions map[string]Permission
	// Overrides maps native tool names to their description overrides.
	Overrides map[string]DescriptionOverride
	// Stdio is set for a local server started as a process (ttmcp's
	// addition, see Stdio); its Endpoint is then StdioEndpoint(*Stdio) and
	// it has no headers. nil for a remote (Streamable HTTP) server.
	Stdio *Stdio
}

// NewRegistration returns a registration with a new id, paused and without
// permissions or overrides: nothing reaches the network before the user
// activates it. displayName is trimmed; headers are copied.
func NewRegistration(displayName string, endpoint Endpoint, headers map[string]string, protocol Protocol) (Registration, error) {
	r := Registration{
		ID:          NewRegistrationID(),
		Endpoint:    endpoint,
		Headers:     copyHeaders(headers),
		Protocol:    protocol,
		State:       StatePaused,
		Permissions: map[string]Permission{},
		Overrides:   map[string]DescriptionOverride{},
	}
	name, err := ParseDisplayName(displayName)
	if err != nil {
		return Registration{}, err
	}
	r.DisplayName = name
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	return r, nil
}

// Validate checks every rule of a registration, in upstream's order: id,
// endpoint, display name, protocol, state, then permissions and overrides
// by native name (in byte order, so the first error reported does not
// depend on map iteration). Storage runs it on every file it loads.
func (r Registration) Validate() error {
	if _, err := ParseRegistrationID(string(r.ID)); err != nil {
		return err
	}
	if r.Stdio != nil {
		if err := r.validateStdio(); err != nil {
			return err
		}
	} else if _, err := ParseEndpoint(r.Endpoint.String()); err != nil {
		return err
	}
	if _, err := ParseDisplayName(r.DisplayName); err != nil {
		return err
	}
	if _, err := ParseProtocol(string(r.Protocol)); err != nil {
		return err
	}
	if _, err := ParseState(string(r.State)); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(r.Permissions)) {
		if err := ValidateNativeName(name); err != nil {
			return err
		}
		switch p := r.Permissions[name]; p {
		case PermissionAsk, PermissionAllow:
		case PermissionOff:
			return invalid("mcp.permission_off_not_persisted", "`%s` must be omitted instead of storing Off", name)
		default:
			if _, err := ParsePermission(string(p)); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Overrides)) {
		if err := ValidateNativeName(name); err != nil {
			return err
		}
		if err := r.Overrides[name].Validate(name); err != nil {
			return err
		}
	}
	return nil
}

// SameConnection reports whether r and o reach the same server the same
// way: same endpoint, headers and protocol preference, and for a stdio
// server the same command, arguments, environment and working directory.
// A catalog discovered over one connection does not describe another.
func (r Registration) SameConnection(o Registration) bool {
	if (r.Stdio == nil) != (o.Stdio == nil) || r.Stdio != nil && !r.Stdio.Equal(*o.Stdio) {
		return false
	}
	return r.Endpoint == o.Endpoint && maps.Equal(r.Headers, o.Headers) && r.Protocol == o.Protocol
}

// Update replaces the display name and connection of r, keeping its id,
// state, permissions and overrides. It reports whether the connection
// changed (see SameConnection). On error r is unchanged.
func (r *Registration) Update(displayName string, endpoint Endpoint, headers map[string]string, protocol Protocol) (connectionChanged bool, err error) {
	if r.Stdio != nil {
		return false, invalid(CodeStdioConfigReadOnly, "`%s` is a stdio server: %s", r.DisplayName, StdioConfigElsewhere)
	}
	name, err := ParseDisplayName(displayName)
	if err != nil {
		return false, err
	}
	if _, err := ParseEndpoint(endpoint.String()); err != nil {
		return false, err
	}
	if _, err := ParseProtocol(string(protocol)); err != nil {
		return false, err
	}
	next := Registration{Endpoint: endpoint, Headers: copyHeaders(headers), Protocol: protocol}
	changed := !r.SameConnection(next)
	r.DisplayName, r.Endpoint, r.Headers, r.Protocol = name, next.Endpoint, next.Headers, next.Protocol
	return changed, nil
}

// PermissionFor returns the permission of a native tool name: off unless
// an entry says otherwise.
func (r Registration) PermissionFor(nativeName string) Permission {
	if p, ok := r.Permissions[nativeName]; ok {
		return p
	}
	return PermissionOff
}

// SetPermission sets the permission of a native tool name. Off deletes the
// entry, so a stored permission is always ask or allow. The tool need not
// be in any catalog.
func (r *Registration) SetPermission(nativeName string, p Permission) error {
	if err := ValidateNativeName(nativeName); err != nil {
		return err
	}
	if _, err := ParsePermission(string(p)); err != nil {
		return err
	}
	if p == PermissionOff {
		delete(r.Permissions, nativeName)
		return nil
	}
	if r.Permissions == nil {
		r.Permissions = map[string]Permission{}
	}
	r.Permissions[nativeName] = p
	return nil
}

// SetOverride sets (a copy of) the description override of a native tool
// name, or deletes it when o is nil. An override that overrides nothing is
// rejected.
func (r *Registration) SetOverride(nativeName string, o *DescriptionOverride) error {
	if err := ValidateNativeName(nativeName); err != nil {
		return err
	}
	if o == nil {
		delete(r.Overrides, nativeName)
		return nil
	}
	if err := o.Validate(nativeName); err != nil {
		return err
	}
	if r.Overrides == nil {
		r.Overrides = map[string]DescriptionOverride{}
	}
	r.Overrides[nativeName] = o.clone()
	return nil
}

// Clone returns a deep copy of r: changing the copy's maps or override
// strings does not change r. Nil maps stay nil.
func (r Registration) Clone() Registration {
	c := r
	if r.Stdio != nil {
		s := r.Stdio.Clone()
		c.Stdio = &s
	}
	c.Headers = maps.Clone(r.Headers)
	c.Permissions = maps.Clone(r.Permissions)
	if r.Overrides != nil {
		c.Overrides = make(map[string]DescriptionOverride, len(r.Overrides))
		for name, o := range r.Overrides {
			c.Overrides[name] = o.clone()
		}
	}
	return c
}

// copyHeaders copies h, turning nil into an empty map.
func copyHeaders(h map[string]string) map[string]string {
	c := make(map[string]string, len(h))
	maps.Copy(c, h)
	return c
}

// quoteList formats values as "`a`, `b`, `c`".
func quoteList[S ~string](values []S) string {
	var b strings.Builder
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + string(v) + "`")
	}
	return b.String()
}
