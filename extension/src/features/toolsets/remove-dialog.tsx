// Asks before a tool set is removed: chats and characters bound to it then
// use the next binding.

import type { McpToolSet } from '../../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { useTr } from '../../base/tr';

function RemoveBody(props: { set: McpToolSet }) {
  const tr = useTr();
  return (
    <div className="tt-mcp-confirm">
      <h3>{tr('toolset_remove_title', { name: props.set.name })}</h3>
      <p className="tt-mcp-note">{tr('toolset_remove_note')}</p>
    </div>
  );
}

export async function confirmRemoveToolSet(set: McpToolSet, tr: Tr): Promise<boolean> {
  const result = await showDialog(<RemoveBody set={set} />, { kind: 'confirm', okButton: tr('remove'), cancelButton: tr('cancel') }, tr);
  return result === RESULT.AFFIRMATIVE;
}
