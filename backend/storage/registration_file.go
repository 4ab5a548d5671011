package storage

import (
	"errors"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The registration file, strict v1 (reference §2.1): upstream's serde
// struct StoredMcpRegistrationV1, camelCase, deny_unknown_fields.
const (
	registrationSchemaVersion = 1
	registrationKind          = "tauritavern.mcpServerRegistration"
)

// registrationFile is a registration file, StoredMcpRegistrationV1:
// members in upstream's declaration order, empty maps left out but
// protocolVersion always written.
type registrationFile struct {
	SchemaVersion            uint32                       `json:"schemaVersion"`
	Kind                     string                       `json:"kind"`
	ID                       string                       `json:"id"`
	DisplayName              string                       `json:"displayName"`
	Endpoint                 string                       `json:"endpoint"`
	Headers                  map[string]string            `json:"headers,omitempty"`
	ProtocolVersion          domain.Protocol              `json:"protocolVersion"`
	State                    domain.State                 `json:"state"`
	ToolPermissions          map[string]domain.Permission `json:"toolPermissions,omitempty"`
	ToolDescriptionOverrides map[string]overrideFile      `json:"toolDescriptionOverrides,omitempty"`
}

// overrideFile is a ToolDescriptionOverride: description is an Option
// (absent or null when not set), properties are always written.
type overrideFile struct {
	Description *string           `json:"description,omitzero"`
	Properties  map[string]string `json:"properties"`
}

// requiredRegistrationFields are the members without a serde default.
var requiredRegistrationFields = []string{"/schemaVersion", "/kind", "/id", "/displayName", "/endpoint", "/state"}

// registrationEnums check the enum members as serde does, while decoding.
var registrationEnums = []*json.Unmarshalers{
	variant(domain.ParseProtocol), variant(domain.ParseState), variant(domain.ParsePermission),
}

// decodeRegistration turns the bytes of the file at path, named after
// fileID, into a registration, with upstream's checks in upstream's order:
// JSON (enums included), schema version, kind, id, id against the file
// name, endpoint, then the registration's own rules (display name,
// permissions, overrides).
func decodeRegistration(data []byte, path string, fileID domain.RegistrationID) (domain.Registration, error) {
	f := registrationFile{ProtocolVersion: domain.ProtocolAuto}
	if err := unmarshalStrict(data, &f, requiredRegistrationFields, registrationEnums...); err != nil {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	if f.SchemaVersion != registrationSchemaVersion {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, "mcp.registration_schema_unsupported", "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != registrationKind {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, "mcp.registration_kind_invalid", "kind `%s` in %s", f.Kind, path)
	}
	id, err := domain.ParseRegistrationID(f.ID)
	if err != nil {
		return domain.Registration{}, err
	}
	if id != fileID {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, "mcp.registration_id_mismatch", "id `%s` does not match filename `%s` in %s", id, fileID, path)
	}
	endpoint, err := domain.ParseEndpoint(f.Endpoint)
	if err != nil {
		return domain.Registration{}, err
	}
	name, err := domain.ParseDisplayName(f.DisplayName)
	if err != nil {
		return domain.Registration{}, err
	}
	// Loaded registrations always have their maps.
	reg := domain.Registration{
		ID:          id,
		DisplayName: name,
		Endpoint:    endpoint,
		Headers:     orEmpty(f.Headers),
		Protocol:    f.ProtocolVersion,
		State:       f.State,
		Permissions: orEmpty(f.ToolPermissions),
		Overrides:   make(map[string]domain.DescriptionOverride, len(f.ToolDescriptionOverrides)),
	}
	for k, o := range f.ToolDescriptionOverrides {
		reg.Overrides[k] = domain.DescriptionOverride{Description: o.Description, Properties: orEmpty(o.Properties)}
	}
	if err := reg.Validate(); err != nil {
		return domain.Registration{}, err
	}
	return reg, nil
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// encodeRegistration returns the file of r, byte for byte as upstream
// writes it.
func encodeRegistration(r domain.Registration) ([]byte, error) {
	if r.Stdio != nil {
		// Upstream could not read it: stdio servers have their own files.
		return nil, errors.New("a stdio server is kept in its own file kind, not in a registration file")
	}
	f := registrationFile{
		SchemaVersion:   registrationSchemaVersion,
		Kind:            registrationKind,
		ID:              string(r.ID),
		DisplayName:     r.DisplayName,
		Endpoint:        r.Endpoint.String(),
		Headers:         r.Headers,
		ProtocolVersion: r.Protocol,
		State:           r.State,
		ToolPermissions: r.Permissions,
	}
	f.ToolDescriptionOverrides = overridesFile(r.Overrides)
	return marshalPretty(f)
}

// overridesFile is the file form of a registration's description
// overrides: nil (the member left out) when there are none.
func overridesFile(overrides map[string]domain.DescriptionOverride) map[string]overrideFile {
	if len(overrides) == 0 {
		return nil
	}
	out := make(map[string]overrideFile, len(overrides))
	for k, o := range overrides {
		out[k] = overrideFile{Description: o.Description, Properties: o.Properties}
	}
	return out
}
