// Where the Manager lives in SillyTavern (reference §8): an extension
// container in the Extensions drawer's right column, right after
// TauriTavern's own skill/agent panels when present, else first. The
// inline-drawer markup is plain DOM, so SillyTavern's delegated
// .inline-drawer-toggle handler opens and closes it; React renders only
// into the drawer's content.

export const CONTAINER_ID = 'mcp_manager_container';
const COLUMN_ID = 'extensions_settings2';
const ANCHORS = ['skill_manager_container', 'agent_system_container'];

function el(doc: Document, tag: string, className: string): HTMLElement {
  const e = doc.createElement(tag);
  e.className = className;
  return e;
}

/**
 * mountDrawer builds the drawer and returns its content element, or null
 * when the page has no extension settings column.
 */
export function mountDrawer(title: string, doc: Document = document): HTMLElement | null {
  const column = doc.getElementById(COLUMN_ID);
  if (!column) return null;
  doc.getElementById(CONTAINER_ID)?.remove();

  const container = el(doc, 'div', 'extension_container');
  container.id = CONTAINER_ID;
  const drawer = el(doc, 'div', 'inline-drawer tt-mcp-drawer');
  const header = el(doc, 'div', 'inline-drawer-toggle inline-drawer-header');
  const heading = el(doc, 'b', 'tt-mcp-drawer-title');
  heading.append(el(doc, 'i', 'fa-solid fa-plug-circle-bolt'), doc.createTextNode(` ${title}`));
  heading.firstElementChild?.setAttribute('aria-hidden', 'true');
  const chevron = el(doc, 'div', 'inline-drawer-icon fa-solid fa-circle-chevron-down down');
  header.append(heading, chevron);
  const content = el(doc, 'div', 'inline-drawer-content tt-mcp-root');
  drawer.append(header, content);
  container.append(drawer);

  const anchor = ANCHORS.map((id) => doc.getElementById(id)).find((a) => a !== null && column.contains(a));
  if (anchor) anchor.after(container);
  else column.prepend(container);
  return content;
}
