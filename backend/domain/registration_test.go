package domain

import (
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func mustEndpoint(t *testing.T, raw string) Endpoint {
	t.Helper()
	e, err := ParseEndpoint(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// validRegistration returns a registration that passes Validate.
func validRegistration(t *testing.T) Registration {
	t.Helper()
	return Registration{
		ID:          testID,
		DisplayName: "Local MCP",
		Endpoint:    mustEndpoint(t, "http://127.0.0.1:3333/mcp"),
		Headers:     map[string]string{" X-API-Key ": "secret"},
		Protocol:    ProtocolAuto,
		State:       StatePaused,
		Permissions: map[string]Permission{"search": PermissionAllow, "fetch": PermissionAsk},
		Overrides: map[string]DescriptionOverride{
			"search": {Description: ptr("  Search local files\n"), Properties: map[string]string{"query": " what "}},
		},
	}
}

func TestParseEnums(t *testing.T) {
	for _, p := range []string{"auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		if got, err := ParseProtocol(p); err != nil || string(got) != p {
			t.Errorf("ParseProtocol(%q) = %q, %v", p, got, err)
		}
	}
	for _, s := range []string{"active", "paused"} {
		if got, err := ParseState(s); err != nil || string(got) != s {
			t.Errorf("ParseState(%q) = %q, %v", s, got, err)
		}
	}
	for _, p := range []string{"off", "ask", "allow"} {
		if got, err := ParsePermission(p); err != nil || string(got) != p {
			t.Errorf("ParsePermission(%q) = %q, %v", p, got, err)
		}
	}
	bad := []struct {
		parse func(string) error
		raw   string
		want  string
	}{
		{func(s string) error { _, err := ParseProtocol(s); return err }, "AUTO",
			"mcp.protocol_version_unsupported: unsupported protocol version `AUTO`, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26`"},
		{func(s string) error { _, err := ParseProtocol(s); return err }, "2024-11-05",
			"mcp.protocol_version_unsupported: unsupported protocol version `2024-11-05`, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26`"},
		{func(s string) error { _, err := ParseProtocol(s); return err }, "",
			"mcp.protocol_version_unsupported: unsupported protocol version ``, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26`"},
		{func(s string) error { _, err := ParseState(s); return err }, " active",
			"mcp.state_invalid: unknown state ` active`, expected `active` or `paused`"},
		{func(s string) error { _, err := ParseState(s); return err }, "Active",
			"mcp.state_invalid: unknown state `Active`, expected `active` or `paused`"},
		{func(s string) error { _, err := ParsePermission(s); return err }, "deny",
			"mcp.permission_invalid: unknown permission `deny`, expected one of `off`, `ask`, `allow`"},
		{func(s string) error { _, err := ParsePermission(s); return err }, "",
			"mcp.permission_invalid: unknown permission ``, expected one of `off`, `ask`, `allow`"},
	}
	for _, tt := range bad {
		err := tt.parse(tt.raw)
		if errText(err) != tt.want || KindOf(err) != KindBadRequest {
			t.Errorf("parse(%q) = %v, want %q", tt.raw, err, tt.want)
		}
	}
}

func TestParseDisplayName(t *testing.T) {
	tests := []struct{ raw, want, err string }{
		{raw: "Local MCP", want: "Local MCP"},
		{raw: "  Exa Search \n", want: "Exa Search"},
		{raw: "\u3000名前\u00a0", want: "名前"},
		{raw: "a  b", want: "a  b"},
		{raw: "", err: "mcp.display_name_empty: display name cannot be empty"},
		{raw: " \t\n\u2003", err: "mcp.display_name_empty: display name cannot be empty"},
	}
	for _, tt := range tests {
		got, err := ParseDisplayName(tt.raw)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("ParseDisplayName(%q) = %q, %v; want %q, %q", tt.raw, got, err, tt.want, tt.err)
		}
	}
}

func TestDescriptionOverrideValidate(t *testing.T) {
	tests := []struct {
		o    DescriptionOverride
		want string
	}{
		{o: DescriptionOverride{Description: ptr("Search local files")}},
		{o: DescriptionOverride{Description: ptr("")}}, // set, even if empty
		{o: DescriptionOverride{Description: ptr("   ")}},
		{o: DescriptionOverride{Properties: map[string]string{"q": ""}}},
		{o: DescriptionOverride{}, want: "mcp.description_override_empty: `search:exact` must contain a tool or property description"},
		{o: DescriptionOverride{Properties: map[string]string{}}, want: "mcp.description_override_empty: `search:exact` must contain a tool or property description"},
	}
	for i, tt := range tests {
		if got := errText(tt.o.Validate("search:exact")); got != tt.want {
			t.Errorf("%d: Validate = %q, want %q", i, got, tt.want)
		}
	}
}

func TestRegistrationValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Registration)
		want   string
	}{
		{name: "valid", change: func(*Registration) {}},
		{name: "nil maps", change: func(r *Registration) { r.Headers, r.Permissions, r.Overrides = nil, nil, nil }},
		{name: "untrimmed name is still a name", change: func(r *Registration) { r.DisplayName = " x " }},
		{name: "bad id", change: func(r *Registration) { r.ID = "x" },
			want: "mcp.registration_id_invalid: `x` is not a canonical UUID"},
		{name: "uppercase id", change: func(r *Registration) { r.ID = RegistrationID(strings.ToUpper(testID)) },
			want: "mcp.registration_id_noncanonical: `" + strings.ToUpper(testID) + "` must use lowercase hyphenated UUID form"},
		{name: "zero endpoint", change: func(r *Registration) { r.Endpoint = Endpoint{} },
			want: "mcp.endpoint_invalid: relative URL without a base"},
		{name: "empty name", change: func(r *Registration) { r.DisplayName = " \t" },
			want: "mcp.display_name_empty: display name cannot be empty"},
		{name: "bad protocol", change: func(r *Registration) { r.Protocol = "" },
			want: "mcp.protocol_version_unsupported: unsupported protocol version ``, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26`"},
		{name: "bad state", change: func(r *Registration) { r.State = "" },
			want: "mcp.state_invalid: unknown state ``, expected `active` or `paused`"},
		{name: "off stored", change: func(r *Registration) { r.Permissions["zeta"] = PermissionOff },
			want: "mcp.permission_off_not_persisted: `zeta` must be omitted instead of storing Off"},
		{name: "unknown permission", change: func(r *Registration) { r.Permissions["zeta"] = "deny" },
			want: "mcp.permission_invalid: unknown permission `deny`, expected one of `off`, `ask`, `allow`"},
		{name: "empty permission name", change: func(r *Registration) { r.Permissions[""] = PermissionAsk },
			want: "mcp.tool_name_empty: native tool name cannot be empty"},
		{name: "first error by name", change: func(r *Registration) {
			r.Permissions["b"] = PermissionOff
			r.Permissions[strings.Repeat("a", 300)] = PermissionAsk
		}, want: "mcp.tool_name_too_long: native tool name must be at most 256 bytes"},
		{name: "empty override", change: func(r *Registration) { r.Overrides["x"] = DescriptionOverride{} },
			want: "mcp.description_override_empty: `x` must contain a tool or property description"},
		{name: "empty override name", change: func(r *Registration) { r.Overrides[""] = DescriptionOverride{Description: ptr("d")} },
			want: "mcp.tool_name_empty: native tool name cannot be empty"},
		{name: "id before endpoint", change: func(r *Registration) { r.ID, r.Endpoint = "x", Endpoint{} },
			want: "mcp.registration_id_invalid: `x` is not a canonical UUID"},
		{name: "endpoint before name", change: func(r *Registration) { r.DisplayName, r.Endpoint = "", Endpoint{} },
			want: "mcp.endpoint_invalid: relative URL without a base"},
		{name: "permissions before overrides", change: func(r *Registration) {
			r.Permissions["z"] = PermissionOff
			r.Overrides["a"] = DescriptionOverride{}
		}, want: "mcp.permission_off_not_persisted: `z` must be omitted instead of storing Off"},
	}
	for _, tt := range tests {
		r := validRegistration(t)
		tt.change(&r)
		err := r.Validate()
		if errText(err) != tt.want {
			t.Errorf("%s: Validate = %q, want %q", tt.name, errText(err), tt.want)
		}
		if err != nil && KindOf(err) != KindBadRequest {
			t.Errorf("%s: kind %v, want BadRequest", tt.name, KindOf(err))
		}
	}
}

