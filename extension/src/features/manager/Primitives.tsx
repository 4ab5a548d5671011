// An expanded server's resources and prompts (issue 18 item 4): each a tab
// of its console, shown only when the server advertises the primitive.
// Each panel has the per-server switch (ttmcp's capability allowlist: a
// primitive turned off is refused by the backend, and shows as off here,
// not as an error), the list read when the panel opens (the backend's
// cached list; Refresh asks the server), and Open, which the host turns
// into the resource or prompt dialog. Read through PrimitivesContext, which
// the boot code provides when the host API has resources and prompts;
// without it (TauriTavern) the console shows only tools.

import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import type {
  McpListDiagnostic,
  McpListResult,
  McpPrompt,
  McpPromptList,
  McpResource,
  McpResourceList,
  McpResourceTemplate,
  McpResourceTemplateList,
  McpServerCapabilities,
  SetMcpServerCapabilitiesInput,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import { linkTarget, type ResourceTarget } from '../../ui/resource-target';
import { ResourceChips } from '../../ui/ContentView';
import { errorCode, errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';

export interface PrimitivesDeps {
  /** What the server advertised and what the user allows (connects an Active server to learn it). */
  capabilities(registrationId: string): Promise<McpServerCapabilities>;
  setCapabilities(input: SetMcpServerCapabilitiesInput): Promise<TauriTavernMcpServer>;
  resources(registrationId: string, refresh: boolean): Promise<McpResourceList>;
  templates(registrationId: string, refresh: boolean): Promise<McpResourceTemplateList>;
  prompts(registrationId: string, refresh: boolean): Promise<McpPromptList>;
  /** Opens a resource or a template; completions: the server offers argument completion. */
  openResource(server: TauriTavernMcpServer, target: ResourceTarget, completions: boolean): Promise<void>;
  openPrompt(server: TauriTavernMcpServer, prompt: McpPrompt, completions: boolean): Promise<void>;
}

export const PrimitivesContext = createContext<PrimitivesDeps | undefined>(undefined);

export type Primitive = 'resources' | 'prompts';

/** The refusal of a primitive the user turned off (the panel shows it as off). */
export function isDisabled(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'mcp.resources_disabled' || code === 'mcp.prompts_disabled';
}

/** The list's notes: an entry left out, with why. */
export function ListNotes(props: { diagnostics: McpListDiagnostic[] }) {
  const tr = useTr();
  if (props.diagnostics.length === 0) return null;
  return (
    <details className="tt-mcp-notes">
      <summary>
        <i className="fa-solid fa-circle-info" aria-hidden="true" /> {tr('list_notes', { count: props.diagnostics.length })}
      </summary>
      <ul>
        {props.diagnostics.map((d, i) => (
          <li key={i}>
            <code>{d.item ?? d.code}</code> <span>{d.message}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}

/**
 * The per-server switch of a primitive: a toggle button (aria-pressed), not
 * role="switch" — SillyTavern's a11y.js sets role="button" on every
 * .menu_button, and aria-checked means nothing on a button.
 */
export function CapabilitySwitch(props: { primitive: Primitive; on: boolean; busy: boolean; onToggle(): void }) {
  const tr = useTr();
  const label = tr(props.primitive === 'resources' ? 'use_resources' : 'use_prompts');
  return (
    <button
      type="button"
      aria-pressed={props.on}
      aria-label={label}
      className={`menu_button tt-mcp-state tt-mcp-switch tt-mcp-state-${props.on ? 'active' : 'paused'}`}
      disabled={props.busy}
      onClick={props.onToggle}
    >
      <i className={props.on ? 'fa-solid fa-toggle-on' : 'fa-solid fa-toggle-off'} aria-hidden="true" />
      <span>{label}</span>
      <span className="tt-mcp-switch-state">{props.on ? tr('switch_on') : tr('switch_off')}</span>
    </button>
  );
}

interface Loaded<T> {
  list?: T;
  error?: string;
  loading: boolean;
}

/** Reads a list when the panel opens and when key changes; reload(true) asks the server. */
function useList<T>(read: ((refresh: boolean) => Promise<T>) | undefined, key: string): Loaded<T> & { reload(refresh: boolean): void } {
  const [state, setState] = useState<Loaded<T>>({ loading: read !== undefined });
  const seq = useRef(0);
  const readRef = useRef(read);
  readRef.current = read;
  const reload = useCallback((refresh: boolean) => {
    const r = readRef.current;
    if (!r) return;
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    r(refresh).then(
      (list) => mine === seq.current && setState({ list, loading: false }),
      (err: unknown) => mine === seq.current && setState((s) => ({ ...s, error: errorMessage(err), loading: false })),
    );
  }, []);
  useEffect(() => {
    if (read) reload(false);
    else seq.current++;
    // read changes identity on every render; key says when to read again
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, read === undefined, reload]);
  useEffect(
    () => () => {
      seq.current++;
    },
    [],
  );
  return { ...state, reload };
}

/** "Listed 10:42 · from memory"; with an expiry for a 2026 server's list. */
function ListedLine(props: { list: McpListResult<unknown> }) {
  const tr = useTr();
  const at = new Date(props.list.listedAt);
  const when = Number.isNaN(at.getTime()) ? props.list.listedAt : at.toLocaleTimeString();
  return (
    <span className="tt-mcp-note tt-mcp-listed">
      <time dateTime={props.list.listedAt}>{tr(props.list.fromCache ? 'listed_at_cached' : 'listed_at', { time: when })}</time>
    </span>
  );
}

/** The panel's head: the switch, the count, Refresh. */
function PanelHead(props: {
  primitive: Primitive;
  on: boolean;
  switchBusy: boolean;
  canRefresh: boolean;
  onToggle(): void;
  onRefresh(): void;
  children?: ReactNode;
}) {
  const tr = useTr();
  const label = tr(props.primitive === 'resources' ? 'refresh_resources' : 'refresh_prompts');
  return (
    <div className="tt-mcp-primitive-head">
      <CapabilitySwitch primitive={props.primitive} on={props.on} busy={props.switchBusy} onToggle={props.onToggle} />
      {props.children}
      <button
        type="button"
        className="menu_button tt-mcp-icon-button"
        title={label}
        aria-label={label}
        disabled={!props.canRefresh}
        onClick={props.onRefresh}
      >
        <i className="fa-solid fa-arrows-rotate" aria-hidden="true" />
      </button>
    </div>
  );
}

export interface PrimitivePanelProps {
  server: TauriTavernMcpServer;
  caps: McpServerCapabilities;
  /** Changes when the server said its list changed (read again). */
  changeKey: string;
  switchBusy: boolean;
  onToggle(primitive: Primitive): void;
}

/** Why a panel shows no list: paused, turned off, the allowlist damaged. */
function Blocked(props: { server: TauriTavernMcpServer; caps: McpServerCapabilities; primitive: Primitive }) {
  const tr = useTr();
  const { caps, primitive } = props;
  if (caps.issue !== undefined) {
    return (
      <p className="tt-mcp-warning" role="status">
        {tr('capabilities_issue', { message: caps.issue })}
      </p>
    );
  }
  if (!caps.allowed[primitive]) return <p className="tt-mcp-note">{tr(primitive === 'resources' ? 'resources_off' : 'prompts_off')}</p>;
  if (props.server.state === 'paused') return <p className="tt-mcp-note">{tr(primitive === 'resources' ? 'resources_paused' : 'prompts_paused')}</p>;
  return null;
}

function usable(p: PrimitivePanelProps, primitive: Primitive): boolean {
  return p.server.state === 'active' && p.caps.allowed[primitive] && p.caps.issue === undefined;
}

function ListError(props: { error: string | undefined; onRetry(): void }) {
  const tr = useTr();
  if (props.error === undefined) return null;
  return (
    <div className="tt-mcp-inline-error">
      <p className="tt-mcp-error" role="alert">
        {props.error}
      </p>
      <button type="button" className="menu_button" onClick={props.onRetry}>
        {tr('retry')}
      </button>
    </div>
  );
}

function ResourceItem(props: { resource: McpResource; onOpen(): void }) {
  const tr = useTr();
  const r = props.resource;
  const name = r.title ?? r.name;
  return (
    <li className="tt-mcp-resource">
      <div className="tt-mcp-resource-head">
        <span className="tt-mcp-tool-title">{name}</span>
        {r.title !== undefined && r.title !== r.name && <code className="tt-mcp-native-name">{r.name}</code>}
        <button type="button" className="menu_button" aria-label={tr('open_resource', { name })} onClick={props.onOpen}>
          {tr('open')}
        </button>
      </div>
      <ResourceChips mimeType={r.mimeType} size={r.size} />
      <code className="tt-mcp-uri">{r.uri}</code>
      {r.description !== undefined && <p className="tt-mcp-description">{r.description}</p>}
    </li>
  );
}

function TemplateItem(props: { template: McpResourceTemplate; onOpen(): void }) {
  const tr = useTr();
  const t = props.template;
  const name = t.title ?? t.name;
  return (
    <li className="tt-mcp-resource">
      <div className="tt-mcp-resource-head">
        <span className="tt-mcp-tool-title">{name}</span>
        <button type="button" className="menu_button" aria-label={tr('open_template', { name })} onClick={props.onOpen}>
          {tr('open')}
        </button>
      </div>
      <span className="tt-mcp-chips">
        {t.mimeType !== undefined && <span className="tt-mcp-chip">{t.mimeType}</span>}
        <span className="tt-mcp-chip">{tr('variable_count', { count: t.variables.length })}</span>
      </span>
      <code className="tt-mcp-uri">{t.uriTemplate}</code>
      {t.description !== undefined && <p className="tt-mcp-description">{t.description}</p>}
    </li>
  );
}

export function ResourcesPanel(props: PrimitivePanelProps) {
  const deps = useContext(PrimitivesContext);
  const tr = useTr();
  const { server, caps } = props;
  const on = usable(props, 'resources');
  const key = `${server.id}|${on}|${props.changeKey}`;
  const resources = useList(on && deps ? (refresh) => deps.resources(server.id, refresh) : undefined, key);
  const templates = useList(on && deps ? (refresh) => deps.templates(server.id, refresh) : undefined, key);
  if (!deps) return null;
  const completions = caps.advertised?.completions === true;
  const refresh = () => {
    resources.reload(true);
    templates.reload(true);
  };
  const loading = resources.loading || templates.loading;
  const rl = resources.list;
  const tl = templates.list;
  return (
    <div className="tt-mcp-primitive">
      <PanelHead
        primitive="resources"
        on={caps.allowed.resources}
        switchBusy={props.switchBusy}
        canRefresh={on && !loading}
        onToggle={() => props.onToggle('resources')}
        onRefresh={refresh}
      >
        {on && rl && <span className="tt-mcp-count">{tr('resource_count', { count: rl.items.length })}</span>}
        {on && rl && <ListedLine list={rl} />}
      </PanelHead>
      <Blocked server={server} caps={caps} primitive="resources" />
      {on && (
        <>
          {loading && !rl && (
            <p className="tt-mcp-note" role="status">
              <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('listing_resources')}
            </p>
          )}
          <ListError error={resources.error ?? templates.error} onRetry={refresh} />
          {rl && (
            <>
              <ListNotes diagnostics={rl.diagnostics} />
              {rl.items.length === 0 ? (
                <p className="tt-mcp-note">{tr('no_resources')}</p>
              ) : (
                <ul className="tt-mcp-resources" aria-label={tr('resources_title')}>
                  {rl.items.map((r) => (
                    <ResourceItem
                      key={r.uri}
                      resource={r}
                      onOpen={() =>
                        void deps.openResource(server, linkTarget(r), completions)
                      }
                    />
                  ))}
                </ul>
              )}
            </>
          )}
          {tl && (tl.items.length > 0 || tl.diagnostics.length > 0) && (
            <section className="tt-mcp-templates" aria-label={tr('templates_title')}>
              <h5>{tr('template_count', { count: tl.items.length })}</h5>
              <ListNotes diagnostics={tl.diagnostics} />
              <ul className="tt-mcp-resources">
                {tl.items.map((t) => (
                  <TemplateItem key={t.uriTemplate} template={t} onOpen={() => void deps.openResource(server, { kind: 'template', template: t }, completions)} />
                ))}
              </ul>
            </section>
          )}
        </>
      )}
    </div>
  );
}

function PromptItem(props: { prompt: McpPrompt; onOpen(): void }) {
  const tr = useTr();
  const p = props.prompt;
  const name = p.title ?? p.name;
  return (
    <li className="tt-mcp-resource">
      <div className="tt-mcp-resource-head">
        <span className="tt-mcp-tool-title">{name}</span>
        {p.title !== undefined && p.title !== p.name && <code className="tt-mcp-native-name">{p.name}</code>}
        <button type="button" className="menu_button" aria-label={tr('use_prompt', { name })} onClick={props.onOpen}>
          {tr('use')}
        </button>
      </div>
      {p.description !== undefined && <p className="tt-mcp-description">{p.description}</p>}
      {p.arguments.length > 0 && (
        <p className="tt-mcp-note tt-mcp-args">
          {tr('arguments')}{' '}
          {p.arguments.map((a, i) => (
            <span key={a.name}>
              {i > 0 && ', '}
              <code>{a.name}</code>
              {a.required && <span className="tt-mcp-required"> *</span>}
            </span>
          ))}
        </p>
      )}
    </li>
  );
}

export function PromptsPanel(props: PrimitivePanelProps) {
  const deps = useContext(PrimitivesContext);
  const tr = useTr();
  const { server, caps } = props;
  const on = usable(props, 'prompts');
  const prompts = useList(on && deps ? (refresh) => deps.prompts(server.id, refresh) : undefined, `${server.id}|${on}|${props.changeKey}`);
  if (!deps) return null;
  const completions = caps.advertised?.completions === true;
  const pl = prompts.list;
  return (
    <div className="tt-mcp-primitive">
      <PanelHead
        primitive="prompts"
        on={caps.allowed.prompts}
        switchBusy={props.switchBusy}
        canRefresh={on && !prompts.loading}
        onToggle={() => props.onToggle('prompts')}
        onRefresh={() => prompts.reload(true)}
      >
        {on && pl && <span className="tt-mcp-count">{tr('prompt_count', { count: pl.items.length })}</span>}
        {on && pl && <ListedLine list={pl} />}
      </PanelHead>
      <Blocked server={server} caps={caps} primitive="prompts" />
      {on && (
        <>
          {prompts.loading && !pl && (
            <p className="tt-mcp-note" role="status">
              <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('listing_prompts')}
            </p>
          )}
          <ListError error={prompts.error} onRetry={() => prompts.reload(true)} />
          {pl && (
            <>
              <ListNotes diagnostics={pl.diagnostics} />
              {pl.items.length === 0 ? (
                <p className="tt-mcp-note">{tr('no_prompts')}</p>
              ) : (
                <ul className="tt-mcp-resources" aria-label={tr('prompts_title')}>
                  {pl.items.map((p) => (
                    <PromptItem key={p.name} prompt={p} onOpen={() => void deps.openPrompt(server, p, completions)} />
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
    </div>
  );
}

/** The tabs a server's console shows. */
export type ConsoleTab = 'tools' | 'resources' | 'prompts';

/**
 * Which tabs: tools unless the server is known not to offer them (and no
 * tool is known), resources and prompts only when it advertised them.
 */
export function visibleTabs(caps: McpServerCapabilities | undefined, knownTools: boolean): ConsoleTab[] {
  const adv = caps?.advertised;
  const tabs: ConsoleTab[] = [];
  if (!adv || adv.tools || knownTools) tabs.push('tools');
  if (adv?.resources) tabs.push('resources');
  if (adv?.prompts) tabs.push('prompts');
  return tabs;
}

/**
 * A server's capabilities as the console shows them: the list's, then what
 * the backend answers when asked (once per expansion, connection or
 * discovery), then what a switch stored.
 */
export function useCapabilities(
  server: TauriTavernMcpServer,
  refreshKey: string,
): {
  caps: McpServerCapabilities | undefined;
  busy: boolean;
  /** The backend is still learning what the server advertises (a stdio process starting, a first connection). */
  checking: boolean;
  toggle(p: Primitive, onServer: (s: TauriTavernMcpServer) => void): void;
  error?: string;
} {
  const deps = useContext(PrimitivesContext);
  const [loaded, setLoaded] = useState<McpServerCapabilities>();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const listed = server.capabilities;
  useEffect(() => {
    if (!deps || server.state !== 'active') return;
    let live = true;
    setAsking(true);
    deps
      .capabilities(server.id)
      .then(
        (c) => live && setLoaded(c),
        () => live && setLoaded(undefined), // the list's view stays; a discovery says why a server cannot be reached
      )
      .finally(() => live && setAsking(false));
    return () => {
      live = false;
    };
  }, [deps, server.id, server.state, refreshKey]);
  // the list moves on (another tab, a switch): it is the newer view of the allowlist
  const listedKey = JSON.stringify(listed ?? null);
  useEffect(() => {
    if (listed) setLoaded((l) => (l ? newer(l, listed) : l));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [listedKey]);
  const caps = loaded ?? listed;
  const toggle = (p: Primitive, onServer: (s: TauriTavernMcpServer) => void) => {
    if (!deps || !caps || busy) return;
    setBusy(true);
    setError(undefined);
    deps
      .setCapabilities({ registrationId: server.id, [p]: !caps.allowed[p] })
      .then(
        (s) => {
          onServer(s);
          setLoaded((l) => {
            const base = l ?? caps;
            return s.capabilities ? newer(base, s.capabilities) : { ...base, allowed: { ...base.allowed, [p]: !base.allowed[p] } };
          });
        },
        (err: unknown) => setError(errorMessage(err)),
      )
      .finally(() => setBusy(false));
  };
  const checking = deps !== undefined && asking && caps?.advertised === undefined;
  return { caps: deps ? caps : undefined, busy, checking, toggle, ...(error !== undefined ? { error } : {}) };
}

/** next's allowlist and issue, with what was known of the advertised set when next does not say. */
function newer(before: McpServerCapabilities, next: McpServerCapabilities): McpServerCapabilities {
  const advertised = next.advertised ?? before.advertised;
  return { ...next, ...(advertised ? { advertised } : {}) };
}
