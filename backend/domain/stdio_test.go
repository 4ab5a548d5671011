package domain

import (
	"path/filepath"
	"strings"
	"testing"
)

func validStdio() Stdio {
	return Stdio{
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-everything"},
		Env:     map[string]string{"API_KEY": "secret"},
		Cwd:     filepath.Join(string(filepath.Separator), "srv"),
	}
}

func TestStdioValidate(t *testing.T) {
	if err := validStdio().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*Stdio)
		code   string
	}{
		{"empty command", func(s *Stdio) { s.Command = "" }, CodeStdioCommandEmpty},
		{"blank command", func(s *Stdio) { s.Command = " \t" }, CodeStdioCommandEmpty},
		{"NUL in command", func(s *Stdio) { s.Command = "np\x00x" }, CodeStdioCommandInvalid},
		{"NUL in argument", func(s *Stdio) { s.Args = []string{"ok", "b\x00d"} }, CodeStdioArgInvalid},
		{"empty env name", func(s *Stdio) { s.Env = map[string]string{"": "x"} }, CodeStdioEnvNameInvalid},
		{"= in env name", func(s *Stdio) { s.Env = map[string]string{"A=B": "x"} }, CodeStdioEnvNameInvalid},
		{"NUL in env value", func(s *Stdio) { s.Env = map[string]string{"A": "x\x00"} }, CodeStdioEnvValue},
		{"relative cwd", func(s *Stdio) { s.Cwd = "srv" }, CodeStdioCwdInvalid},
		{"NUL in cwd", func(s *Stdio) { s.Cwd += "\x00" }, CodeStdioCwdInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validStdio()
			tt.change(&s)
			err := s.Validate()
			if CodeOf(err) != tt.code || KindOf(err) != KindBadRequest || !strings.HasPrefix(err.Error(), tt.code+": ") {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
	// Empty arguments, an empty value and no cwd are fine.
	if err := (Stdio{Command: "srv", Args: []string{""}, Env: map[string]string{"A": ""}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestStdioCommandLine(t *testing.T) {
	tests := []struct {
		s    Stdio
		want string
	}{
		{validStdio(), "npx -y @modelcontextprotocol/server-everything"},
		{Stdio{Command: "/opt/my tools/srv", Args: []string{"it's", "", "a b", "$HOME", "--x=1"}},
			`'/opt/my tools/srv' 'it'\''s' '' 'a b' '$HOME' --x=1`},
		{Stdio{Command: `C:\Program Files\node.exe`, Args: []string{"ünï"}}, `'C:\Program Files\node.exe' 'ünï'`},
	}
	for _, tt := range tests {
		if got := tt.s.CommandLine(); got != tt.want {
			t.Errorf("CommandLine() = %s, want %s", got, tt.want)
		}
	}
}

func TestNewStdioRegistration(t *testing.T) {
	s := validStdio()
	r, err := NewStdioRegistration("  everything ", s, ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	if r.DisplayName != "everything" || r.State != StatePaused || len(r.Permissions) != 0 || len(r.Headers) != 0 {
		t.Fatalf("%+v", r)
	}
	if got := r.Endpoint.String(); got != "stdio:npx -y @modelcontextprotocol/server-everything" || !r.Endpoint.IsStdio() {
		t.Fatalf("endpoint %q", got)
	}
	if _, err := ParseRegistrationID(string(r.ID)); err != nil {
		t.Fatal(err)
	}
	// The registration holds its own copy.
	s.Args[0] = "changed"
	s.Env["API_KEY"] = "changed"
	if r.Stdio.Args[0] != "-y" || r.Stdio.Env["API_KEY"] != "secret" {
		t.Fatal("the registration shares the caller's slices or maps")
	}
	// An endpoint that does not start with stdio: is never a stdio one, and
	// a stdio endpoint never parses as a remote one.
	if mustEndpoint(t, "http://stdio/").IsStdio() {
		t.Fatal("http URL taken for stdio")
	}
	if _, err := ParseEndpoint(r.Endpoint.String()); CodeOf(err) != "mcp.endpoint_absolute_required" {
		t.Fatalf("a stdio endpoint parsed as a URL: %v", err)
	}
	if _, err := NewStdioRegistration(" ", validStdio(), ProtocolAuto); CodeOf(err) != "mcp.display_name_empty" {
		t.Fatal(err)
	}
	if _, err := NewStdioRegistration("x", Stdio{}, ProtocolAuto); CodeOf(err) != CodeStdioCommandEmpty {
		t.Fatal(err)
	}
}

func TestStdioRegistrationValidate(t *testing.T) {
	r, err := NewStdioRegistration("everything", validStdio(), ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*Registration)
		code   string
	}{
		{"endpoint of another command", func(r *Registration) { r.Endpoint = StdioEndpoint(Stdio{Command: "other"}) }, CodeStdioRegistrationInvalid},
		{"http endpoint", func(r *Registration) { r.Endpoint = mustEndpoint(t, "http://127.0.0.1/") }, CodeStdioRegistrationInvalid},
		{"headers", func(r *Registration) { r.Headers = map[string]string{"a": "b"} }, CodeStdioRegistrationInvalid},
		{"bad command", func(r *Registration) { r.Stdio.Command = "" }, CodeStdioCommandEmpty},
		{"remote registration with a stdio endpoint", func(r *Registration) { r.Stdio = nil }, "mcp.endpoint_absolute_required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := r.Clone()
			tt.change(&c)
			if err := c.Validate(); CodeOf(err) != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}

func TestStdioConnection(t *testing.T) {
	r, err := NewStdioRegistration("everything", validStdio(), ProtocolAuto)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Clone()
	if !r.SameConnection(c) {
		t.Fatal("a clone is another connection")
	}
	c.Stdio.Env["API_KEY"] = "rotated"
	if r.SameConnection(c) {
		t.Fatal("another environment is the same connection")
	}
	if r.Stdio.Env["API_KEY"] != "secret" {
		t.Fatal("Clone shares the environment")
	}
	c = r.Clone()
	c.Stdio.Cwd = ""
	if r.SameConnection(c) {
		t.Fatal("another working directory is the same connection")
	}
	remote := validRegistration(t)
	remote.ID = r.ID
	if r.SameConnection(remote) || remote.SameConnection(r) {
		t.Fatal("stdio and remote are the same connection")
	}
	// Rename is the only settings change; Update is refused.
	c = r.Clone()
	if err := c.Rename("  other  "); err != nil || c.DisplayName != "other" || !c.SameConnection(r) {
		t.Fatalf("%v %+v", err, c)
	}
	if _, err := c.Update("x", mustEndpoint(t, "http://127.0.0.1/"), nil, ProtocolAuto); CodeOf(err) != CodeStdioConfigReadOnly ||
		!strings.Contains(err.Error(), "ttmcp stdio add") {
		t.Fatalf("Update of a stdio registration: %v", err)
	}
	if c.DisplayName != "other" || c.Stdio == nil {
		t.Fatal("a refused Update changed the registration")
	}
}
