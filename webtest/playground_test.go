package webtest

// The playground host page at / (backend/server/playground): what it gives
// a third-party extension, checked with fixture extensions
// (testdata/extensions/) in Chromium, as SillyTavern gives it.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ttmcp/ttmcp/backend/server"
)

// withFixtures serves the fixture extensions of testdata/extensions/
// (fixture, early, broken) as third-party extensions.
func withFixtures(c *server.Config) {
	c.Extensions = map[string]fs.FS{}
	for _, name := range []string{"fixture", "early", "broken"} {
		c.Extensions[name] = os.DirFS(filepath.Join("testdata", "extensions", name))
	}
}

// openPlayground opens / and waits until the host emitted APP_READY and
// every listener of it ran. before, if set, runs in every new document of
// the tab before its scripts (then the page is loaded once more).
func openPlayground(tb testing.TB, b *backend, before string) *page {
	tb.Helper()
	p := openPage(tb, b.url("/"))
	if before != "" {
		ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
		defer cancel()
		if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument,
			cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: before}); err != nil {
			tb.Fatal(err)
		}
		p.navigate(b.url("/"))
	}
	waitHostReady(p)
	return p
}

// waitHostReady waits for the host's APP_READY to have been emitted.
func waitHostReady(p *page) {
	p.run(`await new Promise((resolve) => {
		const check = () => document.body?.dataset.hostReady === 'true' ? resolve() : setTimeout(check, 20);
		check();
	});
	await new Promise((resolve) => SillyTavern.getContext().eventSource.on('app_ready', resolve));`)
}

