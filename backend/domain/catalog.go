package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits of discovery (reference §3.3–§3.4). They bound what a hostile or
// broken server can make the host hold, persist and offer to a model.
const (
	MaxToolBytes    = 256 << 10 // one tool's JSON
	MaxCatalogBytes = 8 << 20   // all tools' JSON together
	MaxCatalogTools = 512
	MaxCatalogPages = 32
)

// Catalog is what discovery learned about a server's tools: the healthy
// tools in native-name order, and a diagnostic for everything left out.
type Catalog struct {
	// ProtocolVersion is the negotiated MCP version.
	ProtocolVersion string
	ServerName      *string
	ServerVersion   *string
	Tools           []Tool
	Diagnostics     []Diagnostic
}

// Tool is one tool as the server described it. Everything in it is
// untrusted server data: annotations in particular never grant anything.
type Tool struct {
	NativeName   string
	Title        *string
	Description  *string
	InputSchema  json.RawMessage // a JSON object that compiles as JSON Schema 2020-12
	OutputSchema json.RawMessage // nil when absent or invalid
	Annotations  json.RawMessage // a JSON object, {} when the server sent none
	// UI is what the tool's _meta says of MCP Apps (apps.go); nil for a
	// tool that says nothing of them, as every tool of a server without
	// Apps (its catalog file is then exactly upstream's).
	UI *ToolUI
}

// Diagnostic reports a tool (or the catalog) that needs attention.
type Diagnostic struct {
	Code       string
	NativeName *string // nil for catalog-wide diagnostics
	Message    string
}

// Diagnostic codes of tool validation (reference §3.5).
const (
	CodeToolDuplicateName       = "mcp.tool_duplicate_name"
	CodeToolNameInvalid         = "mcp.tool_name_invalid"
	CodeToolSizeLimit           = "mcp.tool_size_limit"
	CodeToolInputSchemaInvalid  = "mcp.tool_input_schema_invalid"
	CodeToolOutputSchemaInvalid = "mcp.tool_output_schema_invalid"
	CodeToolAnnotationsInvalid  = "mcp.tool_annotations_invalid"
)

// DescribedTool is a tool as received, with the size in bytes of its JSON
// (which the limits apply to).
type DescribedTool struct {
	Tool
	Size int
	// Meta is the tool's _meta as sent (nil when absent), read by
	// validation into Tool.UI.
	Meta json.RawMessage
}

// ValidateTools isolates bad tools without hiding healthy ones (reference
// §3.4). Tools are grouped by exact name: a name given to several tools
// drops the whole group, since no one of them can be told apart from the
// others by a ToolId. A single tool is dropped when its name is invalid,
// its JSON exceeds MaxToolBytes, its annotations are not an object or its
// input schema does not compile; an output schema that does not compile is
// removed while the tool stays. The result is in native-name order.
//
// Verdicts on schemas come from schemas, which keeps them across calls;
// with nil, each distinct schema is compiled once in this call.
func ValidateTools(described []DescribedTool, schemas *SchemaCache) ([]Tool, []Diagnostic) {
	groups := map[string][]DescribedTool{}
	for _, d := range described {
		groups[d.NativeName] = append(groups[d.NativeName], d)
	}
	var tools []Tool
	var diags []Diagnostic
	if schemas == nil {
		schemas = NewSchemaCache(2 * len(described))
	}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		group := groups[name]
		if len(group) > 1 {
			diags = append(diags, toolDiag(CodeToolDuplicateName, name,
				"Server returned %d tools named `%s`; the whole name group was isolated", len(group), name))
			continue
		}
		t, ds := validateTool(group[0], schemas)
		diags = append(diags, ds...)
		if t != nil {
			tools = append(tools, *t)
		}
	}
	return tools, diags
}

