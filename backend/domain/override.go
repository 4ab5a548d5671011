package domain

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Apply returns t as a model sees it under this override (reference §5.2):
// the tool description replaced verbatim when set, and each overridden
// property's description set in the input schema. Nothing else changes
// (types, required, annotations, the ToolId, what is executed). A property
// the schema does not have is an error: the override no longer matches the
// tool, and the model must not get a half-applied text.
func (o DescriptionOverride) Apply(id ToolID, t Tool) (Tool, error) {
	if o.Description != nil {
		d := *o.Description
		t.Description = &d
	}
	if len(o.Properties) == 0 {
		return t, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t.InputSchema))
	dec.UseNumber() // numbers keep their text
	var schema map[string]any
	if err := dec.Decode(&schema); err != nil {
		return Tool{}, invalid("tool.description_override_properties_invalid", "`%s` has no object properties", id)
	}
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		return Tool{}, invalid("tool.description_override_properties_invalid", "`%s` has no object properties", id)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Properties)) {
		p, ok := props[name]
		if !ok {
			return Tool{}, invalid("tool.description_override_unknown_property", "`%s` has no property `%s`", id, name)
		}
		ps, ok := p.(map[string]any)
		if !ok {
			return Tool{}, invalid("tool.description_override_property_schema_invalid", "`%s` property `%s` schema is not an object", id, name)
		}
		ps["description"] = o.Properties[name]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(schema); err != nil {
		return Tool{}, err
	}
	t.InputSchema = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return t, nil
}