func TestSetPermission(t *testing.T) {
	r := Registration{}
	steps := []struct {
		name string
		p    Permission
		want map[string]Permission
		err  string
	}{
		{name: "search", p: PermissionAsk, want: map[string]Permission{"search": PermissionAsk}},
		{name: "search", p: PermissionAllow, want: map[string]Permission{"search": PermissionAllow}},
		{name: "never:discovered", p: PermissionAllow, want: map[string]Permission{"search": PermissionAllow, "never:discovered": PermissionAllow}},
		{name: "search", p: PermissionOff, want: map[string]Permission{"never:discovered": PermissionAllow}},
		{name: "absent", p: PermissionOff, want: map[string]Permission{"never:discovered": PermissionAllow}},
		{name: "", p: PermissionAsk, want: map[string]Permission{"never:discovered": PermissionAllow}, err: "mcp.tool_name_empty: native tool name cannot be empty"},
		{name: "x", p: "deny", want: map[string]Permission{"never:discovered": PermissionAllow}, err: "mcp.permission_invalid: unknown permission `deny`, expected one of `off`, `ask`, `allow`"},
		{name: " padded ", p: PermissionAsk, want: map[string]Permission{"never:discovered": PermissionAllow, " padded ": PermissionAsk}},
	}
	for i, s := range steps {
		err := r.SetPermission(s.name, s.p)
		if errText(err) != s.err {
			t.Fatalf("%d: SetPermission(%q, %q) = %v, want %q", i, s.name, s.p, err, s.err)
		}
		if !reflect.DeepEqual(r.Permissions, s.want) {
			t.Fatalf("%d: permissions = %v, want %v", i, r.Permissions, s.want)
		}
		for name, p := range r.Permissions {
			if p == PermissionOff {
				t.Fatalf("%d: off stored for %q", i, name)
			}
		}
	}
	if r.PermissionFor("absent") != PermissionOff || r.PermissionFor(" padded ") != PermissionAsk || r.PermissionFor("padded") != PermissionOff {
		t.Error("PermissionFor misreports")
	}
	// Off on a registration without permissions is a no-op, not a panic.
	var empty Registration
	if err := empty.SetPermission("x", PermissionOff); err != nil || empty.Permissions != nil {
		t.Errorf("SetPermission(off) on empty = %v, %v", err, empty.Permissions)
	}
}

