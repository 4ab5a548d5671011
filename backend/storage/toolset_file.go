package storage

import (
	"path/filepath"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// The tool set file, strict v1: ttmcp's own kind (SPEC §10 "Tool sets";
// TauriTavern keeps its Profiles elsewhere), one file per set:
//
//	<data-root>/_tauritavern/mcp/tool-sets/<uuid>.json
//
// Read as strictly as the registration files: an unknown or repeated
// member, a value of the wrong type, trailing data or a broken rule
// (domain.ToolSet.Validate) is refused, never repaired, and reported as a
// storage issue named "tool-sets/<file>". A set naming a server or tool
// that no longer exists is still a valid file: the resolver reports that.
const (
	toolSetSchemaVersion = 1
	toolSetKind          = "ttmcp.mcpToolSet"
	// ToolSetsDirName is the folder of the tool set files and the prefix
	// of their storage issues' file names.
	ToolSetsDirName = "tool-sets"
)

// toolSetFile is a tool set file. Every member is written; the overrides
// are left out when there are none.
type toolSetFile struct {
	SchemaVersion         uint32                  `json:"schemaVersion"`
	Kind                  string                  `json:"kind"`
	ID                    string                  `json:"id"`
	Name                  string                  `json:"name"`
	Tools                 []string                `json:"tools"`
	DescriptionOverrides  map[string]overrideFile `json:"descriptionOverrides,omitempty"`
	ResultInlineCharLimit int                     `json:"resultInlineCharLimit"`
	ReaderTool            bool                    `json:"readerTool"`
	// issue 31, each left out at its default (all tools, default budget,
	// nothing pinned): a set that never used search is written as before.
	ToolMode             string   `json:"toolMode,omitzero"`
	SearchMaxTools       int      `json:"searchMaxTools,omitzero"`
	SearchContextPercent int      `json:"searchContextPercent,omitzero"`
	PinnedTools          []string `json:"pinnedTools,omitzero"`
}

var requiredToolSetFields = []string{"/schemaVersion", "/kind", "/id", "/name", "/tools", "/resultInlineCharLimit", "/readerTool"}

// Codes of the tool set file's own checks.
const (
	CodeToolSetSchemaUnsupported = "mcp.tool_set_schema_unsupported"
	CodeToolSetKindInvalid       = "mcp.tool_set_kind_invalid"
	CodeToolSetIDMismatch        = "mcp.tool_set_id_mismatch"
	CodeToolSetTooLarge          = "mcp.tool_set_too_large"
)

func (s *Store) toolSetsDir() string { return filepath.Join(s.root, ToolSetsDirName) }

// ToolSetPath returns the path of the file of tool set id.
func (s *Store) ToolSetPath(id domain.ToolSetID) string {
	return filepath.Join(s.toolSetsDir(), string(id)+".json")
}

func (s *Store) toolSetKind() fileKind[domain.ToolSet, domain.ToolSetID] {
	return fileKind[domain.ToolSet, domain.ToolSetID]{root: s.data, dir: s.toolSetsDir(), what: "tool set",
		utf8Code: "mcp.tool_set_filename_utf8", parseID: domain.ParseToolSetID, decode: decodeToolSet,
		issue: func(name, message string) jsapi.StorageIssue {
			return jsapi.StorageIssue{FileName: ToolSetsDirName + "/" + strings.ToValidUTF8(name, "\uFFFD"), Message: message}
		}}
}

// ScanToolSets loads every tool set file, in file name order: a file that
// cannot be loaded is a storage issue and the others still load.
func (s *Store) ScanToolSets() ([]domain.ToolSet, []jsapi.StorageIssue, error) {
	return scanFiles(s.ListToolSetFiles, s.toolSetKind().loadFile)
}

// ListToolSetFiles lists the tool set folder's "*.json" entries with a
// stamp of each, without reading them.
func (s *Store) ListToolSetFiles() ([]domain.StoredFile, error) {
	return s.data.listJSONFiles(s.toolSetsDir())
}

// LoadToolSet returns tool set id, or false when it has no file. A file
// that exists but cannot be loaded is an error, never "absent".
func (s *Store) LoadToolSet(id domain.ToolSetID) (domain.ToolSet, bool, error) {
	if _, err := domain.ParseToolSetID(string(id)); err != nil {
		return domain.ToolSet{}, false, err
	}
	return s.toolSetKind().load(s.ToolSetPath(id), id)
}

// SaveToolSet writes ts to its file atomically. What would not be read
// back (an invalid set, a file over MaxRegistrationFileBytes) is refused
// before anything is written.
func (s *Store) SaveToolSet(ts domain.ToolSet) error {
	if err := ts.Validate(); err != nil {
		return err
	}
	path := s.ToolSetPath(ts.ID)
	data, err := encodeToolSet(ts)
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	if len(data) > MaxRegistrationFileBytes {
		return domain.Errorf(domain.KindBadRequest, CodeToolSetTooLarge,
			"the tool set would be %d bytes; its file is limited to %d bytes (select whole servers, or shorten its description overrides)", len(data), MaxRegistrationFileBytes)
	}
	return s.data.writeFileAtomic(path, data)
}

// DeleteToolSet removes the file of tool set id; an absent file is not an
// error.
func (s *Store) DeleteToolSet(id domain.ToolSetID) error {
	if _, err := domain.ParseToolSetID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.ToolSetPath(id))
}

