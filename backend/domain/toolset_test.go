package domain

import (
	"strings"
	"testing"
)

const (
	setReg  = "550e8400-e29b-41d4-a716-446655440000"
	setReg2 = "550e8400-e29b-41d4-a716-446655440001"
)

func TestParseToolSelector(t *testing.T) {
	tests := []struct {
		raw      string
		all      bool
		native   string
		wantCode string
	}{
		{"mcp/" + setReg + ":search", false, "search", ""},
		{"mcp/" + setReg + ":*", true, AllTools, ""},
		{"mcp/" + setReg + ":a:b", false, "a:b", ""}, // native names may hold ':'
		{"mcp/" + setReg + ":**", false, "**", ""},   // only "*" itself means the server
		{"mcp/" + setReg + ": *", false, " *", ""},   // verbatim
		{"mcp/" + strings.ToUpper(setReg) + ":*", false, "", "mcp.registration_id_noncanonical"},
		{"mcp/x:*", false, "", "mcp.registration_id_invalid"},
		{"github/" + setReg + ":*", false, "", "mcp.provider_id_invalid"},
		{"mcp/" + setReg, false, "", "tool.id_invalid"},
		{"mcp/" + setReg + ":", false, "", "tool.native_name_empty"},
	}
	for _, tt := range tests {
		sel, err := ParseToolSelector(tt.raw)
		if tt.wantCode != "" {
			if CodeOf(err) != tt.wantCode {
				t.Errorf("%q: %v, want %s", tt.raw, err, tt.wantCode)
			}
			continue
		}
		if err != nil || sel.All != tt.all || sel.NativeName != tt.native || sel.Registration != setReg || sel.String() != tt.raw {
			t.Errorf("%q: %+v %v", tt.raw, sel, err)
		}
	}
}