// waitReloaded waits for the page to have reloaded (window.beforeReload,
// set before, is gone) and its host to be ready.
func waitReloaded(p *page) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	for {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!window.beforeReload && document.body?.dataset.hostReady === 'true'`))
		if err == nil && done {
			break
		}
		if ctx.Err() != nil {
			p.tb.Fatalf("the page did not reload: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitHostReady(p)
}

// keys presses keys in the focused element (real key events).
func (p *page) keys(keys string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(keys)); err != nil {
		p.tb.Fatalf("keys %q: %v", keys, err)
	}
}

// The page loads extensions through their manifests as SillyTavern does:
// by loading_order, i18n before the module, css and module tags with their
// ids, the activate hook, then APP_INITIALIZED and APP_READY (awaited,
// in order); a broken extension is reported and the others still load.
func TestPlaygroundLoadsExtensionsLikeSillyTavern(t *testing.T) {
	b := newBackend(t, withFixtures)
	p := openPlayground(t, b, "")
	p.run(`await new Promise((r) => { const c = () => fixtureLog.includes('ready-2') ? r() : setTimeout(c, 20); c(); });`)

	log := evalJS[[]string](p, `return fixtureLog;`)
	want := []string{"early", "module", "activate", "app_initialized", "ready-1", "ready-2"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("load and event order %v; want %v", log, want)
	}

	type tags struct {
		ScriptID, ScriptType, ScriptParent, CSSID, CSSParent string
		Async                                                bool
		Broken                                               string
		Fixture                                              map[string]any
	}
	got := evalJS[tags](p, `
		const s = document.querySelector('script[src="/scripts/extensions/third-party/fixture/index.js"]');
		const l = document.querySelector('link[href="/scripts/extensions/third-party/fixture/style.css"]');
		const toast = [...document.querySelectorAll('#toast-container .toast-error')].map((e) => e.textContent).join(' | ');
		return {
			scriptID: s?.id, scriptType: s?.type, scriptParent: s?.parentElement?.tagName, async: s?.async,
			cssID: l?.id, cssParent: l?.parentElement?.tagName, broken: toast, fixture,
		};`)
	if got.ScriptID != "third-party-fixture-js" || got.ScriptType != "module" || got.ScriptParent != "BODY" || !got.Async {
		t.Errorf("script tag: %+v", got)
	}
	if got.CSSID != "third-party-fixture-css" || got.CSSParent != "HEAD" {
		t.Errorf("style tag: %+v", got)
	}
	if !strings.Contains(got.Broken, `Extension "Broken" failed to load`) {
		t.Errorf("the broken extension's error toast: %q", got.Broken)
	}
	f := got.Fixture
	for k, v := range map[string]any{
		"moduleUrl":     "/scripts/extensions/third-party/fixture/index.js",
		"freshContext":  true,
		"cssLinked":     true,
		"jquery":        true,
		"toastr":        true,
		"backendUrl":    b.origin(),
		"topLevelTitle": "Fixture", // English: the key's text
	} {
		if f[k] != v {
			t.Errorf("fixture.%s = %v; want %v", k, f[k], v)
		}
	}
}

// screenshot writes the tab's viewport, at width×height CSS pixels, to
// webtest/results/<name>.png (gitignored), for a person to look at.
func screenshot(p *page, name string, width, height int64) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		p.tb.Fatalf("viewport %dx%d: %v", width, height, err)
	}
	// Let layout, fonts and transitions settle.
	p.run(`await document.fonts.ready; await new Promise((r) => setTimeout(r, 300));`)
	checkContrast(p, name)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.tb.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll("results", 0o755); err != nil {
		p.tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("results", name+".png"), png, 0o644); err != nil {
		p.tb.Fatal(err)
	}
}

// loadProbe loads testdata/popup-probe.js (window.pt) into the playground.
func loadProbe(p *page) {
	p.run(`await new Promise((resolve, reject) => {
		const s = document.createElement('script');
		s.src = '/webtest/popup-probe.js';
		s.onload = resolve; s.onerror = reject;
		document.head.append(s);
	});`)
}

// settled is what window.pt.settled reports.
type settled struct {
	Done  bool
	Value any
}

// The Popup follows SillyTavern's contract: the DOM and classes, per-type
// buttons and captions, what show() resolves to for each way of closing,
// custom buttons and inputs, the onClosing veto, Escape and Enter, stacking.
func TestPlaygroundPopupContract(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	loadProbe(p)

	t.Run("text", func(t *testing.T) {
		type dom struct {
			Tag, Parent, Content string
			Classes              []string
			Open                 bool
			Buttons              []string
			Default              string
			Close, Input         bool
		}
		got := evalJS[dom](p, `
			const s = pt.start(1, '', { wide: true, leftAlign: true, allowVerticalScrolling: true });
			await pt.opened();
			const d = pt.dlg();
			return {
				tag: d.tagName, parent: d.parentElement.tagName, open: d.open,
				classes: [...d.classList], content: d.querySelector('.popup-content').innerHTML,
				buttons: pt.buttons(), default: d.querySelector('.menu_button_default')?.textContent,
				close: pt.visible(d.querySelector('.popup-button-close')), input: pt.visible(d.querySelector('.popup-input')),
			};`)
		want := dom{Tag: "DIALOG", Parent: "BODY", Open: true, Content: `<p class="probe">probe body</p>`,
			Classes: []string{"popup", "wide_dialogue_popup", "vertical_scrolling_dialogue_popup", "left_aligned_dialogue_popup", "popup--animation-fast"},
			Buttons: []string{"OK"}, Default: "OK"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("TEXT popup DOM:\n got %+v\nwant %+v", got, want)
		}
		p.run(`pt.click('.popup-button-ok');`)
		if s := evalJS[settled](p, `return pt.settled();`); !s.Done || s.Value != 1.0 {
			t.Errorf("TEXT OK resolved %+v; want 1", s)
		}
		left := evalJS[int](p, `return document.querySelectorAll('dialog.popup').length + SillyTavern.getContext().Popup.util.popups.length;`)
		if left != 0 {
			t.Errorf("%d dialogs or popup records left after closing", left)
		}
	})

	// Each case opens a popup, does something, and checks what show()
	// resolved to (nil = null; "<undefined>" = still pending).
	cases := []struct {
		name    string
		open    string // JS: pt.start(...)
		buttons []string
		act     string // JS run after the opening animation
		keys    string // then real key presses
		act2    string // then this JS
		keys2   string // and these keys
		want    any
		pending bool
	}{
		{name: "confirm yes", open: `pt.start(2)`, buttons: []string{"Yes", "No"}, act: `pt.click('.popup-button-ok')`, want: 1.0},
		{name: "confirm no", open: `pt.start(2)`, act: `pt.click('.popup-button-cancel')`, want: 0.0},
		{name: "confirm escape", open: `pt.start(2)`, keys: kbEscape, want: nil},
		{name: "confirm captions", open: `pt.start(2, '', { okButton: 'Activate', cancelButton: 'Keep paused' })`, buttons: []string{"Activate", "Keep paused"}, act: `pt.click('.popup-button-ok')`, want: 1.0},
		{name: "text with cancel", open: `pt.start(1, '', { cancelButton: true })`, buttons: []string{"OK", "Cancel"}, act: `pt.click('.popup-button-cancel')`, want: 0.0},
		{name: "text without ok", open: `pt.start(1, '', { okButton: false, cancelButton: 'Close' })`, buttons: []string{"Close"}, act: `pt.click('.popup-button-cancel')`, want: 0.0},
		{name: "input ok", open: `pt.start(3, 'draft')`, buttons: []string{"Save", "Cancel"}, act: `pt.dlg().querySelector('.popup-input').value = 'typed'; pt.click('.popup-button-ok')`, want: "typed"},
		{name: "input cancel", open: `pt.start(3, 'draft')`, act: `pt.click('.popup-button-cancel')`, want: false},
		{name: "input escape", open: `pt.start(3, 'draft')`, keys: kbEscape, want: nil},
		{name: "input enter", open: `pt.start(3, 'draft')`, act: `pt.dlg().querySelector('.popup-input').focus()`, keys: "\r", want: "draft"},
		{name: "input custom result", open: `pt.start(3, 'draft', { customButtons: [{ text: 'Use', result: 1001 }] })`, buttons: []string{"Use", "Save", "Cancel"}, act: `pt.click('.popup-button-custom')`, want: "draft"},
		{name: "input negative custom", open: `pt.start(3, 'draft', { customButtons: [{ text: 'Nope', result: -1 }] })`, act: `pt.click('.popup-button-custom')`, want: false},
		{name: "string buttons", open: `pt.start(1, '', { customButtons: ['A', 'B'] })`, buttons: []string{"A", "B", "OK"}, act: `pt.dlg().querySelectorAll('.popup-button-custom')[1].click()`, want: 3.0},
		{name: "button at end", open: `pt.start(2, '', { customButtons: [{ text: 'Reset', result: 2, appendAtEnd: true }] })`, buttons: []string{"Yes", "No", "Reset"}, act: `pt.click('.popup-button-custom')`, want: 2.0},
		{name: "action only", open: `pt.start(1, '', { customButtons: [{ text: 'Act', action: () => { window.acted = true; } }] })`, act: `pt.click('.popup-button-custom')`, pending: true},
		{name: "display close", open: `pt.start(4)`, buttons: []string{}, act: `pt.click('.popup-button-close')`, want: 0.0},
		{name: "veto by undefined", open: `pt.start(1, '', { onClosing: () => undefined })`, act: `pt.click('.popup-button-ok')`, pending: true},
		{name: "veto by false, escape", open: `pt.start(2, '', { onClosing: async () => false })`, keys: kbEscape, act2: `await new Promise((r) => setTimeout(r, 100))`, keys2: kbEscape, pending: true},
		{name: "no escape close", open: `pt.start(2, '', { allowEscapeClose: false })`, keys: kbEscape, pending: true},
		{name: "content result control", open: `pt.start(1, '', {}, '<button data-result="7">seven</button>')`, act: `pt.dlg().querySelector('.popup-content button').click()`, want: 7.0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.run(c.open + `; await pt.opened();`)
			if c.buttons != nil {
				if got := evalJS[[]string](p, `return pt.buttons();`); !reflect.DeepEqual(got, c.buttons) && !(len(got) == 0 && len(c.buttons) == 0) {
					t.Errorf("buttons %q; want %q", got, c.buttons)
				}
			}
			if c.act != "" {
				p.run(c.act + `;`)
			}
			if c.keys != "" {
				p.keys(c.keys)
			}
			if c.act2 != "" {
				p.run(c.act2 + `;`)
			}
			if c.keys2 != "" {
				p.keys(c.keys2)
			}
			s := evalJS[settled](p, `return pt.settled(700);`)
			switch {
			case c.pending:
				open := evalJS[bool](p, `return pt.dlg().open && pt.dlg().isConnected;`)
				if s.Done || !open {
					t.Errorf("resolved %+v (dialog open %v); want it still open and pending", s, open)
				}
				// Close it for the next case, bypassing the veto.
				p.run(`const pop = pt.cur.popup; pop.onClosing = null; await pop.complete(null); await pt.settled();`)
			case !s.Done || !reflect.DeepEqual(s.Value, c.want):
				t.Errorf("resolved %+v; want %#v", s, c.want)
			}
		})
	}

	t.Run("veto then close", func(t *testing.T) {
		got := evalJS[map[string]any](p, `
			let allow = false;
			const s = pt.start(3, 'x', { onClosing: (popup) => { window.seen = [popup.result, popup.value]; return allow; } });
			await pt.opened();
			const vetoed = await s.popup.complete(1);
			const after = [s.popup.result ?? '<undefined>', s.popup.value ?? '<undefined>', window.seen];
			allow = true;
			pt.click('.popup-button-ok');
			const r = await pt.settled();
			const { Popup } = SillyTavern.getContext();
			return { vetoed: vetoed ?? '<undefined>', after, value: r.value, last: Popup.util.lastResult };
		`)
		want := map[string]any{
			"vetoed": "<undefined>",
			"after":  []any{"<undefined>", "<undefined>", []any{1.0, "x"}},
			"value":  "x",
			"last":   map[string]any{"value": "x", "result": 1.0},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("veto then close:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("custom inputs", func(t *testing.T) {
		got := evalJS[map[string]any](p, `
			const s = pt.start(2, '', { customInputs: [
				{ id: 'probe_check', label: 'Remember', defaultState: true },
				{ id: 'probe_text', label: 'Note', type: 'text', defaultState: 'hi' },
			] });
			await pt.opened();
			const labels = [...pt.dlg().querySelectorAll('.popup-inputs label')].map((l) => l.className);
			pt.dlg().querySelector('#probe_check').click();
			pt.dlg().querySelector('#probe_text').value = 'there';
			pt.click('.popup-button-ok');
			await pt.settled();
			return { labels, results: Object.fromEntries(s.popup.inputResults) };
		`)
		want := map[string]any{
			"labels":  []any{"checkbox_label justifyCenter", "text_label justifyCenter"},
			"results": map[string]any{"probe_check": false, "probe_text": "there"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("custom inputs:\n got %v\nwant %v", got, want)
		}
	})

	// As a user opens them: each after a click (without user activation
	// in between, Chromium groups dialogs and one Escape closes them all).
	t.Run("stacked escape", func(t *testing.T) {
		p.userClick()
		p.run(`window.a = pt.start(2); await pt.opened(a);`)
		p.userClick()
		got := evalJS[[]any](p, `
			const b = pt.start(2); await pt.opened(b);
			return [a.popup.dlg.open, b.popup.dlg.open];
		`)
		if !reflect.DeepEqual(got, []any{true, true}) {
			t.Fatalf("two popups open: %v", got)
		}
		p.keys(kbEscape)
		got = evalJS[[]any](p, `
			const b = pt.cur; const r = await pt.settled();
			const { Popup } = SillyTavern.getContext();
			const a = Popup.util.popups[0];
			const state = [r.done, r.value, Popup.util.popups.length, a?.dlg.open, document.activeElement?.closest('.popup') === a?.dlg];
			a.complete(0); return state;
		`)
		if want := []any{true, nil, 1.0, true, true}; !reflect.DeepEqual(got, want) {
			t.Errorf("Escape on the top popup: [done value popups lowerOpen lowerFocused] = %v; want %v", got, want)
		}
	})

	// Two quick Escapes on a popup that Escape does not close offer a
	// force-close. With user activation (a click first, as a user's Escape
	// would have) the dialog's cancel is prevented and the popup alone
	// decides; without it Chromium closes the dialog itself and the popup
	// re-opens it, and the confirm must still end up on top. The page's
	// clock stands still across the two Escapes, so they are "quick"
	// however loaded the machine is.
	for _, activated := range []bool{true, false} {
		t.Run(fmt.Sprintf("force close (user activation %v)", activated), func(t *testing.T) {
			p.run(`pt.start(1, '', { allowEscapeClose: false }); await pt.opened(); window.first = pt.cur;
				window.realNow = Date.now; const t0 = Date.now(); Date.now = () => t0;`)
			for range 2 {
				if activated {
					p.userClick()
				}
				p.keys(kbEscape)
				p.run(`for (let i = 0; i < 100 && !window.first.popup.dlg.open; i++) await new Promise((r) => setTimeout(r, 10));`)
			}
			p.run(`Date.now = window.realNow;`)
			got := evalJS[map[string]any](p, `
				const { Popup } = SillyTavern.getContext();
				const other = () => Popup.util.popups.find((x) => x !== window.first.popup);
				for (let i = 0; i < 50 && !other(); i++) await new Promise((r) => setTimeout(r, 20));
				const confirm = other();
				if (confirm) await pt.opened({ popup: confirm });
				const onTop = confirm?.dlg.matches(':modal') && document.activeElement?.closest('.popup') === confirm.dlg;
				const text = confirm?.dlg.querySelector('.popup-content').textContent;
				confirm?.dlg.querySelector('.popup-button-ok').click();
				const r = await pt.settled(5000, window.first);
				return { asked: !!confirm, onTop, text, done: r.done, value: r.value };
			`)
			if got["asked"] != true || got["onTop"] != true || !strings.Contains(got["text"].(string), "Force-close") || got["done"] != true || got["value"] != nil {
				t.Errorf("double Escape on a popup without Escape close: %v; want a force-close confirm on top, then null", got)
			}
		})
	}

	t.Run("helpers", func(t *testing.T) {
		got := evalJS[[]any](p, `
			const { Popup, callGenericPopup, POPUP_TYPE, POPUP_RESULT } = SillyTavern.getContext();
			const out = [];
			let pr = Popup.show.input('Name', 'Pick one', 'abc');
			await new Promise((r) => setTimeout(r, 200));
			Popup.util.popups.at(-1).dlg.querySelector('.popup-input').value = '';
			Popup.util.popups.at(-1).completeAffirmative();
			out.push(await pr);
			pr = Popup.show.confirm('Sure?', null);
			await new Promise((r) => setTimeout(r, 200));
			out.push(Popup.util.popups.at(-1).dlg.querySelector('.popup-content').innerHTML.trim().startsWith('<h3>Sure?</h3>'));
			Popup.util.popups.at(-1).completeNegative();
			out.push(await pr);
			pr = callGenericPopup('x', POPUP_TYPE.TEXT);
			await new Promise((r) => setTimeout(r, 200));
			Popup.util.popups.at(-1).completeCancelled();
			out.push(await pr);
			out.push(POPUP_RESULT.CUSTOM9, POPUP_TYPE.CROP);
			return out;
		`)
		if want := []any{"", true, 0.0, nil, 1009.0, 5.0}; !reflect.DeepEqual(got, want) {
			t.Errorf("helpers and constants: %v; want %v", got, want)
		}
	})
}

// userClick clicks the page's top-left corner (the top bar, or a modal
// dialog's backdrop), which gives the page user activation.
func (p *page) userClick() {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, evalTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(3, 3)); err != nil {
		p.tb.Fatalf("click: %v", err)
	}
}

// Real key presses for keys().
const kbEscape = "\x1b"

// Manifest i18n follows SillyTavern's rules: only the current locale's
// file is fetched, before the module runs (so t and translate work at its
// top level); it never overrides the host's own strings; data for another
// locale is ignored. The language switch stores localStorage.language.
func TestPlaygroundI18n(t *testing.T) {
	b := newBackend(t, withFixtures)
	p := openPlayground(t, b, "")
	p.run(`localStorage.setItem('language', 'zh-cn');`)
	p.navigate(b.url("/"))
	waitHostReady(p)

	type state struct {
		Locale, Title, Tagged, Cancel, OnlyInFile, OtherLocale, Panel, Yes string
		Fetched                                                            []string
	}
	probe := `
		const ctx = SillyTavern.getContext();
		ctx.addLocaleData('zh-tw', { 'fixture.other': '別的' });
		const fetched = performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((n) => n.includes('/i18n/'));
		const pop = new ctx.Popup('q', ctx.POPUP_TYPE.CONFIRM);
		const yes = pop.okButton.textContent;
		pop.show(); await new Promise((r) => setTimeout(r, 200)); await pop.completeCancelled();
		return {
			locale: ctx.getCurrentLocale(), title: fixture.topLevelTitle, tagged: fixture.topLevelTagged,
			cancel: ctx.translate('Cancel'), onlyInFile: ctx.translate('x', 'fixture.only-in-file'),
			otherLocale: ctx.translate('fixture.other'), fetched, yes,
			panel: document.querySelector('#fixture_panel b').textContent,
		};`
	got := evalJS[state](p, probe)
	want := state{
		Locale: "zh-cn", Title: "夹具扩展", Tagged: "已保存 5 个工具中的 3 个", Cancel: "取消", OnlyInFile: "仅在文件中",
		OtherLocale: "fixture.other", Panel: "夹具扩展", Yes: "是",
		Fetched: []string{"/scripts/extensions/third-party/fixture/i18n/zh-cn.json"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("zh-cn:\n got %+v\nwant %+v", got, want)
	}

	// The language switch: zh-tw, then English.
	for _, c := range []struct{ lang, title, extensions string }{
		{"zh-tw", "夾具擴充", "擴充功能"},
		{"en", "Fixture", "Extensions"},
	} {
		p.run(`window.beforeReload = true; const s = document.getElementById('ttmcp_language'); s.value = %s; s.dispatchEvent(new Event('change'));`, c.lang)
		waitReloaded(p)
		p.run(`await new Promise((r) => { const c = () => window.fixture ? r() : setTimeout(c, 20); c(); });`)
		got := evalJS[[]string](p, `return [localStorage.getItem('language'), fixture.topLevelTitle, document.querySelector('#rm_extensions_block h3').textContent, document.getElementById('ttmcp_language').value];`)
		if want := []string{c.lang, c.title, c.extensions, c.lang}; !reflect.DeepEqual(got, want) {
			t.Errorf("after choosing %s: [language, title, Extensions heading, select] = %q; want %q", c.lang, got, want)
		}
	}
}

// extensionSettings survive a reload (saveSettingsDebounced, also when the
// page goes away before the delay), are in place before an extension's
// module runs, and the Manager's backendUrl is seeded with the page's
// origin only when unset. getContext() is a fresh object each call with
// the members SillyTavern has.
func TestPlaygroundSettingsAndContext(t *testing.T) {
	b := newBackend(t, withFixtures)
	p := openPlayground(t, b, "")
	members := evalJS[[]string](p, `return Object.keys(SillyTavern.getContext()).sort();`)
	for _, m := range []string{"extensionSettings", "saveSettingsDebounced", "eventSource", "eventTypes", "event_types",
		"t", "translate", "getCurrentLocale", "addLocaleData", "Popup", "POPUP_TYPE", "POPUP_RESULT", "callGenericPopup", "getRequestHeaders"} {
		if !slices.Contains(members, m) {
			t.Errorf("getContext() lacks %s (has %v)", m, members)
		}
	}
	p.run(`
		const ctx = SillyTavern.getContext();
		ctx.extensionSettings.fixture = { counter: 7 };
		ctx.extensionSettings.mcp_manager.backendUrl = 'http://127.0.0.1:7881';
		ctx.saveSettingsDebounced();`)
	p.navigate(b.url("/")) // before the debounce delay: the pagehide flush saves
	waitHostReady(p)
	p.run(`await new Promise((r) => { const c = () => window.fixture ? r() : setTimeout(c, 20); c(); });`)
	got := evalJS[[]any](p, `return [fixture.savedAtLoad, fixture.backendUrl, SillyTavern.getContext().getRequestHeaders()['Content-Type']];`)
	if want := []any{7.0, "http://127.0.0.1:7881", "application/json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after a reload [fixture.counter, backendUrl, request content type] = %v; want %v", got, want)
	}
}

// The delegated .inline-drawer-toggle handler opens and closes an
// extension's drawer (icon classes flipped), ignoring clicks on a
// .text_pole inside the header. The playground opens the drawers of the
// right-hand column at start.
func TestPlaygroundInlineDrawer(t *testing.T) {
	b := newBackend(t, withFixtures)
	p := openPlayground(t, b, "")
	// state waits (up to 5 s, however loaded the machine is) until the
	// slide is over and the drawer is as wanted, and returns what it is.
	state := func(want []bool) []bool {
		return evalJS[[]bool](p, fmt.Sprintf(`
		const want = %s;
		const icon = document.querySelector('#fixture_panel .inline-drawer-icon');
		const body = document.querySelector('#fixture_panel .inline-drawer-content');
		const now = () => [getComputedStyle(body).display !== 'none', icon.classList.contains('up'), icon.classList.contains('fa-circle-chevron-up')];
		for (let i = 0; i < 250 && (jQuery(body).is(':animated') || now().some((v, j) => v !== want[j])); i++) await new Promise((r) => setTimeout(r, 20));
		return now();`, map[bool]string{true: "[true, true, true]", false: "[false, false, false]"}[want[0]]))
	}
	open, closed := []bool{true, true, true}, []bool{false, false, false}
	if got := state(open); !reflect.DeepEqual(got, open) {
		t.Fatalf("at start [open up chevron-up] = %v; want the playground to have opened it", got)
	}
	p.run(`document.querySelector('#fixture_panel .inline-drawer-toggle input.text_pole').click();`)
	if got := state(open); !reflect.DeepEqual(got, open) {
		t.Errorf("after a click in the header's text_pole [open up chevron-up] = %v; want it still open", got)
	}
	p.run(`document.querySelector('#fixture_panel .inline-drawer-toggle b').click();`)
	if got := state(closed); !reflect.DeepEqual(got, closed) {
		t.Errorf("after a click on the header [open up chevron-up] = %v; want it closed", got)
	}
	p.run(`document.querySelector('#fixture_panel .inline-drawer-toggle').click();`)
	if got := state(open); !reflect.DeepEqual(got, open) {
		t.Errorf("after a second click [open up chevron-up] = %v; want it open", got)
	}
	// The top-bar drawer hides and shows the Extensions panel.
	p.run(`document.querySelector('#extensions-settings-button .drawer-toggle').click();`)
	if open := evalJS[bool](p, `return getComputedStyle(document.getElementById('rm_extensions_block')).display !== 'none';`); open {
		t.Errorf("the Extensions drawer stayed open after its toggle was clicked")
	}
}

// eventSource: emit awaits each listener in order and survives a throwing
// one; APP_READY and APP_INITIALIZED call late listeners at once, other
// events do not; once, removeListener and makeFirst behave.
func TestPlaygroundEventSource(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	got := evalJS[[]string](p, `
		const { eventSource, eventTypes } = SillyTavern.getContext();
		const log = [];
		eventSource.on('probe', async () => { await new Promise((r) => setTimeout(r, 30)); log.push('slow'); });
		eventSource.on('probe', () => { throw new Error('listener failure'); });
		eventSource.on('probe', (a, b) => log.push('fast ' + a + b));
		const second = () => log.push('first');
		eventSource.on('probe', second);
		eventSource.makeFirst('probe', second);
		eventSource.once('probe', () => log.push('once'));
		await eventSource.emit('probe', 1, 2);
		log.push('emitted');
		await eventSource.emit('probe', 3, 4);
		eventSource.removeListener('probe', second);
		await eventSource.emit('probe', 5, 6);
		eventSource.on(eventTypes.APP_READY, () => log.push('late ready'));
		eventSource.on(eventTypes.APP_INITIALIZED, () => log.push('late initialized'));
		eventSource.on('probe', () => log.push('late probe'));
		await new Promise((r) => setTimeout(r, 50));
		log.push(eventTypes.APP_READY, eventTypes.CHAT_COMPLETION_SETTINGS_READY, eventTypes.GENERATION_AFTER_COMMANDS, eventTypes.CHAT_CHANGED);
		return log;`)
	want := []string{"first", "slow", "fast 12", "once", "emitted", "first", "slow", "fast 34", "slow", "fast 56",
		"late ready", "late initialized", "app_ready", "chat_completion_settings_ready", "GENERATION_AFTER_COMMANDS", "chat_id_changed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event log:\n got %q\nwant %q", got, want)
	}
}

// What the page borrows from npm is there: jQuery 3 and toastr as globals,
// Font Awesome Free 6.5.2 with its solid font usable.
func TestPlaygroundVendorLibraries(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	got := evalJS[[]any](p, `
		const css = await (await fetch('/vendor/fontawesome/css/fontawesome.min.css')).text();
		await document.fonts.load('900 16px "Font Awesome 6 Free"');
		return [jQuery.fn.jquery.split('.')[0], typeof toastr.error, /Font Awesome Free 6\.5\.2 /.test(css),
			document.fonts.check('900 16px "Font Awesome 6 Free"'),
			getComputedStyle(document.querySelector('.fa-cubes'), '::before').content];`)
	if want := []any{"3", "function", true, true, "\"\uf1b3\""}; !reflect.DeepEqual(got, want) {
		t.Errorf("[jQuery major, toastr.error, FA 6.5.2 css, FA solid font, cubes glyph] = %v; want %v", got, want)
	}
}

// cspRecorder, run before the page's scripts, keeps every Content Security
// Policy violation of the tab (across reloads) in sessionStorage.
const cspRecorder = `
	addEventListener('securitypolicyviolation', (e) => {
		const seen = JSON.parse(sessionStorage.getItem('csp') ?? '[]');
		seen.push(e.violatedDirective + ' ' + e.blockedURI);
		sessionStorage.setItem('csp', JSON.stringify(seen));
	});`

// "Add the demo server" registers the demo MCP server through api.mcp
// (paused), the page reloads and says so; a second click finds it there.
// The page's strict policy lets it run its scripts, the wasm shim and the
// WebSocket: nothing is blocked along the way.
func TestPlaygroundAddTheDemoServer(t *testing.T) {
	dm := newDemoServer(t)
	b := newBackend(t, func(c *server.Config) {
		c.Demo = &server.DemoServer{DisplayName: "ttmcp demo", Endpoint: dm.endpoint()}
	})
	p := openPlayground(t, b, cspRecorder)
	clickDemo := `[...document.querySelectorAll('[role=button]')].find((e) => e.textContent.trim() === 'Add the demo server').click();`
	p.run(`window.beforeReload = true;`)
	p.run(clickDemo)
	waitReloaded(p)
	toast := evalJS[string](p, `
		for (let i = 0; i < 100 && !document.querySelector('.toast-success'); i++) await new Promise((r) => setTimeout(r, 20));
		return document.querySelector('.toast-success')?.textContent ?? '';`)
	if !strings.Contains(toast, "Demo server added") || !strings.Contains(toast, "paused") {
		t.Errorf("after adding, the toast says %q", toast)
	}
	files := b.regFiles()
	if len(files) != 1 {
		t.Fatalf("registration files %v; want one", files)
	}
	for _, f := range files {
		if !strings.Contains(f, `"endpoint": "`+dm.endpoint()+`"`) || !strings.Contains(f, `"state": "paused"`) || !strings.Contains(f, `"displayName": "ttmcp demo"`) {
			t.Errorf("registration file:\n%s", f)
		}
	}

	p.run(clickDemo)
	info := evalJS[string](p, `
		for (let i = 0; i < 200 && !document.querySelector('.toast-info'); i++) await new Promise((r) => setTimeout(r, 20));
		return document.querySelector('.toast-info')?.textContent ?? '';`)
	if !strings.Contains(info, "already in the list") || len(b.regFiles()) != 1 {
		t.Errorf("a second click: toast %q, %d files; want 'already in the list' and still one", info, len(b.regFiles()))
	}
	got := evalJS[[]any](p, `return [window.__TAURITAVERN__.mcpBridge.state, JSON.parse(sessionStorage.getItem('csp') ?? '[]')];`)
	if want := []any{"open", []any{}}; !reflect.DeepEqual(got, want) {
		t.Errorf("[bridge state, CSP violations] = %v; want %v", got, want)
	}
}

// No page can frame the playground or the other pages the backend serves
// (X-Frame-Options: DENY and frame-ancestors 'none'), not even one of the
// same origin; a response without those headers frames fine, so the probe
// tells the two apart.
func TestPlaygroundCannotBeFramed(t *testing.T) {
	b := newBackend(t)
	p := openPlayground(t, b, "")
	framed := func(path string) bool {
		return evalJS[bool](p, `
			const f = document.createElement('iframe');
			const loaded = new Promise((r) => f.onload = r);
			f.src = %s; document.body.append(f);
			await loaded;
			let readable = false;
			try { readable = f.contentDocument !== null && f.contentWindow.location.href !== 'about:blank'; } catch {}
			f.remove();
			return readable;`, path)
	}
	for _, path := range []string{"/", "/index.html", "/webtest/host.html"} {
		if framed(path) {
			t.Errorf("%s loaded in a same-origin iframe; want it refused", path)
		}
	}
	if !framed("/playground.json") {
		t.Errorf("/playground.json (no framing headers) did not load in an iframe: the probe cannot tell")
	}
}

// openBareHost opens testdata/bare (a host with only what SillyTavern 1.12
// gives an extension) and waits until it emitted APP_READY.
func openBareHost(tb testing.TB, b *backend) *page {
	tb.Helper()
	p := openPage(tb, b.url("/webtest/bare/index.html"))
	p.run(`await new Promise((resolve) => {
		const check = () => document.body?.dataset.appReady === 'true' ? resolve() : setTimeout(check, 20);
		check();
	});`)
	return p
}

// The bare 1.12 host is what it claims: its context has only 1.12's
// members and POPUP_RESULT only its three results; an extension loads
// there without manifest i18n or hooks.
func TestBareHostIsSillyTavern112(t *testing.T) {
	b := newBackend(t, withFixtures)
	p := openBareHost(t, b)
	p.run(`await new Promise((r) => { const c = () => fixtureLog.includes('ready-2') ? r() : setTimeout(c, 20); c(); });`)
	got := evalJS[map[string]any](p, `
		const ctx = SillyTavern.getContext();
		return {
			members: Object.keys(ctx).sort(), results: ctx.POPUP_RESULT, initialized: ctx.eventTypes.APP_INITIALIZED ?? null,
			log: fixtureLog, title: fixture.topLevelTitle,
		};`)
	want := map[string]any{
		"members": []any{"POPUP_RESULT", "POPUP_TYPE", "Popup", "callGenericPopup", "eventSource", "eventTypes", "event_types",
			"extensionSettings", "saveSettingsDebounced", "t", "translate"},
		"results":     map[string]any{"AFFIRMATIVE": 1.0, "NEGATIVE": 0.0, "CANCELLED": nil},
		"initialized": nil,
		"log":         []any{"early", "module", "ready-1", "ready-2"}, // no activate hook, no APP_INITIALIZED
		"title":       "Fixture",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the bare 1.12 host:\n got %v\nwant %v", got, want)
	}
}