// decodeToolSet turns the bytes of the file at path, named after fileID,
// into a tool set: JSON, schema version, kind, id, id against the file
// name, then the set's own rules.
func decodeToolSet(data []byte, path string, fileID domain.ToolSetID) (domain.ToolSet, error) {
	var f toolSetFile
	if err := unmarshalStrict(data, &f, requiredToolSetFields); err != nil {
		return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	if f.SchemaVersion != toolSetSchemaVersion {
		return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, CodeToolSetSchemaUnsupported, "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != toolSetKind {
		return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, CodeToolSetKindInvalid, "kind `%s` in %s", f.Kind, path)
	}
	id, err := domain.ParseToolSetID(f.ID)
	if err != nil {
		return domain.ToolSet{}, err
	}
	if id != fileID {
		return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, CodeToolSetIDMismatch, "id `%s` does not match filename `%s` in %s", id, fileID, path)
	}
	tools, err := domain.ParseToolSelection(f.Tools)
	if err != nil {
		return domain.ToolSet{}, err
	}
	ts := domain.ToolSet{
		ID: id, Name: f.Name, Tools: tools,
		Overrides:             make(map[domain.ToolID]domain.DescriptionOverride, len(f.DescriptionOverrides)),
		ResultInlineCharLimit: f.ResultInlineCharLimit,
		ReaderTool:            f.ReaderTool,
	}
	if f.ToolMode == "all" { // only "" means all in a file: one spelling per meaning
		return domain.ToolSet{}, domain.Errorf(domain.KindBadRequest, "mcp.tool_set_mode_invalid", "toolMode `all` in %s is written as no toolMode", path)
	}
	ts.Search = domain.ToolSearchSettings{Mode: domain.ToolMode(f.ToolMode), MaxTools: f.SearchMaxTools, ContextPercent: f.SearchContextPercent}
	for _, id := range f.PinnedTools {
		ts.Search.Pinned = append(ts.Search.Pinned, domain.ToolID(id))
	}
	for k, o := range f.DescriptionOverrides {
		ts.Overrides[domain.ToolID(k)] = domain.DescriptionOverride{Description: o.Description, Properties: orEmpty(o.Properties)}
	}
	if err := ts.Validate(); err != nil {
		return domain.ToolSet{}, err
	}
	return ts, nil
}

func encodeToolSet(ts domain.ToolSet) ([]byte, error) {
	f := toolSetFile{
		SchemaVersion:         toolSetSchemaVersion,
		Kind:                  toolSetKind,
		ID:                    string(ts.ID),
		Name:                  ts.Name,
		Tools:                 make([]string, len(ts.Tools)),
		ResultInlineCharLimit: ts.ResultInlineCharLimit,
		ReaderTool:            ts.ReaderTool,
		ToolMode:              string(ts.Search.Mode),
		SearchMaxTools:        ts.Search.MaxTools,
		SearchContextPercent:  ts.Search.ContextPercent,
	}
	for _, id := range ts.Search.Pinned {
		f.PinnedTools = append(f.PinnedTools, string(id))
	}
	for i, sel := range ts.Tools {
		f.Tools[i] = sel.String()
	}
	if len(ts.Overrides) > 0 {
		f.DescriptionOverrides = make(map[string]overrideFile, len(ts.Overrides))
		for k, o := range ts.Overrides {
			f.DescriptionOverrides[string(k)] = overrideFile{Description: o.Description, Properties: orEmpty(o.Properties)}
		}
	}
	return marshalPretty(f)
}
