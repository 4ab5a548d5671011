package webtest

import (
	"fmt"
	"os"
	"testing"

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
// interleaved rounds after a warm-up; medians.
func BenchmarkLegacyRootPreparation50x100(b *testing.B) {
	be := newBackend(b)
	store := storage.Open(be.root)
	ids, err := storagetest.Servers(store, 50, 100)
	if err != nil {
		b.Fatal(err)
	}
	p := be.openHost(b)
	var texts []string
	size := 0
	for _, id := range ids {
		data, err := os.ReadFile(store.CatalogPath(id))
		if err != nil {
			b.Fatal(err)
		}
		texts, size = append(texts, string(data)), size+len(data)
	}
	p.run(`
		for (const id of %s) await tt.mcp.servers.discover(id); // disk hit: now in memory
		tt.legacy = await import('/jsapi/legacy-mcp-tools.js');
		tt.plain = await (await import('/webtest/plainclient.js')).connect(location.origin);
		tt.catalogTexts = %s;`, ids, texts)
	type round struct {
		List, Aliases, Parse, Plain float64
		Tools                       int
	}
	p.run(`
		tt.benchRound = async () => {
			const t0 = performance.now();
			const context = await tt.legacy.createLegacyMcpGenerationContext();
			const t1 = performance.now();
			const data = { tools: [] };
			context.createRound().mergeIntoToolData(data);
			const t2 = performance.now();
			for (const text of tt.catalogTexts) JSON.parse(text);
			const t3 = performance.now();
			const plain = await tt.plain.invoke('list_legacy_mcp_tools');
			const t4 = performance.now();
			if (plain.tools.length !== data.tools.length) throw new Error('the plain client listed ' + plain.tools.length);
			return { list: t1 - t0, aliases: t2 - t1, parse: t3 - t2, plain: t4 - t3, tools: data.tools.length };
		};`)
	var r struct{ Rounds []round }
	for i := range 16 { // one evaluation each: a loaded machine takes seconds per round
		x := evalJS[round](p, `return await tt.benchRound();`)
		if x.Tools != 5000 {
			b.Fatalf("%d tools advertised; want 5000", x.Tools)
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
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(total, "prepare-ms")
	b.ReportMetric(parse, "parse-ms")
	b.ReportMetric(total/parse, "prepare/parse")
	addBenchRow(benchRow{
		measure:   fmt.Sprintf("root generation, 50 servers × 100 tools (list %.1f + aliases %.1f ms; the listing by a plain-JS client %.1f ms)", list, aliases, plain),
		bridge:    fmt.Sprintf("%.1f ms", total),
		plain:     fmt.Sprintf("%.1f ms JSON.parse of the %.1f MiB catalogs", parse, float64(size)/(1<<20)),
		ratio:     fmt.Sprintf("%.2f×", total/parse),
		prototype: "–",
	})
}
