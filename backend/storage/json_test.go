package storage

import (
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// TestDecodeStrict: a registration file is read as strictly as upstream's
// serde struct reads it. The reasons are the library's where no test
// pins them, so only their stable parts are checked ("…" matches anything).
func TestDecodeStrict(t *testing.T) {
	const path = "/data/r.json"
	add := func(member string) string { // one more member after "state"
		return validFile(id2, `"state": "paused"`, `"state": "paused", `+member)
	}
	override := func(o string) string { return add(`"toolDescriptionOverrides": {"s": ` + o + `}`) }
	tests := []struct{ in, want string }{
		// Syntax, and nothing after the value.
		{``, "Invalid JSON in /data/r.json: …"},
		{`{`, "Invalid JSON in /data/r.json: …"},
		{validFile(id2) + " {}", "Invalid JSON in /data/r.json: …"},
		{validFile(id2) + " x", "Invalid JSON in /data/r.json: …"},
		{validFile(id2, `"paused"`, `"paused",`), "Invalid JSON in /data/r.json: …"},
		{validFile(id2, `"Minimal"`, `"a\ud800"`), "Invalid JSON in /data/r.json: …/displayName…"},
		{validFile(id2, `"Minimal"`, `"a\udc00b"`), "Invalid JSON in /data/r.json: …/displayName…"},
		{validFile(id2, `"Minimal"`, "\"a\x01\""), "Invalid JSON in /data/r.json: …/displayName…"},
		{validFile(id2, `"Minimal"`, `"a\x"`), "Invalid JSON in /data/r.json: …/displayName…"},
		// Unknown members at every level, names matched by case.
		{add(`"extra": true`), "Invalid JSON in /data/r.json: unknown field `extra` at /extra"},
		{add(`"SchemaVersion": 1`), "Invalid JSON in /data/r.json: unknown field `SchemaVersion` at /SchemaVersion"},
		{override(`{"description": "d", "title": "t"}`), "Invalid JSON in /data/r.json: unknown field `title` at /toolDescriptionOverrides/s/title"},
		{override(`{"Properties": {}}`), "Invalid JSON in /data/r.json: unknown field `Properties` at /toolDescriptionOverrides/s/Properties"},
		// Repeated members and keys.
		{add(`"kind": "x"`), "Invalid JSON in /data/r.json: …duplicate…"},
		{add(`"headers": {"a": "1", "a": "1"}`), "Invalid JSON in /data/r.json: …duplicate…/headers…"},
		{add(`"toolPermissions": {"a": "ask", "a": "allow"}`), "Invalid JSON in /data/r.json: …duplicate…"},
		{override(`{"properties": {}, "properties": {}}`), "Invalid JSON in /data/r.json: …duplicate…"},
		// Types.
		{`[]`, "Invalid JSON in /data/r.json: …"},
		{`null`, "Invalid JSON in /data/r.json: invalid type: null"},
		{`nul`, "Invalid JSON in /data/r.json: unexpected EOF…"},
		{`not json`, "Invalid JSON in /data/r.json: invalid character 'o' …"},
		{validFile(id2, `"Minimal"`, `nil`), "Invalid JSON in /data/r.json: invalid character 'i' …/displayName…"},
		{validFile(id2, `"schemaVersion": 1`, `"schemaVersion": "1"`), "Invalid JSON in /data/r.json: …/schemaVersion…"},
		{validFile(id2, `"schemaVersion": 1`, `"schemaVersion": 1.0`), "Invalid JSON in /data/r.json: …/schemaVersion…"},
		{validFile(id2, `"schemaVersion": 1`, `"schemaVersion": -1`), "Invalid JSON in /data/r.json: …/schemaVersion…"},
		{validFile(id2, `"schemaVersion": 1`, `"schemaVersion": 4294967297`), "Invalid JSON in /data/r.json: …/schemaVersion…"},
		{validFile(id2, `"schemaVersion": 1`, `"schemaVersion": null`), "Invalid JSON in /data/r.json: invalid type: null at /schemaVersion"},
		{validFile(id2, `"Minimal"`, `null`), "Invalid JSON in /data/r.json: invalid type: null at /displayName"},
		{validFile(id2, `"Minimal"`, `true`), "Invalid JSON in /data/r.json: …/displayName…"},
		{add(`"headers": null`), "Invalid JSON in /data/r.json: invalid type: null at /headers"},
		{add(`"headers": {"a": null}`), "Invalid JSON in /data/r.json: invalid type: null at /headers/a"},
		{add(`"headers": {"a": 1}`), "Invalid JSON in /data/r.json: …/headers/a…"},
		{add(`"toolDescriptionOverrides": {"s": []}`), "Invalid JSON in /data/r.json: …/toolDescriptionOverrides/s…"},
		{override(`{"properties": null}`), "Invalid JSON in /data/r.json: invalid type: null at /toolDescriptionOverrides/s/properties"},
		{override(`{"description": 1}`), "Invalid JSON in /data/r.json: …/toolDescriptionOverrides/s/description…"},
		// Enums, checked while decoding.
		{validFile(id2, `"paused"`, `"Paused"`), "Invalid JSON in /data/r.json: unknown state `Paused`, expected `active` or `paused` at /state"},
		{validFile(id2, `"paused"`, `1`), "Invalid JSON in /data/r.json: …/state…"},
		{validFile(id2, `"auto"`, `"2024-11-05"`), "Invalid JSON in /data/r.json: unsupported protocol version `2024-11-05`, expected one of `auto`, `2026-07-28`, `2025-11-25`, `2025-06-18`, `2025-03-26` at /protocolVersion"},
		{validFile(id2, `"auto"`, `null`), "Invalid JSON in /data/r.json: invalid type: null at /protocolVersion"},
		{add(`"toolPermissions": {"a": "deny"}`), "Invalid JSON in /data/r.json: unknown permission `deny`, expected one of `off`, `ask`, `allow` at /toolPermissions/a"},
		{add(`"toolPermissions": {"a": null}`), "Invalid JSON in /data/r.json: invalid type: null at /toolPermissions/a"},
		// Members without a default, reported in declaration order.
		{`{}`, "Invalid JSON in /data/r.json: missing field `schemaVersion`"},
		{validFile(id2, ",\n  \"state\": \"paused\"", ""), "Invalid JSON in /data/r.json: missing field `state`"},
		{validFile(id2, "\"kind\": \"tauritavern.mcpServerRegistration\",\n", "", ",\n  \"state\": \"paused\"", ""), "Invalid JSON in /data/r.json: missing field `kind`"},
		// Then the rules.
		{add(`"toolPermissions": {"a": "off"}`), "mcp.permission_off_not_persisted: `a` must be omitted instead of storing Off"},
		{override(`{"properties": {}}`), "mcp.description_override_empty: `s` must contain a tool or property description"},
	}
	for _, tt := range tests {
		_, err := decodeRegistration([]byte(tt.in), path, id2)
		if err == nil || domain.KindOf(err) != domain.KindBadRequest || !matches(err.Error(), tt.want) {
			t.Errorf("decode(%q)\n got %v\nwant %q", tt.in, err, tt.want)
		}
	}
}

// TestDecodeValues: what the strict reader accepts. Members may come in
// any order; null is an absent description; escapes are decoded.
func TestDecodeValues(t *testing.T) {
	in := `{"state": "active", "endpoint": "https://example.com/mcp", "displayName": "a\u00e9\ud83d\ude00\"\\\/b",
	"id": "` + id2 + `", "kind": "tauritavern.mcpServerRegistration", "schemaVersion": 1, "headers": {},
	"toolDescriptionOverrides": {"x": {"description": null, "properties": {"p": "v"}}, "y": {"description": ""}}}`
	r, err := decodeRegistration([]byte(in), "/data/r.json", id2)
	if err != nil {
		t.Fatal(err)
	}
	if r.DisplayName != "aé😀\"\\/b" || r.Protocol != domain.ProtocolAuto || r.State != domain.StateActive || r.Headers == nil || r.Permissions == nil {
		t.Errorf("decoded %+v", r)
	}
	if x := r.Overrides["x"]; x.Description != nil || x.Properties["p"] != "v" {
		t.Errorf("override x = %+v", x)
	}
	if y := r.Overrides["y"]; y.Description == nil || *y.Description != "" || y.Properties == nil {
		t.Errorf("override y = %+v", y)
	}
}
