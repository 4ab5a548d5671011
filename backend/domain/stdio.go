package domain

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Stdio is how a local MCP server is started: a command run on the
// backend's machine, speaking MCP on its stdin and stdout. It is ttmcp's
// addition (SPEC §10, seed 001 §3 and §7): a stdio command comes only from
// the user's own configuration (`ttmcp stdio add|import`), never from a
// page, an extension, a character card or a remote configuration, and it
// is always shown to the user. Nothing that reaches the backend over the
// WebSocket can create a Stdio or change one.
type Stdio struct {
	// Command is the program: a path, or a name looked up in PATH when the
	// process starts. It is kept verbatim.
	Command string
	// Args are passed as they are, without a shell.
	Args []string
	// Env is added to the backend's environment (and overrides it). The
	// values may be secrets: they are never shown, only the names.
	Env map[string]string
	// Cwd is the working directory, an absolute path; "" runs the process
	// in the backend's working directory.
	Cwd string
}

// Codes of stdio configuration rules.
const (
	CodeStdioCommandEmpty   = "mcp.stdio_command_empty"
	CodeStdioCommandInvalid = "mcp.stdio_command_invalid"
	CodeStdioArgInvalid     = "mcp.stdio_argument_invalid"
	CodeStdioEnvNameInvalid = "mcp.stdio_env_name_invalid"
	CodeStdioEnvValue       = "mcp.stdio_env_value_invalid"
	CodeStdioCwdInvalid     = "mcp.stdio_cwd_invalid"
	// CodeStdioConfigReadOnly refuses, from a page, anything that would
	// create a stdio server or change how one is started.
	CodeStdioConfigReadOnly = "mcp.stdio_config_readonly"
	// CodeStdioRegistrationInvalid: a stdio registration whose endpoint or
	// headers do not match its command.
	CodeStdioRegistrationInvalid = "mcp.stdio_registration_invalid"
)

// StdioConfigElsewhere is what a page is told when it tries to create a
// stdio server or change its command: where that is done instead.
const StdioConfigElsewhere = "stdio servers are configured only on the backend's machine, with `ttmcp stdio add`, `ttmcp stdio import` and `ttmcp stdio remove`; " +
	"a page may rename, activate, pause or remove one, discover its tools, set their permissions and description overrides, and test-call them"

// Validate checks a stdio configuration: a command that is not blank, no
// NUL byte anywhere (the operating system could not pass it), environment
// names that an environment can hold (not empty, no '='), and an absolute
// working directory when one is set.
func (s Stdio) Validate() error {
	if strings.TrimSpace(s.Command) == "" {
		return invalid(CodeStdioCommandEmpty, "the command of a stdio server cannot be empty")
	}
	if strings.ContainsRune(s.Command, 0) {
		return invalid(CodeStdioCommandInvalid, "the command contains a NUL character")
	}
	for i, a := range s.Args {
		if strings.ContainsRune(a, 0) {
			return invalid(CodeStdioArgInvalid, "argument %d contains a NUL character", i+1)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return invalid(CodeStdioEnvNameInvalid, "`%s` is not an environment variable name (it must be non-empty, without `=` or NUL)", name)
		}
		if strings.ContainsRune(s.Env[name], 0) {
			return invalid(CodeStdioEnvValue, "the value of `%s` contains a NUL character", name)
		}
	}
	if s.Cwd != "" && (strings.ContainsRune(s.Cwd, 0) || !filepath.IsAbs(s.Cwd)) {
		return invalid(CodeStdioCwdInvalid, "the working directory `%s` must be an absolute path", s.Cwd)
	}
	return nil
}

// EnvNames returns the names of the environment variables, sorted: what
// may be shown of the environment.
func (s Stdio) EnvNames() []string { return slices.Sorted(maps.Keys(s.Env)) }

