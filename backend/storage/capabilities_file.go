package storage

import (
	"path/filepath"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The capability allowlist file, strict v1: ttmcp's own kind (SPEC §10
// "Resources and prompts"; seed 001 §7's per-server capability
// allowlist), one file per registration that the user changed:
//
//	<data-root>/_tauritavern/mcp/capabilities/<uuid>.json
//
// TauriTavern's registration and catalog files are never touched: they
// stay byte-compatible with upstream. A registration without a file has
// the default (domain.DefaultAllowlist). Read as strictly as the
// registration files: an unknown or repeated member, a value of the wrong
// type, trailing data, an id that is not the file's name is refused,
// never repaired; the service then refuses resources and prompts of that
// server until the user sets them again (which writes the file anew).
const (
	capabilitiesSchemaVersion = 1
	capabilitiesKind          = "ttmcp.mcpServerCapabilities"
	// CapabilitiesDirName is the folder of the allowlist files.
	CapabilitiesDirName = "capabilities"
)

// capabilitiesFile is an allowlist file. Every member is written.
type capabilitiesFile struct {
	SchemaVersion  uint32 `json:"schemaVersion"`
	Kind           string `json:"kind"`
	RegistrationID string `json:"registrationId"`
	Resources      bool   `json:"resources"`
	Prompts        bool   `json:"prompts"`
}

var requiredCapabilitiesFields = []string{"/schemaVersion", "/kind", "/registrationId", "/resources", "/prompts"}

// Codes of the allowlist file's own checks.
const (
	CodeCapabilitiesSchemaUnsupported = "mcp.capabilities_schema_unsupported"
	CodeCapabilitiesKindInvalid       = "mcp.capabilities_kind_invalid"
	CodeCapabilitiesIDMismatch        = "mcp.capabilities_id_mismatch"
)

func (s *Store) capabilitiesDir() string { return filepath.Join(s.root, CapabilitiesDirName) }

// CapabilitiesPath returns the path of the allowlist file of registration id.
func (s *Store) CapabilitiesPath(id domain.RegistrationID) string {
	return filepath.Join(s.capabilitiesDir(), string(id)+".json")
}

func (s *Store) capabilitiesKind() fileKind[domain.Allowlist, domain.RegistrationID] {
	return fileKind[domain.Allowlist, domain.RegistrationID]{root: s.data, dir: s.capabilitiesDir(), what: "capability allowlist",
		utf8Code: "mcp.capabilities_filename_utf8", parseID: domain.ParseRegistrationID, decode: decodeCapabilities,
		issue: func(name, message string) jsapi.StorageIssue {
			return jsapi.StorageIssue{FileName: CapabilitiesDirName + "/" + strings.ToValidUTF8(name, "\uFFFD"), Message: message}
		}}
}

// LoadCapabilities returns registration id's allowlist, or false when it
// has no file. A file that exists but cannot be loaded is an error, never
// "absent".
func (s *Store) LoadCapabilities(id domain.RegistrationID) (domain.Allowlist, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Allowlist{}, false, err
	}
	return s.capabilitiesKind().load(s.CapabilitiesPath(id), id)
}

// SaveCapabilities writes registration id's allowlist atomically.
func (s *Store) SaveCapabilities(id domain.RegistrationID, a domain.Allowlist) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	path := s.CapabilitiesPath(id)
	data, err := marshalPretty(capabilitiesFile{SchemaVersion: capabilitiesSchemaVersion, Kind: capabilitiesKind,
		RegistrationID: string(id), Resources: a.Resources, Prompts: a.Prompts})
	if err != nil {
		return domain.Errorf(domain.KindInternal, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	return s.data.writeFileAtomic(path, data)
}

// DeleteCapabilities removes registration id's allowlist file; an absent
// file is not an error.
func (s *Store) DeleteCapabilities(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.CapabilitiesPath(id))
}

// CapabilitiesFolderStamp returns the stamp of the allowlist folder
// (unknown when it is missing): every atomic write or removal changes it.
func (s *Store) CapabilitiesFolderStamp() domain.FileStamp {
	return s.data.folderStamp(s.capabilitiesDir())
}

// decodeCapabilities turns the bytes of the file at path, named after
// fileID, into an allowlist.
func decodeCapabilities(data []byte, path string, fileID domain.RegistrationID) (domain.Allowlist, error) {
	var f capabilitiesFile
	if err := unmarshalStrict(data, &f, requiredCapabilitiesFields); err != nil {
		return domain.Allowlist{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	if f.SchemaVersion != capabilitiesSchemaVersion {
		return domain.Allowlist{}, domain.Errorf(domain.KindBadRequest, CodeCapabilitiesSchemaUnsupported, "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != capabilitiesKind {
		return domain.Allowlist{}, domain.Errorf(domain.KindBadRequest, CodeCapabilitiesKindInvalid, "kind `%s` in %s", f.Kind, path)
	}
	id, err := domain.ParseRegistrationID(f.RegistrationID)
	if err != nil {
		return domain.Allowlist{}, err
	}
	if id != fileID {
		return domain.Allowlist{}, domain.Errorf(domain.KindBadRequest, CodeCapabilitiesIDMismatch, "registrationId `%s` does not match filename `%s` in %s", id, fileID, path)
	}
	return domain.Allowlist{Resources: f.Resources, Prompts: f.Prompts}, nil
}
