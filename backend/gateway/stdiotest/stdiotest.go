// Package stdiotest runs MCP stdio servers for tests: the test binary
// itself, started again as a child process. A test package calls
// RunIfChild first thing in its TestMain; when the environment names a
// server mode, the binary runs that server instead of the tests. The
// servers are real processes speaking MCP on their real stdin and stdout,
// so starting, crashing, hanging, signals and process groups are the
// operating system's, not simulated.
package stdiotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
)

const (
	// ModeEnv names the server a child runs.
	ModeEnv = "TTMCP_TEST_STDIO_SERVER"
	// DirEnv is where it records the pids of the processes it started.
	DirEnv = "TTMCP_TEST_STDIO_DIR"
)

// RunIfChild runs the server ModeEnv names and exits, or returns at once
// when it names none (the binary runs its tests).
func RunIfChild() {
	if mode := os.Getenv(ModeEnv); mode != "" {
		run(mode)
		os.Exit(0)
	}
}

// Stdio returns the configuration that runs this binary as the server
// mode, recording its pids in dir.
func Stdio(t testing.TB, mode, dir string) domain.Stdio {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return domain.Stdio{Command: exe, Args: []string{}, Env: map[string]string{ModeEnv: mode, DirEnv: dir}}
}

// Pids returns the pids recorded in dir by processes of the mode role.
func Pids(t testing.TB, dir, role string) []int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, role+"-*.pid"))
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// WaitGone fails unless every pid is gone within a few seconds.
func WaitGone(t testing.TB, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for Alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d survived", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// recordPid writes the pid of this process to the test's folder, named
// after its role, so the test can check that it is gone afterwards.
func recordPid(role string) {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.pid", role, os.Getpid()))
	os.WriteFile(name, []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// run runs one of the test servers:
//
//	tools            a go-sdk server with the tools of Server
//	ignore-term      the same, but it ignores SIGTERM and outlives its stdin
//	exit-after-list  the same, but it exits (status 4) as soon as it has
//	                 answered a tools/list
//	exit             writes to stderr and exits at once with status 2
//	hang             never answers (nor exits on its own)
//	spam             writes a line of prose to stdout before anything else
//	sleeper          (a grandchild) ignores SIGTERM and sleeps
//	paged            the go-sdk server PagedServer
//	apps             the go-sdk server AppsServer
//
// The go-sdk servers record the method of every request and notification
// they receive (see Received).
func run(mode string) {
	recordPid(mode)
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: the configuration file /etc/nowhere.json is missing")
		os.Exit(2)
	case "hang":
		fmt.Fprintln(os.Stderr, "thinking…")
		time.Sleep(time.Hour)
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	case "spam":
		fmt.Println("Server started! Listening on stdio")
		time.Sleep(time.Hour)
	case "apps":
		s := AppsServer()
		s.AddReceivingMiddleware(recordMethods(mode))
		s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: os.Stdout})
	case "paged":
		s := PagedServer()
		s.AddReceivingMiddleware(recordMethods(mode))
		s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: os.Stdout})
	case "tools", "ignore-term", "exit-after-list":
		if mode == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		var out io.WriteCloser = os.Stdout
		if mode == "exit-after-list" {
			out = exitAfterList{os.Stdout}
		}
		fmt.Fprintln(os.Stderr, "stdio test server ready")
		s := Server()
		s.AddReceivingMiddleware(recordMethods(mode))
		s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: out})
		if mode == "ignore-term" {
			time.Sleep(time.Hour) // its stdin ended: it stays anyway
		}
	default:
		fmt.Fprintf(os.Stderr, "stdiotest: unknown mode %q\n", mode)
		os.Exit(1)
	}
}

// recordMethods appends the method of every message the server receives
// to its file in the test's folder (see Received), before handling it.
func recordMethods(role string) mcp.Middleware {
	dir := os.Getenv(DirEnv)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if dir != "" {
				name := filepath.Join(dir, fmt.Sprintf("%s-%d.methods", role, os.Getpid()))
				if f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					fmt.Fprintln(f, method)
					f.Close()
				}
			}
			return next(ctx, method, req)
		}
	}
}

