package webtest

// A long call shows its progress (issue 29), in the playground's
// SillyTavern stand-in with the real extension: a go-sdk server of our own
// with the steps tool (stdiotest.AddSteps, in both protocol eras) holds
// its call at a step the test chooses, so the page is looked at (and
// photographed) while the call runs: the chat's status above the input
// during a model's call, the test console's during a test call.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// stepsHandler serves the steps tool over Streamable HTTP (stateless:
// 2026-07-28, stateful: 2025-11-25).
func stepsHandler(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	stdiotest.AddSteps(s)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// holdSteps paces the steps tool of this process's servers: each step
// after the first waits gap, and step at waits until the returned release
// is called (or the call ends).
func holdSteps(t *testing.T, at int, gap time.Duration) (release func()) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	stdiotest.StepsHold = func(ctx context.Context, step int) {
		if step == at {
			select {
			case <-ch:
			case <-ctx.Done():
			}
			return
		}
		select {
		case <-time.After(gap):
		case <-ctx.Done():
		}
	}
	t.Cleanup(func() {
		release()
		stdiotest.StepsHold = nil
	})
	return release
}

// watchProgress records, in the page, every state the progress element
// under selector shows (its state text and its bar), from now on.
func watchProgress(p *page, selector string) {
	p.run(`
		window.progressSeen = [];
		const seen = () => {
			for (const el of document.querySelectorAll(%s + ' .tt-mcp-progress')) {
				const state = el.querySelector('.tt-mcp-progress-state')?.textContent ?? '';
				const bar = el.querySelector('[role=progressbar]')?.getAttribute('aria-valuenow') ?? '';
				const message = el.querySelector('.tt-mcp-progress-message')?.textContent ?? '';
				const last = progressSeen.at(-1);
				const now = state + '|' + bar + '|' + message;
				if (last !== now) progressSeen.push(now);
			}
		};
		window.progressObserver?.disconnect();
		window.progressObserver = new MutationObserver(seen);
		progressObserver.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });`, selector)
}

// progressStates is what watchProgress saw, deduplicated in order.
func progressStates(p *page) []string {
	return evalJS[[]string](p, `return progressSeen;`)
}

// wantSteps checks the states seen went 1 of 5 … 5 of 5 with their bar and
// message, each once and in order (the steps are paced slower than the
// backend's coalescing, so none is merged away).
func wantSteps(t *testing.T, seen []string, upTo int) {
	t.Helper()
	var steps []string
	for _, s := range seen {
		if strings.Contains(s, " of 5|") {
			steps = append(steps, s)
		}
	}
	var want []string
	for i := 1; i <= upTo; i++ {
		want = append(want, strings.Join([]string{strconv.Itoa(i) + " of 5", strconv.Itoa(i * 20), "step " + strconv.Itoa(i) + " of 5"}, "|"))
	}
	if strings.Join(steps, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress shown:\n%s\nwant:\n%s\n(all states: %q)", strings.Join(steps, "\n"), strings.Join(want, "\n"), seen)
	}
}

// While a model's call runs, the chat shows it above the input: the tool,
// a bar moving step by step with the server's message, the time; the
// input form (and SillyTavern's Stop in it) stays where it was, at 1280
// and at 390 px; the status goes once the call ended (the last step stays
// a moment), the model reads the answer, and the audit record keeps the
// count and the last message.
func TestSTChatShowsProgress(t *testing.T) {
	needBundle(t)
	for _, era := range askingEras {
		t.Run(era.name, func(t *testing.T) {
			release := holdSteps(t, 4, 300*time.Millisecond)
			e := newSTEnvAt(t, stepsHandler(era.stateless), era.protocol, map[string]string{"steps": "allow"})
			e.llm.script(calls(toolCall{"c1", "mcp__Demo__steps", `{"n":5}`}), reply{Text: "All five steps ran."})
			loadUI(e.p)
			watchProgress(e.p, ".tt-mcp-chat-status")
			e.start("Run the steps")
			e.p.run(`await ui.withText('3 of 5', document.querySelector('#sheld'));`)
			status := evalJS[struct {
				Text                string
				Bottom, FormTop     float64
				Overflow            bool
				StatusBeforeTheForm bool
			}](e.p, `
				const st = document.querySelector('.tt-mcp-chat-status');
				const form = document.getElementById('send_form');
				return { text: st.innerText, bottom: st.getBoundingClientRect().bottom, formTop: form.getBoundingClientRect().top,
					overflow: st.scrollWidth > st.clientWidth, statusBeforeTheForm: st.nextElementSibling === form };`)
			if !strings.Contains(status.Text, "Running steps (Demo)") || !strings.Contains(status.Text, "step 3 of 5") || !status.StatusBeforeTheForm ||
				status.Bottom > status.FormTop+0.5 || status.Overflow {
				t.Errorf("the chat's status: %+v", status)
			}
			if era.name == "2026" {
				// the Extensions drawer covers the chat: closed, as when chatting
				e.p.run(`document.querySelector('.drawer-toggle').click();
					await ui.gone(() => document.querySelector('#rm_extensions_block.openDrawer'), 'the open drawer');`)
				screenshot(e.p, "progress-chat-390", 390, 844)
				narrow := evalJS[struct{ StatusW, ViewW, FormTop, Bottom float64 }](e.p, `
					const st = document.querySelector('.tt-mcp-chat-status');
					return { statusW: st.getBoundingClientRect().width, viewW: document.documentElement.clientWidth,
						formTop: document.getElementById('send_form').getBoundingClientRect().top, bottom: st.getBoundingClientRect().bottom };`)
				if narrow.StatusW > narrow.ViewW || narrow.Bottom > narrow.FormTop+0.5 {
					t.Errorf("at 390 px the status is %+v", narrow)
				}
				screenshot(e.p, "progress-chat-1280", 1280, 800)
			}
			release()
			r := e.finish()
			if r.Status != "done" || len(r.Chat) != 3 || r.Chat[2].Mes != "All five steps ran." {
				t.Fatalf("ended %s %s: %+v", r.Status, r.Error, r.Chat)
			}
			// the last step stays a moment (CHAT_STATUS_LINGER_MS), then the status goes
			e.p.run(`await ui.gone(() => document.querySelector('.tt-mcp-chat-status'), 'the status after the call');`)
			wantSteps(t, progressStates(e.p), 5)
			a := e.audit()
			if len(a) != 1 || a[0].ProgressUpdates == nil || *a[0].ProgressUpdates != 5 || a[0].ProgressMessage == nil || *a[0].ProgressMessage != "step 5 of 5" {
				t.Errorf("audit %+v", a)
			}
		})
	}
}

