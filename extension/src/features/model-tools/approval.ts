// The Ask prompt: before an Ask tool runs for the model, a SillyTavern popup
// shows the server, the tool and the arguments, and the user answers
// "Allow once", "Always allow" or "Deny". Escape, closing it and Stop (the
// signal) are "Deny".

import { RESULT } from '../../host/popup';
import { stContext } from '../../host/sillytavern';
import type { Tr } from '../../base/texts';

export type ApprovalAnswer = 'once' | 'always' | 'denied';

export interface ApprovalRequest {
  serverDisplayName: string;
  /** The tool's title, or its native name. */
  toolTitle: string;
  nativeName: string;
  /** The arguments as they will be sent. */
  argumentsJson: string;
  /** Who asks: the model (absent), or an MCP App in the chat. */
  askedBy?: 'model' | 'app';
}

/** The result of the "Always allow" button (SillyTavern numbers custom buttons from 2). */
const ALWAYS = 2;

/** String values longer than this are folded in the summary view. */
export const FOLD_AT = 160;

/**
 * Re-indents JSON text (two spaces) without parsing its values, so every
 * number and string is shown exactly as it will be sent (JSON.parse would
 * round 9007199254740993). maxString, when given, cuts longer string
 * literals to their start and appends more(left out).
 */
function indentJson(text: string, maxString?: number, more?: (n: number) => string): { text: string; folded: boolean } {
  let out = '';
  let depth = 0;
  let folded = false;
  const newline = () => '\n' + '  '.repeat(depth);
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const body = text.slice(i + 1, j);
      if (maxString !== undefined && more && body.length > maxString) {
        let cut = maxString;
        if (body.lastIndexOf('\\', cut) > cut - 6) cut = body.lastIndexOf('\\', cut); // never split an escape
        out += `"${body.slice(0, cut)}… ${more(body.length - cut)}"`;
        folded = true;
      } else {
        out += `"${body}"`;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let k = i + 1;
      while (k < text.length && /\s/.test(text[k]!)) k++;
      if (text[k] === close) {
        out += c + close;
        i = k;
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') {
      out += ',' + newline();
    } else if (c === ':') {
      out += ': ';
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return { text: out, folded };
}

/**
 * The arguments as pretty JSON with every string longer than FOLD_AT cut
 * to its start and a note of how much was left out; folded tells whether
 * anything was. Arguments that are not JSON are shown as they are.
 */
export function foldArguments(argumentsJson: string, more: (n: number) => string): { text: string; folded: boolean } {
  try {
    JSON.parse(argumentsJson);
  } catch {
    return { text: argumentsJson, folded: false };
  }
  return indentJson(argumentsJson, FOLD_AT, more);
}

function prettyAll(argumentsJson: string): string {
  try {
    JSON.parse(argumentsJson);
  } catch {
    return argumentsJson;
  }
  return indentJson(argumentsJson).text;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The popup's content (plain DOM: it must work before React is needed anywhere). */
export function approvalContent(req: ApprovalRequest, tr: Tr): HTMLElement {
  const root = element('div', 'tt-mcp-approval');
  root.append(element('h3', 'tt-mcp-approval-title', tr('ask_title')));
  const facts = element('dl', 'tt-mcp-approval-facts');
  facts.append(element('dt', '', tr('server')), element('dd', 'tt-mcp-approval-server', req.serverDisplayName));
  const tool = element('dd', 'tt-mcp-approval-tool', req.toolTitle);
  if (req.toolTitle !== req.nativeName) {
    tool.append(' ', element('code', 'tt-mcp-native-name', req.nativeName));
  }
  facts.append(element('dt', '', tr('tool')), tool);
  root.append(facts);
  root.append(element('p', 'tt-mcp-approval-label', tr('ask_arguments')));
  const { text, folded } = foldArguments(req.argumentsJson, (n) => tr('ask_folded', { count: n }));
  root.append(element('pre', 'tt-mcp-approval-args', text));
  if (folded) {
    const details = element('details', 'tt-mcp-approval-full');
    details.append(element('summary', '', tr('ask_show_all')), element('pre', 'tt-mcp-approval-args', prettyAll(req.argumentsJson)));
    root.append(details);
  }
  root.append(element('p', 'tt-mcp-note', tr(req.askedBy === 'app' ? 'ask_note_app' : 'ask_note')));
  return root;
}

/**
 * Asks the user about one call. Resolves "denied" when the page has no
 * Popup (nothing may run unasked), on Escape or close, and when signal
 * aborts (Stop), which closes the popup.
 */
export async function askApproval(req: ApprovalRequest, signal: AbortSignal, tr: Tr): Promise<ApprovalAnswer> {
  if (signal.aborted) return 'denied';
  const ctx = stContext();
  const Popup = ctx?.Popup;
  if (typeof Popup !== 'function') return 'denied';
  const type = ctx?.POPUP_TYPE?.CONFIRM ?? 2;
  const popup = new Popup(approvalContent(req, tr), type, '', {
    okButton: tr('ask_allow_once'),
    cancelButton: tr('ask_deny'),
    customButtons: [{ text: tr('ask_always_allow'), result: ALWAYS, classes: ['tt-mcp-approval-always'] }],
    wide: true,
    leftAlign: true,
    allowVerticalScrolling: true,
    defaultResult: RESULT.NEGATIVE,
  });
  const stop = () => void popup.complete(RESULT.CANCELLED);
  signal.addEventListener('abort', stop, { once: true });
  try {
    await popup.show();
  } finally {
    signal.removeEventListener('abort', stop);
  }
  if (signal.aborted) return 'denied';
  switch (popup.result) {
    case RESULT.AFFIRMATIVE:
      return 'once';
    case ALWAYS:
      return 'always';
    default:
      return 'denied';
  }
}
