package webtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/internal/heappeak"
	"github.com/ttmcp/ttmcp/jsapi"
)

// BenchmarkProgressFlood (issue 29): a server floods progress — the steps
// tool sending notifications/progress back to back, as fast as go-sdk
// writes them — during a test call made from the Manager's test console,
// which shows the progress as it comes. Measured in the same run: the
// renders of the console's progress (React commits, seen as changes of
// its data-updates) per second of the call, the longest main-thread task
// during it, and the backend's live heap (the heap marked live by the
// last GC, /gc/heap/live:bytes, sampled every 5 ms in this process, which
// runs the backend and the MCP server) at its peak over its level before
// the call — for a flood of 20,000 and of 100,000
// updates, the same 100,000 with the page's animations off, and the same
// 100,000 called without onProgress (baseline: the backend still receives
// and counts them, the page is sent nothing). A flat heap is the same peak
// for 5× the updates.
func BenchmarkProgressFlood(b *testing.B) {
	needBundle(b)
	mcpSrv := newMCPServer(b, stepsHandler(true))
	be := newBackend(b, withManager(nil))
	p := openManager(b, be)
	id := evalJS[string](p, `
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Flood', endpoint: %s, protocolVersion: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		await mcp.servers.discover(s.id);
		window.dispatchEvent(new Event('ttmcp:registrations-changed'));
		await ui.get('.tt-mcp-state-active', undefined, await ui.row('Flood'));
		return s.id;`, mcpSrv.endpoint(), jsapi.Protocol20260728)

	type run struct {
		updates, frames                   int
		seconds, rendersPerS, longTaskMs  float64
		heapBeforeMiB, heapPeakMiB, grown float64
	}
	// flood makes one call of n updates and returns what it cost; ui: in
	// the test console (with onProgress), else through the API without it.
	flood := func(n int, ui bool) run {
		stop := heappeak.Watch(5 * time.Millisecond)
		var got typeOfFlood
		if ui {
			got = evalJS[typeOfFlood](p, `
				const long = [];
				const po = new PerformanceObserver((l) => long.push(...l.getEntries().map((e) => e.duration)));
				po.observe({ type: 'longtask' });
				let renders = 0, last = '';
				const mo = new MutationObserver(() => {
					const el = document.querySelector('.tt-mcp-test-call .tt-mcp-progress');
					const now = el?.dataset.updates ?? '';
					if (el && now !== last) { last = now; renders++; }
				});
				mo.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-updates'], childList: true });
				const start = performance.now();
				await ui.click('button', 'Run test');
				await ui.withText('Server responded');
				const seconds = (performance.now() - start) / 1000;
				mo.disconnect(); po.disconnect();
				const chip = document.querySelector('.tt-mcp-test-call .tt-mcp-chip-progress')?.textContent ?? '';
				return { updates: Number(/(\d[\d,]*) updates/.exec(chip)?.[1].replaceAll(',', '') ?? 0), frames: renders, renders, seconds,
					longTaskMs: long.length ? Math.max(...long) : 0 };`)
		} else {
			got = evalJS[typeOfFlood](p, `
				const start = performance.now();
				const o = await window.__TAURITAVERN__.api.mcp.tools.testCall(
					{ registrationId: %s, nativeName: 'steps', argumentsJson: JSON.stringify({ n: %s, flood: true }) });
				if (o.outcome !== 'known_response') throw new Error(JSON.stringify(o));
				return { updates: 0, frames: 0, renders: 0, seconds: (performance.now() - start) / 1000, longTaskMs: 0 };`, id, n)
		}
		before, peak := stop()
		return run{updates: got.Updates, frames: got.Frames, seconds: got.Seconds, rendersPerS: float64(got.Renders) / got.Seconds,
			longTaskMs: got.LongTaskMs, heapBeforeMiB: before, heapPeakMiB: peak, grown: peak - before}
	}
	console := func(n int) run {
		p.run(`
			if (!document.querySelector('.tt-mcp-test-call')) {
				await ui.click('button', 'Test call', document);
				await ui.withText('Test MCP tool');
				await ui.choose('Tool', 'steps');
				await ui.click('radio', 'true', await ui.get('radiogroup', 'flood'));
			}
			const n = await ui.field(/^n\b/);
			n.value = ''; n.dispatchEvent(new Event('input', { bubbles: true }));
			await ui.type(/^n\b/, %s);`, fmt.Sprint(n))
		r := flood(n, true)
		if r.updates != n {
			b.Fatalf("the console counted %d of %d updates", r.updates, n)
		}
		return r
	}
	small, large, quiet := console(20_000), console(100_000), flood(100_000, false)
	// the spinner (a total-less flood shows one) is redrawn in software by
	// headless Chromium on the VM's two cores, which the backend shares:
	// the same call with animations off tells that cost from ttmcp's
	p.run(`const st = document.createElement('style'); st.textContent = '.fa-spin { animation: none !important; }'; document.head.append(st);`)
	still := console(100_000)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(large.rendersPerS, "renders/s")
	b.ReportMetric(large.grown, "heap-growth-MiB")
	b.ReportMetric(quiet.grown, "baseline-heap-growth-MiB")
	note := "\nprogress flood (issue 29): one test call whose server sends notifications/progress back to back\n"
	note += "updates\tpage\tseconds\tupdates/s\trenders\trenders/s\tlongest task ms\theap before MiB\theap peak MiB\tgrowth MiB\n"
	for _, r := range []struct {
		run
		page string
		n    int
	}{{small, "console", 20_000}, {large, "console", 100_000}, {still, "console, spinner still", 100_000}, {quiet, "none (no onProgress)", 100_000}} {
		note += fmt.Sprintf("%d\t%s\t%.1f\t%.0f\t%d\t%.1f\t%.0f\t%.1f\t%.1f\t%.1f\n", r.n, r.page, r.seconds, float64(r.n)/r.seconds,
			r.frames, r.rendersPerS, r.longTaskMs, r.heapBeforeMiB, r.heapPeakMiB, r.grown)
	}
	addBenchNote(note)
}

// typeOfFlood is what the page reports of one flood call.
type typeOfFlood = struct {
	Updates, Frames, Renders int
	Seconds, LongTaskMs      float64
}
