package webtest

// Where the bridge's time goes (issue 12 item 5): the cost of each way into
// and out of Go/wasm in the page's engine (BenchmarkWasmCrossings, over
// testdata/wasmprobe), and Chromium's CPU profile of sequential calls
// through the bridge and through the plain-JS client in the same page,
// grouped by what ran (BenchmarkCallProfile). Both print their tables with
// the bench table (`make bench`); docs/BENCHMARKS.md holds one run.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/server"
	"github.com/ttmcp/ttmcp/jsapi"
)

// buildWasm builds the Go package pkg (relative to the module root) for
// js/wasm into dir/name, with its symbol names (the profile shows them).
func buildWasm(tb testing.TB, pkg, dir, name string) string {
	tb.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkWasmCrossings: µs per operation of each way into and out of Go,
// in Chromium, medians of 7 repetitions of 2,000 operations.
func BenchmarkWasmCrossings(b *testing.B) {
	dir := b.TempDir()
	buildWasm(b, "./webtest/testdata/wasmprobe", dir, "wasmprobe.wasm")
	copyFile(b, filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"), filepath.Join(dir, "wasm_exec.js"))
	be := newBackend(b, func(c *server.Config) { c.Pages["/probe/"] = os.DirFS(dir) })
	p := openPage(b, be.url("/webtest/wasmprobe.html"))
	p.run(`while (!window.probeReady) await new Promise((r) => setTimeout(r, 10));`)
	r := evalJS[map[string]float64](p, `return window.runProbe(2000, 7);`)
	names := make([]string, 0, len(r))
	for k := range r {
		names = append(names, k)
	}
	slices.Sort(names)
	var sb strings.Builder
	fmt.Fprintln(&sb, "\nJS ⇄ Go/wasm crossings in Chromium (wasmprobe; µs per operation, median of 7 × 2,000)")
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	for _, k := range names {
		fmt.Fprintf(w, "%s\t%.2f µs\n", k, r[k])
	}
	w.Flush()
	addBenchNote(sb.String())
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(r["JS→Go: js.FuncOf call (no-op, as a method)"], "entry-µs")
}

// profileAssets serves the shim at wasmPath instead of the embedded one.
type profileAssets struct {
	fs.FS
	wasmPath string
}

func (a profileAssets) Open(name string) (fs.File, error) {
	if name == "tauritavern-mcp.wasm" {
		return os.Open(a.wasmPath)
	}
	return a.FS.Open(name)
}

// BenchmarkCallProfile: Chromium's CPU profile (Profiler domain, 50 µs
// sampling) of 2,000 sequential list() calls through the bridge, then
// through the plain-JS client, in the same page; the time per call of each
// kind of code that ran. The shim is built with its symbol names; set
// TTMCP_PROFILE_WASM to profile another build (an older shim, to compare).
func BenchmarkCallProfile(b *testing.B) {
	wasm := os.Getenv("TTMCP_PROFILE_WASM")
	if wasm == "" {
		wasm = buildWasm(b, "./wasm", b.TempDir(), "tauritavern-mcp.wasm")
	}
	be := newBackend(b)
	be.stop()
	be.assets = profileAssets{jsapi.Assets(), wasm}
	be.start()
	p := be.openHost(b)
	p.run(`tt.bench = await import('/webtest/bench.js');`)
	const calls = 2000
	profiles := map[string]map[string]float64{}
	for _, who := range []string{"bridge", "plain"} {
		p.run(`await tt.bench.sequential(1, 300);`) // warm-up, both clients
		cdpDo(b, p, func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, profiler.Enable, cdp.Empty{}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, t, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 50}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, profiler.Start, cdp.Empty{})
			return err
		})
		p.run(`await tt.bench.calls(%s, %s);`, who, calls)
		var prof *profiler.Profile
		cdpDo(b, p, func(ctx context.Context, t *chromedp.Target) error {
			r, err := cdp.Call(ctx, t, profiler.Stop, cdp.Empty{})
			prof = r.Profile
			return err
		})
		profiles[who] = profileByKind(prof, calls)
	}
	kinds := map[string]bool{}
	for _, m := range profiles {
		for k := range m {
			kinds[k] = true
		}
	}
	order := make([]string, 0, len(kinds))
	for k := range kinds {
		order = append(order, k)
	}
	slices.SortFunc(order, func(x, y string) int {
		if d := profiles["bridge"][y] + profiles["plain"][y] - profiles["bridge"][x] - profiles["plain"][x]; d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(x, y)
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nWhere a sequential list() call's time goes (Chromium CPU profile, %d calls each, µs per call)\n", calls)
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "kind of code\tbridge\tplain JS\tbridge − plain")
	var tb, tp float64
	for _, k := range order {
		x, y := profiles["bridge"][k], profiles["plain"][k]
		fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%+.1f\n", k, x, y, x-y)
		if k != kindIdle {
			tb, tp = tb+x, tp+y
		}
	}
	fmt.Fprintf(w, "busy (all but idle)\t%.1f\t%.1f\t%+.1f\n", tb, tp, tb-tp)
	w.Flush()
	addBenchNote(sb.String())
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(tb, "bridge-busy-µs/call")
	b.ReportMetric(tp, "plain-busy-µs/call")
}

