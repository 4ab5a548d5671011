// The activate and remove confirmations (reference §8.6).

import type { TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../../host/popup';
import { StdioCommand, stdioOf } from './Stdio';
import type { TextKey, Tr } from '../../base/texts';
import { useTr } from '../../base/tr';

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

/**
 * Whether hostname (as URL writes it) is this machine: 127.0.0.0/8, ::1
 * (also IPv4-mapped 127/8), localhost and *.localhost (RFC 6761: always
 * loopback; browsers resolve them so).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(h)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Whether the endpoint's traffic can be observed on the network: plain
 * http: to a host that is not this machine (loopback traffic never leaves
 * it).
 */
export function isExposedHttp(endpoint: string): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return /^http:/i.test(endpoint);
  }
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

/**
 * Asks before activating server; plain-HTTP endpoints on another machine
 * get the network warning, a stdio server shows the command it lets the
 * backend run.
 */
export async function confirmActivate(server: TauriTavernMcpServer, tr: Tr): Promise<boolean> {
  const http = isExposedHttp(server.endpoint);
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
