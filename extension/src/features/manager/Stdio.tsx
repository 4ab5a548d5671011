// Local (stdio) servers (ttmcp's addition, SPEC §10): a server whose
// transport is 'stdio' is a command the user configured on the backend's
// machine (`ttmcp stdio add|import`). The Manager shows that command — the
// exact command line, the names of its environment variables (never their
// values, which the backend does not send) and its working directory —
// wherever it shows a remote server's endpoint, offers no endpoint editing,
// and shows how its process is doing (api.mcp.stdio.status) with the last
// lines it wrote to stderr when it failed to start or died.

import { useEffect, useState } from 'react';
import type { McpStdioConfig, McpStdioStatus, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';

/** The stdio configuration of server, when it is a stdio server. */
export function stdioOf(server: TauriTavernMcpServer): McpStdioConfig | undefined {
  return server.transport === 'stdio' ? server.stdio : undefined;
}

/** "stdio" and the command line, where a remote server's row shows its endpoint. */
export function StdioTarget(props: { stdio: McpStdioConfig }) {
  const tr = useTr();
  return (
    <span className="tt-mcp-stdio-target">
      <span className="tt-mcp-chip tt-mcp-chip-stdio" title={tr('stdio_hint')}>
        {tr('stdio')}
      </span>
      <code className="tt-mcp-endpoint tt-mcp-command" title={props.stdio.commandLine}>
        {props.stdio.commandLine}
      </code>
    </span>
  );
}

/** The whole command: line, environment names and working directory (confirmations, the edit dialog, the console). */
export function StdioCommand(props: { stdio: McpStdioConfig }) {
  const tr = useTr();
  const { stdio } = props;
  return (
    <dl className="tt-mcp-stdio-command">
      <dt>{tr('stdio_command')}</dt>
      <dd>
        <code className="tt-mcp-command-line">{stdio.commandLine}</code>
      </dd>
      {stdio.envNames.length > 0 && (
        <>
          <dt>{tr('stdio_env')}</dt>
          <dd>
            {stdio.envNames.map((name) => (
              <code key={name} className="tt-mcp-chip">
                {name}
              </code>
            ))}{' '}
            <small className="tt-mcp-hint">{tr('stdio_env_hidden')}</small>
          </dd>
        </>
      )}
      {stdio.cwd !== undefined && (
        <>
          <dt>{tr('stdio_cwd')}</dt>
          <dd>
            <code>{stdio.cwd}</code>
          </dd>
        </>
      )}
    </dl>
  );
}

/** While a process is starting, its state is read again this often, at most STARTING_RECHECKS times. */
export const STARTING_RECHECK_MS = 1000;
const STARTING_RECHECKS = 30;

/**
 * The process of a stdio server: its state, and how the last one failed.
 * It is read again whenever the row's activity or error changes (a
 * discovery or a call may have started or lost the process), and while it
 * is starting (a read that started it — a resource list, say — changes
 * neither, so "starting…" would stay until the user pressed refresh).
 */
export function StdioProcess(props: {
  registrationId: string;
  load: (registrationId: string) => Promise<McpStdioStatus>;
  refreshKey: string;
  recheckMs?: number;
}) {
  const tr = useTr();
  const { registrationId, load, refreshKey } = props;
  const recheckMs = props.recheckMs ?? STARTING_RECHECK_MS;
  const [status, setStatus] = useState<McpStdioStatus>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const [rechecks, setRechecks] = useState(0);
  useEffect(() => setRechecks(0), [registrationId, refreshKey]);
  useEffect(() => {
    let live = true;
    load(registrationId).then(
      (s) => {
        if (!live) return;
        setStatus(s);
        setError(undefined);
      },
      (err: unknown) => {
        if (live) setError(errorMessage(err));
      },
    );
    return () => {
      live = false;
    };
  }, [registrationId, load, refreshKey, tick]);
  useEffect(() => {
    if (status?.state !== 'starting' || rechecks >= STARTING_RECHECKS) return;
    const t = setTimeout(() => {
      setRechecks((n) => n + 1);
      setTick((n) => n + 1);
    }, recheckMs);
    return () => clearTimeout(t);
  }, [status, rechecks, recheckMs]);

  const exit = status?.lastExit;
  return (
    <section className="tt-mcp-stdio-process" aria-label={tr('stdio_process')}>
      <p className="tt-mcp-note">
        {tr('stdio_process')}: {status ? tr(`stdio_state_${status.state}`) : '…'}{' '}
        <button
          type="button"
          className="menu_button tt-mcp-icon-button"
          title={tr('stdio_refresh_status')}
          aria-label={tr('stdio_refresh_status')}
          onClick={() => setTick((n) => n + 1)}
        >
          <i className="fa-solid fa-arrows-rotate" aria-hidden="true" />
        </button>
      </p>
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {tr('stdio_status_failed', { message: error })}
        </p>
      )}
      {exit && (
        <div className="tt-mcp-stdio-exit" role="status">
          <p className="tt-mcp-error">
            {tr('stdio_last_exit', { time: new Date(exit.time).toLocaleString() })} <code>{exit.code}</code> {exit.message}
          </p>
          {exit.stderr.length > 0 ? (
            <details className="tt-mcp-stderr" open>
              <summary>{tr('stdio_stderr', { count: exit.stderr.length })}</summary>
              <pre>{exit.stderr.join('\n')}</pre>
            </details>
          ) : (
            <p className="tt-mcp-note">{tr('stdio_stderr_empty')}</p>
          )}
        </div>
      )}
    </section>
  );
}
