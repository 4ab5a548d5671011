package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// stdioFixture returns a valid stdio registration with every kind of
// content.
func stdioFixture(t *testing.T, id string) domain.Registration {
	t.Helper()
	s := domain.Stdio{
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-everything", "it's <&>"},
		Env:     map[string]string{"API_KEY": "s3cret", "DEBUG": ""},
		Cwd:     filepath.Join(string(filepath.Separator), "srv", "mcp"),
	}
	r, err := domain.NewStdioRegistration("everything", s, domain.ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	r.ID = domain.RegistrationID(id)
	r.State = domain.StateActive
	r.Permissions = map[string]domain.Permission{"echo": domain.PermissionAllow}
	r.Overrides = map[string]domain.DescriptionOverride{"echo": {Description: ptr("Echo it"), Properties: map[string]string{}}}
	return r
}

func TestStdioFileRoundTrip(t *testing.T) {
	store := Open(t.TempDir())
	r := stdioFixture(t, id1)
	data := roundTrip(t, r, store.SaveStdio, store.StdioPath(r.ID), func() (domain.Registration, bool, error) { return store.LoadStdio(r.ID) })
	want := "{\n" +
		"  \"schemaVersion\": 1,\n" +
		"  \"kind\": \"ttmcp.mcpStdioServer\",\n" +
		"  \"id\": \"" + id1 + "\",\n" +
		"  \"displayName\": \"everything\",\n" +
		"  \"command\": \"npx\",\n" +
		"  \"args\": [\n" +
		"    \"-y\",\n" +
		"    \"@modelcontextprotocol/server-everything\",\n" +
		"    \"it's <&>\"\n" +
		"  ],\n" +
		"  \"env\": {\n" +
		"    \"API_KEY\": \"s3cret\",\n" +
		"    \"DEBUG\": \"\"\n" +
		"  },\n" +
		"  \"cwd\": " + quoteJSON(r.Stdio.Cwd) + ",\n" +
		"  \"protocolVersion\": \"auto\",\n" +
		"  \"state\": \"active\",\n" +
		"  \"toolPermissions\": {\n" +
		"    \"echo\": \"allow\"\n" +
		"  },\n" +
		"  \"toolDescriptionOverrides\": {\n" +
		"    \"echo\": {\n" +
		"      \"description\": \"Echo it\",\n" +
		"      \"properties\": {}\n" +
		"    }\n" +
		"  }\n" +
		"}"
	if data != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	// No registration file was written, and the registration file kind
	// refuses a stdio server.
	if _, err := os.Stat(store.RegistrationPath(r.ID)); !os.IsNotExist(err) {
		t.Fatal("a stdio server was written as a registration file")
	}
	if err := store.Save(r); err == nil || !strings.Contains(err.Error(), "own file kind") {
		t.Fatalf("Store.Save of a stdio server: %v", err)
	}
	// Minimal file: args and env are written empty, cwd left out.
	bare, err := domain.NewStdioRegistration("bare", domain.Stdio{Command: "srv"}, domain.ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveStdio(bare); err != nil {
		t.Fatal(err)
	}
	bareData, _ := os.ReadFile(store.StdioPath(bare.ID))
	if !strings.Contains(string(bareData), "\"args\": [],\n  \"env\": {},\n  \"protocolVersion\"") {
		t.Fatalf("bare file:\n%s", bareData)
	}
}

func quoteJSON(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// A stdio file is read as strictly as a registration file.
func TestStdioFileStrict(t *testing.T) {
	store := Open(t.TempDir())
	good := `{"schemaVersion":1,"kind":"ttmcp.mcpStdioServer","id":"` + id1 + `","displayName":"x","command":"srv","state":"paused"}`
	tests := []strictCase{
		{"minimal", good, ""},
		{"unknown member", strings.Replace(good, `"state"`, `"shell":true,"state"`, 1), "unknown field `shell`"},
		{"null args", strings.Replace(good, `"state"`, `"args":null,"state"`, 1), "invalid type: null at /args"},
		{"number arg", strings.Replace(good, `"state"`, `"args":[1],"state"`, 1), "Invalid JSON"},
		{"missing command", strings.Replace(good, `"command":"srv",`, "", 1), "missing field `command`"},
		{"registration kind", strings.Replace(good, "ttmcp.mcpStdioServer", "tauritavern.mcpServerRegistration", 1), CodeStdioKindInvalid},
		{"schema 2", strings.Replace(good, `"schemaVersion":1`, `"schemaVersion":2`, 1), CodeStdioSchemaUnsupported},
		{"other id", strings.Replace(good, id1, id2, 1), CodeStdioIDMismatch},
		{"empty command", strings.Replace(good, `"command":"srv"`, `"command":" "`, 1), domain.CodeStdioCommandEmpty},
		{"relative cwd", strings.Replace(good, `"state"`, `"cwd":"rel","state"`, 1), domain.CodeStdioCwdInvalid},
		{"bad env name", strings.Replace(good, `"state"`, `"env":{"A=B":"x"},"state"`, 1), domain.CodeStdioEnvNameInvalid},
		{"bad state", strings.Replace(good, `"paused"`, `"running"`, 1), "unknown state"},
		{"off stored", strings.Replace(good, `"state"`, `"toolPermissions":{"t":"off"},"state"`, 1), "mcp.permission_off_not_persisted"},
		{"trailing data", good + "{}", "Invalid JSON"},
	}
	checkStrict(t, store.StdioPath(id1), tests, func() (domain.Registration, bool, error) { return store.LoadStdio(id1) },
		func(r domain.Registration) bool {
			return r.Stdio != nil && r.Stdio.Command == "srv" && r.Endpoint.String() == "stdio:srv"
		})
}

// The registry serves both kinds under one id space, each from its own
// file, and reports a stdio file whose id a registration file has.
func TestRegistry(t *testing.T) {
	store := Open(t.TempDir())
	reg := store.Registry()
	remote := fixture(t, id2)
	stdio := stdioFixture(t, id1)
	for _, r := range []domain.Registration{remote, stdio} {
		if err := reg.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(store.StdioPath(id1)); err != nil {
		t.Fatal("the stdio registration is not in its stdio file")
	}
	if _, err := os.Stat(store.RegistrationPath(id2)); err != nil {
		t.Fatal("the remote registration is not in its registration file")
	}
	// A damaged stdio file is an issue named after its folder.
	os.WriteFile(filepath.Join(store.root, StdioDirName, id3+".json"), []byte("{"), 0o600)
	regs, issues, err := reg.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || regs[0].ID != id2 || regs[0].Stdio != nil || regs[1].ID != id1 || regs[1].Stdio == nil {
		t.Fatalf("scan (registration files, then stdio files): %+v", regs)
	}
	if len(issues) != 1 || issues[0].FileName != "stdio/"+id3+".json" {
		t.Fatalf("issues: %+v", issues)
	}
	// Store.Scan alone still sees only upstream's files.
	if regs, _, _ := store.Scan(); len(regs) != 1 || regs[0].ID != id2 {
		t.Fatalf("Store.Scan: %+v", regs)
	}
	for _, want := range []domain.Registration{stdio, remote} {
		got, found, err := reg.Load(want.ID)
		if err != nil || !found || !reflect.DeepEqual(got, want) {
			t.Fatalf("Load(%s) = %+v %v %v", want.ID, got, found, err)
		}
	}
	// A changed stdio registration goes back to its stdio file.
	stdio.State = domain.StatePaused
	if err := reg.Save(stdio); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := store.LoadStdio(id1); got.State != domain.StatePaused {
		t.Fatal("the stdio file was not updated")
	}
	// Duplicate id: the registration file wins, the stdio file is an issue.
	dup := stdioFixture(t, id2)
	if err := store.SaveStdio(dup); err != nil {
		t.Fatal(err)
	}
	regs, issues, _ = reg.Scan()
	if len(regs) != 2 || regs[0].ID != id2 || regs[0].Stdio != nil || regs[1].ID != id1 {
		t.Fatalf("scan with a duplicate: %+v", regs)
	}
	found := false
	for _, is := range issues {
		found = found || is.FileName == "stdio/"+id2+".json" && strings.HasPrefix(is.Message, CodeRegistrationIDDuplicate+": ")
	}
	if !found {
		t.Fatalf("no duplicate issue: %+v", issues)
	}
	if got, _, _ := reg.Load(id2); got.Stdio != nil {
		t.Fatal("Load of a duplicate id returned the stdio file")
	}
	// Delete removes the registration file first, then the stdio file.
	if err := reg.Delete(id2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.RegistrationPath(id2)); !os.IsNotExist(err) {
		t.Fatal("registration file kept")
	}
	if _, err := os.Stat(store.StdioPath(id2)); err != nil {
		t.Fatal("the stdio file went with the registration file")
	}
	for _, id := range []domain.RegistrationID{id2, id1} {
		if err := reg.Delete(id); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := reg.Load(id); found {
			t.Fatalf("%s still loads", id)
		}
	}
	// Catalogs of stdio registrations are bound to their stdio: endpoint.
	cat := domain.Catalog{ProtocolVersion: "2025-11-25", Tools: []domain.Tool{}, Diagnostics: []domain.Diagnostic{}}
	if err := reg.SaveCatalog(stdio.ID, stdio.Endpoint, cat); err != nil {
		t.Fatal(err)
	}
	if _, found, err := reg.LoadCatalog(stdio.ID, stdio.Endpoint); err != nil || !found {
		t.Fatal(found, err)
	}
	other := domain.StdioEndpoint(domain.Stdio{Command: "other"})
	if _, _, err := reg.LoadCatalog(stdio.ID, other); err == nil || !strings.Contains(err.Error(), "mcp.catalog_endpoint_mismatch") {
		t.Fatalf("catalog of another command: %v", err)
	}
}
