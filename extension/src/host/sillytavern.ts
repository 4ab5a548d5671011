// The SillyTavern page as this extension sees it: SillyTavern.getContext()
// (called afresh every time, as SillyTavern rebuilds it per call), typed to
// the members the Manager uses. Everything is optional: SillyTavern 1.12
// lacks some members, a page without SillyTavern lacks all of them.

import type { Translate } from '../base/texts';

/** A custom popup button (SillyTavern ≥ 1.12.7); results 2… close the popup with that result. */
export interface StCustomButton {
  text: string;
  result?: number;
  classes?: string[];
  icon?: string;
  appendAtEnd?: boolean;
}

export interface StPopupOptions {
  okButton?: string | boolean | null;
  cancelButton?: string | boolean | null;
  wide?: boolean;
  wider?: boolean;
  large?: boolean;
  leftAlign?: boolean;
  allowVerticalScrolling?: boolean;
  defaultResult?: number;
  customButtons?: StCustomButton[];
  /** A falsy return (including undefined) keeps the popup open. */
  onClosing?: (popup: StPopup) => boolean | Promise<boolean>;
  onClose?: (popup: StPopup) => void | Promise<void>;
  onOpen?: (popup: StPopup) => void | Promise<void>;
}

export interface StPopup {
  /** The raw result of the closing action (null: cancelled with Escape). */
  result: number | null | undefined;
  show(): Promise<unknown>;
  complete(result: number | null): Promise<unknown>;
  dlg?: HTMLElement;
}

export interface StPopupConstructor {
  new (content: HTMLElement | string, type: number, inputValue?: string, options?: StPopupOptions): StPopup;
}

export interface StPopupTypes {
  TEXT: number;
  CONFIRM: number;
}

export interface StPopupResults {
  AFFIRMATIVE: number;
  NEGATIVE: number;
  CANCELLED: number | null;
}

export interface StContext {
  Popup?: StPopupConstructor;
  POPUP_TYPE?: StPopupTypes;
  POPUP_RESULT?: StPopupResults;
  translate?: Translate;
  /** The page's locale id, lower case (e.g. "en", "zh-cn"). */
  getCurrentLocale?: () => string;
  extensionSettings?: Record<string, unknown>;
  saveSettingsDebounced?: () => void;
  /** SillyTavern's Stop (emits generation_stopped, which withdraws the model's calls). */
  stopGeneration?: () => unknown;
}

interface SillyTavernGlobal {
  getContext?: () => StContext;
}

/** The current SillyTavern context, or undefined outside SillyTavern. */
export function stContext(): StContext | undefined {
  const st = (globalThis as { SillyTavern?: SillyTavernGlobal }).SillyTavern;
  try {
    return st?.getContext?.();
  } catch {
    return undefined;
  }
}

/** SillyTavern's Stop, when the page has one (read when it is pressed: the context is rebuilt per call). */
export function stStopGeneration(): (() => void) | undefined {
  if (typeof stContext()?.stopGeneration !== 'function') return undefined;
  return () => void stContext()?.stopGeneration?.();
}

/** The page's translate function, when SillyTavern provides one. */
export function stTranslate(): Translate | undefined {
  const fn = stContext()?.translate;
  return typeof fn === 'function' ? fn : undefined;
}

/** The page's language (SillyTavern's getCurrentLocale()), when it says; else the document's. */
export function stLanguage(): string | undefined {
  try {
    const id = stContext()?.getCurrentLocale?.();
    if (typeof id === 'string' && id !== '') return id;
  } catch {
    // a broken host must not take the Manager down
  }
  const lang = globalThis.document?.documentElement?.lang;
  return lang ? lang : undefined;
}
