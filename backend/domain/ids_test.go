package domain

import (
	"strings"
	"testing"
)

const testID = "550e8400-e29b-41d4-a716-446655440000"

func TestParseRegistrationID(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" when valid, else the error message
	}{
		{raw: testID},
		{raw: "00000000-0000-0000-0000-000000000000"},
		{raw: "550E8400-E29B-41D4-A716-446655440000", want: "mcp.registration_id_noncanonical: `550E8400-E29B-41D4-A716-446655440000` must use lowercase hyphenated UUID form"},
		{raw: "550e8400e29b41d4a716446655440000", want: "mcp.registration_id_noncanonical: `550e8400e29b41d4a716446655440000` must use lowercase hyphenated UUID form"},
		{raw: "{" + testID + "}", want: "mcp.registration_id_noncanonical: `{" + testID + "}` must use lowercase hyphenated UUID form"},
		{raw: "urn:uuid:" + testID, want: "mcp.registration_id_noncanonical: `urn:uuid:" + testID + "` must use lowercase hyphenated UUID form"},
		{raw: "URN:UUID:" + testID, want: "mcp.registration_id_invalid: `URN:UUID:" + testID + "` is not a canonical UUID"},
		{raw: "", want: "mcp.registration_id_invalid: `` is not a canonical UUID"},
		{raw: "not-a-uuid", want: "mcp.registration_id_invalid: `not-a-uuid` is not a canonical UUID"},
		{raw: " " + testID, want: "mcp.registration_id_invalid: ` " + testID + "` is not a canonical UUID"},
		{raw: "550e8400-e29b-41d4-a716-44665544000g", want: "mcp.registration_id_invalid: `550e8400-e29b-41d4-a716-44665544000g` is not a canonical UUID"},
		{raw: "550e8400-e29b41d4-a716-446655440000-", want: "mcp.registration_id_invalid: `550e8400-e29b41d4-a716-446655440000-` is not a canonical UUID"},
		{raw: "../../etc/passwd", want: "mcp.registration_id_invalid: `../../etc/passwd` is not a canonical UUID"},
	}
	for _, tt := range tests {
		id, err := ParseRegistrationID(tt.raw)
		if tt.want == "" {
			if err != nil || string(id) != tt.raw {
				t.Errorf("ParseRegistrationID(%q) = %q, %v", tt.raw, id, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseRegistrationID(%q) = %q, want error %q", tt.raw, id, tt.want)
			continue
		}
		if err.Error() != tt.want || KindOf(err) != KindBadRequest {
			t.Errorf("ParseRegistrationID(%q) error = %v (%v), want %q (BadRequest)", tt.raw, err, KindOf(err), tt.want)
		}
	}
}

func TestNewRegistrationID(t *testing.T) {
	seen := map[RegistrationID]bool{}
	for range 100 {
		id := NewRegistrationID()
		if _, err := ParseRegistrationID(string(id)); err != nil {
			t.Fatalf("NewRegistrationID() = %q: %v", id, err)
		}
		if id[14] != '4' {
			t.Fatalf("NewRegistrationID() = %q, not version 4", id)
		}
		if seen[id] {
			t.Fatalf("NewRegistrationID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestValidateNativeName(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{name: "search"},
		{name: "search:exact"},
		{name: " padded "},
		{name: "issue.create"},
		{name: "工具"},
		{name: strings.Repeat("a", 256)},
		{name: strings.Repeat("é", 128)}, // 256 bytes
		{name: "", want: "mcp.tool_name_empty: native tool name cannot be empty"},
		{name: strings.Repeat("a", 257), want: "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
		{name: strings.Repeat("é", 128) + "a", want: "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
	}
	for _, tt := range tests {
		err := ValidateNativeName(tt.name)
		if got := errText(err); got != tt.want {
			t.Errorf("ValidateNativeName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestToolID(t *testing.T) {
	id, err := ParseRegistrationID(testID)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := NewToolID(id, "search:exact")
	if err != nil {
		t.Fatal(err)
	}
	if want := "mcp/" + testID + ":search:exact"; string(tool) != want || tool.String() != want {
		t.Fatalf("NewToolID = %q, want %q", tool, want)
	}
	gotID, gotName, err := ParseToolID(string(tool))
	if err != nil || gotID != id || gotName != "search:exact" {
		t.Fatalf("ParseToolID(%q) = %q, %q, %v", tool, gotID, gotName, err)
	}
	if id.ProviderID() != "mcp/"+testID {
		t.Errorf("ProviderID = %q", id.ProviderID())
	}
	if _, err := NewToolID(id, ""); errText(err) != "mcp.tool_name_empty: native tool name cannot be empty" {
		t.Errorf("NewToolID(empty) error = %v", err)
	}
	if _, err := NewToolID(id, strings.Repeat("x", 257)); CodeOf(err) != "mcp.tool_name_too_long" {
		t.Errorf("NewToolID(long) error = %v", err)
	}
}

func TestParseToolID(t *testing.T) {
	tests := []struct {
		raw      string
		wantName string
		want     string // error message, "" when valid
	}{
		{raw: "mcp/" + testID + ":search", wantName: "search"},
		{raw: "mcp/" + testID + ":search:exact", wantName: "search:exact"},
		{raw: "mcp/" + testID + ": spaced ", wantName: " spaced "},
		{raw: "mcp/" + testID + "::", wantName: ":"},
		{raw: "mcp/" + testID, want: "tool.id_invalid: tool id `mcp/" + testID + "` must contain a provider and native name"},
		{raw: "", want: "tool.id_invalid: tool id `` must contain a provider and native name"},
		{raw: ":search", want: "tool.provider_id_empty: tool provider id cannot be empty"},
		{raw: "mcp/" + testID + ":", want: "tool.native_name_empty: tool native name cannot be empty"},
		{raw: "builtin:search", want: "mcp.provider_id_invalid: `builtin` is not an MCP provider id"},
		{raw: "MCP/" + testID + ":search", want: "mcp.provider_id_invalid: `MCP/" + testID + "` is not an MCP provider id"},
		{raw: "mcp/" + strings.ToUpper(testID) + ":search", want: "mcp.registration_id_noncanonical: `" + strings.ToUpper(testID) + "` must use lowercase hyphenated UUID form"},
		{raw: "mcp/x:search", want: "mcp.registration_id_invalid: `x` is not a canonical UUID"},
		{raw: "mcp/" + testID + ":" + strings.Repeat("n", 257), want: "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
	}
	for _, tt := range tests {
		id, name, err := ParseToolID(tt.raw)
		if got := errText(err); got != tt.want {
			t.Errorf("ParseToolID(%q) error = %q, want %q", tt.raw, got, tt.want)
			continue
		}
		if tt.want != "" {
			if KindOf(err) != KindBadRequest || id != "" || name != "" {
				t.Errorf("ParseToolID(%q) = %q, %q, kind %v", tt.raw, id, name, KindOf(err))
			}
			continue
		}
		if id != testID || name != tt.wantName {
			t.Errorf("ParseToolID(%q) = %q, %q; want %q, %q", tt.raw, id, name, testID, tt.wantName)
		}
	}
}

// errText returns err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
