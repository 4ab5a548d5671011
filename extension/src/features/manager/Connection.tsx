// How a remote server is connected now (ttmcp's live connections, SPEC
// §10): open or not, whether it follows its server's list changes, and
// when its server ends sessions so that each use opens a fresh one. Read
// through ConnectionContext, which the boot code provides when the host
// API has api.mcp.connections; without it (TauriTavern) nothing renders.

import { createContext, useContext, useEffect, useState } from 'react';
import type { McpConnectionStatus, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { useTr } from '../../base/tr';

export interface ConnectionDeps {
  status(registrationId: string): Promise<McpConnectionStatus>;
}

export const ConnectionContext = createContext<ConnectionDeps | undefined>(undefined);

/**
 * How often a shown line reads its status again (a local backend command,
 * nothing goes to the server): a connection changes without any page
 * action too — its server ends the notification stream, it idles out.
 */
export const STATUS_REREAD_MS = 5000;

/** One line under an Active remote server's name; refreshKey changes when it may have changed. */
export function ConnectionLine(props: { server: TauriTavernMcpServer; refreshKey: string }) {
  const deps = useContext(ConnectionContext);
  const tr = useTr();
  const [status, setStatus] = useState<McpConnectionStatus>();
  const [tick, setTick] = useState(0);
  const { server, refreshKey } = props;
  const remote = server.transport !== 'stdio' && server.state === 'active';
  useEffect(() => {
    if (!deps || !remote) return;
    const timer = setInterval(() => {
      if (!document.hidden) setTick((n) => n + 1);
    }, STATUS_REREAD_MS);
    return () => clearInterval(timer);
  }, [deps, remote]);
  useEffect(() => {
    if (!deps || !remote) return;
    let live = true;
    deps.status(server.id).then(
      (s) => live && setStatus(s),
      () => live && setStatus(undefined), // an older backend, or gone: say nothing
    );
    return () => {
      live = false;
    };
  }, [deps, remote, server.id, refreshKey, tick]);
  if (!deps || !remote || !status) return null;
  const parts: string[] = [];
  if (status.state === 'open') {
    parts.push(status.protocolVersion ? tr('connection_open_protocol', { protocol: status.protocolVersion }) : tr('connection_open'));
    parts.push(status.following ? tr('connection_following') : tr('connection_not_following'));
  } else {
    parts.push(tr(status.state === 'opening' ? 'connection_opening' : 'connection_closed'));
  }
  return (
    <div className="tt-mcp-connection">
      <p className="tt-mcp-note">{parts.join(' · ')}</p>
      {status.state === 'open' && !status.following && status.note && <p className="tt-mcp-note">{status.note}</p>}
      {status.sessions === 'short_lived' && (
        <p className="tt-mcp-note" role="status">
          {tr('connection_short_lived')}
        </p>
      )}
    </div>
  );
}
