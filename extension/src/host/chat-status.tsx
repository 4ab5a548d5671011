// A status line in the chat, just above SillyTavern's input (issue 29: a
// model's long tool call shows its progress there). It is its own block in
// the chat column's flow, before the input's form (#form_sheld, or
// #send_form where the page has no form_sheld), so it never covers the
// input or its buttons: Stop stays where SillyTavern put it. Each status
// is its own element, removed when its call ends.

import type { ReactNode } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import type { Tr } from '../base/texts';
import { TrContext } from '../base/tr';

export const CHAT_STATUS_CLASS = 'tt-mcp-chat-status';

export interface ChatStatus {
  render(node: ReactNode): void;
  remove(): void;
}

/** Mounts a status above the chat input; a page without one shows nothing (render and remove do nothing). */
export function mountChatStatus(tr: Tr, doc: Document = document): ChatStatus {
  const anchor = doc.getElementById('form_sheld') ?? doc.getElementById('send_form');
  if (!anchor?.parentElement) return { render() {}, remove() {} };
  const el = doc.createElement('div');
  el.className = CHAT_STATUS_CLASS;
  anchor.parentElement.insertBefore(el, anchor);
  const root = createRoot(el);
  let removed = false;
  return {
    render(node) {
      // at once: the call's last update is shown before its result ends the status (a few a second at most)
      if (!removed) flushSync(() => root.render(<TrContext.Provider value={tr}>{node}</TrContext.Provider>));
    },
    remove() {
      if (removed) return;
      removed = true;
      root.unmount();
      el.remove();
    },
  };
}
