// Helpers that the Go tests (webtest/*_test.go) call through chromedp.
// A classic script, loaded by host.html and foreign.html before anything
// else, so `tt` exists before the loader runs.
(() => {
  const STATE_EVENT = 'tauritavern-mcp:state';
  const tt = {
    // err settles p and describes its rejection, or returns null when p
    // resolved. Never throws, so a test can assert on the description.
    async err(p) {
      try {
        await p;
        return null;
      } catch (e) {
        return {
          isError: e instanceof Error,
          name: String(e?.name ?? ''),
          message: String(e?.message ?? e),
          code: String(e?.code ?? ''),
          kind: String(e?.kind ?? ''),
        };
      }
    },

    get mcp() {
      return window.__TAURITAVERN__?.api?.mcp;
    },

    // states lists every bridge state event, in order.
    states: [],

    state() {
      return window.__TAURITAVERN__?.mcpBridge?.state;
    },

    // until resolves with the bridge state once pred(state) holds, checked
    // now and at every state event. The timer only keeps a broken bridge
    // from hanging the test; it is not a timing assertion.
    until(pred, what) {
      return new Promise((resolve, reject) => {
        const now = tt.state();
        if (pred(now)) return resolve(now);
        const on = (e) => {
          if (!pred(e.detail.state)) return;
          clearTimeout(timer);
          removeEventListener(STATE_EVENT, on);
          resolve(e.detail.state);
        };
        const timer = setTimeout(() => {
          removeEventListener(STATE_EVENT, on);
          reject(new Error(`bridge state is still ${tt.state()}; waited for ${what}`));
        }, 20000);
        addEventListener(STATE_EVENT, on);
      });
    },
  };
  addEventListener(STATE_EVENT, (e) => tt.states.push(e.detail.state));
  window.tt = tt;
})();