// A test call shows the same in the test console: the bar moving with the
// server's message and the time while the call runs, Stop waiting beside
// it; after the call, the outcome and how many updates came.
func TestTestConsoleShowsProgress(t *testing.T) {
	needBundle(t)
	release := holdSteps(t, 4, 300*time.Millisecond)
	mcpSrv := newMCPServer(t, stepsHandler(true))
	b := newBackend(t, withManager(nil))
	p := openManager(t, b)
	p.run(`
		const mcp = window.__TAURITAVERN__.api.mcp;
		const s = await mcp.servers.create({ displayName: 'Steps', endpoint: %s, protocolVersion: %s });
		await mcp.servers.setState({ registrationId: s.id, state: 'active' });
		window.dispatchEvent(new Event('ttmcp:registrations-changed'));
		await ui.get('.tt-mcp-state-active', undefined, await ui.row('Steps'));
		await ui.click('button', 'Test call', document);
		await ui.withText('Test MCP tool');
		await ui.choose('Tool', 'steps');
		await ui.type(/^n\b/, '5');`, mcpSrv.endpoint(), jsapi.Protocol20260728)
	watchProgress(p, ".tt-mcp-test-call")
	p.run(`await ui.click('button', 'Run test'); await ui.withText('3 of 5');`)
	if got := evalJS[string](p, `return document.querySelector('.tt-mcp-test-call .tt-mcp-actions').innerText;`); !strings.Contains(got, "step 3 of 5") || !strings.Contains(got, "Stop waiting") {
		t.Errorf("the console while the call runs: %q", got)
	}
	shots(p, "progress-console")
	release()
	p.run(`await ui.withText('Server responded'); await ui.withText('Progress · 5 updates · step 5 of 5');`)
	wantSteps(t, progressStates(p), 5)
}

// The independent peer: server-everything's trigger-long-running-operation
// (4 steps in 2 s) called from the page with onProgress, over Streamable
// HTTP and over stdio: the page gets 1/4 … 4/4, each once, in order, before
// the outcome.
func TestEverythingProgressInThePage(t *testing.T) {
	needBundle(t)
	call := func(t *testing.T, p *page, id string) []jsapi.McpCallProgress {
		t.Helper()
		got := evalJS[struct {
			Seen    []jsapi.McpCallProgress
			Outcome string
			Text    string
		}](p, `
			const seen = [];
			const o = await window.__TAURITAVERN__.api.mcp.tools.testCall(
				{ registrationId: %s, nativeName: 'trigger-long-running-operation', argumentsJson: '{"duration":2,"steps":4}' },
				{ onProgress: (v) => seen.push(v) });
			return { seen, outcome: o.outcome, text: o.response?.textBlocks?.[0]?.text ?? '' };`, id)
		if got.Outcome != jsapi.OutcomeKnownResponse || !strings.Contains(got.Text, "Steps: 4") {
			t.Fatalf("outcome %s %q", got.Outcome, got.Text)
		}
		return got.Seen
	}
	want := func(t *testing.T, seen []jsapi.McpCallProgress) {
		t.Helper()
		if len(seen) != 4 {
			t.Fatalf("the page saw %d updates: %+v", len(seen), seen)
		}
		for i, s := range seen {
			if s.Progress != float64(i+1) || s.Total == nil || *s.Total != 4 || s.Updates != i+1 || s.Message != nil {
				t.Fatalf("update %d: %+v", i, s)
			}
		}
	}
	t.Run("http", func(t *testing.T) {
		endpoint := startEverythingHTTP(t)
		b := newBackend(t, withManager(nil))
		p := openManager(t, b)
		id := registerAsker(p, endpoint, jsapi.Protocol20251125)
		want(t, call(t, p, id))
	})
	t.Run("stdio", func(t *testing.T) {
		b, added := stdioEverythingBackend(t)
		p := openManager(t, b)
		p.run(`const mcp = window.__TAURITAVERN__.api.mcp;
			await mcp.servers.setState({ registrationId: %s, state: 'active' });`, added.ID)
		want(t, call(t, p, string(added.ID)))
	})
}
