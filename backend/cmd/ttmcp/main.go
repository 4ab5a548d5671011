// Command ttmcp is the ttmcp backend: it keeps MCP server registrations in
// strict files and serves them to browser pages over a WebSocket.
//
//	ttmcp serve [--listen 127.0.0.1:7878] [--data-root DIR] [--allow-origin URL]... [--demo [--demo-listen 127.0.0.1:7879] [--demo-auth-listen 127.0.0.1:7877]]
//	ttmcp demo-server [--listen 127.0.0.1:7879] [--auth [--token-ttl 2m]]
//	ttmcp install-extension --sillytavern DIR [--user default-user | --global] [--backend URL] [--data-root DIR] [--enable-server-plugins] [--uninstall]
//	ttmcp stdio add|list|remove|import ...
//	ttmcp version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ttmcp/ttmcp/backend/demo"
	"github.com/ttmcp/ttmcp/backend/gateway"
	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/users"
	"github.com/ttmcp/ttmcp/extension"
	"github.com/ttmcp/ttmcp/jsapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ttmcp:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  ttmcp serve [--listen 127.0.0.1:7878] [--data-root DIR] [--allow-origin URL]... [--demo [--demo-listen 127.0.0.1:7879] [--demo-auth-listen 127.0.0.1:7877]] [-v]
  ttmcp demo-server [--listen 127.0.0.1:7879] [--auth [--token-ttl 2m]]
  ttmcp install-extension --sillytavern DIR [--user default-user | --global] [--backend URL] [--data-root DIR] [--enable-server-plugins] [--uninstall]
  ttmcp stdio add <name> [--user HANDLE]... [--env KEY=VALUE | --env KEY]... [--cwd DIR] [--data-root DIR] -- <command> [args...]
  ttmcp stdio list|remove <name|id>|import <file> [--user HANDLE]... [--data-root DIR]
  ttmcp version`

// stdout receives what a command prints as its result (ttmcp version);
// logs and errors go to stderr.
var stdout io.Writer = os.Stdout

func run(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "demo-server":
		return demoServer(ctx, args[1:], stderr)
	case "install-extension":
		return installExtension(args[1:], stderr)
	case "stdio":
		return stdioCommand(ctx, args[1:], stderr)
	case "version":
		printVersion(stdout)
		return nil
	case "-h", "--help", "help":
		fmt.Fprintln(stderr, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// serveCommandLine is the command a user types to start this backend
// again as it runs now: its own arguments, quoted for the platform's
// shell, and the data root when only the environment chose it (a new
// shell may not have TTMCP_DATA_ROOT). None of serve's flags is a secret.
func serveCommandLine(args []string, root dataRoot, goos string) string {
	words := []string{"ttmcp", "serve"}
	for _, a := range args {
		words = append(words, shellQuote(a, goos))
	}
	if root.source == envDataRoot {
		words = append(words, "--data-root", shellQuote(root.path, goos))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes a word that needs it: single quotes for POSIX shells,
// double quotes on Windows (cmd and PowerShell).
func shellQuote(word, goos string) string {
	plain := word != "" && strings.IndexFunc(word, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r) || r > 127 && goos != "windows")
	}) < 0
	switch {
	case plain:
		return word
	case goos == "windows":
		return `"` + strings.ReplaceAll(word, `"`, `\"`) + `"`
	}
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// origins collects repeated --allow-origin flags.
type origins []string

func (o *origins) String() string     { return strings.Join(*o, ",") }
func (o *origins) Set(v string) error { *o = append(*o, v); return nil }

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:7878", "loopback address to listen on")
	rootFlag := fs.String("data-root", "", "data root (registrations live in <root>/_tauritavern/mcp/); default: "+envDataRoot+", else the per-user data folder")
	verbose := fs.Bool("v", false, "log debug messages")
	withDemo := fs.Bool("demo", false, "also run the demo MCP server (its endpoint is logged; add it in the Manager)")
	demoListen := fs.String("demo-listen", "127.0.0.1:7879", "loopback address of the demo MCP server (with --demo)")
	demoAuthListen := fs.String("demo-auth-listen", "127.0.0.1:7877", "loopback address of the demo that requires sign-in (with --demo; skipped when the address is taken)")
	allow := origins(append([]string(nil), server.DefaultAllowOrigins...))
	fs.Var(&allow, "allow-origin", "an extra origin allowed to use the backend (repeatable); SillyTavern's http://localhost:8000 and http://127.0.0.1:8000 are allowed by default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, o := range allow {
		if err := server.CheckOrigin(o); err != nil {
			return fmt.Errorf("--allow-origin: %v", err)
		}
	}
	root, err := resolveDataRoot(*rootFlag, flagGiven(fs, "data-root"), thisPlatform())
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ln, err := listenLoopback(*listen)
	if err != nil {
		return err
	}
	var demoSrv, demoAuthSrv *server.DemoServer
	if *withDemo {
		dln, err := listenLoopback(*demoListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--demo: %v (another demo server running? choose a free address with --demo-listen)", err)
		}
		demoSrv = &server.DemoServer{DisplayName: "ttmcp demo", Endpoint: "http://" + dln.Addr().String() + "/mcp"}
		demoCtx, stopDemo := context.WithCancel(ctx)
		demoDone := make(chan error, 1)
		go func() { demoDone <- serveDemo(demoCtx, dln) }()
		defer func() {
			stopDemo()
			if err := <-demoDone; err != nil {
				log.Error("demo MCP server", "err", err)
			}
		}()
		// The sign-in demo: the demo MCP server behind the demo
		// authorization server, on its own address (its metadata lives at
		// the root). Optional: a taken address only skips it.
		if aln, err := listenLoopback(*demoAuthListen); err != nil {
			log.Warn("the sign-in demo does not run (choose a free address with --demo-auth-listen)", "err", err)
		} else {
			base := "http://" + aln.Addr().String()
			demoAuthSrv = &server.DemoServer{DisplayName: "ttmcp demo (sign-in)", Endpoint: base + "/mcp"}
			authCtx, stopAuth := context.WithCancel(ctx)
			authDone := make(chan error, 1)
			as := demo.NewAuthServer(demo.AuthOptions{Issuer: base})
			go func() { authDone <- serveHandler(authCtx, aln, as.Handler()) }()
			defer func() {
				stopAuth()
				if err := <-authDone; err != nil {
					log.Error("sign-in demo", "err", err)
				}
			}()
		}
	}
	// SillyTavern's plugin proves itself with this secret (issue 28).
	secret, damaged, err := storage.LoadPluginSecret(root.path)
	if damaged != nil {
		log.Warn("replaced a damaged plugin secret (SillyTavern's plugin reads the new one)", "path", storage.PluginSecretPath(root.path), "was", damaged)
	}
	if err != nil {
		log.Error("no plugin secret: SillyTavern's plugin cannot reach this backend", "err", err)
	}
	// One stack per SillyTavern user over its own data root (the default
	// user's is the data root itself, served to the direct path too);
	// the others open on their first request and close when idle.
	stacks, err := users.Open(users.Config{
		DataRoot: root.path,
		Gateway:  gateway.Config{ClientVersion: version},
		Log:      log,
		// Authorization servers send the user back to this backend, by
		// its loopback IP (RFC 8252 §7.3).
		RedirectURL: "http://" + ln.Addr().String() + jsapi.PathOAuthCallback,
	})
	if err != nil {
		ln.Close()
		return err
	}
	// After the server stopped: every user's last sessions' clean-ups,
	// kept connections, and every stdio server's whole process tree (no
	// request can start one any more).
	defer stacks.Close()
	reaperStop := make(chan struct{})
	defer close(reaperStop)
	go stacks.Run(reaperStop, time.Minute)
	srv := server.New(server.Config{
		Commands:     stacks.Default(),
		ForUser:      stacks.ForUser,
		Assets:       jsapi.Assets(),
		Pages:        map[string]iofs.FS{"/extension/": extension.Files()},
		Extensions:   map[string]iofs.FS{extension.Name: extension.Files()},
		Demo:         demoSrv,
		DemoAuth:     demoAuthSrv,
		AllowOrigins: allow,
		ServeCommand: serveCommandLine(args, root, runtime.GOOS),
		Version:      version,
		Log:          log,
		PluginSecret: secret,
	})
	log.Info("ttmcp serving", "url", "http://"+ln.Addr().String()+"/", "dataRoot", root.path, "from", root.source)
	if hint := root.unusedLocal(); hint != "" {
		log.Warn(strings.TrimPrefix(hint, "ttmcp: note: "))
	}
	if demoSrv != nil {
		log.Info("demo MCP server: add this endpoint in the Manager (the playground offers it)", "endpoint", demoSrv.Endpoint)
	}
	if demoAuthSrv != nil {
		log.Info("demo MCP server that requires sign-in: add this endpoint in the Manager", "endpoint", demoAuthSrv.Endpoint)
	}
	err = srv.Serve(ctx, ln, 5*time.Second)
	log.Info("ttmcp stopped")
	return err
}

// listenLoopback listens on addr, which must be a loopback address: the
// backend trusts its callers to be on this machine.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--listen %q: ttmcp only listens on loopback addresses", addr)
	}
	return net.Listen("tcp", addr)
}

// demoServer serves the demo MCP server at /mcp until ctx ends; with
// --auth, behind the demo authorization server.
func demoServer(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:7879", "loopback address to listen on")
	withAuth := fs.Bool("auth", false, "protect the MCP server with the demo OAuth authorization server (sign-in required)")
	ttl := fs.Duration("token-ttl", 2*time.Minute, "lifetime of the access tokens the demo authorization server issues (with --auth)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ttl < time.Second {
		return fmt.Errorf("--token-ttl %s: at least 1s", *ttl)
	}
	ln, err := listenLoopback(*listen)
	if err != nil {
		return err
	}
	if !*withAuth {
		fmt.Fprintf(stderr, "ttmcp demo MCP server: register http://%s/mcp\n", ln.Addr())
		return serveDemo(ctx, ln)
	}
	base := "http://" + ln.Addr().String()
	as := demo.NewAuthServer(demo.AuthOptions{Issuer: base, TokenTTL: *ttl})
	fmt.Fprintf(stderr, "ttmcp demo MCP server with sign-in: register %s/mcp (access tokens live %s; issued clients and tokens at %s/)\n", base, *ttl, base)
	return serveHandler(ctx, ln, as.Handler())
}

// serveDemo serves the demo MCP server at /mcp on ln until ctx ends.
func serveDemo(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", demo.Handler())
	return serveHandler(ctx, ln, mux)
}

// serveHandler serves h on ln until ctx ends.
func serveHandler(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
