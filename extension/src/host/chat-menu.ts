// The chat-side controls (issue 19 item 2, issue 18 item 5): items of
// SillyTavern's extensions menu (the wand beside the chat input,
// #extensionsMenu) — one names the tool set the chat open now uses and how
// many tools it offers, and opens the dialog that chooses it; one names the
// chat's attached MCP resources and opens them. Its markup is the menu's own
// (list-group-item with an extensionsMenuExtensionButton icon), so the
// theme styles it; the menu is closed before the dialog opens, as
// SillyTavern's own items do.

export const CHAT_MENU_ID = 'mcp_manager_tool_set_menu';

export interface ChatMenuDeps {
  /** The item's element id (default: the tool set's item). */
  id?: string;
  /** Its Font Awesome icon class (default: fa-toolbox). */
  icon?: string;
  /** The item's text now (worked out when the menu may show it). */
  label(): Promise<string>;
  /** The tooltip. */
  title: string;
  open(): Promise<void>;
  /** Calls fn when the label may have changed; returns the unsubscribe function. */
  onChange(fn: () => void): () => void;
}

/** Adds the item once #extensionsMenu exists (it may come after the extension); returns the remover. */
export function mountChatMenu(deps: ChatMenuDeps, doc: Document = document): () => void {
  let item: HTMLElement | undefined;
  let text: HTMLSpanElement | undefined;
  let version = 0;
  const refresh = async () => {
    if (!text) return;
    const mine = ++version;
    try {
      const label = await deps.label();
      if (mine === version && text) text.textContent = label;
    } catch {
      // the reach line says why
    }
  };
  const mount = (menu: Element) => {
    item = doc.createElement('div');
    item.id = deps.id ?? CHAT_MENU_ID;
    item.className = 'list-group-item flex-container flexGap5 interactable';
    item.tabIndex = 0;
    item.setAttribute('role', 'button');
    item.title = deps.title;
    const icon = doc.createElement('div');
    icon.className = `fa-fw fa-solid ${deps.icon ?? 'fa-toolbox'} extensionsMenuExtensionButton`;
    icon.setAttribute('aria-hidden', 'true');
    text = doc.createElement('span');
    text.textContent = deps.title;
    item.append(icon, text);
    const activate = (e: Event) => {
      if (e instanceof KeyboardEvent && e.key !== 'Enter' && e.key !== ' ') return;
      e.preventDefault();
      e.stopPropagation();
      const button = doc.getElementById('extensionsMenuButton');
      if (button && (menu as HTMLElement).offsetParent !== null) button.click(); // close the menu first
      void deps.open().then(refresh);
    };
    item.addEventListener('click', activate);
    item.addEventListener('keydown', activate);
    menu.append(item);
    void refresh();
  };
  const found = doc.getElementById('extensionsMenu');
  let observer: MutationObserver | undefined;
  if (found) mount(found);
  else {
    observer = new MutationObserver(() => {
      const menu = doc.getElementById('extensionsMenu');
      if (!menu) return;
      observer?.disconnect();
      observer = undefined;
      mount(menu);
    });
    observer.observe(doc.body, { childList: true, subtree: true });
  }
  const off = deps.onChange(() => void refresh());
  return () => {
    off();
    observer?.disconnect();
    item?.remove();
  };
}
