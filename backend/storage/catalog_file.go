package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The catalog file, strict v1 (reference §2.2): upstream's catalog
// snapshot, camelCase, deny_unknown_fields at every level.
const (
	catalogSchemaVersion = 1
	catalogKind          = "tauritavern.mcpCatalogSnapshot"
)

// catalogFile is a catalog file: members in upstream's declaration order,
// Options written as null, the lists always written.
type catalogFile struct {
	SchemaVersion  uint32      `json:"schemaVersion"`
	Kind           string      `json:"kind"`
	RegistrationID string      `json:"registrationId"`
	Endpoint       string      `json:"endpoint"`
	Catalog        catalogBody `json:"catalog"`
}

type catalogBody struct {
	ProtocolVersion string           `json:"protocolVersion"`
	ServerName      *string          `json:"serverName"`
	ServerVersion   *string          `json:"serverVersion"`
	Tools           []toolFile       `json:"tools"`
	Diagnostics     []diagnosticFile `json:"diagnostics"`
}

type toolFile struct {
	NativeName   string      `json:"nativeName"`
	Title        *string     `json:"title"`
	Description  *string     `json:"description"`
	InputSchema  jsonObject  `json:"inputSchema"`
	OutputSchema *jsonObject `json:"outputSchema"`
	Annotations  jsonObject  `json:"annotations"`
	// UI is ttmcp's addition (issue 30): the tool's _meta.ui. Left out
	// for a tool without one, so the catalog of a server without Apps is
	// exactly upstream's file (docs/DECISIONS.md "MCP Apps").
	UI *toolUIFile `json:"ui,omitzero"`
}

// toolUIFile is a tool's MCP Apps metadata: its interface's ui:// URI
// and who may see it (absent: the spec's default, model and App).
type toolUIFile struct {
	ResourceURI *string   `json:"resourceUri,omitzero"`
	Visibility  *[]string `json:"visibility,omitzero"`
}

type diagnosticFile struct {
	Code       string  `json:"code"`
	NativeName *string `json:"nativeName"`
	Message    string  `json:"message"`
}

// requiredCatalogFields are the members without a serde default (Options
// may be left out).
var requiredCatalogFields = []string{
	"/schemaVersion", "/kind", "/registrationId", "/endpoint", "/catalog",
	"/catalog/protocolVersion", "/catalog/tools", "/catalog/diagnostics",
	"/catalog/tools/*/nativeName", "/catalog/tools/*/inputSchema", "/catalog/tools/*/annotations",
	"/catalog/diagnostics/*/code", "/catalog/diagnostics/*/message",
}

// LoadCatalog reads catalogs/<id>.json; false when absent. The file is
// bound to the registration: its registrationId must be id and its
// endpoint must equal endpoint.String() exactly, so a catalog discovered
// at an endpoint is never offered for another. A file that exists but
// cannot be loaded is an error, never "absent".
//
// The checks are upstream's, in upstream's order: UTF-8, strict JSON (an
// unknown or repeated member at any level of the file, though not inside
// the servers' schemas and annotations, which are any JSON objects),
// schema version, kind, registration, endpoint, then the catalog's own
// rules (domain.Catalog.Check: native names, unique ToolIds, input schemas
// that compile). Schemas and annotations come back compact, with object
// members sorted by name at every level and numbers as written.
func (s *Store) LoadCatalog(id domain.RegistrationID, endpoint domain.Endpoint) (domain.Catalog, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Catalog{}, false, err
	}
	path := s.CatalogPath(id)
	data, found, err := s.data.readText(path, MaxCatalogFileBytes, "catalog")
	if !found || err != nil {
		return domain.Catalog{}, false, err
	}
	c, err := decodeCatalog(data, path, id, endpoint)
	if err != nil {
		return domain.Catalog{}, false, err
	}
	return c, true, nil
}

// SaveCatalog writes catalogs/<id>.json atomically (see writeFileAtomic),
// bound to the registration id at endpoint. The file holds only what the
// server described and the discovery diagnostics: permissions, description
// overrides and staleTools live elsewhere, and the caller strips the
// mcp.catalog_persistence_failed diagnostic (about this very write) before
// saving. A catalog that LoadCatalog would refuse (above
// MaxCatalogFileBytes included) is refused before anything is written. A tool without annotations is written with {}.
func (s *Store) SaveCatalog(id domain.RegistrationID, endpoint domain.Endpoint, c domain.Catalog) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	if endpoint.IsZero() {
		return domain.Errorf(domain.KindInternal, "", "catalog of registration `%s` has no endpoint", id)
	}
	if err := c.Check(id); err != nil {
		return err
	}
	path := s.CatalogPath(id)
	data, err := encodeCatalog(id, endpoint, c)
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	if len(data) > MaxCatalogFileBytes {
		return domain.Errorf(domain.KindBadRequest, "", "the catalog file would be %d bytes; catalog files are limited to %d bytes", len(data), MaxCatalogFileBytes)
	}
	return s.data.writeFileAtomic(path, data)
}

