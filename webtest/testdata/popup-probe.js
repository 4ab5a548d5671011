// Probes of the host's Popup for webtest/playground_test.go, loaded into
// the playground by the test (window.pt). start() opens a popup and keeps
// its show() promise; settled() reports whether it resolved, and with what.
window.pt = {
  cur: null,
  start(type, input = '', opts = {}, content = '<p class="probe">probe body</p>') {
    const { Popup } = SillyTavern.getContext();
    const popup = new Popup(content, type, input, opts);
    const state = { done: false, value: undefined, popup };
    popup.show().then((v) => { state.done = true; state.value = v; });
    this.cur = state;
    return state;
  },
  // settled waits up to ms for the current popup's promise.
  async settled(ms = 1500, state = this.cur) {
    const end = Date.now() + ms;
    while (!state.done && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return { done: state.done, value: state.value === undefined ? '<undefined>' : state.value };
  },
  // opened waits until the current popup's opening animation is over.
  async opened(state = this.cur) {
    while (state.popup.dlg.hasAttribute('opening')) await new Promise((r) => setTimeout(r, 10));
  },
  dlg() { return this.cur.popup.dlg; },
  visible(el) { return !!el && getComputedStyle(el).display !== 'none' && el.getClientRects().length > 0; },
  click(selector) { this.dlg().querySelector(selector).click(); },
  buttons() {
    return [...this.dlg().querySelectorAll('.popup-controls > *')]
      .filter((b) => this.visible(b))
      .map((b) => b.textContent.trim());
  },
};
