package main

// ttmcp stdio: the user's own configuration of local (stdio) MCP servers
// (SPEC §10, seed 001 §3 and §7). This is the only place a command to run
// comes from: no WebSocket command can create a stdio server or change how
// one starts. A server added here starts paused; the user activates it in
// the Manager, which shows its command line.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/users"
)

const stdioUsage = `usage:
  ttmcp stdio add <name> [--user HANDLE]... [--env KEY=VALUE | --env KEY]... [--cwd DIR] [--data-root DIR] -- <command> [args...]
  ttmcp stdio list [--data-root DIR]
  ttmcp stdio remove <name|id> [--data-root DIR]
  ttmcp stdio import <file> [--user HANDLE]... [--data-root DIR]

A stdio server runs <command> on this machine when it is used (never through a shell)
and speaks MCP on its stdin and stdout. It is added paused: activate it in the Manager.
--user names a SillyTavern user it is offered to (repeatable; default: default-user,
the only user when user accounts are off); each user activates, allows and runs it on
their own. remove removes it for every user.
--env KEY without a value copies KEY from this shell's environment. Environment values
are stored in the data root (owner-only file) and never shown to a page: only their names.
import reads the "mcpServers" JSON of desktop MCP clients (Claude Desktop, Cursor, ...).`

// stdioCommand runs `ttmcp stdio <sub> ...`; results go to stdout.
func stdioCommand(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(stdioUsage)
	}
	sub, rest := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprintln(stderr, stdioUsage)
		return nil
	}
	opts, err := parseStdioArgs(sub, rest)
	if err != nil {
		return err
	}
	root, err := resolveDataRoot(opts.dataRoot, opts.dataRootGiven, thisPlatform())
	if err != nil {
		return err
	}
	root.announce(stderr)
	opts.dataRoot = root.path
	switch sub {
	case "add":
		return stdioAdd(ctx, opts)
	case "list":
		return stdioList(ctx, opts)
	case "remove":
		return stdioRemove(ctx, opts)
	case "import":
		return stdioImport(ctx, opts)
	}
	return fmt.Errorf("unknown stdio command %q\n%s", sub, stdioUsage)
}

// A stdio server is offered to SillyTavern users by a copy of its file in
// each one's data root (users.Root), under one id: each user's copy has
// its own state, permissions, overrides, catalog and process, and the
// file format stays the one of a single root. The CLI is the only writer
// of the copies' commands; a server's name is unique across every user's
// root, so `remove <name>` names one server (docs/DECISIONS.md).

// userRoot is one SillyTavern user's data root, with the service over it
// the CLI uses.
type userRoot struct {
	handle string
	svc    *service.Service
}

// openUserRoot opens handle's data root for the CLI's use cases; create
// makes another user's root when it is absent (add and import).
func openUserRoot(dataRoot, handle string, create bool) (userRoot, error) {
	root, err := users.Root(dataRoot, handle)
	if create && err == nil {
		root, err = users.MakeRoot(dataRoot, handle)
	}
	if err != nil {
		return userRoot{}, err
	}
	store := storage.Open(root)
	// Results and Capabilities: a removed server's kept results and
	// allowlist go with it.
	return userRoot{handle: handle, svc: service.New(service.Config{Registrations: store.Registry(), Catalogs: store, Capabilities: store,
		Results: storage.OpenResultStore(root, storage.ResultOptions{})})}, nil
}

