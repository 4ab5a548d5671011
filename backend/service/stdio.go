package service

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Local (stdio) servers (SPEC §10, seed 001 §3 and §7). A stdio server's
// command comes only from the user, on the backend's machine: AddStdio,
// ImportStdio and RemoveStdio are called by `ttmcp stdio …` and by no
// WebSocket command. Over the WebSocket a stdio registration is used like
// a remote one — listed (with its command line and the names of its
// environment variables), renamed, activated, paused, removed, discovered,
// test-called, given permissions and overrides — but nothing a page sends
// can create one or change how it starts.

// Processes is the supervisor of the stdio servers' processes (the
// gateway); nil when the service runs without one (the CLI).
type Processes interface {
	// StdioStatus tells whether the process of id runs and how the last
	// one ended when it failed.
	StdioStatus(id domain.RegistrationID) domain.ProcessStatus
	// StopStdio stops the process of id, if one runs.
	StopStdio(id domain.RegistrationID, why string)
	// RunningStdio returns the registrations whose process runs or starts.
	RunningStdio() []domain.RegistrationID
}

// Codes of stdio requests from a page.
const (
	// CodeNotStdio: a stdio-only request named a remote registration.
	CodeNotStdio = "mcp.not_stdio"
	// CodeStdioNoSignIn: a sign-in was asked for a stdio server.
	CodeStdioNoSignIn = "mcp.stdio_no_sign_in"
)

// stdioConfigDTO projects how r is started, for the page: everything but
// the environment's values.
func stdioConfigDTO(r domain.Registration) (string, *jsapi.McpStdioConfig) {
	if r.Stdio == nil {
		return "", nil
	}
	c := &jsapi.McpStdioConfig{
		Command:     r.Stdio.Command,
		Args:        slices.Clone(r.Stdio.Args),
		EnvNames:    r.Stdio.EnvNames(),
		CommandLine: r.Stdio.CommandLine(),
	}
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.EnvNames == nil {
		c.EnvNames = []string{}
	}
	if r.Stdio.Cwd != "" {
		cwd := r.Stdio.Cwd
		c.Cwd = &cwd
	}
	return jsapi.TransportStdio, c
}

// refuseStdioEndpoint refuses a "stdio:" endpoint from a page, naming
// where stdio servers are configured.
func refuseStdioEndpoint(endpoint string) error {
	if strings.HasPrefix(strings.TrimSpace(endpoint), domain.StdioEndpointPrefix) {
		return stdioReadOnly("a page cannot create a stdio server or give a server a command")
	}
	return nil
}

func stdioReadOnly(what string) error {
	return domain.Errorf(domain.KindBadRequest, domain.CodeStdioConfigReadOnly, "%s: %s", what, domain.StdioConfigElsewhere)
}

// updateStdio applies an update_mcp_server to a stdio registration: it may
// rename it, and change nothing else. The endpoint, headers and protocol
// must be what the server list shows for it (so a Manager that sends the
// whole form back can rename), anything else is refused.
func updateStdio(r *domain.Registration, dto jsapi.UpdateMcpServerDto) error {
	if strings.TrimSpace(dto.Endpoint) != r.Endpoint.String() || len(dto.Headers) > 0 || dto.ProtocolVersion != string(r.Protocol) {
		return stdioReadOnly(fmt.Sprintf("`%s` is a stdio server; only its name can be changed here", r.DisplayName))
	}
	return r.Rename(dto.DisplayName)
}

// StdioStatus returns what the backend knows of a stdio server's process
// (get_mcp_stdio_status).
func (s *Service) StdioStatus(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpStdioStatus, error) {
	id, err := domain.ParseRegistrationID(dto.RegistrationID)
	if err != nil {
		return jsapi.McpStdioStatus{}, err
	}
	r, err := s.load(id)
	if err != nil {
		return jsapi.McpStdioStatus{}, err
	}
	if r.Stdio == nil {
		return jsapi.McpStdioStatus{}, domain.Errorf(domain.KindBadRequest, CodeNotStdio, "registration `%s` is not a stdio server", id)
	}
	out := jsapi.McpStdioStatus{RegistrationID: string(id), State: string(domain.ProcessStopped)}
	if s.processes == nil {
		return out, nil
	}
	st := s.processes.StdioStatus(id)
	out.State = string(st.State)
	if e := st.LastExit; e != nil {
		out.LastExit = &jsapi.McpStdioExit{Time: e.Time.UTC().Format(time.RFC3339Nano), Code: e.Code, Message: e.Message, Stderr: slices.Clone(e.Stderr)}
		if out.LastExit.Stderr == nil {
			out.LastExit.Stderr = []string{}
		}
	}
	return out, nil
}

// stopStdio stops the process of a stdio registration that was paused or
// removed.
func (s *Service) stopStdio(r domain.Registration, why string) {
	if r.Stdio != nil && s.processes != nil {
		s.processes.StopStdio(r.ID, why)
	}
}

