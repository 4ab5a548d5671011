package storage

import (
	"github.com/ttmcp/ttmcp/backend/domain"
)

// The stdio server file, strict v1: ttmcp's own kind (TauriTavern has no
// stdio servers), kept apart from the registration files so those stay
// byte-compatible with upstream:
//
//	<data-root>/_tauritavern/mcp/stdio/<uuid>.json
//
// It holds what a registration file holds, with the command instead of an
// endpoint and headers, and is read as strictly: an unknown or repeated
// member, a value of the wrong type, trailing data or a broken rule is
// refused, never repaired.
const (
	stdioSchemaVersion = 1
	stdioKind          = "ttmcp.mcpStdioServer"
)

// stdioFile is a stdio server file. args and env are always written (so a
// reader sees at once that there are none); cwd only when set.
type stdioFile struct {
	SchemaVersion            uint32                       `json:"schemaVersion"`
	Kind                     string                       `json:"kind"`
	ID                       string                       `json:"id"`
	DisplayName              string                       `json:"displayName"`
	Command                  string                       `json:"command"`
	Args                     []string                     `json:"args"`
	Env                      map[string]string            `json:"env"`
	Cwd                      string                       `json:"cwd,omitempty"`
	ProtocolVersion          domain.Protocol              `json:"protocolVersion"`
	State                    domain.State                 `json:"state"`
	ToolPermissions          map[string]domain.Permission `json:"toolPermissions,omitempty"`
	ToolDescriptionOverrides map[string]overrideFile      `json:"toolDescriptionOverrides,omitempty"`
}

// requiredStdioFields are the members without a default.
var requiredStdioFields = []string{"/schemaVersion", "/kind", "/id", "/displayName", "/command", "/state"}

// Codes of the stdio file's own checks.
const (
	CodeStdioSchemaUnsupported = "mcp.stdio_schema_unsupported"
	CodeStdioKindInvalid       = "mcp.stdio_kind_invalid"
	CodeStdioIDMismatch        = "mcp.stdio_id_mismatch"
)

// decodeStdio turns the bytes of the stdio file at path, named after
// fileID, into a stdio registration: JSON (enums included), schema
// version, kind, id, id against the file name, then the registration's
// rules (display name, command, permissions, overrides).
func decodeStdio(data []byte, path string, fileID domain.RegistrationID) (domain.Registration, error) {
	f := stdioFile{ProtocolVersion: domain.ProtocolAuto}
	if err := unmarshalStrict(data, &f, requiredStdioFields, registrationEnums...); err != nil {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	if f.SchemaVersion != stdioSchemaVersion {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, CodeStdioSchemaUnsupported, "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != stdioKind {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, CodeStdioKindInvalid, "kind `%s` in %s", f.Kind, path)
	}
	id, err := domain.ParseRegistrationID(f.ID)
	if err != nil {
		return domain.Registration{}, err
	}
	if id != fileID {
		return domain.Registration{}, domain.Errorf(domain.KindBadRequest, CodeStdioIDMismatch, "id `%s` does not match filename `%s` in %s", id, fileID, path)
	}
	name, err := domain.ParseDisplayName(f.DisplayName)
	if err != nil {
		return domain.Registration{}, err
	}
	s := domain.Stdio{Command: f.Command, Args: f.Args, Env: f.Env, Cwd: f.Cwd}.Clone()
	reg := domain.Registration{
		ID:          id,
		DisplayName: name,
		Endpoint:    domain.StdioEndpoint(s),
		Headers:     map[string]string{},
		Protocol:    f.ProtocolVersion,
		State:       f.State,
		Permissions: orEmpty(f.ToolPermissions),
		Overrides:   make(map[string]domain.DescriptionOverride, len(f.ToolDescriptionOverrides)),
		Stdio:       &s,
	}
	for k, o := range f.ToolDescriptionOverrides {
		reg.Overrides[k] = domain.DescriptionOverride{Description: o.Description, Properties: orEmpty(o.Properties)}
	}
	if err := reg.Validate(); err != nil {
		return domain.Registration{}, err
	}
	return reg, nil
}

// encodeStdio returns the file of the stdio registration r.
func encodeStdio(r domain.Registration) ([]byte, error) {
	s := r.Stdio.Clone()
	f := stdioFile{
		SchemaVersion:   stdioSchemaVersion,
		Kind:            stdioKind,
		ID:              string(r.ID),
		DisplayName:     r.DisplayName,
		Command:         s.Command,
		Args:            s.Args,
		Env:             s.Env,
		Cwd:             s.Cwd,
		ProtocolVersion: r.Protocol,
		State:           r.State,
		ToolPermissions: r.Permissions,
	}
	f.ToolDescriptionOverrides = overridesFile(r.Overrides)
	return marshalPretty(f)
}
