package domain

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Most tool schemas are plain: types, properties, required names, bounds,
// enums and descriptions. Compiling one with the JSON Schema library costs
// ≈100 µs, nearly all of it validating the schema against the 2020-12
// metaschema and collecting its resources, which is most of a first
// discovery's cost over the bare page loop. plainValid checks such a
// schema against the metaschema rules of the keywords it uses, directly:
// when it says true, the library compiles the schema too (a differential
// test and fuzz target in schemafast_test.go hold it to that). Anything
// else (references, identifiers, anchors, regular expressions, the
// keywords of older drafts, numbers it cannot judge at a glance) gets
// false, and CompileSchema asks the library.
//
// Keywords the library does not know are allowed with any value, as the
// library allows them (x-mcp-header, for instance).

// maxPlainDepth bounds the nesting plainValid walks. CompileSchema has
// already refused anything nested deeper than MaxSchemaDepth, so every
// schema it lets through is within this bound: a plain schema never goes to
// the library for its depth alone.
const maxPlainDepth = MaxSchemaDepth

// plainValid reports whether v, decoded by jsonschema.UnmarshalJSON
// (numbers as json.Number), is certainly a valid 2020-12 schema.
func plainValid(v any, depth int) bool {
	if _, ok := v.(bool); ok {
		return true
	}
	obj, ok := v.(map[string]any)
	if !ok || depth > maxPlainDepth {
		return false
	}
	for k, val := range obj {
		if !plainKeyword(k, val, depth) {
			return false
		}
	}
	return true
}

func plainKeyword(k string, val any, depth int) bool {
	switch k {
	case "title", "description", "$comment", "format", "contentEncoding", "contentMediaType":
		return isString(val)
	case "deprecated", "readOnly", "writeOnly", "uniqueItems":
		_, ok := val.(bool)
		return ok
	case "const", "default":
		return true
	case "enum", "examples":
		_, ok := val.([]any)
		return ok
	case "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum":
		_, ok := val.(json.Number)
		return ok
	case "multipleOf":
		n, ok := val.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f > 0
	case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains":
		n, ok := val.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil && i >= 0
	case "type":
		if s, ok := val.(string); ok {
			return simpleType(s)
		}
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		seen := map[string]bool{}
		for _, item := range list {
			s, ok := item.(string)
			if !ok || !simpleType(s) || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	case "required":
		return uniqueStrings(val)
	case "properties", "dependentSchemas":
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		for _, sub := range m {
			if !plainValid(sub, depth+1) {
				return false
			}
		}
		return true
	case "dependentRequired":
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		for _, names := range m {
			if !uniqueStrings(names) {
				return false
			}
		}
		return true
	case "additionalProperties", "items", "contains", "propertyNames", "not", "if", "then", "else":
		return plainValid(val, depth+1)
	case "allOf", "anyOf", "oneOf", "prefixItems":
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, sub := range list {
			if !plainValid(sub, depth+1) {
				return false
			}
		}
		return true
	case "pattern", "patternProperties", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
		"definitions", "dependencies", "additionalItems":
		return false // regular expressions, or what only the library judges right
	}
	// $id, $ref, $schema, $defs, $anchor, $dynamicRef, …: the library's.
	return !strings.HasPrefix(k, "$")
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func simpleType(s string) bool {
	switch s {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

func uniqueStrings(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}