// decodeCatalog turns the bytes of the catalog file at path into the
// catalog of registration id at endpoint.
func decodeCatalog(data []byte, path string, id domain.RegistrationID, endpoint domain.Endpoint) (domain.Catalog, error) {
	var f catalogFile
	if err := unmarshalStrict(data, &f, requiredCatalogFields); err != nil {
		return domain.Catalog{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	if f.SchemaVersion != catalogSchemaVersion {
		return domain.Catalog{}, domain.Errorf(domain.KindBadRequest, "mcp.catalog_schema_unsupported", "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != catalogKind {
		return domain.Catalog{}, domain.Errorf(domain.KindBadRequest, "mcp.catalog_kind_invalid", "kind `%s` in %s", f.Kind, path)
	}
	if f.RegistrationID != string(id) {
		return domain.Catalog{}, domain.Errorf(domain.KindBadRequest, "mcp.catalog_registration_mismatch", "id `%s` does not match registration `%s` in %s", f.RegistrationID, id, path)
	}
	if f.Endpoint != endpoint.String() {
		return domain.Catalog{}, domain.Errorf(domain.KindBadRequest, "mcp.catalog_endpoint_mismatch", "endpoint `%s` does not match registration endpoint `%s` in %s", f.Endpoint, endpoint, path)
	}
	b := f.Catalog
	c := domain.Catalog{
		ProtocolVersion: b.ProtocolVersion,
		ServerName:      b.ServerName,
		ServerVersion:   b.ServerVersion,
		Tools:           make([]domain.Tool, 0, len(b.Tools)),
		Diagnostics:     make([]domain.Diagnostic, 0, len(b.Diagnostics)),
	}
	for _, t := range b.Tools {
		tool := domain.Tool{
			NativeName:  t.NativeName,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: []byte(t.InputSchema),
			Annotations: []byte(t.Annotations),
		}
		if t.OutputSchema != nil {
			tool.OutputSchema = []byte(*t.OutputSchema)
		}
		if t.UI != nil {
			tool.UI = &domain.ToolUI{}
			if t.UI.ResourceURI != nil {
				tool.UI.ResourceURI = *t.UI.ResourceURI
			}
			if t.UI.Visibility != nil {
				tool.UI.Visibility = *t.UI.Visibility
			}
		}
		c.Tools = append(c.Tools, tool)
	}
	for _, d := range b.Diagnostics {
		c.Diagnostics = append(c.Diagnostics, domain.Diagnostic{Code: d.Code, NativeName: d.NativeName, Message: d.Message})
	}
	if err := c.Check(id); err != nil {
		return domain.Catalog{}, err
	}
	return c, nil
}

// encodeCatalog returns the catalog file of c, as upstream writes it.
func encodeCatalog(id domain.RegistrationID, endpoint domain.Endpoint, c domain.Catalog) ([]byte, error) {
	f := catalogFile{
		SchemaVersion:  catalogSchemaVersion,
		Kind:           catalogKind,
		RegistrationID: string(id),
		Endpoint:       endpoint.String(),
		Catalog: catalogBody{
			ProtocolVersion: c.ProtocolVersion,
			ServerName:      c.ServerName,
			ServerVersion:   c.ServerVersion,
			Tools:           make([]toolFile, 0, len(c.Tools)),
			Diagnostics:     make([]diagnosticFile, 0, len(c.Diagnostics)),
		},
	}
	for _, t := range c.Tools {
		tf := toolFile{
			NativeName:  t.NativeName,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: jsonObject(t.InputSchema),
			Annotations: jsonObject(t.Annotations),
		}
		if len(tf.Annotations) == 0 {
			tf.Annotations = jsonObject("{}")
		}
		if t.OutputSchema != nil {
			o := jsonObject(t.OutputSchema)
			tf.OutputSchema = &o
		}
		if ui := t.UI; ui != nil {
			tf.UI = &toolUIFile{}
			if ui.ResourceURI != "" {
				tf.UI.ResourceURI = &ui.ResourceURI
			}
			if ui.Visibility != nil {
				v := ui.Visibility
				tf.UI.Visibility = &v
			}
		}
		f.Catalog.Tools = append(f.Catalog.Tools, tf)
	}
	for _, d := range c.Diagnostics {
		f.Catalog.Diagnostics = append(f.Catalog.Diagnostics, diagnosticFile{Code: d.Code, NativeName: d.NativeName, Message: d.Message})
	}
	return marshalPretty(f)
}

// jsonObject is a JSON object a server sent (a schema, annotations): any
// JSON, except that it must be an object. Upstream holds it as a
// serde_json Value, whose objects are BTreeMaps, so it is written with the
// members of every object sorted by name (bytes of UTF-8), indented with
// the rest of the file. Read back, it is compact and sorted the same way.
// Numbers keep their text (9007199254740993 stays exact); strings are
// re-escaped as everywhere else in the file. A repeated name is an error,
// as it is in the rest of the file.
type jsonObject []byte

// MarshalJSONTo writes o sorted.
func (o jsonObject) MarshalJSONTo(enc *jsontext.Encoder) error {
	dec := jsontext.NewDecoder(bytes.NewReader(o))
	if k := dec.PeekKind(); k != 0 { // 0: a syntax error, which reading reports
		if err := requireObject(k); err != nil {
			return err
		}
	}
	v, err := readSorted(dec)
	if err == nil {
		_, err = dec.ReadToken()
		if err == io.EOF {
			return v.write(enc)
		}
		if err == nil {
			err = errors.New("data after the object")
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("invalid JSON: %s", describe(err))
}

// UnmarshalJSONFrom reads an object into o, compact and sorted.
func (o *jsonObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k := dec.PeekKind(); k != 0 { // 0: a syntax error, which reading reports
		if err := requireObject(k); err != nil {
			return err
		}
	}
	v, err := readSorted(dec)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false))
	if err != nil {
		return err
	}
	*o = b
	return nil
}

func requireObject(k jsontext.Kind) error {
	if k == '{' {
		return nil
	}
	names := map[jsontext.Kind]string{'n': "null", 'f': "boolean", 't': "boolean", '"': "string", '0': "number", '[': "array"}
	return reasonError(fmt.Sprintf("invalid type: %s, expected a JSON object", names[k]))
}

// jsonValue is a parsed JSON value whose objects have their members sorted.
type jsonValue struct {
	token   jsontext.Token // a scalar, or BeginObject or BeginArray
	members []jsonMember   // of an object, sorted by name
	items   []jsonValue    // of an array
}

type jsonMember struct {
	name  string
	value jsonValue
}

// readSorted reads the next value of dec.
func readSorted(dec *jsontext.Decoder) (jsonValue, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return jsonValue{}, err
	}
	switch tok.Kind() {
	case '{':
		v := jsonValue{token: jsontext.BeginObject, members: []jsonMember{}}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return jsonValue{}, err
			}
			m := jsonMember{name: name.String()}
			if m.value, err = readSorted(dec); err != nil {
				return jsonValue{}, err
			}
			v.members = append(v.members, m)
		}
		slices.SortFunc(v.members, func(a, b jsonMember) int { return strings.Compare(a.name, b.name) })
		_, err = dec.ReadToken()
		return v, err
	case '[':
		v := jsonValue{token: jsontext.BeginArray, items: []jsonValue{}}
		for dec.PeekKind() != ']' {
			item, err := readSorted(dec)
			if err != nil {
				return jsonValue{}, err
			}
			v.items = append(v.items, item)
		}
		_, err = dec.ReadToken()
		return v, err
	default:
		// A raw token: a number is written back verbatim, a string in
		// canonical form (jsontext's, which is serde_json's).
		return jsonValue{token: tok.Clone()}, nil
	}
}

// MarshalJSONTo writes v to enc.
func (v jsonValue) MarshalJSONTo(enc *jsontext.Encoder) error { return v.write(enc) }

func (v jsonValue) write(enc *jsontext.Encoder) error {
	switch v.token.Kind() {
	case '{':
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, m := range v.members {
			if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
				return err
			}
			if err := m.value.write(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	case '[':
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, item := range v.items {
			if err := item.write(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	default:
		return enc.WriteToken(v.token)
	}
}
