//go:build unix

package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/mcpbench"
)

// memoryServersEnv makes the test binary serve MCP servers for
// BenchmarkIdleLiveConnections: "2025" (stateful) or "2026" (stateless),
// every path its own endpoint. It prints its address and serves until its
// stdin closes.
const memoryServersEnv = "TTMCP_MEMORY_SERVERS"

func runMemoryServersIfChild() {
	mode := os.Getenv(memoryServersEnv)
	if mode == "" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "idle", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	go http.Serve(l, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: mode == "2026"}))
	fmt.Println(l.Addr().String())
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent goes
	os.Exit(0)
}

// BenchmarkIdleLiveConnections measures what 64 idle live connections
// (issue 21's bound) hold in this process: the Go heap in use, the
// goroutines and the resident set, per connection, after a discovery
// and a call each, with the servers in a child process so only the
// client side is counted. The baseline is 64 bare go-sdk sessions kept
// open on one shared http.Client (their standalone GET stream on, as
// ttmcp's following is), measured the same way in the same run.
func BenchmarkIdleLiveConnections(b *testing.B) {
	const n = 64 // Config.MaxLive's default
	for _, gen := range wanGenerations {
		b.Run(gen.name, func(b *testing.B) {
			base := startMemoryServers(b, gen.name)
			ctx := context.Background()
			var ours, bare footprint
			for range b.N {
				ours = ours.add(measureIdle(b, func() func() {
					g := New(Config{})
					for i := range n {
						ep, _ := domain.ParseEndpoint(fmt.Sprintf("%s/mcp/%d", base, i))
						r, _ := domain.NewRegistration(fmt.Sprintf("idle %d", i), ep, nil, gen.protocol)
						cat, err := g.Discover(ctx, r)
						if err != nil {
							b.Fatal(err)
						}
						if o := g.Call(ctx, r, domain.ToolCall{NativeName: "a", Arguments: []byte(`{}`), InputSchema: cat.Tools[0].InputSchema}); o.Outcome != domain.OutcomeKnownResponse {
							b.Fatalf("%+v", o)
						}
					}
					if got := g.lives.count(); got != n {
						b.Fatalf("%d live connections", got)
					}
					return func() { g.Close() }
				}))
				bare = bare.add(measureIdle(b, func() func() {
					c := mcpbench.NewBare(nil)
					var kept []*mcpbench.Kept
					for i := range n {
						k, err := c.KeepStreaming(ctx, fmt.Sprintf("%s/mcp/%d", base, i), string(gen.protocol), "a")
						if err != nil {
							b.Fatal(err)
						}
						if err := k.Call(ctx, "a", []byte(`{}`)); err != nil {
							b.Fatal(err)
						}
						kept = append(kept, k)
					}
					return func() {
						for _, k := range kept {
							k.Close()
						}
						c.CloseIdle()
					}
				}))
			}
			per := float64(b.N * n)
			b.ReportMetric(float64(ours.heap)/per/1024, "heap-KiB/conn")
			b.ReportMetric(float64(bare.heap)/per/1024, "heap-KiB/bare-conn")
			b.ReportMetric(float64(ours.rss)/per/1024, "rss-KiB/conn")
			b.ReportMetric(float64(bare.rss)/per/1024, "rss-KiB/bare-conn")
			b.ReportMetric(float64(ours.goroutines)/per, "goroutines/conn")
			b.ReportMetric(float64(bare.goroutines)/per, "goroutines/bare-conn")
			b.ReportMetric(float64(ours.heap)/float64(bare.heap), "x-bare-heap")
		})
	}
}

// startMemoryServers runs the test binary as the servers of mode and
// returns their base URL.
func startMemoryServers(b *testing.B, mode string) string {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), memoryServersEnv+"="+mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// footprint is what a set of idle connections holds.
type footprint struct{ heap, rss, goroutines int64 }

func (f footprint) add(g footprint) footprint {
	return footprint{f.heap + g.heap, f.rss + g.rss, f.goroutines + g.goroutines}
}

// measureIdle runs open, lets its connections settle idle, and returns
// what they added to the process; then it runs the closer open returned
// and waits for the goroutines to end.
func measureIdle(b *testing.B, open func() (closeAll func())) footprint {
	before := snapshot(b)
	closeAll := open()
	time.Sleep(200 * time.Millisecond) // the streams opened, the answers drained
	after := snapshot(b)
	closeAll()
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > int(before.goroutines)+4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return footprint{after.heap - before.heap, after.rss - before.rss, after.goroutines - before.goroutines}
}

func snapshot(b *testing.B) footprint {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{heap: int64(m.HeapInuse), rss: residentBytes(b), goroutines: int64(runtime.NumGoroutine())}
}

// residentBytes is the process's resident set (Linux /proc; elsewhere 0,
// and the heap and goroutine figures stand alone).
func residentBytes(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS: %q", rest)
			}
			return kib * 1024
		}
	}
	return 0
}
