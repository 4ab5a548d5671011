// window.ui: finds what a user sees — by role and accessible name, by label,
// by text — and acts on it as a user would (clicks, typing that React
// notices). Loaded into a page by webtest/manager_test.go. Every finder
// waits (up to 25 s) for its element and throws with what it looked for
// and what was there instead.
(() => {
  const WAIT_MS = 25000;

  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const text = (el) => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();

  // The accessible name, as far as these pages need: aria-label,
  // aria-labelledby, a <label> for the control, else the text or title.
  function nameOf(el) {
    if (el.hasAttribute('aria-label')) return el.getAttribute('aria-label').trim();
    if (el.hasAttribute('aria-labelledby')) {
      return el.getAttribute('aria-labelledby').split(/\s+/).map((id) => text(document.getElementById(id))).join(' ');
    }
    if (el.labels?.length) return text(el.labels[0]);
    return text(el) || (el.getAttribute('title') ?? '').trim();
  }

  const ROLES = {
    button: 'button, [role=button], .menu_button',
    radio: 'input[type=radio], [role=radio]',
    checkbox: 'input[type=checkbox], [role=checkbox]',
    radiogroup: '[role=radiogroup]',
    textbox: 'input:not([type]), input[type=text], input[type=url], input[type=password], textarea, [role=textbox]',
    combobox: 'select, [role=combobox]',
    dialog: 'dialog[open], [role=dialog]',
    listitem: 'li, [role=listitem]',
    alert: '[role=alert]',
    status: '[role=status]',
    group: '[role=group], details, fieldset',
  };

  // The topmost open popup, or the document.
  function top() {
    return [...document.querySelectorAll('dialog[open]:not([closing])')].at(-1) ?? document;
  }

  async function until(find, what) {
    const end = Date.now() + WAIT_MS;
    for (;;) {
      const found = find();
      if (found) return found;
      if (Date.now() > end) throw new Error(`not found: ${what()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  // scope: an element, a function returning one, or nothing (the topmost popup).
  const within = (scope) => (typeof scope === 'function' ? scope() : scope) ?? top();

  function all(scope, role) {
    return [...within(scope).querySelectorAll(ROLES[role] ?? role)].filter(visible);
  }

  const match = (name, want) => (want instanceof RegExp ? want.test(name) : name === want);

  const ui = {
    visible, text, nameOf, top,

    // get waits for the visible element of role whose name matches name
    // (a string for equality, a RegExp), inside scope (default: the
    // topmost popup, else the page).
    async get(role, name, scope) {
      return until(
        () => all(scope, role).find((el) => name === undefined || match(nameOf(el), name)),
        () => `${role} "${name}" among [${all(scope, role).map(nameOf).join(' | ')}]`,
      );
    },

    // field waits for the control labelled label (a <label for>, a
    // wrapping <label>, aria-label or aria-labelledby).
    async field(label, scope) {
      const controls = () => [...within(scope).querySelectorAll('input, textarea, select')].filter(visible);
      return until(
        () => controls().find((el) => match(nameOf(el), label)),
        () => `field "${label}" among [${controls().map(nameOf).join(' | ')}]`,
      );
    },

    // withText waits for a visible element (of selector, default any)
    // whose own text contains want, preferring the innermost.
    async withText(want, scope, selector = '*') {
      const find = () => [...within(scope).querySelectorAll(selector)]
        .filter((el) => visible(el) && (want instanceof RegExp ? want.test(text(el)) : text(el).includes(want)))
        .at(-1);
      // Not found: say what the scope showed instead, so a failure in CI
      // tells why without a rerun.
      const shown = () => {
        const t = text(within(scope));
        return t.length > 400 ? t.slice(0, 400) + '…' : t;
      };
      return until(find, () => `text "${want}" in "${shown()}"`);
    },

    // gone waits until find() returns nothing.
    async gone(find, what) {
      await until(() => !find(), () => `${what} to go away`);
    },

    async click(role, name, scope) {
      const el = await ui.get(role, name, scope);
      if (el.disabled || el.getAttribute('aria-disabled') === 'true') {
        await until(() => !el.disabled && el.getAttribute('aria-disabled') !== 'true', () => `${role} "${name}" to be enabled`);
      }
      el.click();
      return el;
    },

    // type sets a text field as typing does, so React's onChange runs.
    async type(label, value, scope) {
      const el = await ui.field(label, scope);
      const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype
        : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
      el.focus();
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, value);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return el;
    },

    // choose selects the option whose text is optionText in the select
    // labelled label.
    async choose(label, optionText, scope) {
      const el = await ui.field(label, scope);
      const option = await until(
        () => [...el.options].find((o) => match(text(o), optionText)),
        () => `option "${optionText}" of "${label}" among [${[...el.options].map(text).join(' | ')}]`,
      );
      Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set.call(el, option.value);
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return el;
    },

    // row is the list item that shows a server's name.
    async row(name) {
      return until(
        () => all(document, 'listitem').find((li) => [...li.querySelectorAll('span, b, strong')].some((s) => text(s) === name)),
        () => `list item "${name}"`,
      );
    },
  };
  window.ui = ui;
})();