// CommandLine returns the command and its arguments as one line, each
// word quoted the way a POSIX shell would need it ('it'\”s'), so the user
// sees exactly which words the process gets. It is for display: the
// process is started without a shell.
func (s Stdio) CommandLine() string {
	words := make([]string, 0, 1+len(s.Args))
	for _, w := range append([]string{s.Command}, s.Args...) {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes w for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Equal reports whether s and o start the same process.
func (s Stdio) Equal(o Stdio) bool {
	return s.Command == o.Command && slices.Equal(s.Args, o.Args) && maps.Equal(s.Env, o.Env) && s.Cwd == o.Cwd
}

// Clone returns a deep copy of s; nil slices and maps become empty ones.
func (s Stdio) Clone() Stdio {
	c := Stdio{Command: s.Command, Args: slices.Clone(s.Args), Env: maps.Clone(s.Env), Cwd: s.Cwd}
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	return c
}

// StdioEndpointPrefix starts the endpoint of every stdio registration.
const StdioEndpointPrefix = "stdio:"

// StdioEndpoint is the endpoint a stdio registration shows where a remote
// one shows its URL: "stdio:" and the command line. A Manager that only
// knows remote servers displays it as it is (the activation prompt shows
// the exact command), can never reach it over HTTP (ParseEndpoint refuses
// it), and a catalog file is bound to it as to a URL, so a catalog
// discovered from one command is never offered for another. The
// environment and the working directory are not part of it: the values
// may be secrets.
func StdioEndpoint(s Stdio) Endpoint {
	return Endpoint{url: StdioEndpointPrefix + s.CommandLine()}
}

// IsStdio reports whether e is the endpoint of a stdio registration.
func (e Endpoint) IsStdio() bool { return strings.HasPrefix(e.url, StdioEndpointPrefix) }

// NewStdioRegistration returns a stdio registration with a new id, paused
// and without permissions or overrides, as NewRegistration does for a
// remote server: nothing runs before the user activates it.
func NewStdioRegistration(displayName string, s Stdio, protocol Protocol) (Registration, error) {
	name, err := ParseDisplayName(displayName)
	if err != nil {
		return Registration{}, err
	}
	if err := s.Validate(); err != nil {
		return Registration{}, err
	}
	c := s.Clone()
	r := Registration{
		ID:          NewRegistrationID(),
		DisplayName: name,
		Endpoint:    StdioEndpoint(c),
		Headers:     map[string]string{},
		Protocol:    protocol,
		State:       StatePaused,
		Permissions: map[string]Permission{},
		Overrides:   map[string]DescriptionOverride{},
		Stdio:       &c,
	}
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	return r, nil
}

// validateStdio checks what a stdio registration adds to the common rules:
// its configuration, and an endpoint and headers that agree with it.
func (r Registration) validateStdio() error {
	if err := r.Stdio.Validate(); err != nil {
		return err
	}
	if r.Endpoint != StdioEndpoint(*r.Stdio) {
		return invalid(CodeStdioRegistrationInvalid, "the endpoint `%s` of a stdio registration must be `%s`", r.Endpoint, StdioEndpoint(*r.Stdio))
	}
	if len(r.Headers) > 0 {
		return invalid(CodeStdioRegistrationInvalid, "a stdio registration has no HTTP headers")
	}
	return nil
}

// Rename replaces the display name (trimmed) and nothing else: the one
// change of a stdio registration's settings a page may make.
func (r *Registration) Rename(displayName string) error {
	name, err := ParseDisplayName(displayName)
	if err != nil {
		return err
	}
	r.DisplayName = name
	return nil
}

// ProcessState tells whether the process of a stdio server is running.
type ProcessState string

// The process states.
const (
	ProcessStopped  ProcessState = "stopped"
	ProcessStarting ProcessState = "starting"
	ProcessRunning  ProcessState = "running"
)

// ProcessStatus is what the backend knows of a stdio server's process.
type ProcessStatus struct {
	State ProcessState
	// LastExit is how the last process ended, when it failed to start or
	// ended without being asked to; nil otherwise.
	LastExit *ProcessExit
}

// ProcessExit is a process that failed to start or died: when, why (a code
// and a message) and the last lines it wrote to stderr.
type ProcessExit struct {
	Time    time.Time
	Code    string
	Message string
	Stderr  []string
}
