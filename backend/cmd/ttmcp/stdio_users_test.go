package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/users"
)

// stdioIDs returns the ids of the stdio servers in handle's root.
func stdioIDs(t *testing.T, root, handle string) []string {
	t.Helper()
	r, err := users.Root(root, handle)
	if err != nil {
		t.Fatal(err)
	}
	servers, _, err := storage.Open(r).ScanStdio()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range servers {
		out = append(out, s.DisplayName+"="+string(s.ID))
	}
	return out
}

// `ttmcp stdio … --user`: a server is offered to the users named (a copy
// in each one's root under one id), listed with them, and removed for all.
func TestStdioCLIPerUser(t *testing.T) {
	root := t.TempDir()
	out, err := runOut(t, "stdio", "add", "shared", "--user", "alice", "--user", "bob", "--user", "alice", "--data-root", root, "--", "srv", "--flag")
	if err != nil || !strings.Contains(out, "users:   alice, bob") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	a, b := stdioIDs(t, root, "alice"), stdioIDs(t, root, "bob")
	if len(a) != 1 || len(b) != 1 || a[0] != b[0] || !strings.HasPrefix(a[0], "shared=") || len(stdioIDs(t, root, users.DefaultUser)) != 0 {
		t.Fatalf("alice %v, bob %v, default %v", a, b, stdioIDs(t, root, users.DefaultUser))
	}
	id := strings.TrimPrefix(a[0], "shared=")
	if _, err := runOut(t, "stdio", "add", "mine", "--data-root", root, "--", "own"); err != nil {
		t.Fatal(err)
	}
	if got := stdioIDs(t, root, users.DefaultUser); len(got) != 1 || !strings.HasPrefix(got[0], "mine=") {
		t.Fatalf("default user: %v", got)
	}
	// A name is one server's across users; a handle is SillyTavern's.
	if _, err := runOut(t, "stdio", "add", "shared", "--user", "carol", "--data-root", root, "--", "other"); err == nil || !strings.Contains(err.Error(), "mcp.stdio_name_taken") {
		t.Fatalf("a name bob's server has: %v", err)
	}
	for _, bad := range []string{"../x", "Carol", "a--b", ""} {
		if _, err := runOut(t, "stdio", "add", "x", "--user", bad, "--data-root", root, "--", "srv"); err == nil || !strings.Contains(err.Error(), users.CodeUserInvalid) {
			t.Errorf("--user %q: %v", bad, err)
		}
	}
	if hs, _ := users.Handles(root); strings.Join(hs, ",") != "default-user,alice,bob" {
		t.Fatalf("users %v: a refused add created a root", hs)
	}
	if _, err := runOut(t, "stdio", "list", "--user", "alice", "--data-root", root); err == nil {
		t.Error("list --user accepted")
	}

	config := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers":{"memory":{"command":"npx"},"mine":{"command":"x"}}}`), 0o600)
	out, err = runOut(t, "stdio", "import", config, "--user", "bob", "--data-root", root)
	if err != nil || !strings.Contains(out, "skipped `mine`") || !strings.Contains(out, "1 stdio server(s) imported for bob") {
		t.Fatalf("import: %v\n%s", err, out)
	}

	out, err = runOut(t, "stdio", "list", "--data-root", root)
	for _, want := range []string{"shared  paused  " + id + "\n    users:   alice (paused), bob (paused)\n    command: srv --flag",
		"mine  paused", "users:   default-user (paused)", "memory  paused", "users:   bob (paused)"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("list: %v\n%s\nwithout %q", err, out, want)
		}
	}

	out, err = runOut(t, "stdio", "remove", "shared", "--data-root", root)
	if err != nil || !strings.Contains(out, `removed stdio server "shared" (`+id+`) for alice, bob`) {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	if a, b := stdioIDs(t, root, "alice"), stdioIDs(t, root, "bob"); len(a) != 0 || len(b) != 1 {
		t.Fatalf("after remove: alice %v, bob %v", a, b)
	}
	if _, err := runOut(t, "stdio", "remove", id, "--data-root", root); err == nil || !strings.Contains(err.Error(), "mcp.stdio_not_found") {
		t.Fatalf("remove again: %v", err)
	}

	// One user's copy cannot be written: nobody gets the server.
	if os.Geteuid() != 0 {
		bob, _ := users.Root(root, "bob")
		dir := filepath.Join(bob, "_tauritavern", "mcp", "stdio")
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
		if _, err := runOut(t, "stdio", "add", "half", "--user", "alice", "--user", "bob", "--data-root", root, "--", "srv"); err == nil {
			t.Fatal("add succeeded without bob's copy")
		}
		if got := stdioIDs(t, root, "alice"); len(got) != 0 {
			t.Fatalf("alice kept a copy: %v", got)
		}
	}
}