// Received returns the methods the process pid of the mode role received,
// in order.
func Received(t testing.TB, dir, role string, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s-%d.methods", role, pid)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// exitAfterList is the stdout of the exit-after-list server: once the
// answer to a tools/list is written (each write is one message), the
// process exits, so the client holds a session whose process is gone.
type exitAfterList struct{ w io.WriteCloser }

func (e exitAfterList) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	var msg struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(p, &msg) == nil && msg.Result.Tools != nil {
		fmt.Fprintln(os.Stderr, "bye: exiting after tools/list")
		os.Exit(4)
	}
	return n, err
}

func (e exitAfterList) Close() error { return e.w.Close() }

// PagedServer is the server of the "paged" mode: its one tool, files, is
// refused with a page to open (URL elicitation required) until the account
// is connected — the file Connected in the test's folder —, which the
// server then announces (notifications/elicitation/complete).
func PagedServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-paged", Version: "1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	var connected atomic.Bool
	s.AddTool(&mcp.Tool{Name: "files", Description: "List files once an account is connected", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if connected.Load() {
				return text("3 files"), nil
			}
			// The user connects the account on the page (the test writes
			// Connected in its folder), and the server announces it.
			go func() {
				for {
					if _, err := os.Stat(filepath.Join(os.Getenv(DirEnv), Connected)); err == nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				connected.Store(true)
				req.Session.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "s1"})
			}()
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{Mode: "url", ElicitationID: "s1",
				URL: "https://files.example/connect", Message: "Connect your Files account."}})
		})
	return s
}

// AppsServer is the server of the "apps" mode, an Apps-aware server (MCP
// Apps, issue 30): board names the interface AppsURI and answers with the
// MCP Apps extension its request's client declared (its JSON, or "none"):
// the session's, from initialize, on 2025; the request's _meta's on 2026.
// move is for the App only. A tools/list for a client that declares no
// Apps holds neither (the text-only variant the spec allows: plain only).
// The interface's resources/list entry carries _meta.ui (AppsListedUI),
// its content none.
func AppsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-apps", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	declared := func(caps *mcp.ClientCapabilities) string {
		if caps == nil || caps.Extensions[domain.AppsExtension] == nil {
			return "none"
		}
		b, _ := json.Marshal(caps.Extensions[domain.AppsExtension])
		return string(b)
	}
	answer := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: declared(req.ClientCapabilities())}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "board", Description: "Show the board", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppsURI}}}, answer)
	s.AddTool(&mcp.Tool{Name: "move", Description: "Move a piece (App only)", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppsURI, "visibility": []string{"app"}}}}, answer)
	s.AddTool(&mcp.Tool{Name: "plain", Description: "No App", InputSchema: obj}, answer)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if lr, isList := req.(*mcp.ListToolsRequest); ok && isList && declared(lr.ClientCapabilities()) == "none" {
				list.Tools = slices.DeleteFunc(list.Tools, func(t *mcp.Tool) bool { return t.Meta["ui"] != nil })
			}
			return res, err
		}
	})
	var listed map[string]any
	json.Unmarshal([]byte(AppsListedUI), &listed)
	s.AddResource(&mcp.Resource{URI: AppsURI, Name: "board", MIMEType: domain.AppMIMEType, Meta: mcp.Meta{"ui": listed}},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: AppsURI, MIMEType: domain.AppMIMEType, Text: AppsDocument}}}, nil
		})
	return s
}

// The "apps" server's interface: its URI, document, and the _meta.ui of
// its resources/list entry.
const (
	AppsURI      = "ui://apps/board.html"
	AppsDocument = "<!doctype html><html><body><p>board</p></body></html>"
	AppsListedUI = `{"csp":{"connectDomains":["https://api.board.example"]},"prefersBorder":true}`
)

