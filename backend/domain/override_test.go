package domain

import (
	"encoding/json"
	"testing"
)

func TestDescriptionOverrideApply(t *testing.T) {
	id := ToolID("mcp/550e8400-e29b-41d4-a716-446655440000:search")
	raw := "raw"
	tool := Tool{NativeName: "search", Description: &raw,
		InputSchema: json.RawMessage(`{"type":"object","required":["q"],"properties":{"q":{"type":"string","description":"old"},"n":{"type":"integer","maximum":9007199254740993},"flag":true}}`)}
	text := "  Find <things>\n"
	tests := []struct {
		name   string
		o      DescriptionOverride
		desc   string
		schema string
		code   string
	}{
		{"description only, verbatim", DescriptionOverride{Description: &text}, text, string(tool.InputSchema), ""},
		{"a property", DescriptionOverride{Properties: map[string]string{"q": "  the query  ", "n": "how many"}}, raw,
			`{"properties":{"flag":true,"n":{"description":"how many","maximum":9007199254740993,"type":"integer"},"q":{"description":"  the query  ","type":"string"}},"required":["q"],"type":"object"}`, ""},
		{"unknown property", DescriptionOverride{Properties: map[string]string{"x": "?"}}, "", "", "tool.description_override_unknown_property"},
		{"boolean property schema", DescriptionOverride{Properties: map[string]string{"flag": "?"}}, "", "", "tool.description_override_property_schema_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.Apply(id, tool)
			if tt.code != "" {
				if CodeOf(err) != tt.code {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || *got.Description != tt.desc || string(got.InputSchema) != tt.schema {
				t.Fatalf("got %q %s (%v)", *got.Description, got.InputSchema, err)
			}
		})
	}
	noProps := Tool{NativeName: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}
	if _, err := (DescriptionOverride{Properties: map[string]string{"a": "b"}}).Apply(id, noProps); CodeOf(err) != "tool.description_override_properties_invalid" {
		t.Fatalf("no properties: %v", err)
	}
	// The catalog's tool is never modified.
	if *tool.Description != raw || string(tool.InputSchema) == "" {
		t.Fatal("the input was modified")
	}
}
