package domain

import (
	"strings"

	"github.com/google/uuid"
)

// RegistrationID identifies a registration: a UUID in canonical form
// (lowercase, hyphenated). It is also the file name of the registration and
// its catalog, so only the canonical spelling is accepted: two spellings of
// one UUID would name two files.
type RegistrationID string

// NewRegistrationID returns a new random (version 4) id.
func NewRegistrationID() RegistrationID {
	return RegistrationID(uuid.New().String())
}

// ParseRegistrationID accepts exactly the canonical form. Other spellings
// that are still UUIDs (uppercase, braces, urn:uuid:, no hyphens) are
// mcp.registration_id_noncanonical; everything else is
// mcp.registration_id_invalid.
func ParseRegistrationID(raw string) (RegistrationID, error) {
	id, err := uuid.Parse(raw)
	// google/uuid accepts a case-insensitive "urn:uuid:" prefix; Rust's uuid
	// crate (upstream) only the lowercase one.
	if err != nil || (len(raw) == 45 && !strings.HasPrefix(raw, "urn:uuid:")) {
		return "", invalid("mcp.registration_id_invalid", "`%s` is not a canonical UUID", raw)
	}
	if id.String() != raw {
		return "", invalid("mcp.registration_id_noncanonical", "`%s` must use lowercase hyphenated UUID form", raw)
	}
	return RegistrationID(raw), nil
}

// String returns the id itself.
func (id RegistrationID) String() string { return string(id) }

// ProviderID returns the tool provider id of the registration, "mcp/<id>":
// the part of a ToolID before the first ':'.
func (id RegistrationID) ProviderID() string { return providerPrefix + string(id) }

const providerPrefix = "mcp/"

// maxNativeNameBytes bounds a native tool name, in bytes of UTF-8.
const maxNativeNameBytes = 256

// ValidateNativeName checks a tool's native name: the name the MCP server
// gave it. Native names are opaque and used verbatim (never trimmed); they
// may contain any character, ':' included, and are only bounded in length.
func ValidateNativeName(name string) error {
	if name == "" {
		return invalid("mcp.tool_name_empty", "native tool name cannot be empty")
	}
	if len(name) > maxNativeNameBytes {
		return invalid("mcp.tool_name_too_long", "native tool name must be at most %d bytes", maxNativeNameBytes)
	}
	return nil
}

// ToolID names one tool of one registration across the platform (Agent
// profiles, the Legacy generation): "mcp/<registration-id>:<nativeName>".
// A registration id contains no ':', so the first ':' separates the two
// parts and the native name may contain more.
type ToolID string

// NewToolID returns the id of the tool nativeName of registration id. The
// registration id is trusted to be canonical (it comes from
// ParseRegistrationID or NewRegistrationID); the native name is validated.
func NewToolID(id RegistrationID, nativeName string) (ToolID, error) {
	if err := ValidateNativeName(nativeName); err != nil {
		return "", err
	}
	return ToolID(id.ProviderID() + ":" + nativeName), nil
}

// ParseToolID splits a tool id into its registration id and native name,
// checking in upstream's order: the generic tool id shape (tool.* codes),
// then the MCP provider (mcp.provider_id_invalid), the registration id, and
// the native name.
func ParseToolID(raw string) (RegistrationID, string, error) {
	provider, nativeName, ok := strings.Cut(raw, ":")
	if !ok {
		return "", "", invalid("tool.id_invalid", "tool id `%s` must contain a provider and native name", raw)
	}
	if provider == "" {
		return "", "", invalid("tool.provider_id_empty", "tool provider id cannot be empty")
	}
	if nativeName == "" {
		return "", "", invalid("tool.native_name_empty", "tool native name cannot be empty")
	}
	rawID, ok := strings.CutPrefix(provider, providerPrefix)
	if !ok {
		return "", "", invalid("mcp.provider_id_invalid", "`%s` is not an MCP provider id", provider)
	}
	id, err := ParseRegistrationID(rawID)
	if err != nil {
		return "", "", err
	}
	if err := ValidateNativeName(nativeName); err != nil {
		return "", "", err
	}
	return id, nativeName, nil
}

// String returns the id itself.
func (t ToolID) String() string { return string(t) }
