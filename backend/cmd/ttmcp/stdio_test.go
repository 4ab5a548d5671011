package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
)

// runOut runs `ttmcp args...` in this process and returns what it printed
// as its result.
func runOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errs bytes.Buffer
	old := stdout
	stdout = &out
	defer func() { stdout = old }()
	err := run(context.Background(), args, &errs)
	return out.String(), err
}

func TestStdioCLI(t *testing.T) {
	root := t.TempDir()
	t.Setenv("TTMCP_TEST_TOKEN", "from-the-shell")
	out, err := runOut(t, "stdio", "add", "everything", "--data-root", root, "--env", "API_KEY=s3cret", "--env", "TTMCP_TEST_TOKEN",
		"--cwd", ".", "--", "npx", "-y", "@modelcontextprotocol/server-everything", "--flag", "it's")
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	for _, want := range []string{`added stdio server "everything"`, "paused: activate it in the Manager",
		`command: npx -y @modelcontextprotocol/server-everything --flag 'it'\''s'`, "env:     API_KEY, TTMCP_TEST_TOKEN (values not shown)", "cwd:     " + cwd} {
		if !strings.Contains(out, want) {
			t.Errorf("add printed\n%s\nwithout %q", out, want)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "from-the-shell") {
		t.Fatal("an environment value was printed")
	}
	servers, _, err := storage.Open(root).ScanStdio()
	if err != nil || len(servers) != 1 {
		t.Fatal(servers, err)
	}
	s := servers[0]
	if s.State != domain.StatePaused || s.Stdio.Command != "npx" || len(s.Stdio.Args) != 4 || s.Stdio.Args[3] != "it's" ||
		s.Stdio.Env["API_KEY"] != "s3cret" || s.Stdio.Env["TTMCP_TEST_TOKEN"] != "from-the-shell" || s.Stdio.Cwd != cwd {
		t.Fatalf("stored %+v %+v", s, s.Stdio)
	}

	if _, err := runOut(t, "stdio", "add", "everything", "--data-root", root, "--", "other"); err == nil || !strings.Contains(err.Error(), "mcp.stdio_name_taken") {
		t.Fatalf("same name: %v", err)
	}
	for _, bad := range [][]string{
		{"stdio", "add", "x", "--data-root", root},                                          // no command
		{"stdio", "add", "--data-root", root, "--", "srv"},                                  // no name
		{"stdio", "add", "x", "--data-root", root, "--env", "UNSET_TTMCP_VAR", "--", "srv"}, // --env KEY not set
		{"stdio", "add", "x", "--data-root", root, "--shell", "--", "srv"},                  // unknown option
		{"stdio", "list", "extra", "--data-root", root},
		{"stdio", "frobnicate"},
	} {
		if _, err := runOut(t, bad...); err == nil {
			t.Errorf("%q succeeded", bad)
		}
	}

	config := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	os.WriteFile(config, []byte(`{"mcpServers":{
		"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"],"env":{"MEMORY_FILE_PATH":"mem.json"}},
		"exa":{"url":"https://mcp.exa.ai/mcp"},
		"everything":{"command":"npx"}}}`), 0o600)
	out, err = runOut(t, "stdio", "import", config, "--data-root", root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`added stdio server "memory"`, "skipped `exa`: it is a remote server", "skipped `everything`", "1 stdio server(s) imported"} {
		if !strings.Contains(out, want) {
			t.Errorf("import printed\n%s\nwithout %q", out, want)
		}
	}
	os.WriteFile(config, []byte(`{"mcpServers":{"a":{"command":"a"},"b":{"args":["x"]}}}`), 0o600)
	if _, err := runOut(t, "stdio", "import", config, "--data-root", root); err == nil || !strings.Contains(err.Error(), "nothing was imported") {
		t.Fatalf("invalid import: %v", err)
	}

	out, err = runOut(t, "stdio", "list", "--data-root", root)
	if err != nil || !strings.Contains(out, "everything  paused") || !strings.Contains(out, "memory  paused") || strings.Contains(out, "\na  ") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = runOut(t, "stdio", "remove", "memory", "--data-root", root)
	if err != nil || !strings.Contains(out, `removed stdio server "memory"`) {
		t.Fatalf("remove: %v %s", err, out)
	}
	if _, err := runOut(t, "stdio", "remove", "memory", "--data-root", root); err == nil || !strings.Contains(err.Error(), "mcp.stdio_not_found") {
		t.Fatalf("remove again: %v", err)
	}
	if out, _ := runOut(t, "stdio", "list", "--data-root", root); strings.Contains(out, "memory") {
		t.Fatalf("list after remove:\n%s", out)
	}
}
