// A stand-in for SillyTavern's Popup (public/scripts/popup.js) that keeps
// its contract where the Manager depends on it: the constructor
// (content, type, inputValue, options), the per-type buttons and their
// captions, custom buttons (before OK unless appendAtEnd; a button closes
// with its result), show() resolving to the result number after closing,
// Escape completing with null, and onClosing vetoing on any falsy value
// (the popup stays open and show() stays pending). Buttons carry
// role="button" so tests find them by name.

import { act } from '@testing-library/react';

export const POPUP_TYPE = { TEXT: 1, CONFIRM: 2, INPUT: 3, DISPLAY: 4, CROP: 5 } as const;
/** SillyTavern 1.12 has only these three results. */
export const POPUP_RESULT = { AFFIRMATIVE: 1, NEGATIVE: 0, CANCELLED: null } as const;

interface CustomButton {
  text: string;
  result?: number;
  classes?: string[];
  icon?: string;
  appendAtEnd?: boolean;
}

interface Options {
  okButton?: string | boolean | null;
  cancelButton?: string | boolean | null;
  wide?: boolean;
  leftAlign?: boolean;
  allowVerticalScrolling?: boolean;
  customButtons?: Array<CustomButton | string>;
  onClosing?: (popup: TestPopup) => unknown;
  onClose?: (popup: TestPopup) => unknown;
  onOpen?: (popup: TestPopup) => unknown;
}

export class TestPopup {
  /** The most recently shown popup that is still open. */
  static current: TestPopup | null = null;
  /** Every popup shown since the last reset, in order. */
  static shown: TestPopup[] = [];

  readonly dlg: HTMLElement;
  readonly content: HTMLElement;
  readonly type: number;
  readonly options: Options;
  result: number | null | undefined = undefined;
  value: unknown = undefined;
  closed = false;
  /** How many closes onClosing vetoed. */
  vetoes = 0;
  private resolve: ((value: unknown) => void) | undefined;

  constructor(content: HTMLElement | string, type: number, _inputValue = '', options: Options = {}) {
    this.type = type;
    this.options = options;
    this.dlg = document.createElement('div');
    this.dlg.className = 'popup';
    this.dlg.setAttribute('role', 'dialog');
    if (options.wide) this.dlg.classList.add('wide_dialogue_popup');
    if (options.leftAlign) this.dlg.classList.add('left_aligned_dialogue_popup');
    if (options.allowVerticalScrolling) this.dlg.classList.add('vertical_scrolling_dialogue_popup');
    const body = document.createElement('div');
    body.className = 'popup-body';
    this.content = document.createElement('div');
    this.content.className = 'popup-content';
    if (typeof content === 'string') this.content.innerHTML = content;
    else this.content.append(content);
    const controls = document.createElement('div');
    controls.className = 'popup-controls';
    body.append(this.content, controls);
    this.dlg.append(body);

    const ok = this.button(this.caption(options.okButton, type === POPUP_TYPE.CONFIRM ? 'Yes' : 'OK'), 1, ['popup-button-ok']);
    const cancel = this.button(this.caption(options.cancelButton, type === POPUP_TYPE.CONFIRM ? 'No' : 'Cancel'), 0, [
      'popup-button-cancel',
    ]);
    const showOk = options.okButton !== false;
    const showCancel = type === POPUP_TYPE.CONFIRM ? options.cancelButton !== false : Boolean(options.cancelButton);
    if (showOk) controls.append(ok);
    if (showCancel) controls.append(cancel);
    let next = 2;
    for (const entry of options.customButtons ?? []) {
      const b: CustomButton = typeof entry === 'string' ? { text: entry, result: next++ } : entry;
      const el = this.button(b.text, b.result, ['popup-button-custom', ...(b.classes ?? [])]);
      if (b.appendAtEnd) controls.append(el);
      else if (showOk) controls.insertBefore(el, ok);
      else controls.append(el);
    }
    this.dlg.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        void this.complete(null);
      }
    });
  }

  private caption(option: string | boolean | null | undefined, fallback: string): string {
    return typeof option === 'string' ? option : fallback;
  }

  private button(text: string, result: number | undefined, classes: string[]): HTMLElement {
    const el = document.createElement('div');
    el.className = ['menu_button', 'result-control', ...classes].join(' ');
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    el.textContent = text;
    if (result !== undefined) {
      el.dataset.result = String(result);
      el.addEventListener('click', () => void this.complete(result));
    }
    return el;
  }

  show(): Promise<unknown> {
    document.body.append(this.dlg);
    TestPopup.current = this;
    TestPopup.shown.push(this);
    const promise = new Promise<unknown>((resolve) => {
      this.resolve = resolve;
    });
    const auto = this.dlg.querySelector<HTMLElement>('[autofocus]') ?? this.dlg.querySelector<HTMLElement>('.popup-button-ok');
    auto?.focus();
    void this.options.onOpen?.(this);
    return promise;
  }

  /** SillyTavern's complete(): asks onClosing, then closes and resolves show() with the result. */
  async complete(result: number | null): Promise<unknown> {
    if (this.closed) return undefined;
    this.result = result;
    this.value = result;
    if (this.options.onClosing) {
      const shouldClose = await this.options.onClosing(this);
      if (!shouldClose) {
        this.vetoes++;
        this.result = undefined;
        this.value = undefined;
        return undefined;
      }
    }
    if (this.closed) return undefined;
    this.closed = true;
    this.dlg.remove();
    if (TestPopup.current === this) TestPopup.current = null;
    await this.options.onClose?.(this);
    this.resolve?.(this.value);
    return this.value;
  }

  /**
   * Test helper: completes with result (inside act, so React has rendered
   * what onClosing changed); true when the popup closed, false when
   * onClosing vetoed.
   */
  async close(result: number | null): Promise<boolean> {
    await act(async () => {
      await this.complete(result);
    });
    return this.closed;
  }

  /** Test helper: the popup's button with this caption. */
  buttonNamed(text: string): HTMLElement {
    const b = [...this.dlg.querySelectorAll<HTMLElement>('.popup-controls [role="button"]')].find((e) => e.textContent === text);
    if (!b) throw new Error(`no popup button "${text}"`);
    return b;
  }

  static reset(): void {
    for (const p of TestPopup.shown) p.dlg.remove();
    TestPopup.current = null;
    TestPopup.shown = [];
  }
}

/** The popup shown now; fails the test when none is open. */
export function currentPopup(): TestPopup {
  const p = TestPopup.current;
  if (!p) throw new Error('no popup is open');
  return p;
}
