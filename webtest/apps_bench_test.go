package webtest

// Figures of MCP Apps in the SillyTavern stand-in (docs/BENCHMARKS.md
// "MCP Apps"): from a tool message's render to the App's first paint of
// the result, next to the same document in a bare iframe; and a chat of
// 50 App messages opened.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// paintApp is a minimal App written by hand: ui/initialize, initialized,
// and once the result came and is in its DOM, a size change the host
// applies — the first moment the host can see the App show the result.
// (Not requestAnimationFrame: Chrome throttles it in frames out of view,
// which would measure the scroll position, not ttmcp.)
const paintApp = `<!doctype html><html><body style="margin:0;height:200px"><div id="out">waiting</div><script>
const send = (m) => parent.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
addEventListener('message', (e) => {
  const m = e.data;
  if (!m || m.jsonrpc !== '2.0') return;
  if (m.id === 1 && m.result) send({ method: 'ui/notifications/initialized', params: {} });
  if (m.method === 'ui/notifications/tool-result') {
    document.getElementById('out').textContent = JSON.stringify(m.params.structuredContent || m.params.content);
    setTimeout(() => send({ method: 'ui/notifications/size-changed', params: { height: 201 } }), 0);
  }
  if (m.method === 'ui/resource-teardown' && m.id !== undefined) send({ id: m.id, result: {} });
});
send({ id: 1, method: 'ui/initialize', params: { protocolVersion: '2026-01-26', appInfo: { name: 'paint', version: '1' }, appCapabilities: {} } });
</script></body></html>`

func paintAppHandler() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "paint", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "board", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://paint/app.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://paint/app.html", Name: "app", MIMEType: "text/html;profile=mcp-app"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://paint/app.html", MIMEType: "text/html;profile=mcp-app", Text: paintApp}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// appMessagesJS adds n tool messages with the App's record to the chat
// and draws them as addOneMessage would; returns nothing.
const appMessagesJS = `
	const ctx = SillyTavern.getContext();
	const chat = ctx.chat;
	let box = document.getElementById('chat');
	if (!box) { box = document.createElement('div'); box.id = 'chat'; document.body.append(box); }
	for (let k = 0; k < %s; k++) {
		const i = chat.length;
		const invocationId = 'bench-' + i;
		chat.push({ is_system: true, mes: 'Tool calls: board', extra: { ttmcp_apps: [{ invocationId, registrationId: %s, serverDisplayName: 'Demo', appToolName: 'board', arguments: {}, result: { content: [{ type: 'text', text: 'r' + i }], structuredContent: { i } } }] } });
		const mes = document.createElement('div');
		mes.className = 'mes';
		mes.setAttribute('mesid', String(i));
		mes.innerHTML = '<div class="mes_block"><div class="mes_text">Tool calls: board</div></div>';
		box.append(mes);
	}`

func BenchmarkAppFirstPaint(b *testing.B) {
	e := newSTEnvAt(b, paintAppHandler(), "", map[string]string{"board": "allow"})
	ours := func() float64 {
		return evalJS[float64](e.p, appMessagesJS+`
			const mesid = String(chat.length - 1);
			document.querySelector('.mes[mesid="' + mesid + '"]').scrollIntoView(); // as SillyTavern scrolls to a new message
			await new Promise((r) => requestAnimationFrame(r));
			const t0 = performance.now();
			await ctx.eventSource.emit('tool_calls_rendered', []);
			for (;;) {
				const f = document.querySelector('.mes[mesid="' + mesid + '"] .ttmcp-app-frame');
				if (f && f.style.height === '201px') return performance.now() - t0;
				await new Promise((r) => requestAnimationFrame(r));
			}`, 1, e.id)
	}
	// No baseline in the same run: a bare srcdoc iframe inherits the
	// playground's CSP (its script would not run), and the playground
	// frames no other origin (docs/BENCHMARKS.md says so).
	samples := interleaved(2, b.N+4, ours)
	o := median(samples[0])
	b.ReportMetric(o, "ms/app")
	addBenchRow(benchRow{measure: "MCP App: tool message rendered → the App shows its result (median ms)",
		bridge: fmt.Sprintf("%.1f", o), plain: "—", ratio: "—"})
}

func BenchmarkAppChatOf50(b *testing.B) {
	e := newSTEnvAt(b, paintAppHandler(), "", map[string]string{"board": "allow"})
	e.p.run(appMessagesJS, 50, e.id)
	type opened struct {
		Ms             float64
		Live, Frames   int
		Painted, Slots int
	}
	var last opened
	var ms []float64
	for i := 0; i < b.N+2; i++ {
		last = evalJS[opened](e.p, `
			const t0 = performance.now();
			await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'bench');
			const slots = () => document.querySelectorAll('.ttmcp-app').length;
			for (let k = 0; k < 600; k++) {
				const frames = [...document.querySelectorAll('.ttmcp-app-frame')];
				if (slots() === 50 && frames.length > 0 && frames.every((f) => f.style.height === '201px')) {
					return { ms: performance.now() - t0, live: frames.length, frames: frames.length, painted: frames.length, slots: slots() };
				}
				await new Promise((r) => setTimeout(r, 20));
			}
			return { ms: -1, live: 0, frames: document.querySelectorAll('.ttmcp-app-frame').length, painted: 0, slots: slots() };`)
		if last.Ms < 0 {
			b.Fatalf("the chat of 50 App messages did not settle: %+v", last)
		}
		ms = append(ms, last.Ms)
	}
	b.ReportMetric(median(ms), "ms/open")
	b.ReportMetric(float64(last.Frames), "live-apps")
	addBenchRow(benchRow{measure: "MCP Apps: a chat of 50 App messages opened → every App near the view shows its result (median ms)",
		bridge: fmt.Sprintf("%.0f (%d of 50 live)", median(ms), last.Frames), plain: "—", ratio: "—"})
}
