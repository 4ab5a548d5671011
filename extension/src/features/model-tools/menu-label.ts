// The wand menu's tool-set item's text: the set in use (or every allowed
// tool) and how many tools the next generation offers.

import type { Tr } from '../../base/texts';
import type { ToolReach } from './reach';

/** The chat-side control's text for a reach. */
export function menuLabel(reach: ToolReach, tr: Tr): string {
  const label = (set: { name: string } | undefined, count: number) => {
    const tools = tr('tool_count', { count });
    return set ? tr('chat_menu_set', { name: set.name, tools }) : tr('chat_menu_all', { tools });
  };
  switch (reach.kind) {
    case 'ready':
      return label(reach.set, reach.tools);
    case 'set_offers_nothing':
      return label(reach.set, 0);
    case 'nothing_allowed':
      return label(undefined, 0);
    default:
      return tr('chat_menu_unavailable');
  }
}
