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
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
//	tools        a go-sdk server with the tools of Server
//	ignore-term  the same, but it ignores SIGTERM and outlives its stdin
//	exit         writes to stderr and exits at once with status 2
//	hang         never answers (nor exits on its own)
//	spam         writes a line of prose to stdout before anything else
//	sleeper      (a grandchild) ignores SIGTERM and sleeps
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
	case "tools", "ignore-term":
		if mode == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		}
		fmt.Fprintln(os.Stderr, "stdio test server ready")
		Server().Run(context.Background(), &mcp.StdioTransport{})
		if mode == "ignore-term" {
			time.Sleep(time.Hour) // its stdin ended: it stays anyway
		}
	default:
		fmt.Fprintf(os.Stderr, "stdiotest: unknown mode %q\n", mode)
		os.Exit(1)
	}
}

// Server is the go-sdk server of the "tools" mode, with the tools the
// tests call: echo (the arguments as text), pid, sleep {ms}, crash (exit
// 3 mid-call), chatter (prose on stdout, then wait), big {bytes} and
// spawn (a grandchild that ignores SIGTERM; its pid as text).
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
	return s
}