// retainStdio stops the processes of stdio registrations that are no
// longer active ones: removed or paused outside this service (by `ttmcp
// stdio remove`, or a file edited by hand, while the backend runs). List
// calls it; an unused process would be stopped when idle anyway.
func (s *Service) retainStdio(regs []domain.Registration) {
	if s.processes == nil {
		return
	}
	running := s.processes.RunningStdio()
	if len(running) == 0 {
		return
	}
	active := make(map[domain.RegistrationID]bool, len(regs))
	for _, r := range regs {
		active[r.ID] = r.Stdio != nil && r.State == domain.StateActive
	}
	for _, id := range running {
		if !active[id] {
			s.processes.StopStdio(id, "paused or removed")
		}
	}
}

// ---------------------------------------------------------------- the CLI's use cases

// StdioServer is a stdio server as the CLI shows it.
type StdioServer struct {
	ID          domain.RegistrationID
	DisplayName string
	State       domain.State
	Stdio       domain.Stdio
}

// ListStdio returns the stdio servers, by name, and the storage issues of
// stdio files.
func (s *Service) ListStdio(ctx context.Context) ([]StdioServer, []jsapi.StorageIssue, error) {
	regs, issues, err := s.scan()
	if err != nil {
		return nil, nil, internal("cannot list MCP registrations", err)
	}
	var out []StdioServer
	for _, r := range regs {
		if r.Stdio != nil {
			out = append(out, StdioServer{ID: r.ID, DisplayName: r.DisplayName, State: r.State, Stdio: r.Stdio.Clone()})
		}
	}
	slices.SortFunc(out, func(a, b StdioServer) int {
		return cmpOr(strings.Compare(a.DisplayName, b.DisplayName), strings.Compare(string(a.ID), string(b.ID)))
	})
	var stdioIssues []jsapi.StorageIssue
	for _, is := range issues {
		if strings.HasPrefix(is.FileName, "stdio/") {
			stdioIssues = append(stdioIssues, is)
		}
	}
	return out, stdioIssues, nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// Codes of the CLI's stdio use cases.
const (
	CodeStdioNameTaken     = "mcp.stdio_name_taken"
	CodeStdioNotFound      = "mcp.stdio_not_found"
	CodeStdioNameAmbiguous = "mcp.stdio_name_ambiguous"
	CodeStdioImportInvalid = "mcp.stdio_import_invalid"
	CodeStdioIDTaken       = "mcp.stdio_id_taken"
)

// AddStdio registers a stdio server, paused (nothing runs before the user
// activates it in the Manager). Its name must not be another stdio
// server's, so `ttmcp stdio remove <name>` names one server.
func (s *Service) AddStdio(ctx context.Context, displayName string, cfg domain.Stdio) (StdioServer, error) {
	return s.AddStdioAs(ctx, "", displayName, cfg)
}

// AddStdioAs is AddStdio under a given id (empty: a new one): the CLI
// offers one stdio server to several SillyTavern users, each user's data
// root holding its own copy under the same id (docs/DECISIONS.md). An id
// this data root already uses, for anything, is refused.
func (s *Service) AddStdioAs(ctx context.Context, id domain.RegistrationID, displayName string, cfg domain.Stdio) (StdioServer, error) {
	r, err := domain.NewStdioRegistration(displayName, cfg, domain.ProtocolAuto)
	if err != nil {
		return StdioServer{}, err
	}
	if id != "" {
		if _, err := domain.ParseRegistrationID(string(id)); err != nil {
			return StdioServer{}, err
		}
		r.ID = id
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return StdioServer{}, err
	}
	defer unlock()
	existing, _, err := s.ListStdio(ctx)
	if err != nil {
		return StdioServer{}, err
	}
	if _, taken, err := s.regs.Load(r.ID); err != nil || taken {
		return StdioServer{}, domain.Errorf(domain.KindConflict, CodeStdioIDTaken, "the id %s is taken in this data root (%v)", r.ID, err)
	}
	for _, e := range existing {
		if e.DisplayName == r.DisplayName {
			return StdioServer{}, domain.Errorf(domain.KindConflict, CodeStdioNameTaken,
				"a stdio server is already called `%s` (%s); remove it first or choose another name", r.DisplayName, e.ID)
		}
	}
	if err := s.save(r); err != nil {
		return StdioServer{}, saveFailed(err)
	}
	return StdioServer{ID: r.ID, DisplayName: r.DisplayName, State: r.State, Stdio: r.Stdio.Clone()}, nil
}

// RemoveStdio removes the stdio server named by its id or its name, and
// its catalog. A backend that runs it stops it (it no longer finds it).
func (s *Service) RemoveStdio(ctx context.Context, nameOrID string) (StdioServer, error) {
	servers, _, err := s.ListStdio(ctx)
	if err != nil {
		return StdioServer{}, err
	}
	var found []StdioServer
	for _, srv := range servers {
		if string(srv.ID) == nameOrID || srv.DisplayName == strings.TrimSpace(nameOrID) {
			found = append(found, srv)
		}
	}
	switch len(found) {
	case 0:
		return StdioServer{}, domain.Errorf(domain.KindNotFound, CodeStdioNotFound, "no stdio server is called or has the id `%s` (see `ttmcp stdio list`)", nameOrID)
	case 1:
	default:
		return StdioServer{}, domain.Errorf(domain.KindConflict, CodeStdioNameAmbiguous, "%d stdio servers are called `%s`; remove one by its id", len(found), nameOrID)
	}
	if err := s.Remove(ctx, jsapi.McpRegistrationIdDto{RegistrationID: string(found[0].ID)}); err != nil {
		return StdioServer{}, err
	}
	return found[0], nil
}

// StdioImport is what ParseStdioImport found in a desktop client's
// configuration: the servers to add, in name order, and a note for each
// entry left out or member ignored.
type StdioImport struct {
	Servers []StdioImportEntry
	Notes   []string
}

// StdioImportEntry is one server to add.
type StdioImportEntry struct {
	Name  string
	Stdio domain.Stdio
}

// ParseStdioImport reads the configuration format of desktop MCP clients
// (Claude Desktop, Cursor, VS Code's "servers" too):
//
//	{"mcpServers": {"<name>": {"command": "npx", "args": [...], "env": {...}, "cwd": "..."}}}
//
// An entry with a url is a remote server: it is skipped with a note (add
// it in the Manager). Members other desktop clients keep beside these
// (disabled, autoApprove, timeout, ...) are ignored with a note. A
// relative cwd is resolved against base. An entry that is not a valid
// stdio server fails the whole import: nothing is added.
func ParseStdioImport(data []byte, base string) (StdioImport, error) {
	var root map[string]jsontext.Value
	if err := json.Unmarshal(data, &root); err != nil {
		return StdioImport{}, importError("the file is not a JSON object: %v", err)
	}
	list, ok := root["mcpServers"]
	if !ok {
		list, ok = root["servers"]
	}
	if !ok {
		return StdioImport{}, importError("the file has no `mcpServers` object")
	}
	var entries map[string]jsontext.Value
	if err := json.Unmarshal(list, &entries); err != nil {
		return StdioImport{}, importError("`mcpServers` is not an object of servers: %v", err)
	}
	var out StdioImport
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		var e map[string]jsontext.Value
		if err := json.Unmarshal(entries[name], &e); err != nil {
			return StdioImport{}, importError("server `%s` is not an object", name)
		}
		if _, remote := e["url"]; remote {
			out.Notes = append(out.Notes, fmt.Sprintf("skipped `%s`: it is a remote server (url); add it in the Manager", name))
			continue
		}
		var entry struct {
			Type    *string           `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			Cwd     string            `json:"cwd"`
		}
		if err := json.Unmarshal(entries[name], &entry, json.RejectUnknownMembers(false)); err != nil {
			return StdioImport{}, importError("server `%s`: %v", name, err)
		}
		if entry.Type != nil && *entry.Type != "stdio" {
			out.Notes = append(out.Notes, fmt.Sprintf("skipped `%s`: its type `%s` is not stdio", name, *entry.Type))
			continue
		}
		var ignored []string
		for _, k := range slices.Sorted(maps.Keys(e)) {
			switch k {
			case "type", "command", "args", "env", "cwd":
			default:
				ignored = append(ignored, "`"+k+"`")
			}
		}
		if len(ignored) > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("`%s`: ignored %s", name, strings.Join(ignored, ", ")))
		}
		cfg := domain.Stdio{Command: entry.Command, Args: entry.Args, Env: entry.Env, Cwd: entry.Cwd}
		if cfg.Cwd != "" && !filepath.IsAbs(cfg.Cwd) {
			cfg.Cwd = filepath.Join(base, cfg.Cwd)
		}
		if _, err := domain.ParseDisplayName(name); err != nil {
			return StdioImport{}, importError("server `%s`: %v", name, err)
		}
		if err := cfg.Validate(); err != nil {
			return StdioImport{}, importError("server `%s`: %v", name, err)
		}
		out.Servers = append(out.Servers, StdioImportEntry{Name: strings.TrimSpace(name), Stdio: cfg.Clone()})
	}
	return out, nil
}

func importError(format string, args ...any) error {
	return domain.Errorf(domain.KindBadRequest, CodeStdioImportInvalid, format, args...)
}

// ImportStdio adds the servers of an import, paused. A server whose name a
// stdio server already has is skipped with a note (its configuration may
// differ: remove the old one first to replace it). It returns the servers
// added and the notes.
func (s *Service) ImportStdio(ctx context.Context, im StdioImport) ([]StdioServer, []string, error) {
	notes := slices.Clone(im.Notes)
	var added []StdioServer
	for _, e := range im.Servers {
		srv, err := s.AddStdio(ctx, e.Name, e.Stdio)
		if domain.CodeOf(err) == CodeStdioNameTaken {
			notes = append(notes, fmt.Sprintf("skipped `%s`: a stdio server has that name already (remove it first to replace it)", e.Name))
			continue
		}
		if err != nil {
			return added, notes, err
		}
		added = append(added, srv)
	}
	return added, notes, nil
}
