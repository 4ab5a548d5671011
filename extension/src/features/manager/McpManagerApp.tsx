// The Manager's main panel (reference §8.2): the registrations with their
// discovered tools, and every action on them. It keeps the UI state
// (servers, discoveries, per-server activity and error) and calls the
// actions it is given; it knows nothing of the host.

import { useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import type { ServerChange } from '../../host/changes';
import type {
  McpDiscoveredTool,
  McpDiscoveryResult,
  McpServerList,
  McpStdioStatus,
  McpStorageIssue,
  McpToolPermission,
  SetMcpServerStateInput,
  SetMcpToolDescriptionOverrideInput,
  SetMcpToolPermissionInput,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import type { ToolDialogInput } from './tool-dialog';
import { SectionsContext } from './sections';
import { errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';
import { ServerRow } from './ServerRow';
import type { ServerActivity, ServerRowHandlers, ServerStatus } from './server-state';
import { isAuthRequired, markRequired } from './ServerAuth';

/** What the panel does; the host wires these to api.mcp and SillyTavern's popups. */
export interface McpManagerActions {
  /** Lists the registrations again (to show changes made outside the panel). */
  list(): Promise<McpServerList>;
  /** Opens the Add dialog; resolves the created server, or null when cancelled. */
  addServer(): Promise<TauriTavernMcpServer | null>;
  /** Opens the Edit dialog; resolves the updated server, or null when cancelled. */
  editServer(server: TauriTavernMcpServer): Promise<TauriTavernMcpServer | null>;
  confirmActivate(server: TauriTavernMcpServer): Promise<boolean>;
  confirmRemove(server: TauriTavernMcpServer): Promise<boolean>;
  setState(input: SetMcpServerStateInput): Promise<TauriTavernMcpServer>;
  remove(registrationId: string): Promise<void>;
  discover(registrationId: string): Promise<McpDiscoveryResult>;
  refresh(registrationId: string): Promise<McpDiscoveryResult>;
  setPermission(input: SetMcpToolPermissionInput): Promise<TauriTavernMcpServer>;
  setDescriptionOverride(input: SetMcpToolDescriptionOverrideInput): Promise<TauriTavernMcpServer>;
  /** Opens the description dialog; resolves when it closes. */
  openToolDialog(input: ToolDialogInput): Promise<void>;
  /** Opens the test-call console over these registrations; resolves when it closes. */
  openTestCall(servers: TauriTavernMcpServer[]): Promise<void>;
  /**
   * ttmcp's sign-in (absent where the host API has none). Must be called in
   * the user's click: it opens the sign-in window. Resolves the signed-in
   * server, or null when the user gave up.
   */
  signIn?(server: TauriTavernMcpServer): Promise<TauriTavernMcpServer | null>;
  signOut?(registrationId: string): Promise<TauriTavernMcpServer>;
  /** A stdio server's process status (ttmcp's api.mcp.stdio.status); absent where the host has none. */
  stdioStatus?: (registrationId: string) => Promise<McpStdioStatus>;
}

export interface McpManagerInitial {
  servers: TauriTavernMcpServer[];
  storageIssues: McpStorageIssue[];
  /** An error to show from the start (e.g. the recommendation could not be handled). */
  error?: string;
}

export interface McpManagerAppProps {
  initial: McpManagerInitial;
  actions: McpManagerActions;
  /** Shown above the panel (e.g. the connection state); the panel stays usable beneath it. */
  notice?: ReactNode;
  /**
   * Calls fn whenever registrations may have changed outside the panel (an
   * "Always allow" in the approval popup, another tab); returns the
   * unsubscribe function. The panel then lists them again; when the
   * backend says a server's tools changed (it followed the server), that
   * server's discovery is read again too.
   */
  watchChanges?(fn: (change?: ServerChange) => void): () => void;
}

function sortServers(servers: TauriTavernMcpServer[]): TauriTavernMcpServer[] {
  return [...servers].sort(
    (a, b) => a.displayName.localeCompare(b.displayName) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Whether an edit changed how the server is reached (its cached discovery no longer applies). */
export function connectionChanged(before: TauriTavernMcpServer, after: TauriTavernMcpServer): boolean {
  if (before.endpoint !== after.endpoint || before.protocolVersion !== after.protocolVersion) return true;
  const a = Object.entries(before.headers);
  const b = after.headers;
  return a.length !== Object.keys(b).length || a.some(([k, v]) => b[k] !== v);
}

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const { [key]: _dropped, ...rest } = record;
  return rest;
}

/** The entries of record whose key is still a registration. */
function onlyListed<T>(record: Record<string, T>, ids: ReadonlySet<string>): Record<string, T> {
  const kept = Object.entries(record).filter(([id]) => ids.has(id));
  return kept.length === Object.keys(record).length ? record : Object.fromEntries(kept);
}

/**
 * A cached discovery seen through a registration listed again: each tool's
 * permission and the stale permissions are the registration's now (the
 * tools themselves are the discovery's until the next one). d itself when
 * nothing differs, so an unchanged list re-renders nothing.
 */
export function withPermissionsOf(d: McpDiscoveryResult, server: TauriTavernMcpServer): McpDiscoveryResult {
  const perms = server.toolPermissions;
  const names = new Set(d.tools.map((t) => t.nativeName));
  let changed = false;
  const tools = d.tools.map((t) => {
    const permission: McpToolPermission = perms[t.nativeName] ?? 'off';
    if (t.permission === permission) return t;
    changed = true;
    return { ...t, permission };
  });
  const staleTools = Object.keys(perms)
    .filter((n) => !names.has(n))
    .sort()
    .map((nativeName) => ({ nativeName, permission: perms[nativeName]! }));
  if (!changed && sameJson(staleTools, d.staleTools)) return d;
  return { ...d, tools, staleTools };
}

/** Whether two JSON values (registrations, storage issues) are equal. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function StorageIssues(props: { issues: McpStorageIssue[] }) {
  const tr = useTr();
  if (props.issues.length === 0) return null;
  return (
    <section className="tt-mcp-storage-issues" role="status">
      <h4>
        <i className="fa-solid fa-triangle-exclamation" aria-hidden="true" /> {tr('storage_issues')}
      </h4>
      <ul>
        {props.issues.map((issue) => (
          <li key={issue.fileName}>
            <code>{issue.fileName}</code> {issue.message}
          </li>
        ))}
      </ul>
    </section>
  );
}

function AddButton(props: { adding: boolean; onAdd(): void }) {
  const tr = useTr();
  return (
    <button type="button" className="menu_button menu_button_icon" disabled={props.adding} onClick={props.onAdd}>
      <i className={props.adding ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-plus'} aria-hidden="true" />
      <span>{props.adding ? tr('adding') : tr('add_server')}</span>
    </button>
  );
}

function EmptyState(props: { adding: boolean; onAdd(): void }) {
  const tr = useTr();
  return (
    <div className="tt-mcp-empty">
      <i className="fa-solid fa-plug-circle-bolt tt-mcp-empty-icon" aria-hidden="true" />
      <h4>{tr('empty_title')}</h4>
      <p>{tr('empty_body')}</p>
      <AddButton adding={props.adding} onAdd={props.onAdd} />
    </div>
  );
}

function Toolbar(props: { count: number; adding: boolean; testCallOpen: boolean; onAdd(): void; onTestCall(): void }) {
  const tr = useTr();
  return (
    <div className="tt-mcp-toolbar">
      <h4 className="tt-mcp-toolbar-title">{tr('servers_count', { count: props.count })}</h4>
      <div className="tt-mcp-toolbar-actions">
        <button
          type="button"
          className="menu_button menu_button_icon"
          disabled={props.testCallOpen}
          onClick={props.onTestCall}
        >
          <i className="fa-solid fa-vial" aria-hidden="true" />
          <span>{tr('test_call')}</span>
        </button>
        <AddButton adding={props.adding} onAdd={props.onAdd} />
      </div>
    </div>
  );
}

export function McpManagerApp({ initial, actions, notice, watchChanges }: McpManagerAppProps) {
  const { reach: Reach, toolSets: ToolSets } = useContext(SectionsContext);
  const [servers, setServers] = useState(initial.servers);
  const [storageIssues, setStorageIssues] = useState(initial.storageIssues);
  const [panelError, setPanelError] = useState(initial.error);
  const [discoveries, setDiscoveries] = useState<Record<string, McpDiscoveryResult>>({});
  const [statuses, setStatuses] = useState<Record<string, ServerStatus>>({});
  const [expanded, setExpanded] = useState<Record<string, boolean>>({});
  const [busyTools, setBusyTools] = useState<Record<string, ReadonlySet<string>>>({});
  // per server, how often the backend said its resources or prompts changed (the panels read again)
  const [listChanges, setListChanges] = useState<Record<string, number>>({});
  const [adding, setAdding] = useState(false);
  const [testCallOpen, setTestCallOpen] = useState(false);
  // Guards read synchronously, so a second click before React re-renders
  // cannot start the same work twice.
  const busyServers = useRef(new Set<string>());
  const busyToolKeys = useRef(new Set<string>());
  const panelBusy = useRef(new Set<'add' | 'test'>());
  const serversRef = useRef(servers);
  serversRef.current = servers;
  const discoveriesRef = useRef(discoveries);
  discoveriesRef.current = discoveries;
  const statusesRef = useRef(statuses);
  statusesRef.current = statuses;

  const patchStatus = useCallback((id: string, patch: Partial<ServerStatus> | ((s: ServerStatus) => ServerStatus)) => {
    setStatuses((all) => {
      const current = all[id] ?? {};
      const next = typeof patch === 'function' ? patch(current) : { ...current, ...patch };
      return { ...all, [id]: next };
    });
  }, []);

  // Counts the panel's own changes to the registrations, so a re-list that
  // was read before one of them is not shown over it.
  const localChanges = useRef(0);
  const putServer = useCallback((server: TauriTavernMcpServer) => {
    localChanges.current++;
    setServers((all) => (all.some((s) => s.id === server.id) ? all.map((s) => (s.id === server.id ? server : s)) : [...all, server]));
  }, []);

  /**
   * Shows a fresh list: servers, storage issues, and the cached discoveries'
   * permissions. What did not change keeps its identity, so a list that
   * changed nothing re-renders nothing (and the reach is not checked again).
   */
  const applyList = useCallback(
    (list: McpServerList) => {
      const byId = new Map(list.servers.map((s) => [s.id, s]));
      const ids = new Set(byId.keys());
      const before = new Map(serversRef.current.map((s) => [s.id, s]));
      // gone, or reached elsewhere now (edited in another tab): the cached discovery no longer applies
      const moved = [...before.values()]
        .filter((was) => {
          const now = byId.get(was.id);
          return now !== undefined && connectionChanged(was, now);
        })
        .map((s) => s.id);
      setServers((all) => (sameJson(all, list.servers) ? all : list.servers));
      setStorageIssues((all) => (sameJson(all, list.storageIssues) ? all : list.storageIssues));
      setDiscoveries((all) => {
        let changed = false;
        const next: Record<string, McpDiscoveryResult> = {};
        for (const [id, d] of Object.entries(all)) {
          const now = byId.get(id);
          if (!now || moved.includes(id)) {
            changed = true;
            continue;
          }
          next[id] = withPermissionsOf(d, now);
          changed ||= next[id] !== d;
        }
        return changed ? next : all;
      });
      setExpanded((all) => onlyListed(all, ids));
      setStatuses((all) => {
        const kept = onlyListed(all, ids);
        // an error of the old connection (a failed discovery) no longer applies either
        if (!moved.some((id) => kept[id]?.error !== undefined)) return kept;
        const next = { ...kept };
        for (const id of moved) {
          const status = next[id];
          if (status?.error === undefined) continue;
          const { error: _old, ...rest } = status;
          next[id] = rest;
        }
        return next;
      });
    },
    [],
  );

  // One list at a time; a notice while it runs lists once more after it.
  const listing = useRef(false);
  const listAgain = useRef(false);
  const actionsRef = useRef(actions);
  actionsRef.current = actions;
  const relist = useCallback(async () => {
    listAgain.current = true;
    if (listing.current) return;
    listing.current = true;
    try {
      for (let round = 0; round < 3 && listAgain.current; round++) {
        listAgain.current = false;
        const seen = localChanges.current;
        const list = await actionsRef.current.list();
        // read before one of the panel's own changes landed: read again rather than show it over that
        if (seen === localChanges.current) applyList(list);
        else listAgain.current = true;
      }
    } catch {
      // the connection banner says why; the next notice tries again
    } finally {
      listing.current = false;
    }
  }, [applyList]);

  // A server's tools changed (the backend followed its announcement and
  // published the refreshed catalog): read its discovery again, from the
  // backend's memory, so the new tools show (Off) without a click.
  const rediscover = useCallback(
    async (id: string) => {
      if (!discoveriesRef.current[id] || busyServers.current.has(id)) return;
      try {
        const d = await actionsRef.current.discover(id);
        setDiscoveries((all) => (all[id] ? { ...all, [id]: d } : all));
      } catch {
        // the next discovery says why
      }
    },
    [],
  );
  useEffect(
    () =>
      watchChanges?.((change) => {
        void relist();
        if (change?.lists.includes('tools')) void rediscover(change.registrationId);
        if (change && (change.lists.includes('resources') || change.lists.includes('prompts'))) {
          setListChanges((all) => ({ ...all, [change.registrationId]: (all[change.registrationId] ?? 0) + 1 }));
        }
      }),
    [watchChanges, relist, rediscover],
  );

  /** Runs one activity on a server; ignored while another runs. */
  async function withServer(id: string, activity: ServerActivity, work: () => Promise<void>): Promise<void> {
    if (busyServers.current.has(id)) return;
    busyServers.current.add(id);
    // discovery starts afresh; a change keeps a discovery error in view
    patchStatus(id, activity === 'discover' ? { activity, error: undefined } : { activity });
    try {
      await work();
    } catch (err) {
      patchStatus(id, { error: errorMessage(err) });
    } finally {
      busyServers.current.delete(id);
      patchStatus(id, (s) => {
        const { activity: _done, ...rest } = s;
        return rest;
      });
    }
  }

  async function withPanel(kind: 'add' | 'test', setOpen: (open: boolean) => void, work: () => Promise<void>) {
    if (panelBusy.current.has(kind)) return;
    panelBusy.current.add(kind);
    setOpen(true);
    setPanelError(undefined);
    try {
      await work();
    } catch (err) {
      setPanelError(errorMessage(err));
    } finally {
      panelBusy.current.delete(kind);
      setOpen(false);
    }
  }

  const add = () =>
    withPanel('add', setAdding, async () => {
      const created = await actions.addServer();
      if (created) putServer(created);
    });

  // A test call refused for want of sign-in may have ended the sign-in at
  // the backend (a revoked token whose refresh was refused): list again.
  const openTestCall = () =>
    withPanel('test', setTestCallOpen, async () => {
      await actions.openTestCall(serversRef.current);
      void relist();
    });

  function discoverNow(server: TauriTavernMcpServer, mode: 'discover' | 'refresh') {
    return withServer(server.id, 'discover', async () => {
      try {
        const result = await (mode === 'discover' ? actions.discover(server.id) : actions.refresh(server.id));
        // removed or reached elsewhere while it ran (a change listed from another tab): not this server's tools now
        const now = serversRef.current.find((s) => s.id === server.id);
        if (!now || connectionChanged(server, now)) return;
        setDiscoveries((all) => ({ ...all, [server.id]: result }));
      } catch (err) {
        // The server wants a sign-in: show it on the row at once (the list
        // says so from now on too).
        if (isAuthRequired(errorMessage(err))) {
          setServers((all) => all.map((s) => (s.id === server.id ? { ...s, auth: markRequired(s.auth) } : s)));
          void relist(); // the backend may have ended the sign-in (a refused refresh): its state, not ours
        }
        throw err;
      }
    });
  }

  /**
   * Signs in, then discovers again. Runs synchronously up to the API call,
   * so the sign-in window opens inside the user's click.
   */
  async function signIn(id: string) {
    const run = actions.signIn;
    const server = serversRef.current.find((s) => s.id === id);
    if (!run || !server) return;
    const out: { signed?: TauriTavernMcpServer } = {};
    await withServer(id, 'sign-in', async () => {
      const signed = await run(server);
      if (!signed) return;
      out.signed = signed;
      putServer(signed);
      patchStatus(id, { error: undefined });
    });
    if (out.signed?.state === 'active') await discoverNow(out.signed, 'refresh');
  }

  function setToolBusy(serverId: string, nativeName: string, busy: boolean) {
    setBusyTools((all) => {
      const next = new Set(all[serverId] ?? []);
      if (busy) next.add(nativeName);
      else next.delete(nativeName);
      return { ...all, [serverId]: next };
    });
  }

  /** Runs one change of a tool's settings; ignored while another runs for the same tool. */
  async function withTool(server: TauriTavernMcpServer, nativeName: string, work: () => Promise<void>) {
    const key = `${server.id}\u0000${nativeName}`;
    if (busyToolKeys.current.has(key)) return;
    busyToolKeys.current.add(key);
    setToolBusy(server.id, nativeName, true);
    try {
      await work();
    } catch (err) {
      patchStatus(server.id, { error: errorMessage(err) });
    } finally {
      busyToolKeys.current.delete(key);
      setToolBusy(server.id, nativeName, false);
    }
  }

  // Rows opened on an active, undiscovered server: each discovers as soon
  // as the row is free. Opening the row starts it at once; while a change
  // is still running (the list can show a server active before its
  // activation's own answer is in) it starts when that change ends, so the
  // row is not left waiting for a click. An error there, a pause or a
  // closed row drops the wish.
  const discoverWhenFree = useRef(new Set<string>());
  useEffect(() => {
    for (const id of [...discoverWhenFree.current]) {
      const s = servers.find((x) => x.id === id);
      const status = statuses[id] ?? {};
      if (status.activity !== undefined || busyServers.current.has(id)) continue;
      discoverWhenFree.current.delete(id);
      if (s && expanded[id] && s.state === 'active' && !discoveries[id] && status.error === undefined) {
        void discoverNow(s, 'discover');
      }
    }
    // discoverNow is this render's; what decides is in the list below
  }, [servers, statuses, expanded, discoveries]);

  function handlersFor(server: TauriTavernMcpServer): ServerRowHandlers {
    const id = server.id;
    const current = () => serversRef.current.find((s) => s.id === id) ?? server;
    return {
      toggleState: () =>
        void withServer(id, 'mutate', async () => {
          const s = current();
          if (s.state === 'active') {
            putServer(await actions.setState({ registrationId: id, state: 'paused' }));
            return;
          }
          if (!(await actions.confirmActivate(s))) return;
          putServer(await actions.setState({ registrationId: id, state: 'active' }));
        }),
      edit: () =>
        void withServer(id, 'mutate', async () => {
          const before = current();
          const updated = await actions.editServer(before);
          if (!updated) return;
          putServer(updated);
          if (connectionChanged(before, updated)) {
            setDiscoveries((all) => withoutKey(all, id));
            patchStatus(id, { error: undefined });
          }
        }),
      remove: () =>
        void withServer(id, 'mutate', async () => {
          const s = current();
          if (!(await actions.confirmRemove(s))) return;
          await actions.remove(id);
          localChanges.current++;
          setServers((all) => all.filter((x) => x.id !== id));
          setDiscoveries((all) => withoutKey(all, id));
          setExpanded((all) => withoutKey(all, id));
          setStatuses((all) => withoutKey(all, id));
        }),
      toggleExpand: () => {
        const open = !expanded[id];
        setExpanded((all) => ({ ...all, [id]: open }));
        const s = current();
        const status = statusesRef.current[id] ?? {};
        if (open && s.state === 'active' && !discoveriesRef.current[id] && status.error === undefined) {
          if (status.activity === undefined) void discoverNow(s, 'discover');
          else discoverWhenFree.current.add(id);
        } else {
          discoverWhenFree.current.delete(id);
        }
      },
      ...(actions.signIn && actions.signOut
        ? {
            signIn: () => void signIn(id),
            signOut: () =>
              void withServer(id, 'mutate', async () => {
                putServer(await actions.signOut!(id));
              }),
          }
        : {}),
      serverChanged: (s: TauriTavernMcpServer) => putServer(s),
      discover: () => void discoverNow(current(), 'discover'),
      refresh: () => void discoverNow(current(), 'refresh'),
      setPermission: (nativeName: string, permission: McpToolPermission) =>
        void withTool(current(), nativeName, async () => {
          const updated = await actions.setPermission({ registrationId: id, nativeName, permission });
          putServer(updated);
          setDiscoveries((all) => {
            const d = all[id];
            if (!d) return all;
            const tools = d.tools.map((t) => (t.nativeName === nativeName ? { ...t, permission } : t));
            return { ...all, [id]: { ...d, tools } };
          });
        }),
      setStaleOff: (nativeName: string) =>
        void withTool(current(), nativeName, async () => {
          putServer(await actions.setPermission({ registrationId: id, nativeName, permission: 'off' }));
          setDiscoveries((all) => {
            const d = all[id];
            if (!d) return all;
            return { ...all, [id]: { ...d, staleTools: d.staleTools.filter((t) => t.nativeName !== nativeName) } };
          });
        }),
      editDescription: (tool: McpDiscoveredTool) =>
        void withTool(current(), tool.nativeName, () =>
          actions.openToolDialog({
            tool,
            override: current().toolDescriptionOverrides[tool.nativeName],
            save: async (override) => {
              putServer(await actions.setDescriptionOverride({ registrationId: id, nativeName: tool.nativeName, override }));
            },
          }),
        ),
    };
  }

  const none: ReadonlySet<string> = new Set();
  return (
    <div className="tt-mcp-manager">
      {notice}
      {Reach && <Reach version={servers} />}
      <StorageIssues issues={storageIssues} />
      {panelError !== undefined && (
        <p className="tt-mcp-error tt-mcp-panel-error" role="alert">
          {panelError}
        </p>
      )}
      {servers.length === 0 ? (
        <EmptyState adding={adding} onAdd={() => void add()} />
      ) : (
        <>
          <Toolbar
            count={servers.length}
            adding={adding}
            testCallOpen={testCallOpen}
            onAdd={() => void add()}
            onTestCall={() => void openTestCall()}
          />
          <ul className="tt-mcp-servers">
            {sortServers(servers).map((server) => (
              <ServerRow
                key={server.id}
                server={server}
                status={statuses[server.id] ?? {}}
                discovery={discoveries[server.id]}
                expanded={expanded[server.id] === true}
                busyTools={busyTools[server.id] ?? none}
                on={handlersFor(server)}
                stdioStatus={actions.stdioStatus}
                listChanges={String(listChanges[server.id] ?? 0)}
              />
            ))}
          </ul>
          {ToolSets && <ToolSets />}
        </>
      )}
    </div>
  );
}
