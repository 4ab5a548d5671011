package webtest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/backend/storage/storagetest"
)

// BenchmarkLegacyRootPreparation50x100: what a root generation costs the
// page before its first request, for a user with 50 active servers of 100
// allowed tools each, catalogs cached (discovered once, in the backend's
// memory): createLegacyMcpGenerationContext() (list_legacy_mcp_tools over
// the bridge, 5,000 descriptors) and one round's mergeIntoToolData (5,000
// aliases and schema clones). The baseline, in the same page and the same
// rounds, is JSON.parse of those 50 catalog files' text; the listing by
// the plain-JavaScript WebSocket client (testdata/plainclient.js) is
// measured beside, to tell the bridge's share from the socket's. 15
// interleaved rounds after a warm-up; medians. Rounds are apart as roots
// are, so a kept listing's spare parse (jsapi/bridge-transport.js) is made
// in the idle time between them; a second root right after each round's
// first, before any idle time (no spare ready: the kept text is parsed
// while its digest is asked), is measured beside.
func BenchmarkLegacyRootPreparation50x100(b *testing.B) { rootPreparation(b, 50, 100, 0) }

// BenchmarkLegacyRootPreparation3x20 is the same for 3 servers of 20 tools
// (a user with a few servers), against the JSON.parse of their 3 files.
func BenchmarkLegacyRootPreparation3x20(b *testing.B) { rootPreparation(b, 3, 20, 0) }

// BenchmarkLegacyRootPreparation50x100Set3x20 is a root of the 50 × 100
// user whose chat has a tool set of 20 tools of 3 of those servers (60
// tools): the page's work is what the set offers. Baseline: the JSON.parse
// of the 3 servers' catalog files.
func BenchmarkLegacyRootPreparation50x100Set3x20(b *testing.B) { rootPreparation(b, 50, 100, 3) }

// rootPreparation measures a root over n servers of tools tools each, with
// a tool set of 20 tools of each of the first setServers servers (0: no
// set).
func rootPreparation(b *testing.B, n, tools, setServers int) {
	be := newBackend(b)
	store := storage.Open(be.root)
	ids, err := storagetest.Servers(store, n, tools)
	if err != nil {
		b.Fatal(err)
	}
	p := be.openHost(b)
	var texts []string
	size := 0
	baseline := ids
	if setServers > 0 {
		baseline = ids[:setServers]
	}
	for _, id := range baseline {
		data, err := os.ReadFile(store.CatalogPath(id))
		if err != nil {
			b.Fatal(err)
		}
		texts, size = append(texts, string(data)), size+len(data)
	}
	selection := []string{}
	want := n * tools
	if setServers > 0 {
		for _, id := range ids[:setServers] {
			for j := range 20 {
				selection = append(selection, fmt.Sprintf("mcp/%s:tool.%03d", id, j))
			}
		}
		want = len(selection)
	}
	p.run(`
		for (const id of %s) await tt.mcp.servers.discover(id); // disk hit: now in memory
		tt.legacy = await import('/jsapi/legacy-mcp-tools.js');
		tt.plain = await (await import('/webtest/plainclient.js')).connect(location.origin);
		tt.catalogTexts = %s;
		const selection = %s;
		tt.listArgs = undefined;
		if (selection.length > 0) {
			const set = await tt.mcp.toolSets.save({ name: 'bench', tools: selection });
			tt.listArgs = { dto: { toolSetId: set.id } };
		}
		// as the extension's bridge lists a root with its tool set
		tt.invokeCommand = (command, args) =>
			window.__TAURITAVERN__.invoke.safeInvoke(command, command === 'list_legacy_mcp_tools' ? tt.listArgs : args);`, ids, texts, selection)
	type round struct {
		List, Aliases, Parse, Plain, Next float64
		Tools                             int
	}
	p.run(`
		tt.benchRound = async () => {
			const t0 = performance.now();
			const context = await tt.legacy.createLegacyMcpGenerationContext({ invokeCommand: tt.invokeCommand });
			const t1 = performance.now();
			const data = { tools: [] };
			context.createRound().mergeIntoToolData(data);
			const t2 = performance.now();
			// the next root at once: no idle time since the first
			const next = { tools: [] };
			(await tt.legacy.createLegacyMcpGenerationContext({ invokeCommand: tt.invokeCommand })).createRound().mergeIntoToolData(next);
			const t3 = performance.now();
			for (const text of tt.catalogTexts) JSON.parse(text);
			const t4 = performance.now();
			const plain = await tt.plain.invoke('list_legacy_mcp_tools', tt.listArgs);
			const t5 = performance.now();
			if (plain.tools.length !== data.tools.length || next.tools.length !== data.tools.length) throw new Error('the plain client listed ' + plain.tools.length);
			return { list: t1 - t0, aliases: t2 - t1, next: t3 - t2, parse: t4 - t3, plain: t5 - t4, tools: data.tools.length };
		};`)
	// Files written within 3 s are read again by every listing (the list
	// view's "racy" rule, DECISIONS); a user's were written long before.
	time.Sleep(3500 * time.Millisecond)
	var r struct{ Rounds []round }
	for i := range 16 { // one evaluation each: a loaded machine takes seconds per round
		x := evalJS[round](p, `return await tt.benchRound();`)
		if x.Tools != want {
			b.Fatalf("%d tools advertised; want %d", x.Tools, want)
		}
		if i > 0 { // the first is a warm-up
			r.Rounds = append(r.Rounds, x)
		}
	}
	pick := func(f func(round) float64) float64 {
		xs := make([]float64, len(r.Rounds))
		for i, x := range r.Rounds {
			xs[i] = f(x)
		}
		return median(xs)
	}
	list, aliases, parse := pick(func(x round) float64 { return x.List }), pick(func(x round) float64 { return x.Aliases }), pick(func(x round) float64 { return x.Parse })
	plain := pick(func(x round) float64 { return x.Plain })
	total := pick(func(x round) float64 { return x.List + x.Aliases })
	next := pick(func(x round) float64 { return x.Next })
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(total, "prepare-ms")
	b.ReportMetric(parse, "parse-ms")
	b.ReportMetric(total/parse, "prepare/parse")
	b.ReportMetric(next/parse, "next-root/parse")
	what := fmt.Sprintf("root generation, %d servers × %d tools", n, tools)
	if setServers > 0 {
		what += fmt.Sprintf(", a tool set of %d of them (%d tools)", setServers, want)
	}
	addBenchRow(benchRow{
		measure: fmt.Sprintf("%s (list %.1f + aliases %.1f ms; the next root at once, no spare ready, %.1f ms = %.2f×; the listing by a plain-JS client %.1f ms)",
			what, list, aliases, next, next/parse, plain),
		bridge:    fmt.Sprintf("%.1f ms", total),
		plain:     fmt.Sprintf("%.1f ms JSON.parse of the %.2f MiB catalogs", parse, float64(size)/(1<<20)),
		ratio:     fmt.Sprintf("%.2f×", total/parse),
		prototype: "–",
	})
}