func validateTool(d DescribedTool, schemas *SchemaCache) (*Tool, []Diagnostic) {
	name := d.NativeName
	if err := ValidateNativeName(name); err != nil {
		return nil, []Diagnostic{toolDiag(CodeToolNameInvalid, name, "%s", err)}
	}
	if d.Size > MaxToolBytes {
		return nil, []Diagnostic{toolDiag(CodeToolSizeLimit, name, "Tool `%s` exceeds %d bytes", name, MaxToolBytes)}
	}
	if err := schemas.Compile(d.InputSchema); err != nil {
		return nil, []Diagnostic{toolDiag(CodeToolInputSchemaInvalid, name, "Tool `%s` input schema is invalid: %v", name, err)}
	}
	t := d.Tool
	if len(t.Annotations) == 0 {
		t.Annotations = json.RawMessage("{}")
	} else if !isObject(t.Annotations) {
		return nil, []Diagnostic{toolDiag(CodeToolAnnotationsInvalid, name, "Tool `%s` annotations are not a JSON object", name)}
	}
	var diags []Diagnostic
	ui, uiDiag, isolate := ParseToolMeta(name, d.Meta)
	if isolate {
		return nil, []Diagnostic{*uiDiag}
	}
	if uiDiag != nil {
		diags = append(diags, *uiDiag)
	}
	t.UI = ui
	if t.OutputSchema != nil {
		if err := schemas.Compile(t.OutputSchema); err != nil {
			diags = append(diags, toolDiag(CodeToolOutputSchemaInvalid, name, "Tool `%s` output schema is invalid: %v", name, err))
			t.OutputSchema = nil
		}
	}
	return &t, diags
}

// Check re-validates a catalog loaded from disk for registration id: every
// native name valid, every ToolId unique, every input schema an object
// that compiles. A file that fails is corrupt, not a catalog to trust.
func (c Catalog) Check(id RegistrationID) error {
	seen := map[ToolID]bool{}
	for _, t := range c.Tools {
		tid, err := NewToolID(id, t.NativeName)
		if err != nil {
			return err
		}
		if seen[tid] {
			return invalid("tool.catalog_duplicate_id", "duplicate tool id `%s`", tid)
		}
		seen[tid] = true
		if err := CompileSchema(t.InputSchema); err != nil {
			return invalid(CodeToolInputSchemaInvalid, "Tool `%s` input schema is invalid: %v", t.NativeName, err)
		}
		if err := t.UI.Check(t.NativeName); err != nil {
			return err
		}
	}
	return nil
}

// MaxSchemaDepth is how deeply a tool's schema may nest objects and arrays
// (the root object is level 1; 32 levels of "properties" take 64). The JSON
// Schema library's metaschema validation costs more than the square of the
// nesting (BenchmarkSchemaDepth: 60 ms at 100 levels of properties, 20 s
// at 1,000), so a deeper schema from a hostile server would burn seconds of
// CPU per tool; real tool schemas stay far below this, and upstream's
// serde_json refuses a whole tools/list response nested past 128.
const MaxSchemaDepth = 64

// CompileSchema checks that raw is a JSON object that compiles as JSON
// Schema (draft 2020-12 unless it names another draft), nested at most
// MaxSchemaDepth deep. Every external $ref is refused: compiling a
// server's schema must never reach the network or read a local file (the
// library's default loader reads files).
func CompileSchema(raw json.RawMessage) error {
	if !isObject(raw) {
		return fmt.Errorf("schema must be a JSON object")
	}
	if nestedDeeper(raw, MaxSchemaDepth) {
		return fmt.Errorf("schema nests objects and arrays more than %d deep", MaxSchemaDepth)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if plainValid(doc, 0) {
		return nil // what the library would conclude, without it (schemafast.go)
	}
	return compileWithLibrary(doc)
}

// compileWithLibrary compiles a decoded schema with the JSON Schema library.
func compileWithLibrary(doc any) error {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	// The base of relative references, as upstream's (the jsonschema
	// crate's default). It must be hierarchical: against an opaque URN the
	// library resolved "other.json" to the schema itself, so an external
	// reference compiled as a silent self-reference instead of failing.
	const url = "json-schema:///"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err := c.Compile(url)
	return err
}

// refusingLoader is the schema loader: it loads nothing.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %s is not loaded", url)
}

// nestedDeeper reports whether valid JSON raw nests objects and arrays
// more than limit deep. One pass over the bytes, stopping at the first
// level too deep: it runs before anything decodes or walks the value.
func nestedDeeper(raw []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			// skip the string: up to the next quote not escaped
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

func isObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(raw)
}

func toolDiag(code, name, format string, args ...any) Diagnostic {
	return Diagnostic{Code: code, NativeName: &name, Message: strings.TrimSpace(fmt.Sprintf(format, args...))}
}
