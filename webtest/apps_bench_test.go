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

// bareFramesJS is the floor of an App's first paint, in the same run: the
// same document, from the same App view route (its views minted first,
// untimed), in n plain sandboxed iframes answered by a dozen lines of
// postMessage — no extension, no AppBridge, no interface read. Returns the
// ms from the frames entering the page to every App's size change after
// its result.
const bareFramesJS = `
	const mcp = window.__TAURITAVERN__.api.mcp;
	const views = [];
	for (let k = 0; k < %s; k++) views.push((await mcp.apps.readInterface({ registrationId: %s, appToolName: 'board' })).viewId);
	const box = document.createElement('div');
	box.style.cssText = 'position:fixed;left:0;top:0;width:600px;z-index:-1';
	document.body.append(box);
	const post = (f, m) => f.contentWindow.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
	const t0 = performance.now();
	await Promise.all(views.map((id, i) => new Promise((resolve) => {
		const f = document.createElement('iframe');
		f.setAttribute('sandbox', 'allow-scripts');
		f.style.cssText = 'display:block;width:100%;height:120px';
		const on = (e) => {
			const m = e.data;
			if (e.source !== f.contentWindow || !m || m.jsonrpc !== '2.0') return;
			if (m.method === 'ui/initialize') post(f, { id: m.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'bare', version: '1' }, hostCapabilities: {}, hostContext: {} } });
			if (m.method === 'ui/notifications/initialized') {
				post(f, { method: 'ui/notifications/tool-input', params: { arguments: {} } });
				post(f, { method: 'ui/notifications/tool-result', params: { content: [{ type: 'text', text: 'r' + i }], structuredContent: { i } } });
			}
			if (m.method === 'ui/notifications/size-changed') {
				f.style.height = m.params.height + 'px';
				removeEventListener('message', on);
				resolve();
			}
		};
		addEventListener('message', on);
		f.src = location.origin + '/apps/view/' + encodeURIComponent(id);
		box.append(f);
	})));
	const ms = performance.now() - t0;
	box.remove();
	return ms;`

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
	bare := func() float64 { return evalJS[float64](e.p, bareFramesJS, 1, e.id) }
	samples := interleaved(2, b.N+4, ours, bare)
	o, p := median(samples[0]), median(samples[1])
	b.ReportMetric(o, "ms/app")
	b.ReportMetric(p, "ms/bare-frame")
	b.ReportMetric(o/p, "x")
	addBenchRow(benchRow{measure: "MCP App: tool message rendered → the App shows its result, vs the same view in a bare sandboxed frame (median ms)",
		bridge: fmt.Sprintf("%.1f", o), plain: fmt.Sprintf("%.1f", p), ratio: fmt.Sprintf("%.2f", o/p)})
}

func BenchmarkAppChatOf50(b *testing.B) {
	e := newSTEnvAt(b, paintAppHandler(), "", map[string]string{"board": "allow"})
	e.p.run(appMessagesJS, 50, e.id)
	// Each sample starts from the same chat without live Apps: its records
	// taken off the messages and the chat opened (untimed), so no sample
	// pays for tearing down the Apps of the one before.
	e.p.run(`
		window.__appRecords = SillyTavern.getContext().chat.map((m) => m.extra?.ttmcp_apps);
		window.__appsOff = async () => {
			for (const m of SillyTavern.getContext().chat) if (m.extra) delete m.extra.ttmcp_apps;
			await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'bench-off');
			await new Promise((r) => setTimeout(r, 50));
		};
		window.__appsOn = () => SillyTavern.getContext().chat.forEach((m, i) => { if (__appRecords[i]) m.extra.ttmcp_apps = __appRecords[i]; });`)
	type opened struct {
		Ms            float64
		Frames, Slots int
	}
	var last opened
	ours := func() float64 {
		last = evalJS[opened](e.p, `
			await __appsOff();
			__appsOn();
			const t0 = performance.now();
			await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'bench');
			const slots = () => document.querySelectorAll('.ttmcp-app').length;
			for (let k = 0; k < 600; k++) {
				const frames = [...document.querySelectorAll('.ttmcp-app .ttmcp-app-frame')];
				if (slots() === 50 && frames.length > 0 && frames.every((f) => f.style.height === '201px')) {
					return { ms: performance.now() - t0, frames: frames.length, slots: slots() };
				}
				await new Promise((r) => setTimeout(r, 20));
			}
			return { ms: -1, frames: document.querySelectorAll('.ttmcp-app .ttmcp-app-frame').length, slots: slots() };`)
		if last.Ms < 0 {
			b.Fatalf("the chat of 50 App messages did not settle: %+v", last)
		}
		return last.Ms
	}
	// The same 50 messages without their Apps, opened: the extension's
	// part of opening a chat, with nothing to draw.
	noApps := func() float64 {
		return evalJS[float64](e.p, `
			await __appsOff();
			const t0 = performance.now();
			await SillyTavern.getContext().eventSource.emit('chat_id_changed', 'bench-plain');
			await new Promise((r) => requestAnimationFrame(r));
			return performance.now() - t0;`)
	}
	// As many bare frames as Apps were live near the view (3 at 780 × 405).
	bare := func() float64 {
		n := last.Frames
		if n == 0 {
			n = 3
		}
		return evalJS[float64](e.p, bareFramesJS, n, e.id)
	}
	samples := interleaved(1, b.N+2, ours, noApps, bare)
	o, n, p := median(samples[0]), median(samples[1]), median(samples[2])
	b.ReportMetric(o, "ms/open")
	b.ReportMetric(n, "ms/open-without-apps")
	b.ReportMetric(p, "ms/bare-frames")
	b.ReportMetric(float64(last.Frames), "live-apps")
	addBenchRow(benchRow{measure: fmt.Sprintf("MCP Apps: a chat of 50 App messages opened → every App near the view shows its result (%d of 50 live), vs the same %d views in bare sandboxed frames (median ms)", last.Frames, last.Frames),
		bridge: fmt.Sprintf("%.0f", o), plain: fmt.Sprintf("%.0f", p), ratio: fmt.Sprintf("%.2f", o/p)})
	addBenchRow(benchRow{measure: "MCP Apps: the same chat of 50 messages opened without their Apps (median ms)",
		bridge: fmt.Sprintf("%.0f", o), plain: fmt.Sprintf("%.1f", n), ratio: fmt.Sprintf("%.0f", o/n)})
}
