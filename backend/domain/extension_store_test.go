package domain

import (
	"strings"
	"testing"
)

func TestExtensionStoreName(t *testing.T) {
	ok := map[string]string{
		"my-ext": "my-ext", " tauritavern.mcp-manager\t": "tauritavern.mcp-manager", "a..b": "a..b",
		"icon.png": "icon.png", "A_9": "A_9", "x.": "x.", strings.Repeat("k", 250): strings.Repeat("k", 250),
	}
	for raw, want := range ok {
		if got, err := ExtensionStoreName(raw, "key"); err != nil || got != want {
			t.Errorf("%q: %q %v", raw, got, err)
		}
	}
	bad := map[string]string{
		"": "cannot be empty", " ": "cannot be empty", ".": "'.' or '..'", "..": "'.' or '..'",
		".x": "cannot start with '.'", "a/b": "illegal characters", `a\b`: "illegal characters",
		"a b": "illegal characters", "é": "illegal characters", "a\x00": "illegal characters",
		strings.Repeat("k", 251): "longer than 250",
	}
	for raw, why := range bad {
		_, err := ExtensionStoreName(raw, "table")
		if err == nil || CodeOf(err) != CodeExtensionStoreNameInvalid || KindOf(err) != KindBadRequest ||
			!strings.Contains(err.Error(), "Extension store table ") || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v", raw, err)
		}
	}
	for _, blank := range []*string{nil, new(string), ptrTo("  ")} {
		if got, err := ExtensionStoreTable(blank); err != nil || got != DefaultExtensionStoreTable {
			t.Errorf("blank table: %q %v", got, err)
		}
	}
	if _, err := ExtensionStoreTable(ptrTo("../x")); CodeOf(err) != CodeExtensionStoreNameInvalid {
		t.Errorf("../x table: %v", err)
	}
}

func ptrTo(s string) *string { return &s }