func TestToolSetValidate(t *testing.T) {
	sel := func(raw ...string) []ToolSelector {
		s, err := ParseToolSelection(raw)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	desc := "d"
	base := func() ToolSet {
		return ToolSet{ID: ToolSetID(setReg), Name: "Coding", Tools: sel("mcp/"+setReg+":a", "mcp/"+setReg2+":*"),
			Overrides:             map[ToolID]DescriptionOverride{ToolID("mcp/" + setReg2 + ":b"): {Description: &desc}},
			ResultInlineCharLimit: DefaultResultInlineCharLimit}
	}
	tests := []struct {
		name   string
		change func(*ToolSet)
		code   string
	}{
		{"valid (override through the server's *)", func(*ToolSet) {}, ""},
		{"empty selection", func(ts *ToolSet) { ts.Tools, ts.Overrides = nil, nil }, ""},
		{"limit 1", func(ts *ToolSet) { ts.ResultInlineCharLimit = 1 }, ""},
		{"limit 0", func(ts *ToolSet) { ts.ResultInlineCharLimit = 0 }, "mcp.tool_set_result_inline_char_limit_invalid"},
		{"limit -1", func(ts *ToolSet) { ts.ResultInlineCharLimit = -1 }, "mcp.tool_set_result_inline_char_limit_invalid"},
		{"limit too large", func(ts *ToolSet) { ts.ResultInlineCharLimit = MaxResultInlineCharLimit + 1 }, "mcp.tool_set_result_inline_char_limit_invalid"},
		{"bad id", func(ts *ToolSet) { ts.ID = "x" }, "mcp.tool_set_id_invalid"},
		{"blank name", func(ts *ToolSet) { ts.Name = "" }, "mcp.tool_set_name_empty"},
		{"long name", func(ts *ToolSet) { ts.Name = strings.Repeat("名", MaxToolSetNameChars+1) }, "mcp.tool_set_name_too_long"},
		{"name of 100 characters", func(ts *ToolSet) { ts.Name = strings.Repeat("名", MaxToolSetNameChars) }, ""},
		{"duplicate", func(ts *ToolSet) { ts.Tools = append(ts.Tools, ts.Tools[0]) }, "mcp.tool_set_tool_duplicate"},
		{"override of an unselected tool", func(ts *ToolSet) {
			ts.Overrides[ToolID("mcp/"+setReg+":z")] = DescriptionOverride{Description: &desc}
		}, "mcp.tool_set_override_unselected"},
		{"override of a whole server", func(ts *ToolSet) {
			ts.Overrides[ToolID("mcp/"+setReg2+":*")] = DescriptionOverride{Description: &desc}
		}, "mcp.tool_set_override_unselected"},
		{"override of nothing", func(ts *ToolSet) {
			ts.Overrides[ToolID("mcp/"+setReg+":a")] = DescriptionOverride{Properties: map[string]string{}}
		}, "mcp.description_override_empty"},
		{"override key not a ToolId", func(ts *ToolSet) { ts.Overrides[ToolID("a")] = DescriptionOverride{Description: &desc} }, "tool.id_invalid"},
		// issue 31: the search settings
		{"search mode, pins through the server's *", func(ts *ToolSet) {
			ts.Search = ToolSearchSettings{Mode: ToolModeSearch, Pinned: []ToolID{ToolID("mcp/" + setReg2 + ":b"), ToolID("mcp/" + setReg + ":a")}}
		}, ""},
		{"automatic with a budget", func(ts *ToolSet) {
			ts.Search = ToolSearchSettings{Mode: ToolModeAutomatic, MaxTools: 1, ContextPercent: 100}
		}, ""},
		{"mode spelled all", func(ts *ToolSet) { ts.Search.Mode = "all" }, "mcp.tool_set_mode_invalid"},
		{"unknown mode", func(ts *ToolSet) { ts.Search.Mode = "lazy" }, "mcp.tool_set_mode_invalid"},
		{"negative tools", func(ts *ToolSet) { ts.Search.MaxTools = -1 }, "mcp.tool_set_search_budget_invalid"},
		{"over 100 %", func(ts *ToolSet) { ts.Search.ContextPercent = 101 }, "mcp.tool_set_search_budget_invalid"},
		{"pin of an unselected tool", func(ts *ToolSet) { ts.Search.Pinned = []ToolID{ToolID("mcp/" + setReg + ":z")} }, "mcp.tool_set_pinned_invalid"},
		{"pin of a whole server", func(ts *ToolSet) { ts.Search.Pinned = []ToolID{ToolID("mcp/" + setReg2 + ":*")} }, "mcp.tool_set_pinned_invalid"},
		{"pinned twice", func(ts *ToolSet) {
			ts.Search.Pinned = []ToolID{ToolID("mcp/" + setReg + ":a"), ToolID("mcp/" + setReg + ":a")}
		}, "mcp.tool_set_pinned_invalid"},
	}
	for _, tt := range tests {
		ts := base()
		tt.change(&ts)
		if err := ts.Validate(); CodeOf(err) != tt.code || (tt.code == "") != (err == nil) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
		}
	}
	if _, err := ParseToolSelection(make([]string, MaxToolSetTools+1)); CodeOf(err) != "mcp.tool_set_too_many_tools" {
		t.Errorf("too many: %v", err)
	}
	ts := base()
	if !ts.Selects(ToolID("mcp/"+setReg2+":anything")) || ts.Selects(ToolID("mcp/"+setReg+":b")) || !ts.Selects(ToolID("mcp/"+setReg+":a")) {
		t.Error("Selects")
	}
	var c ToolSet
	ts.Search.Pinned = []ToolID{ToolID("mcp/" + setReg + ":a")}
	c = ts.Clone()
	c.Search.Pinned[0] = "changed"
	if ts.Search.Pinned[0] == "changed" {
		t.Error("Clone shares the pins")
	}
	c.Tools[0].NativeName = "changed"
	*c.Overrides[ToolID("mcp/"+setReg2+":b")].Description = "x"
	if ts.Tools[0].NativeName != "a" || desc != "d" {
		t.Error("Clone shares the selection")
	}
}
