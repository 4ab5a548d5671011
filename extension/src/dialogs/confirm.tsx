// The activate and remove confirmations (reference §8.6).

import type { TauriTavernMcpServer } from '../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../host/popup';
import type { TextKey, Tr } from '../texts';
import { useTr } from '../ui/tr';

function ConfirmBody(props: { title: TextKey; endpoint: string; note: TextKey; warning?: boolean }) {
  const tr = useTr();
  return (
    <div className="tt-mcp-confirm">
      <h3>{tr(props.title)}</h3>
      <code className="tt-mcp-endpoint tt-mcp-confirm-endpoint">{props.endpoint}</code>
      <p className={props.warning ? 'tt-mcp-note tt-mcp-warning' : 'tt-mcp-note'}>
        {props.warning && <i className="fa-solid fa-triangle-exclamation" aria-hidden="true" />} {tr(props.note)}
      </p>
    </div>
  );
}

/** Whether the endpoint is plain http: (its traffic can be observed on the network). */
export function isPlainHttp(endpoint: string): boolean {
  return /^http:/i.test(endpoint);
}

/** Asks before activating server; plain-HTTP endpoints get the network warning. */
export async function confirmActivate(server: TauriTavernMcpServer, tr: Tr): Promise<boolean> {
  const http = isPlainHttp(server.endpoint);
  const result = await showDialog(
    <ConfirmBody
      title="activate_title"
      endpoint={server.endpoint}
      note={http ? 'activate_http_note' : 'activate_note'}
      warning={http}
    />,
    { kind: 'confirm', okButton: tr('activate'), cancelButton: tr('cancel') },
    tr,
  );
  return result === RESULT.AFFIRMATIVE;
}

/** Asks before removing server and its saved tool settings. */
export async function confirmRemove(server: TauriTavernMcpServer, tr: Tr): Promise<boolean> {
  const result = await showDialog(
    <ConfirmBody title="remove_title" endpoint={server.endpoint} note="remove_note" />,
    { kind: 'confirm', okButton: tr('remove'), cancelButton: tr('cancel') },
    tr,
  );
  return result === RESULT.AFFIRMATIVE;
}