func cdpDo(tb testing.TB, p *page, f func(ctx context.Context, t *chromedp.Target) error) {
	tb.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Func(f)); err != nil {
		tb.Fatal(err)
	}
}

const kindIdle = "idle (waiting for the backend)"

// profileByKind sums a profile's sampled time by the kind of code on top of
// the stack, in µs per call.
func profileByKind(prof *profiler.Profile, calls int) map[string]float64 {
	parent := map[int64]*profiler.ProfileNode{}
	byID := map[int64]*profiler.ProfileNode{}
	for _, n := range prof.Nodes {
		byID[n.ID] = n
	}
	for _, n := range prof.Nodes {
		for _, c := range n.Children {
			parent[c] = n
		}
	}
	out := map[string]float64{}
	for i, id := range prof.Samples {
		if i >= len(prof.TimeDeltas) {
			break
		}
		n := byID[id]
		if n == nil {
			continue
		}
		out[codeKind(n, parent[n.ID])] += float64(prof.TimeDeltas[i]) / float64(calls)
	}
	return out
}

// codeKind names what a profile node ran.
func codeKind(n, parent *profiler.ProfileNode) string {
	name, url := n.CallFrame.FunctionName, n.CallFrame.URL
	inGlue := func(n *profiler.ProfileNode) bool {
		return n != nil && strings.HasSuffix(n.CallFrame.URL, "/wasm_exec.js")
	}
	switch {
	case name == "(idle)":
		return kindIdle
	case name == "(program)":
		return "browser and V8 internals (program)"
	case name == "(garbage collector)":
		return "V8 garbage collector"
	case strings.HasPrefix(url, "wasm://") || strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "syscall_js.") ||
		strings.HasPrefix(name, "main.") || strings.HasPrefix(name, "wasm_") || strings.HasPrefix(name, "internal_"):
		switch {
		case strings.Contains(name, "special") || strings.Contains(name, "inaliz"):
			return "Go: finalizers of js.Values (runtime.addspecial…)"
		case strings.Contains(name, "schedule") || strings.Contains(name, "findRunnable") || strings.Contains(name, "gopark") ||
			strings.Contains(name, "handleEvent") || strings.Contains(name, "beforeIdle") || strings.Contains(name, "mcall") ||
			strings.Contains(name, "execute") || strings.Contains(name, "casgstatus") || strings.Contains(name, "wasm_pc_f_loop") ||
			strings.Contains(name, "nanotime"):
			return "Go: scheduler and event entry"
		case strings.Contains(name, "malloc") || strings.Contains(name, "gc") || strings.Contains(name, "Sweep") ||
			strings.Contains(name, "sweep") || strings.Contains(name, "HeapBits") || strings.Contains(name, "newobject"):
			return "Go: allocation and GC"
		}
		return "Go: other code (the shim, syscall/js, runtime)"
	case name == "send" && url == "":
		return "WebSocket.send"
	case strings.HasSuffix(url, "/wasm_exec.js") || strings.HasPrefix(name, "js-to-wasm") || strings.HasPrefix(name, "wasm-to-js") ||
		(url == "" && inGlue(parent) && (name == "decode" || name == "encode" || name == "encodeInto")):
		return "syscall/js glue (wasm_exec.js, TextEncoder/Decoder)"
	case strings.HasSuffix(url, "/bridge-transport.js"):
		return "bridge transport (bridge-transport.js)"
	case strings.Contains(url, "/webtest/"):
		return "benchmark and plain client JS"
	case url == "":
		return "other builtins (JSON, Promise…)"
	}
	return "other page JS"
}