func TestSetOverride(t *testing.T) {
	var r Registration
	in := &DescriptionOverride{Description: ptr("  verbatim\twhite space \n"), Properties: map[string]string{"query": "  the query  "}}
	if err := r.SetOverride("search", in); err != nil {
		t.Fatal(err)
	}
	// Stored verbatim, and as a copy: the caller's later edits do not leak in.
	*in.Description = "changed"
	in.Properties["query"] = "changed"
	got := r.Overrides["search"]
	if *got.Description != "  verbatim\twhite space \n" || got.Properties["query"] != "  the query  " {
		t.Fatalf("stored override = %q, %v", *got.Description, got.Properties)
	}
	// Empty is rejected and leaves the stored one alone.
	err := r.SetOverride("search", &DescriptionOverride{Properties: map[string]string{}})
	if errText(err) != "mcp.description_override_empty: `search` must contain a tool or property description" {
		t.Fatalf("SetOverride(empty) = %v", err)
	}
	if _, ok := r.Overrides["search"]; !ok {
		t.Fatal("rejected override removed the stored one")
	}
	if err := r.SetOverride("", &DescriptionOverride{Description: ptr("x")}); CodeOf(err) != "mcp.tool_name_empty" {
		t.Fatalf("SetOverride(empty name) = %v", err)
	}
	// Properties only.
	if err := r.SetOverride("fetch", &DescriptionOverride{Properties: map[string]string{"url": ""}}); err != nil {
		t.Fatal(err)
	}
	// nil deletes; deleting an absent one is fine.
	if err := r.SetOverride("search", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.SetOverride("absent", nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]DescriptionOverride{"fetch": {Properties: map[string]string{"url": ""}}}
	if !reflect.DeepEqual(r.Overrides, want) {
		t.Fatalf("overrides = %v, want %v", r.Overrides, want)
	}
	var empty Registration
	if err := empty.SetOverride("x", nil); err != nil {
		t.Fatal(err)
	}
}

func TestClone(t *testing.T) {
	r := validRegistration(t)
	c := r.Clone()
	if !reflect.DeepEqual(r, c) {
		t.Fatalf("Clone = %+v, want %+v", c, r)
	}
	c.Headers["new"] = "x"
	c.Permissions["search"] = PermissionAsk
	*c.Overrides["search"].Description = "changed"
	c.Overrides["search"].Properties["query"] = "changed"
	c.Overrides["new"] = DescriptionOverride{Description: ptr("x")}
	want := validRegistration(t)
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("changing the clone changed the original: %+v", r)
	}
	var zero Registration
	if z := zero.Clone(); z.Headers != nil || z.Permissions != nil || z.Overrides != nil {
		t.Fatalf("Clone of zero = %+v", z)
	}
}