// Connected is the file a test writes in its folder when the user has
// connected the account the files tool asks for.
const Connected = "connected"

// Server is the go-sdk server of the "tools" mode, with the tools the
// tests call: echo (the arguments as text), pid, sleep {ms}, crash (exit
// 3 mid-call), chatter (prose on stdout, then wait), big {bytes}, spawn
// (a grandchild that ignores SIGTERM; its pid as text) and greet (asks the
// user's name: input_required on 2026, elicitation/create during the call
// on 2025; "hello <name>", or what the user chose instead); and the
// resources and prompt below.
func Server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the arguments", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(string(req.Params.Arguments)), nil
		})
	s.AddTool(&mcp.Tool{Name: "pid", Description: "The server's process id", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "sleep", Description: "Wait", InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Ms int }
			json.Unmarshal(req.Params.Arguments, &in)
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return text("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	AddSteps(s)
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exit mid-call", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: the tool crashed the server")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "chatter", Description: "Write prose to stdout", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Println("DEBUG: chatter called")
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "A long text", InputSchema: json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Bytes int }
			json.Unmarshal(req.Params.Arguments, &in)
			return text(strings.Repeat("x", in.Bytes)), nil
		})
	s.AddTool(&mcp.Tool{Name: "greet", Description: "Ask the user's name", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Mode: "form", Message: "Your name?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}}}, nil
			}
			if resp.Action != "accept" {
				return text("no greeting: " + resp.Action), nil
			}
			return text(fmt.Sprintf("hello %v", resp.Content["name"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "spawn", Description: "Start a grandchild that ignores SIGTERM", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			exe, _ := os.Executable()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), ModeEnv+"=sleeper")
			cmd.Stderr = os.Stderr // it holds the server's stderr open
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return text(strconv.Itoa(cmd.Process.Pid)), nil
		})
	// Resources and prompts: test://hello, the template
	// test://text/{bytes} (that many bytes of text), test://crash (exits
	// mid-read), and the prompt greet {name (required)}.
	s.AddResource(&mcp.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from " + strconv.Itoa(os.Getpid())}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://crash", Name: "crash"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			fmt.Fprintln(os.Stderr, "panic: the read crashed the server")
			os.Exit(3)
			return nil, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://text/{bytes}", Name: "text"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			n, _ := strconv.Atoi(strings.TrimPrefix(req.Params.URI, "test://text/"))
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: strings.Repeat("x", n)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
		})
	return s
}

// StepsInput is the steps tool's arguments: n notifications/progress
// (step i of n with its message, or, with flood, progress i and nothing
// else), then the answer: the progress token the request carried. Between
// steps the tool waits gap milliseconds, or, when Hold is set, for Hold to
// return (an in-process server's tests pace it by what they saw).
type StepsInput struct {
	N     int  `json:"n"`
	Flood bool `json:"flood,omitempty"`
	Gap   int  `json:"gap,omitempty"`
}

// StepsHold, when set (in-process servers only), is waited for before each
// step after the first: the test returns once it saw the step before.
var StepsHold func(ctx context.Context, step int)

// AddSteps adds the tool "steps" (StepsInput) to s: a long operation that
// reports its progress as server-everything's trigger-long-running-operation
// does, when the request carries a progress token.
func AddSteps(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "steps", Description: "Report progress in steps",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"flood":{"type":"boolean"},"gap":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in StepsInput
			json.Unmarshal(req.Params.Arguments, &in)
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.N && tok != nil; i++ {
				if i > 1 && StepsHold != nil {
					StepsHold(ctx, i)
				} else if i > 1 && in.Gap > 0 {
					time.Sleep(time.Duration(in.Gap) * time.Millisecond)
				}
				p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}
				if !in.Flood {
					p.Total, p.Message = float64(in.N), fmt.Sprintf("step %d of %d", i, in.N)
				}
				if err := req.Session.NotifyProgress(ctx, p); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(tok)}}}, nil
		})
}
