package webtest

import (
	"strings"
)

// lowContrast lists the texts of the extension on the page — the drawer and
// every open popup — whose colour against what is behind them falls below
// WCAG 2.2 AA: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
// The playground carries SillyTavern 1.18.0's default theme (its
// --SmartTheme* colours), so this is the contrast a SillyTavern user sees.
// A text's colour is faded by the opacity of it and its ancestors, and laid
// over the backgrounds behind it, composed from the nearest opaque one (the
// page's). Disabled controls (and the label of a disabled input) are
// exempt, as in WCAG (1.4.3, "inactive").
const lowContrastJS = `
	// rgb()/rgba(), and color(srgb …) as Chromium computes a color-mix()
	const parse = (c) => {
		const m = c.match(/rgba?\(([^)]+)\)/);
		const s = c.match(/color\(srgb ([^)]+)\)/);
		if (!m && !s) return null;
		const [r, g, b, a] = (m ?? s)[1].split(/[ ,/]+/).filter(Boolean).map(Number);
		const k = m ? 1 : 255;
		return [r * k, g * k, b * k, a === undefined || Number.isNaN(a) ? 1 : a];
	};
	const over = (top, under) => {
		const a = top[3];
		return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1);
	};
	const lum = (c) => {
		const [r, g, b] = c.slice(0, 3).map((v) => {
			v /= 255;
			return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
		});
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const ratio = (a, b) => {
		const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
		return (x + 0.05) / (y + 0.05);
	};
	const page = parse(getComputedStyle(document.body).backgroundColor) ?? [255, 255, 255, 1];
	const behind = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) {
			const bg = parse(getComputedStyle(e).backgroundColor);
			if (bg && bg[3] > 0) layers.push(bg);
			if (bg && bg[3] >= 1) break;
		}
		let c = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [...page.slice(0, 3), 1];
		while (layers.length) c = over(layers.pop(), c);
		return c;
	};
	const fade = (el) => {
		let o = 1;
		for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
		return o;
	};
	const roots = [document.getElementById('mcp_manager_container'), ...document.querySelectorAll('dialog.popup[open]')].filter(Boolean);
	const seen = new Set();
	const low = [];
	for (const root of roots) {
		for (const el of root.querySelectorAll('*')) {
			if (seen.has(el) || el.closest('#toast-container')) continue; // SillyTavern's toasts, moved into the top dialog
			seen.add(el);
			const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
			if (!own || el.getClientRects().length === 0) continue;
			const cs = getComputedStyle(el);
			if (cs.visibility !== 'visible' || el.closest(':disabled, [aria-disabled="true"], .disabled, label:has(:disabled)')) continue;
			const fg = parse(cs.color);
			if (!fg) continue;
			const bg = behind(el);
			const shown = over([fg[0], fg[1], fg[2], fg[3] * fade(el)], bg);
			const r = ratio(shown, bg);
			const size = parseFloat(cs.fontSize);
			const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
			if (r < (large ? 3 : 4.5) - 0.005) {
				const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '';
				low.push(el.tagName.toLowerCase() + cls + ' "' + own.slice(0, 40) + '" ' + r.toFixed(2) + ':1 (' +
					shown.slice(0, 3).map(Math.round).join(',') + ' on ' + bg.slice(0, 3).map(Math.round).join(',') + ')');
			}
		}
	}
	return low;`

// checkContrast fails the test for each text of the extension on the page
// that WCAG AA's contrast rule refuses (lowContrastJS), naming where.
func checkContrast(p *page, where string) {
	p.tb.Helper()
	if low := evalJS[[]string](p, lowContrastJS); len(low) > 0 {
		p.tb.Errorf("%s: %d texts below WCAG AA contrast:\n  %s", where, len(low), strings.Join(low, "\n  "))
	}
}
