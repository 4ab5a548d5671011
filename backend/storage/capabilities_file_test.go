package storage

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func TestCapabilitiesFileRoundTrip(t *testing.T) {
	store := Open(t.TempDir())
	id := domain.RegistrationID(id1)
	if a, found, err := store.LoadCapabilities(id); err != nil || found || a != (domain.Allowlist{}) {
		t.Fatalf("absent: %+v %v %v", a, found, err)
	}
	before := store.CapabilitiesFolderStamp()
	if err := store.SaveCapabilities(id, domain.Allowlist{Resources: true}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(store.CapabilitiesPath(id))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"schemaVersion\": 1,\n  \"kind\": \"ttmcp.mcpServerCapabilities\",\n  \"registrationId\": \"" + id1 + "\",\n" +
		"  \"resources\": true,\n  \"prompts\": false\n}"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(store.CapabilitiesPath(id)); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", fi.Mode().Perm())
		}
	}
	if a, found, err := store.LoadCapabilities(id); err != nil || !found || a != (domain.Allowlist{Resources: true}) {
		t.Fatalf("read back %+v %v %v", a, found, err)
	}
	if store.CapabilitiesFolderStamp().Same(before) {
		t.Error("the folder's stamp did not change")
	}
	if err := store.DeleteCapabilities(id); err != nil {
		t.Fatal(err)
	}
	if _, found, err := store.LoadCapabilities(id); found || err != nil {
		t.Fatalf("after delete: %v %v", found, err)
	}
	if err := store.DeleteCapabilities(id); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
	if _, _, err := store.LoadCapabilities("not-an-id"); err == nil {
		t.Fatal("a malformed id was looked up")
	}
}

// A damaged file is refused, never repaired or read as the default.
func TestCapabilitiesFileStrict(t *testing.T) {
	head := `{"schemaVersion":1,"kind":"ttmcp.mcpServerCapabilities","registrationId":"` + id1 + `",`
	tests := map[string]string{
		"unknown member":  head + `"resources":true,"prompts":true,"tools":true}`,
		"missing member":  head + `"resources":true}`,
		"repeated member": head + `"resources":true,"prompts":true,"prompts":false}`,
		"wrong type":      head + `"resources":"yes","prompts":true}`,
		"trailing data":   head + `"resources":true,"prompts":true} {}`,
		"wrong case":      head + `"Resources":true,"prompts":true}`,
		"other kind":      `{"schemaVersion":1,"kind":"ttmcp.mcpToolSet","registrationId":"` + id1 + `","resources":true,"prompts":true}`,
		"schema 2":        `{"schemaVersion":2,"kind":"ttmcp.mcpServerCapabilities","registrationId":"` + id1 + `","resources":true,"prompts":true}`,
		"other id":        `{"schemaVersion":1,"kind":"ttmcp.mcpServerCapabilities","registrationId":"` + id2 + `","resources":true,"prompts":true}`,
		"not UTF-8":       head + `"resources":true,"prompts":true,"x":"` + "\xff" + `"}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			store := Open(t.TempDir())
			path := store.CapabilitiesPath(domain.RegistrationID(id1))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			a, found, err := store.LoadCapabilities(domain.RegistrationID(id1))
			if err == nil || found || a != (domain.Allowlist{}) {
				t.Fatalf("loaded %+v %v %v", a, found, err)
			}
			if data, _ := os.ReadFile(path); string(data) != content {
				t.Fatal("the damaged file was changed")
			}
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), "registration id") {
				t.Errorf("the error does not name the file: %v", err)
			}
		})
	}
	// A directory where the file belongs is refused too.
	store := Open(t.TempDir())
	if err := os.MkdirAll(store.CapabilitiesPath(domain.RegistrationID(id1)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.LoadCapabilities(domain.RegistrationID(id1)); err == nil {
		t.Fatal("a directory was read as a file")
	}
}
