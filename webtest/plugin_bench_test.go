package webtest

import (
	"fmt"
	"testing"
)

// BenchmarkPluginPathFromThePage (issue 28): the whole plugin path as a
// phone uses it — Chromium, the stand-in of SillyTavern 1.18.0's server
// (Express, compression(), basic auth, sessions, CSRF) at the machine's own
// address, the real Node plugin and the real ttmcp serve it started, the
// page's HTTP transport — against the direct path: a page at the backend's
// own origin on its WebSocket, the same backend, the same MCP server, in
// the same run, interleaved. Each round times 50 servers.list() and 20
// warm test calls (echo on the demo server, its connection kept) per page.
func BenchmarkPluginPathFromThePage(b *testing.B) {
	ip := machineAddress(b)
	demo := newDemoServer(b)
	st := startSillyTavern(b, ip, false)
	bctx := deviceBrowser(b)
	plugin, _ := st.tab(b, bctx, "alice")
	direct, _ := logTab(b, bctx, true)
	direct.navigate(st.backend + "/")
	direct.run(`
		await import('/jsapi/tauritavern-mcp.js');
		await window.__TAURITAVERN__.ready;`)
	setup := `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Demo', endpoint: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await mcp.servers.discover(s.id);
		window.benchId = s.id;
		window.benchList = async (n) => { const t0 = performance.now(); for (let i = 0; i < n; i++) await mcp.servers.list(); return (performance.now() - t0) / n; };
		window.benchCall = async (n) => {
			const t0 = performance.now();
			for (let i = 0; i < n; i++) {
				const r = await mcp.tools.testCall({ registrationId: s.id, nativeName: 'echo', argumentsJson: '{"text":"b"}' });
				if (r.outcome !== 'known_response' || r.response.isError) throw new Error(JSON.stringify(r));
			}
			return (performance.now() - t0) / n;
		};
		await window.benchCall(3); // warm: the connection is kept from here on
		return s.id;`
	for _, p := range []*page{plugin, direct} {
		evalJS[string](p, setup, demo.endpoint())
	}
	measure := func(p *page, fn string, n int) func() float64 {
		return func() float64 { return evalJS[float64](p, `return await window[%s](%s);`, fn, n) }
	}
	s := interleaved(1, 7,
		measure(plugin, "benchList", 50), measure(direct, "benchList", 50),
		measure(plugin, "benchCall", 20), measure(direct, "benchCall", 20))
	listP, listD, callP, callD := median(s[0]), median(s[1]), median(s[2]), median(s[3])
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(listP, "plugin-list-ms")
	b.ReportMetric(listD, "direct-list-ms")
	b.ReportMetric(callP, "plugin-call-ms")
	b.ReportMetric(callD, "direct-call-ms")
	addBenchRow(benchRow{
		measure: "servers.list() through SillyTavern's plugin (Node, Express, compression) vs direct WebSocket",
		bridge:  fmt.Sprintf("%.2f ms", listP), plain: fmt.Sprintf("%.2f ms direct", listD),
		ratio: fmt.Sprintf("%.2f×", listP/listD), prototype: "-",
	})
	addBenchRow(benchRow{
		measure: "warm test call through SillyTavern's plugin vs direct WebSocket",
		bridge:  fmt.Sprintf("%.2f ms", callP), plain: fmt.Sprintf("%.2f ms direct", callD),
		ratio: fmt.Sprintf("%.2f×", callP/callD), prototype: "-",
	})
}
