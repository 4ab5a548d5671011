// Dialogs through SillyTavern's Popup, as upstream's Manager does: React
// renders into the popup's content element, the popup's own buttons close
// it, and onClosing lets a form veto the close (validation errors, a
// failed save, a save still running).

import type { ReactNode } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import type { Tr } from '../base/texts';
import { TrContext } from '../base/tr';
import { stContext, type StCustomButton, type StPopup } from './sillytavern';

/** The results this extension relies on (SillyTavern 1.12 defines only these three). */
export const RESULT = { AFFIRMATIVE: 1, NEGATIVE: 0, CANCELLED: null } as const;

export interface DialogOptions {
  /** 'confirm': OK and Cancel; 'text': OK only (e.g. "Close"). */
  kind: 'confirm' | 'text';
  okButton?: string;
  cancelButton?: string;
  /** Extra buttons before OK (after the others with appendAtEnd); each closes the popup with its result (≥ 2). */
  customButtons?: Array<{ text: string; result: number; icon?: string; classes?: string[]; appendAtEnd?: boolean }>;
  /** The result whose button is the default (focused when nothing in the body is; Enter on a button). */
  defaultResult?: number;
  /** Closes the popup (as Escape: result null) when it aborts. */
  signal?: AbortSignal;
  /** Lets the body show OK as unavailable (while its form does not fit); onClosing still decides. */
  okGate?: OkGate;
  wide?: boolean;
  leftAlign?: boolean;
  /** Lets the content scroll (SillyTavern clips popup content otherwise). */
  scroll?: boolean;
  /**
   * Called with the closing result before the popup closes; false keeps
   * it open. Without it every result closes.
   */
  onClosing?: (result: number | null) => boolean | Promise<boolean>;
  /** Called once the popup has closed, before the content is unmounted. */
  onClose?: () => void;
}

/**
 * Whether the popup's OK button is offered: the body sets it (a form that
 * does not fit yet), showDialog binds the button once the popup exists.
 * SillyTavern's buttons are divs, so "unavailable" is a look and
 * aria-disabled; a click still reaches onClosing, which must refuse.
 */
export class OkGate {
  private enabled = true;
  private button: HTMLElement | null = null;

  set(enabled: boolean): void {
    this.enabled = enabled;
    this.apply();
  }

  bind(button: HTMLElement | null): void {
    this.button = button;
    this.apply();
  }

  private apply(): void {
    if (!this.button) return;
    this.button.classList.toggle('tt-mcp-button-unavailable', !this.enabled);
    if (this.enabled) this.button.removeAttribute('aria-disabled');
    else this.button.setAttribute('aria-disabled', 'true');
  }
}

function popupUnavailable(tr: Tr): Error {
  return new Error(tr('popup_unavailable'));
}

/**
 * Shows body in a SillyTavern popup and resolves the result it closed
 * with (1 OK, 0 Cancel, null Escape, or a custom button's result). It
 * rejects with "SillyTavern Popup API is unavailable" when the page has
 * no Popup.
 */
export async function showDialog(body: ReactNode, options: DialogOptions, tr: Tr): Promise<number | null> {
  const ctx = stContext();
  const Popup = ctx?.Popup;
  if (typeof Popup !== 'function') throw popupUnavailable(tr);
  const types = ctx?.POPUP_TYPE;
  const type = options.kind === 'confirm' ? (types?.CONFIRM ?? 2) : (types?.TEXT ?? 1);

  const content = document.createElement('div');
  content.className = 'tt-mcp-dialog';
  const root = createRoot(content);
  // Rendered synchronously, so the popup shows complete content and can
  // focus the element marked autofocus.
  flushSync(() => root.render(<TrContext.Provider value={tr}>{body}</TrContext.Provider>));
  content.querySelector('[data-autofocus]')?.setAttribute('autofocus', '');

  const customButtons: StCustomButton[] | undefined = options.customButtons?.map((b) => ({
    text: b.text,
    result: b.result,
    ...(b.icon ? { icon: b.icon } : {}),
    ...(b.classes ? { classes: b.classes } : {}),
    ...(b.appendAtEnd ? { appendAtEnd: true } : {}),
  }));
  let popup: StPopup;
  try {
    popup = new Popup(content, type, '', {
      okButton: options.okButton ?? null,
      cancelButton: options.kind === 'confirm' ? (options.cancelButton ?? null) : false,
      wide: options.wide ?? false,
      leftAlign: options.leftAlign ?? false,
      allowVerticalScrolling: options.scroll ?? false,
      ...(customButtons ? { customButtons } : {}),
      ...(options.defaultResult !== undefined ? { defaultResult: options.defaultResult } : {}),
      onClosing: async (p: StPopup) => {
        if (!options.onClosing) return true;
        return (await options.onClosing(normalizeResult(p.result))) === true;
      },
      onClose: () => options.onClose?.(),
    });
  } catch (err) {
    root.unmount();
    throw err;
  }
  if (options.signal?.aborted) {
    root.unmount();
    return null;
  }
  const shown = popup.show();
  options.okGate?.bind(popup.dlg?.querySelector<HTMLElement>('.popup-button-ok') ?? null);
  focusAutofocus(content);
  const stop = () => void popup.complete(RESULT.CANCELLED);
  options.signal?.addEventListener('abort', stop, { once: true });
  let value: unknown;
  try {
    value = await shown;
  } finally {
    options.signal?.removeEventListener('abort', stop);
    root.unmount();
  }
  const result = normalizeResult(popup.result);
  if (result !== null || popup.result === null) return result;
  return typeof value === 'number' ? value : null;
}

function normalizeResult(result: number | null | undefined): number | null {
  return typeof result === 'number' ? result : null;
}

// SillyTavern focuses the [autofocus] element when the dialog opens; a
// host that focuses its default button instead is corrected after the
// opening frame.
function focusAutofocus(content: HTMLElement): void {
  const target = content.querySelector<HTMLElement>('[data-autofocus]');
  if (!target) return;
  const focus = () => {
    if (target.isConnected && document.activeElement !== target) target.focus();
  };
  focus();
  setTimeout(focus, 0);
}

/** A form in a dialog whose OK saves it. */
export interface SaveHandle {
  /** Saves; true when the dialog may close. */
  save(): Promise<boolean>;
  /** A save is running: Cancel and Escape wait for it. */
  busy?(): boolean;
}

/**
 * Shows the form render makes (binding its handle with bind), with Save and
 * Cancel: Save closes only once the form saved; nothing closes while a save
 * runs. Resolves the closing result.
 */
export async function showSaveDialog(
  render: (bind: (handle: SaveHandle | null) => void) => ReactNode,
  options: Omit<DialogOptions, 'kind' | 'okButton' | 'cancelButton' | 'onClosing'>,
  tr: Tr,
): Promise<number | null> {
  const form: { current: SaveHandle | null } = { current: null };
  return showDialog(
    render((h) => {
      form.current = h;
    }),
    {
      ...options,
      kind: 'confirm',
      okButton: tr('save'),
      cancelButton: tr('cancel'),
      async onClosing(result) {
        const f = form.current;
        if (!f) return true;
        if (result === RESULT.AFFIRMATIVE) return f.save();
        return !(f.busy?.() ?? false);
      },
    },
    tr,
  );
}