// allUserRoots opens every user's data root there is (users.Handles).
func allUserRoots(dataRoot string) ([]userRoot, error) {
	handles, err := users.Handles(dataRoot)
	if err != nil {
		return nil, fmt.Errorf("cannot list the SillyTavern users' data roots: %w", err)
	}
	out := make([]userRoot, 0, len(handles))
	for _, h := range handles {
		r, err := openUserRoot(dataRoot, h, false)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// stdioServer is one stdio server as the CLI shows it across users: the
// users it is offered to, each with their copy's state.
type stdioServer struct {
	service.StdioServer
	users  []string
	states []domain.State
}

// scanStdio lists the stdio servers of every user's root, one entry per
// id, in name order, and each root's damaged stdio files.
func scanStdio(ctx context.Context, roots []userRoot) ([]*stdioServer, []string, error) {
	byID := map[domain.RegistrationID]*stdioServer{}
	var out []*stdioServer
	var damaged []string
	for _, r := range roots {
		servers, issues, err := r.svc.ListStdio(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("SillyTavern user %s: %w", r.handle, err)
		}
		for _, srv := range servers {
			e := byID[srv.ID]
			if e == nil {
				e = &stdioServer{StdioServer: srv}
				byID[srv.ID] = e
				out = append(out, e)
			}
			e.users = append(e.users, r.handle)
			e.states = append(e.states, srv.State)
		}
		for _, is := range issues {
			damaged = append(damaged, fmt.Sprintf("%s (user %s): %s", is.FileName, r.handle, is.Message))
		}
	}
	slices.SortStableFunc(out, func(a, b *stdioServer) int { return strings.Compare(a.DisplayName, b.DisplayName) })
	return out, damaged, nil
}

// scanAll opens every user's root and lists their stdio servers
// (scanStdio).
func scanAll(ctx context.Context, dataRoot string) ([]userRoot, []*stdioServer, []string, error) {
	all, err := allUserRoots(dataRoot)
	if err != nil {
		return nil, nil, nil, err
	}
	servers, damaged, err := scanStdio(ctx, all)
	return all, servers, damaged, err
}

// targetRoots opens the roots of the users an add or import names
// (default: the default user), each once.
func targetRoots(o stdioOptions) ([]userRoot, error) {
	handles := o.users
	if len(handles) == 0 {
		handles = []string{users.DefaultUser}
	}
	var out []userRoot
	for _, h := range handles {
		if slices.ContainsFunc(out, func(r userRoot) bool { return r.handle == h }) {
			continue
		}
		r, err := openUserRoot(o.dataRoot, h, true)
		if err != nil {
			return nil, fmt.Errorf("--user %s: %w", h, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// nameTaken refuses a name a stdio server of any user already has.
func nameTaken(servers []*stdioServer, name string) error {
	for _, e := range servers {
		if e.DisplayName == strings.TrimSpace(name) {
			return domain.Errorf(domain.KindConflict, service.CodeStdioNameTaken,
				"a stdio server is already called `%s` (%s, offered to %s); remove it first or choose another name", e.DisplayName, e.ID, strings.Join(e.users, ", "))
		}
	}
	return nil
}

// addToUsers adds one server to every target root under one id, or to
// none: a failure removes the copies already written.
func addToUsers(ctx context.Context, targets []userRoot, name string, cfg domain.Stdio) (service.StdioServer, error) {
	var srv service.StdioServer
	for i, r := range targets {
		got, err := r.svc.AddStdioAs(ctx, srv.ID, name, cfg)
		if err != nil {
			for _, done := range targets[:i] {
				if _, rerr := done.svc.RemoveStdio(ctx, string(srv.ID)); rerr != nil {
					err = errors.Join(err, fmt.Errorf("and its copy for %s could not be removed again: %w", done.handle, rerr))
				}
			}
			return service.StdioServer{}, fmt.Errorf("SillyTavern user %s: %w", r.handle, err)
		}
		srv = got
	}
	return srv, nil
}

func handlesOf(roots []userRoot) string {
	hs := make([]string, len(roots))
	for i, r := range roots {
		hs[i] = r.handle
	}
	return strings.Join(hs, ", ")
}

type stdioOptions struct {
	dataRoot      string
	dataRootGiven bool
	users         []string // --user, for add and import
	positional    []string
	env           map[string]string
	cwd           string
	command       []string // after "--"
}

// parseStdioArgs reads the options of a stdio subcommand: flags may come
// before or after the positional arguments; everything after "--" is the
// command and its arguments, taken as they are.
func parseStdioArgs(sub string, args []string) (stdioOptions, error) {
	o := stdioOptions{env: map[string]string{}}
	takesCommand := sub == "add"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" && takesCommand {
			o.command = args[i+1:]
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.positional = append(o.positional, a)
			continue
		}
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("stdio %s: %s needs a value", sub, a)
			}
			i++
			return args[i], nil
		}
		switch {
		case name == "data-root":
			v, err := next()
			if err != nil {
				return o, err
			}
			o.dataRoot, o.dataRootGiven = v, true
		case name == "user" && (sub == "add" || sub == "import"):
			v, err := next()
			if err != nil {
				return o, err
			}
			if err := users.CheckHandle(v); err != nil {
				return o, fmt.Errorf("stdio %s: --user: %w", sub, err)
			}
			o.users = append(o.users, v)
		case name == "cwd" && takesCommand:
			v, err := next()
			if err != nil {
				return o, err
			}
			abs, err := filepath.Abs(v)
			if err != nil {
				return o, fmt.Errorf("stdio add: --cwd %s: %v", v, err)
			}
			o.cwd = abs
		case name == "env" && takesCommand:
			v, err := next()
			if err != nil {
				return o, err
			}
			key, val, ok := strings.Cut(v, "=")
			if !ok {
				if val, ok = os.LookupEnv(key); !ok {
					return o, fmt.Errorf("stdio add: --env %s: %s is not set in this environment (give --env %s=VALUE)", v, key, key)
				}
			}
			o.env[key] = val
		default:
			return o, fmt.Errorf("stdio %s: unknown option %s\n%s", sub, a, stdioUsage)
		}
	}
	want := map[string]int{"add": 1, "list": 0, "remove": 1, "import": 1}
	n, known := want[sub]
	switch {
	case !known:
		return o, fmt.Errorf("unknown stdio command %q\n%s", sub, stdioUsage)
	case len(o.positional) != n:
		return o, fmt.Errorf("stdio %s: expected %d argument(s), got %d\n%s", sub, n, len(o.positional), stdioUsage)
	case takesCommand && len(o.command) == 0:
		return o, fmt.Errorf("stdio add: the command goes after --, e.g. ttmcp stdio add everything -- npx -y @modelcontextprotocol/server-everything")
	}
	return o, nil
}

func stdioAdd(ctx context.Context, o stdioOptions) error {
	cfg := domain.Stdio{Command: o.command[0], Args: o.command[1:], Env: o.env, Cwd: o.cwd}
	if err := cfg.Validate(); err != nil {
		return err
	}
	_, existing, _, err := scanAll(ctx, o.dataRoot)
	if err != nil {
		return err
	}
	if err := nameTaken(existing, o.positional[0]); err != nil {
		return err
	}
	targets, err := targetRoots(o)
	if err != nil {
		return err
	}
	srv, err := addToUsers(ctx, targets, o.positional[0], cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added stdio server %q (%s), paused: activate it in the Manager\n", srv.DisplayName, srv.ID)
	fmt.Fprintf(stdout, "    users:   %s\n", handlesOf(targets))
	printStdio(srv)
	return nil
}

func stdioList(ctx context.Context, o stdioOptions) error {
	_, servers, damaged, err := scanAll(ctx, o.dataRoot)
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		fmt.Fprintf(stdout, "no stdio servers in %s (add one with `ttmcp stdio add`)\n", o.dataRoot)
	}
	for _, srv := range servers {
		state := string(srv.states[0])
		who := make([]string, len(srv.users))
		for i, u := range srv.users {
			who[i] = fmt.Sprintf("%s (%s)", u, srv.states[i])
			if srv.states[i] != srv.states[0] {
				state = "mixed"
			}
		}
		fmt.Fprintf(stdout, "%s  %s  %s\n", srv.DisplayName, state, srv.ID)
		fmt.Fprintf(stdout, "    users:   %s\n", strings.Join(who, ", "))
		printStdio(srv.StdioServer)
	}
	for _, d := range damaged {
		fmt.Fprintln(stdout, "damaged: "+d)
	}
	return nil
}

// stdioRemove removes the server named by its id or name from every
// user's root that has it.
func stdioRemove(ctx context.Context, o stdioOptions) error {
	all, servers, _, err := scanAll(ctx, o.dataRoot)
	if err != nil {
		return err
	}
	nameOrID := o.positional[0]
	var found []*stdioServer
	for _, srv := range servers {
		if string(srv.ID) == nameOrID || srv.DisplayName == strings.TrimSpace(nameOrID) {
			found = append(found, srv)
		}
	}
	switch len(found) {
	case 0:
		return domain.Errorf(domain.KindNotFound, service.CodeStdioNotFound, "no stdio server is called or has the id `%s` (see `ttmcp stdio list`)", nameOrID)
	case 1:
	default:
		return domain.Errorf(domain.KindConflict, service.CodeStdioNameAmbiguous, "%d stdio servers are called `%s`; remove one by its id", len(found), nameOrID)
	}
	srv := found[0]
	var errs []error
	var removed []string
	for _, r := range all {
		if !slices.Contains(srv.users, r.handle) {
			continue
		}
		if _, err := r.svc.RemoveStdio(ctx, string(srv.ID)); err != nil {
			errs = append(errs, fmt.Errorf("SillyTavern user %s: %w", r.handle, err))
			continue
		}
		removed = append(removed, r.handle)
	}
	if len(removed) > 0 {
		fmt.Fprintf(stdout, "removed stdio server %q (%s) for %s\n", srv.DisplayName, srv.ID, strings.Join(removed, ", "))
	}
	return errors.Join(errs...)
}

func stdioImport(ctx context.Context, o stdioOptions) error {
	path := o.positional[0]
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return err
	}
	im, err := service.ParseStdioImport(data, base)
	if err != nil {
		return fmt.Errorf("%s: %w (nothing was imported)", path, err)
	}
	_, existing, _, err := scanAll(ctx, o.dataRoot)
	if err != nil {
		return err
	}
	targets, err := targetRoots(o)
	if err != nil {
		return err
	}
	notes := slices.Clone(im.Notes)
	added := 0
	for _, e := range im.Servers {
		if nameTaken(existing, e.Name) != nil {
			notes = append(notes, fmt.Sprintf("skipped `%s`: a stdio server has that name already (remove it first to replace it)", e.Name))
			continue
		}
		srv, err := addToUsers(ctx, targets, e.Name, e.Stdio)
		if err != nil {
			for _, n := range notes {
				fmt.Fprintln(stdout, "note: "+n)
			}
			return err
		}
		added++
		fmt.Fprintf(stdout, "added stdio server %q (%s), paused\n", srv.DisplayName, srv.ID)
		printStdio(srv)
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "note: "+n)
	}
	fmt.Fprintf(stdout, "%d stdio server(s) imported for %s; activate them in the Manager\n", added, handlesOf(targets))
	return nil
}

// printStdio shows how a server is started: what the Manager shows too.
func printStdio(srv service.StdioServer) {
	fmt.Fprintf(stdout, "    command: %s\n", srv.Stdio.CommandLine())
	if names := srv.Stdio.EnvNames(); len(names) > 0 {
		fmt.Fprintf(stdout, "    env:     %s (values not shown)\n", strings.Join(names, ", "))
	}
	if srv.Stdio.Cwd != "" {
		fmt.Fprintf(stdout, "    cwd:     %s\n", srv.Stdio.Cwd)
	}
}
