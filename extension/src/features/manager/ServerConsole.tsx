// The expanded part of a server row (reference §8.3): how to get its tools
// when none are known yet, otherwise the discovery header, notes, tools and
// stale permissions; in both, why discovery failed (and, when the server
// wants a sign-in, the way to it); then the server's recent calls,
// discovered or not. A server that advertises resources or prompts gets a
// tab for each beside Tools (Primitives.tsx); one that offers only tools
// shows no tabs.

import { useContext, useId, useState, type KeyboardEvent } from 'react';
import type { McpDiscoveryResult, McpStdioStatus, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { DiscoveryNotes } from '../../ui/DiscoveryNotes';
import { useTr } from '../../base/tr';
import { ConnectionLine } from './Connection';
import { PromptsPanel, ResourcesPanel, useCapabilities, visibleTabs, type ConsoleTab } from './Primitives';
import { AuthRequiredNotice } from './ServerAuth';
import { SectionsContext } from './sections';
import type { ServerRowHandlers, ServerStatus } from './server-state';
import { StdioCommand, StdioProcess, stdioOf } from './Stdio';
import { ToolItem } from './ToolItem';

interface ServerConsoleProps {
  server: TauriTavernMcpServer;
  status: ServerStatus;
  discovery: McpDiscoveryResult | undefined;
  busyTools: ReadonlySet<string>;
  on: ServerRowHandlers;
  stdioStatus?: ((registrationId: string) => Promise<McpStdioStatus>) | undefined;
  /** Changes when the backend says the server's resources or prompts changed. */
  listChanges?: string | undefined;
}

/** A stdio server's command and process, on top of its console. */
function StdioPart(props: Pick<ServerConsoleProps, 'server' | 'status' | 'stdioStatus'>) {
  const stdio = stdioOf(props.server);
  if (!stdio) return null;
  const { status } = props;
  return (
    <div className="tt-mcp-stdio">
      <StdioCommand stdio={stdio} />
      {props.stdioStatus && (
        <StdioProcess
          registrationId={props.server.id}
          load={props.stdioStatus}
          refreshKey={`${props.server.state}|${status.activity ?? ''}|${status.error ?? ''}`}
        />
      )}
    </div>
  );
}

function RowError(props: { error: string | undefined }) {
  if (props.error === undefined) return null;
  return (
    <p className="tt-mcp-error" role="alert">
      {props.error}
    </p>
  );
}

/** "{implementation} · MCP {protocol}", or "MCP {protocol}" when the server did not name itself. */
function DiscoveryHeader(props: { discovery: McpDiscoveryResult; canRefresh: boolean; onRefresh(): void }) {
  const tr = useTr();
  const d = props.discovery;
  const implementation = [d.serverName, d.serverVersion].filter((x) => x !== undefined && x !== '').join(' ');
  const count = d.tools.length;
  return (
    <div className="tt-mcp-discovery-head">
      <span className="tt-mcp-implementation">
        {implementation !== ''
          ? tr('implementation_protocol', { implementation, protocol: d.protocolVersion })
          : tr('protocol_only', { protocol: d.protocolVersion })}
      </span>
      <span className="tt-mcp-count">{tr('tool_count', { count })}</span>
      <button
        type="button"
        className="menu_button tt-mcp-icon-button"
        title={tr('refresh_tools')}
        aria-label={tr('refresh_tools')}
        disabled={!props.canRefresh}
        onClick={props.onRefresh}
      >
        <i className="fa-solid fa-arrows-rotate" aria-hidden="true" />
      </button>
    </div>
  );
}

function StaleTools(props: { discovery: McpDiscoveryResult; busyTools: ReadonlySet<string>; onSetOff(name: string): void }) {
  const tr = useTr();
  if (props.discovery.staleTools.length === 0) return null;
  return (
    <section className="tt-mcp-stale">
      <h5>{tr('stale_tools')}</h5>
      <ul>
        {props.discovery.staleTools.map((s) => (
          <li key={s.nativeName}>
            <code className="tt-mcp-native-name">{s.nativeName}</code>
            <span className={`tt-mcp-chip tt-mcp-chip-${s.permission}`}>{tr(`permission_${s.permission}`)}</span>
            <button
              type="button"
              className="menu_button"
              disabled={props.busyTools.has(s.nativeName)}
              onClick={() => props.onSetOff(s.nativeName)}
            >
              {tr('set_off')}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The console: what is known of the server's tools, then its recent calls.
 * The calls come from ttmcp's audit log on disk, so they are there before
 * any discovery (a paused server, one that failed, one never discovered in
 * this page), and keep their place (and their open state) while the tools
 * part changes.
 */
export function ServerConsole(props: ServerConsoleProps) {
  const { recentCalls: RecentCalls } = useContext(SectionsContext);
  return (
    <div className="tt-mcp-console">
      <StdioPart server={props.server} status={props.status} stdioStatus={props.stdioStatus} />
      <ConnectionLine
        server={props.server}
        refreshKey={`${props.status.activity ?? ''}|${props.status.error ?? ''}|${props.discovery?.tools.length ?? ''}`}
      />
      <ConsoleTabs {...props} />
      {RecentCalls && <RecentCalls registrationId={props.server.id} />}
    </div>
  );
}

const TAB_LABELS = { tools: 'tab_tools', resources: 'tab_resources', prompts: 'tab_prompts' } as const;

/** Tools, Resources, Prompts: the primitives the server has, as tabs (none when it has only tools). */
function ConsoleTabs(props: ServerConsoleProps) {
  const tr = useTr();
  const id = useId();
  const { server, discovery, status } = props;
  // learnt again once a discovery (which connects) has run, and after a connection change
  const caps = useCapabilities(server, `${discovery !== undefined}|${server.endpoint}|${status.error ?? ''}`);
  const known = (discovery?.tools.length ?? 0) > 0 || (discovery?.staleTools.length ?? 0) > 0;
  let tabs = caps.caps ? visibleTabs(caps.caps, known) : (['tools'] as ConsoleTab[]);
  if (tabs.length === 0) tabs = ['tools'];
  const [chosen, setChosen] = useState<ConsoleTab>('tools');
  const selected = tabs.includes(chosen) ? chosen : tabs[0]!;
  const panel = (tab: ConsoleTab) => {
    if (tab === 'tools' || !caps.caps) return <ToolsPart {...props} />;
    const panelProps = {
      server,
      caps: caps.caps,
      changeKey: props.listChanges ?? '',
      switchBusy: caps.busy,
      onToggle: (p: 'resources' | 'prompts') => caps.toggle(p, (s) => props.on.serverChanged?.(s)),
    };
    return tab === 'resources' ? <ResourcesPanel {...panelProps} /> : <PromptsPanel {...panelProps} />;
  };
  // until the backend has learnt what the server offers (a stdio process
  // still starting), only Tools shows: say that more may come
  const error = (
    <>
      {caps.error !== undefined && <RowError error={caps.error} />}
      {caps.checking && (
        <p className="tt-mcp-note tt-mcp-tabs-checking" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('tabs_checking')}
        </p>
      )}
    </>
  );
  if (tabs.length === 1) {
    return (
      <>
        {error}
        {panel(selected)}
      </>
    );
  }
  const onKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = tabs.indexOf(selected);
    const next = e.key === 'ArrowRight' ? tabs[(i + 1) % tabs.length] : e.key === 'ArrowLeft' ? tabs[(i + tabs.length - 1) % tabs.length] : e.key === 'Home' ? tabs[0] : e.key === 'End' ? tabs[tabs.length - 1] : undefined;
    if (!next) return;
    e.preventDefault();
    setChosen(next);
    document.getElementById(`${id}-tab-${next}`)?.focus();
  };
  return (
    <>
      <div className="tt-mcp-tabs" role="tablist" aria-label={tr('console_tabs', { name: server.displayName })}>
        {tabs.map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            id={`${id}-tab-${t}`}
            aria-selected={t === selected}
            aria-controls={`${id}-panel-${t}`}
            tabIndex={t === selected ? 0 : -1}
            className={t === selected ? 'tt-mcp-tab tt-mcp-tab-on' : 'tt-mcp-tab'}
            onClick={() => setChosen(t)}
            onKeyDown={onKey}
          >
            {tr(TAB_LABELS[t])}
          </button>
        ))}
      </div>
      {error}
      <div className="tt-mcp-tabpanel" role="tabpanel" id={`${id}-panel-${selected}`} aria-labelledby={`${id}-tab-${selected}`}>
        {panel(selected)}
      </div>
    </>
  );
}

/** How to get the server's tools when none are known yet, otherwise the discovery. */
function ToolsPart({ server, status, discovery, busyTools, on }: ServerConsoleProps) {
  const tr = useTr();
  const busy = status.activity !== undefined;
  const { signIn, signOut } = on;
  const authOn = signIn && signOut ? { signIn, signOut } : undefined;
  if (!discovery) {
    if (server.state === 'paused') {
      return (
        <>
          <RowError error={status.error} />
          <p className="tt-mcp-note">{tr('paused_note')}</p>
        </>
      );
    }
    if (status.activity === 'discover') {
      return (
        <p className="tt-mcp-note" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('discovering')}
        </p>
      );
    }
    const failed = status.error !== undefined;
    return (
      <>
        <RowError error={status.error} />
        <AuthRequiredNotice server={server} error={status.error} busy={busy} on={authOn} />
        <button
          type="button"
          className="menu_button menu_button_icon"
          disabled={busy}
          onClick={failed ? on.refresh : on.discover}
        >
          <i className={failed ? 'fa-solid fa-arrows-rotate' : 'fa-solid fa-magnifying-glass'} aria-hidden="true" />
          <span>{failed ? tr('retry') : tr('discover_tools')}</span>
        </button>
      </>
    );
  }
  return (
    <>
      <DiscoveryHeader discovery={discovery} canRefresh={server.state === 'active' && !busy} onRefresh={on.refresh} />
      {status.activity === 'discover' && (
        <p className="tt-mcp-note" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('discovering')}
        </p>
      )}
      <RowError error={status.error} />
      <AuthRequiredNotice server={server} error={status.error} busy={busy} on={authOn} />
      <DiscoveryNotes diagnostics={discovery.diagnostics} />
      {discovery.tools.length === 0 ? (
        <p className="tt-mcp-note">{tr('no_tools')}</p>
      ) : (
        <ul className="tt-mcp-tools">
          {discovery.tools.map((tool) => (
            <ToolItem
              key={tool.nativeName}
              tool={tool}
              override={server.toolDescriptionOverrides[tool.nativeName]}
              busy={busyTools.has(tool.nativeName)}
              onPermission={(p) => on.setPermission(tool.nativeName, p)}
              onEditDescription={() => on.editDescription(tool)}
            />
          ))}
        </ul>
      )}
      <StaleTools discovery={discovery} busyTools={busyTools} onSetOff={on.setStaleOff} />
    </>
  );
}
