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
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
)

const stdioUsage = `usage:
  ttmcp stdio add <name> [--env KEY=VALUE | --env KEY]... [--cwd DIR] [--data-root DIR] -- <command> [args...]
  ttmcp stdio list [--data-root DIR]
  ttmcp stdio remove <name|id> [--data-root DIR]
  ttmcp stdio import <file> [--data-root DIR]

A stdio server runs <command> on this machine when it is used (never through a shell)
and speaks MCP on its stdin and stdout. It is added paused: activate it in the Manager.
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
	store := storage.Open(opts.dataRoot)
	// Results and Capabilities: a removed server's kept results and
	// allowlist go with it.
	svc := service.New(service.Config{Registrations: store.Registry(), Catalogs: store, Capabilities: store,
		Results: storage.OpenResultStore(opts.dataRoot, storage.ResultOptions{})})
	switch sub {
	case "add":
		return stdioAdd(ctx, svc, opts)
	case "list":
		return stdioList(ctx, svc, opts)
	case "remove":
		srv, err := svc.RemoveStdio(ctx, opts.positional[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed stdio server %q (%s)\n", srv.DisplayName, srv.ID)
		return nil
	case "import":
		return stdioImport(ctx, svc, opts)
	}
	return fmt.Errorf("unknown stdio command %q\n%s", sub, stdioUsage)
}

type stdioOptions struct {
	dataRoot      string
	dataRootGiven bool
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

func stdioAdd(ctx context.Context, svc *service.Service, o stdioOptions) error {
	cfg := domain.Stdio{Command: o.command[0], Args: o.command[1:], Env: o.env, Cwd: o.cwd}
	srv, err := svc.AddStdio(ctx, o.positional[0], cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added stdio server %q (%s), paused: activate it in the Manager\n", srv.DisplayName, srv.ID)
	printStdio(srv)
	return nil
}

func stdioList(ctx context.Context, svc *service.Service, o stdioOptions) error {
	servers, issues, err := svc.ListStdio(ctx)
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		fmt.Fprintf(stdout, "no stdio servers in %s (add one with `ttmcp stdio add`)\n", o.dataRoot)
	}
	for _, srv := range servers {
		fmt.Fprintf(stdout, "%s  %s  %s\n", srv.DisplayName, srv.State, srv.ID)
		printStdio(srv)
	}
	for _, is := range issues {
		fmt.Fprintf(stdout, "damaged: %s: %s\n", is.FileName, is.Message)
	}
	return nil
}

func stdioImport(ctx context.Context, svc *service.Service, o stdioOptions) error {
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
	added, notes, err := svc.ImportStdio(ctx, im)
	for _, srv := range added {
		fmt.Fprintf(stdout, "added stdio server %q (%s), paused\n", srv.DisplayName, srv.ID)
		printStdio(srv)
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "note: "+n)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d stdio server(s) imported; activate them in the Manager\n", len(added))
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