func TestSameConnection(t *testing.T) {
	base := validRegistration(t)
	tests := []struct {
		name   string
		change func(r *Registration)
		same   bool
	}{
		{name: "identical", change: func(*Registration) {}, same: true},
		{name: "name only", change: func(r *Registration) { r.DisplayName = "Other" }, same: true},
		{name: "state, permissions, overrides", change: func(r *Registration) {
			r.State = StateActive
			r.Permissions = nil
			r.Overrides = nil
		}, same: true},
		{name: "equivalent endpoint spelling", change: func(r *Registration) { r.Endpoint = mustEndpoint(t, " HTTP://127.0.0.1:3333/x/../mcp ") }, same: true},
		{name: "endpoint", change: func(r *Registration) { r.Endpoint = mustEndpoint(t, "http://127.0.0.1:3334/mcp") }},
		{name: "header value", change: func(r *Registration) { r.Headers = map[string]string{" X-API-Key ": "other"} }},
		{name: "header name spelling", change: func(r *Registration) { r.Headers = map[string]string{"X-API-Key": "secret"} }},
		{name: "extra header", change: func(r *Registration) { r.Headers["b"] = "" }},
		{name: "protocol", change: func(r *Registration) { r.Protocol = Protocol20250618 }},
	}
	for _, tt := range tests {
		o := base.Clone()
		tt.change(&o)
		if got := base.SameConnection(o); got != tt.same {
			t.Errorf("%s: SameConnection = %v, want %v", tt.name, got, tt.same)
		}
	}
	a, b := Registration{Endpoint: base.Endpoint}, Registration{Endpoint: base.Endpoint, Headers: map[string]string{}}
	if !a.SameConnection(b) {
		t.Error("nil and empty headers differ")
	}
}

func TestNewRegistration(t *testing.T) {
	e := mustEndpoint(t, "https://example.com/mcp")
	headers := map[string]string{"Authorization": "Bearer x"}
	r, err := NewRegistration("  Exa  ", e, headers, Protocol20251125)
	if err != nil {
		t.Fatal(err)
	}
	headers["Authorization"] = "changed"
	if r.DisplayName != "Exa" || r.State != StatePaused || r.Endpoint != e || r.Protocol != Protocol20251125 ||
		r.Headers["Authorization"] != "Bearer x" || len(r.Permissions) != 0 || len(r.Overrides) != 0 {
		t.Fatalf("NewRegistration = %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r2, _ := NewRegistration("Exa", e, nil, ProtocolAuto); r2.ID == r.ID || r2.Headers == nil {
		t.Fatalf("second registration = %+v", r2)
	}
	if _, err := NewRegistration(" ", e, nil, ProtocolAuto); CodeOf(err) != "mcp.display_name_empty" {
		t.Errorf("empty name: %v", err)
	}
	if _, err := NewRegistration("x", Endpoint{}, nil, ProtocolAuto); CodeOf(err) != "mcp.endpoint_invalid" {
		t.Errorf("zero endpoint: %v", err)
	}
	if _, err := NewRegistration("x", e, nil, "nope"); CodeOf(err) != "mcp.protocol_version_unsupported" {
		t.Errorf("bad protocol: %v", err)
	}
}

func TestUpdate(t *testing.T) {
	r := validRegistration(t)
	orig := r.Clone()
	changed, err := r.Update(" Renamed ", r.Endpoint, map[string]string{" X-API-Key ": "secret"}, ProtocolAuto)
	if err != nil || changed {
		t.Fatalf("name-only Update = %v, %v", changed, err)
	}
	if r.DisplayName != "Renamed" || r.ID != orig.ID || r.State != orig.State ||
		!reflect.DeepEqual(r.Permissions, orig.Permissions) || !reflect.DeepEqual(r.Overrides, orig.Overrides) {
		t.Fatalf("Update changed more than the name: %+v", r)
	}
	changed, err = r.Update("Renamed", r.Endpoint, nil, ProtocolAuto)
	if err != nil || !changed || r.Headers == nil || len(r.Headers) != 0 {
		t.Fatalf("header Update = %v, %v, %v", changed, err, r.Headers)
	}
	before := r.Clone()
	if _, err := r.Update("", r.Endpoint, nil, ProtocolAuto); CodeOf(err) != "mcp.display_name_empty" {
		t.Fatalf("Update(empty name) = %v", err)
	}
	if _, err := r.Update("x", Endpoint{}, nil, ProtocolAuto); CodeOf(err) != "mcp.endpoint_invalid" {
		t.Fatalf("Update(zero endpoint) = %v", err)
	}
	if _, err := r.Update("x", r.Endpoint, nil, "bad"); CodeOf(err) != "mcp.protocol_version_unsupported" {
		t.Fatalf("Update(bad protocol) = %v", err)
	}
	if !reflect.DeepEqual(r, before) {
		t.Fatal("failed Update changed the registration")
	}
}
