// The activate and remove confirmations (reference §8.6).

import type { TauriTavernMcpServer } from '../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../host/popup';
import { StdioCommand, stdioOf } from '../manager/Stdio';
import type { TextKey, Tr } from '../texts';
import { useTr } from '../ui/tr';

function ConfirmBody(props: { title: TextKey; server: TauriTavernMcpServer; note: TextKey; warning?: boolean }) {
  const tr = useTr();
  const stdio = stdioOf(props.server);
  return (
    <div className="tt-mcp-confirm">
      <h3>{tr(props.title)}</h3>
      {stdio ? (
        <StdioCommand stdio={stdio} />
      ) : (
        <code className="tt-mcp-endpoint tt-mcp-confirm-endpoint">{props.server.endpoint}</code>
      )}
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

/**
 * Asks before activating server; plain-HTTP endpoints get the network
 * warning, a stdio server shows the command it lets the backend run.
 */
export async function confirmActivate(server: TauriTavernMcpServer, tr: Tr): Promise<boolean> {
  const http = isPlainHttp(server.endpoint);
  const stdio = stdioOf(server) !== undefined;
  const result = await showDialog(
    <ConfirmBody
      title="activate_title"
      server={server}
      note={stdio ? 'activate_stdio_note' : http ? 'activate_http_note' : 'activate_note'}
      warning={http || stdio}
    />,
    { kind: 'confirm', okButton: tr('activate'), cancelButton: tr('cancel') },
    tr,
  );
  return result === RESULT.AFFIRMATIVE;
}

/** Asks before removing server and its saved tool settings. */
export async function confirmRemove(server: TauriTavernMcpServer, tr: Tr): Promise<boolean> {
  const result = await showDialog(
    <ConfirmBody title="remove_title" server={server} note={stdioOf(server) ? 'remove_stdio_note' : 'remove_note'} />,
    { kind: 'confirm', okButton: tr('remove'), cancelButton: tr('cancel') },
    tr,
  );
  return result === RESULT.AFFIRMATIVE;
}
