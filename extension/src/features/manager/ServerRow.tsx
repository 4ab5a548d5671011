// One registration in the list (reference §8.3): its summary line, its
// actions, and — expanded — its console. The summary's parts are separate
// components so a row can grow (another transport's target, a sign-in
// state, recent calls) by adding parts rather than rewriting the row.

import type {
  McpDiscoveryResult,
  McpStdioStatus,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import { useTr } from '../../base/tr';
import { ServerConsole } from './ServerConsole';
import { AuthButtons, AuthChip } from './ServerAuth';
import { StdioTarget, stdioOf } from './Stdio';
import type { ServerRowHandlers, ServerStatus } from './server-state';


export interface ServerRowProps {
  server: TauriTavernMcpServer;
  status: ServerStatus;
  discovery: McpDiscoveryResult | undefined;
  expanded: boolean;
  /** Tools whose permission change is being saved. */
  busyTools: ReadonlySet<string>;
  on: ServerRowHandlers;
  /** Reads a stdio server's process status (ttmcp's api.mcp.stdio); absent on hosts without it. */
  stdioStatus?: ((registrationId: string) => Promise<McpStdioStatus>) | undefined;
  /** Changes when the backend says the server's resources or prompts changed. */
  listChanges?: string | undefined;
}

/** Where the server is reached: its endpoint, or for a stdio server its command line. */
export function ServerTarget(props: { server: TauriTavernMcpServer }) {
  const stdio = stdioOf(props.server);
  if (stdio) return <StdioTarget stdio={stdio} />;
  return (
    <code className="tt-mcp-endpoint" title={props.server.endpoint}>
      {props.server.endpoint}
    </code>
  );
}

function StatusLamp(props: { server: TauriTavernMcpServer; status: ServerStatus }) {
  const { server, status } = props;
  const kind = status.activity ? 'busy' : status.error !== undefined ? 'error' : server.state;
  return (
    <span className={`tt-mcp-lamp tt-mcp-lamp-${kind}`} aria-hidden="true">
      {status.activity && <i className="fa-solid fa-spinner fa-spin" />}
    </span>
  );
}

function ServerActions(props: {
  server: TauriTavernMcpServer;
  busy: boolean;
  signingIn: boolean;
  expanded: boolean;
  on: ServerRowHandlers;
}) {
  const tr = useTr();
  const { server, busy, signingIn, expanded, on } = props;
  const active = server.state === 'active';
  const { signIn, signOut } = on;
  return (
    <div className="tt-mcp-server-actions">
      {signIn && signOut && <AuthButtons server={server} busy={busy} signingIn={signingIn} on={{ signIn, signOut }} />}
      <button
        type="button"
        className={`menu_button tt-mcp-state tt-mcp-state-${server.state}`}
        aria-pressed={active}
        title={active ? tr('state_toggle_hint_pause') : tr('state_toggle_hint_activate')}
        disabled={busy}
        onClick={on.toggleState}
      >
        <i className={active ? 'fa-solid fa-toggle-on' : 'fa-solid fa-toggle-off'} aria-hidden="true" />
        <span>{active ? tr('state_active') : tr('state_paused')}</span>
      </button>
      <button
        type="button"
        className="menu_button tt-mcp-icon-button"
        title={tr('edit')}
        aria-label={tr('edit')}
        disabled={busy}
        onClick={on.edit}
      >
        <i className="fa-solid fa-pen-to-square" aria-hidden="true" />
      </button>
      <button
        type="button"
        className="menu_button tt-mcp-icon-button tt-mcp-danger"
        title={tr('remove')}
        aria-label={tr('remove')}
        disabled={busy}
        onClick={on.remove}
      >
        <i className="fa-solid fa-trash-can" aria-hidden="true" />
      </button>
      <button
        type="button"
        className="menu_button tt-mcp-icon-button"
        title={tr('toggle_tools')}
        aria-label={tr('toggle_tools')}
        aria-expanded={expanded}
        onClick={on.toggleExpand}
      >
        <i className={expanded ? 'fa-solid fa-chevron-up' : 'fa-solid fa-chevron-down'} aria-hidden="true" />
      </button>
    </div>
  );
}

export function ServerRow(props: ServerRowProps) {
  const { server, status, discovery, expanded, busyTools, on, stdioStatus, listChanges } = props;
  const busy = status.activity !== undefined;
  return (
    <li className={`tt-mcp-server tt-mcp-server-${server.state}${expanded ? ' tt-mcp-server-open' : ''}`}>
      <div className="tt-mcp-server-head">
        <StatusLamp server={server} status={status} />
        <div className="tt-mcp-server-id">
          <span className="tt-mcp-server-name">{server.displayName}</span>
          <ServerTarget server={server} />
          <AuthChip server={server} />
        </div>
        <ServerActions server={server} busy={busy} signingIn={status.activity === 'sign-in'} expanded={expanded} on={on} />
      </div>
      {!expanded && status.error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {status.error}
        </p>
      )}
      {expanded && (
        <ServerConsole
          server={server}
          status={status}
          discovery={discovery}
          busyTools={busyTools}
          on={on}
          stdioStatus={stdioStatus}
          listChanges={listChanges}
        />
      )}
    </li>
  );
}
