// The Manager's parts about the model: whether the MCP tools reach it right
// now (and if not, why), and each server's recent calls from ttmcp's audit
// log. They read what they need through ToolsContext, which the boot code
// provides; without it (tests of other parts, TauriTavern) they render
// nothing.

import { createContext, useCallback, useContext, useEffect, useId, useRef, useState } from 'react';
import type { McpAuditEntry } from '../../../../jsapi/tauritavern-mcp';
import type { TextKey } from '../../base/texts';
import { askedItem } from '../../ui/Asked';
import { ProgressSummary } from '../../ui/CallProgress';
import { errorMessage } from '../../base/errors';
import { MAX_PINS } from '../../base/protocol';
import { PinPicker, type Pinnable } from '../../ui/PinPicker';
import { useTr } from '../../base/tr';
import type { ToolReach } from './reach';
import type { SearchSettings } from './search';
import type { McpToolMode } from '../../../../jsapi/tauritavern-mcp';

export interface ToolsPanelDeps {
  reach(): Promise<ToolReach>;
  /** Calls fn when the answer may have changed (SillyTavern's settings, the backend connection). */
  onChange(fn: () => void): () => void;
  /** The newest audit entries of a registration (api.mcp.audit.list); undefined without the audit API. */
  recentCalls?(registrationId: string, limit: number): Promise<McpAuditEntry[]>;
  /** Opens a kept result (a model call's, too long for its prompt) for reading; undefined without the results API. */
  openResult?(resultId: string): Promise<void>;
  /**
   * The search mode of chats without a tool set (issue 31): read and saved in
   * the extension's settings; tools() lists what may be pinned (the tools
   * offered without a set), undefined: no pins.
   */
  defaultSearch?: { read(): SearchSettings; write(settings: SearchSettings): void; tools?(): Promise<Pinnable[]> };
}

export const ToolsContext = createContext<ToolsPanelDeps | undefined>(undefined);

const RECENT_LIMIT = 10;

/**
 * The share of the model's context above which the reach line warns that
 * the offered schemas crowd the chat out (SillyTavern trims history to fit).
 */
const HEAVY_SHARE = 0.25;

/** Which tool set the reach is for, and the limit's effect, in words (empty: nothing to say). */
function reachDetails(reach: ToolReach, tr: ReturnType<typeof useTr>): string[] {
  const out: string[] = [];
  if (reach.kind !== 'ready' && reach.kind !== 'set_offers_nothing') return out;
  if (reach.set) out.push(tr(`reach_set_${reach.set.level}` as TextKey, { name: reach.set.name }));
  else out.push(tr('reach_no_set'));
  if (reach.missing.length > 0) out.push(tr('reach_set_missing'));
  if (reach.kind === 'ready') {
    out.push(tr('reach_request', { count: reach.request, tokens: reach.tokens.toLocaleString() }));
    // all tools: schemas past a quarter of a known context crowd the chat out of the request
    if (!reach.search && reach.context !== undefined && reach.context > 0 && reach.tokens > reach.context * HEAVY_SHARE) {
      // automatic, under its budget: the budget is what to change
      out.push(tr(reach.mode === 'automatic' ? 'reach_context_heavy_automatic' : 'reach_context_heavy', { percent: Math.round((reach.tokens * 100) / reach.context), context: reach.context.toLocaleString() }));
    }
    if (reach.mode === 'automatic') {
      const budget =
        reach.context === undefined
          ? tr('reach_context_unknown')
          : tr('reach_context_tokens', { tokens: Math.floor((reach.context * reach.contextPercent) / 100).toLocaleString() });
      out.push(tr('reach_automatic', { maxTools: reach.maxTools, percent: reach.contextPercent, budget }));
    }
  }
  if (reach.kind === 'ready' && reach.leftOut > 0) {
    // with a set its order decides; without one, the listing's (server name, then tool)
    out.push(tr(reach.set ? 'reach_limit' : 'reach_limit_no_set', { limit: reach.limit ?? 0, local: reach.local, leftOut: reach.leftOut, total: reach.total }));
  }
  return out;
}

function reachText(reach: ToolReach, tr: ReturnType<typeof useTr>): string {
  switch (reach.kind) {
    case 'ready':
      return tr(reach.search ? 'reach_ready_search' : 'reach_ready', { tools: tr('tool_count', { count: reach.tools }), servers: tr('server_count', { count: reach.servers }) });
    case 'set_offers_nothing':
      return tr('reach_set_offers_nothing');
    case 'not_chat_completion':
      return tr('reach_not_chat_completion', { api: reach.api });
    case 'source_without_tools':
      return tr('reach_source_without_tools', { source: reach.source });
    case 'post_processing_without_tools':
      return tr('reach_post_processing_without_tools', { mode: reach.mode });
    case 'nothing_allowed':
      return tr('reach_nothing_allowed');
    case 'backend_down':
      return tr('reach_backend_down');
    default:
      return tr(`reach_${reach.kind}` as TextKey);
  }
}

/** "Tools for the model": one line saying whether they reach it, re-checked as things change. */
export function ToolReachSection(props: { version?: unknown }) {
  const deps = useContext(ToolsContext);
  const tr = useTr();
  const [reach, setReach] = useState<ToolReach>();
  const [checking, setChecking] = useState(false);
  // Checks overlap (a backend event, a settings change, a click); only the
  // newest one's answer is shown, and the button stays busy until it is in:
  // an older check read SillyTavern's settings before the change that started
  // the newer one, so its answer, coming in last, would undo that change.
  const latest = useRef(0);

  const check = useCallback(async () => {
    if (!deps) return;
    const n = ++latest.current;
    setChecking(true);
    let next: ToolReach;
    try {
      next = await deps.reach();
    } catch (err) {
      next = { kind: 'backend_down', message: errorMessage(err) };
    }
    if (n !== latest.current) return;
    setReach(next);
    setChecking(false);
  }, [deps]);

  useEffect(() => {
    void check();
  }, [check, props.version]);
  useEffect(() => deps?.onChange(() => void check()), [deps, check]);

  if (!deps || !reach) return null;
  const ok = (reach.kind === 'ready' && reach.leftOut === 0) || reach.kind === 'host_offers_tools';
  return (
    <>
      <section className={`tt-mcp-reach tt-mcp-reach-${ok ? 'ok' : 'off'}`} aria-label={tr('tools_title')}>
        <i className={ok ? 'fa-solid fa-circle-check' : 'fa-solid fa-circle-exclamation'} aria-hidden="true" />
        <p role="status" data-reach={reach.kind}>
          {reachText(reach, tr)}
          {reachDetails(reach, tr).map((d) => (
            <span key={d}> {d}</span>
          ))}
          {(reach.kind === 'ready' || reach.kind === 'set_offers_nothing') && reach.diagnostics > 0 && <> {tr('reach_diagnostics', { count: reach.diagnostics })}</>}
          {reach.kind === 'backend_down' && reach.message !== '' && <> {tr('error_details', { message: reach.message })}</>}
        </p>
        <button type="button" className="menu_button" disabled={checking} onClick={() => void check()}>
          {tr('check_again')}
        </button>
      </section>
      {deps.defaultSearch && <DefaultSearch store={deps.defaultSearch} changed={() => void check()} />}
    </>
  );
}

function BudgetField(props: { label: string; value: string; onChange: (v: string) => void; onDone: () => void }) {
  return (
    <label>
      <span>{props.label}</span>
      <input className="text_pole" inputMode="numeric" value={props.value} onChange={(e) => props.onChange(e.target.value)} onBlur={props.onDone} />
    </label>
  );
}

/** The search mode of chats without a tool set: a mode, automatic's budget and the pinned tools, saved as they change. */
function DefaultSearch(props: { store: NonNullable<ToolsPanelDeps['defaultSearch']>; changed: () => void }) {
  const tr = useTr();
  const id = useId();
  const [settings, setSettings] = useState(() => props.store.read());
  const [maxTools, setMaxTools] = useState(String(settings.maxTools));
  const [percent, setPercent] = useState(String(settings.contextPercent));
  const save = (next: SearchSettings) => {
    setSettings(next);
    props.store.write(next);
    props.changed();
  };
  const budget = (text: string, key: 'maxTools' | 'contextPercent', max: number) => {
    const n = Number(text.trim());
    if (Number.isInteger(n) && n >= 1 && n <= max && n !== settings[key]) save({ ...settings, [key]: n });
  };
  return (
    <details className="tt-mcp-default-search">
      <summary>{tr('default_search_title')}</summary>
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-mode`}>{tr('toolset_mode')}</label>
        <select id={`${id}-mode`} className="text_pole" value={settings.mode} onChange={(e) => save({ ...settings, mode: e.target.value as McpToolMode })}>
          <option value="all">{tr('toolset_mode_all')}</option>
          <option value="search">{tr('toolset_mode_search')}</option>
          <option value="automatic">{tr('toolset_mode_automatic')}</option>
        </select>
      </div>
      {settings.mode === 'automatic' && (
        <div className="tt-mcp-field tt-mcp-toolset-budget">
          <BudgetField label={tr('toolset_budget_tools')} value={maxTools} onChange={setMaxTools} onDone={() => budget(maxTools, 'maxTools', 2048)} />
          <BudgetField label={tr('toolset_budget_percent')} value={percent} onChange={setPercent} onDone={() => budget(percent, 'contextPercent', 100)} />
        </div>
      )}
      <small className="tt-mcp-hint">{tr('toolset_mode_hint')}</small>
      {settings.mode !== 'all' && props.store.tools && (
        <DefaultPins tools={props.store.tools} pinned={settings.pinned} onChange={(pinned) => save({ ...settings, pinned })} />
      )}
      <small className="tt-mcp-hint">{tr('default_search_hint')}</small>
    </details>
  );
}

/**
 * The default's pins: read from the tools offered when the section opens. A
 * pinned tool not offered now (set to Off, its server paused) is listed
 * first by its ToolId, so it can be unpinned; it is kept otherwise.
 */
function DefaultPins(props: { tools: () => Promise<Pinnable[]>; pinned: string[]; onChange(pinned: string[]): void }) {
  const tr = useTr();
  const [tools, setTools] = useState<Pinnable[]>();
  const [error, setError] = useState<string>();
  const { tools: read } = props;
  useEffect(() => {
    let live = true;
    read().then(
      (t) => live && setTools(t),
      (e: unknown) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [read]);
  const offered = new Set(tools?.map((t) => t.id));
  const gone = props.pinned.filter((id) => !offered.has(id)).map((id) => ({ id, label: id }));
  return (
    <details className="tt-mcp-default-pins" open={props.pinned.length > 0}>
      <summary>{tr('default_search_pins', { count: props.pinned.length })}</summary>
      <small className="tt-mcp-hint">{tr('default_search_pins_hint')}</small>
      {error !== undefined && <p className="tt-mcp-error">{tr('default_search_pins_failed', { message: error })}</p>}
      {tools === undefined && error === undefined && <p className="tt-mcp-note">{tr('default_search_pins_loading')}</p>}
      {tools !== undefined && <PinPicker tools={[...gone, ...tools]} pinned={props.pinned} max={MAX_PINS} onChange={props.onChange} />}
    </details>
  );
}

/**
 * How a call ended, in a word: a known response says what kind it was (a
 * tool's error result, the server's JSON-RPC error, or an answer ttmcp
 * cannot use — e.g. a 2026 input_required left unanswered when the user
 * stopped), since one "error" label for all three hid which side failed.
 */
function outcomeKey(e: McpAuditEntry): TextKey {
  if (e.outcome === 'known_response') {
    const answered = (e.responseKind === 'tool_result' && !e.isError) || e.responseKind === 'resource_contents' || e.responseKind === 'prompt_messages';
    if (answered) return 'call_answered';
    if (e.responseKind === 'server_error') return 'call_server_error';
    if (e.responseKind === 'unsupported_response') return 'call_unsupported';
    return 'call_failed';
  }
  return `call_${e.outcome}` as TextKey;
}

/** What the entry asked for: the tool, the URI read, or the prompt got. */
function subjectOf(e: McpAuditEntry): string {
  if (e.kind === 'resource_read') return e.uri ?? '';
  if (e.kind === 'prompt_get') return e.promptName ?? '';
  return e.nativeName;
}

/** Who made a call, as its row names it (every source has one: an App's calls were unnamed before). */
const SOURCE_TEXT: Record<McpAuditEntry['source'], TextKey> = { test: 'source_test', model: 'source_model', page: 'source_page', app: 'source_app' };

function CallRow(props: { entry: McpAuditEntry; openResult: ((id: string) => Promise<void>) | undefined }) {
  const tr = useTr();
  const e = props.entry;
  const { openResult } = props;
  const when = new Date(e.time);
  return (
    <li className={`tt-mcp-call tt-mcp-call-${e.outcome}`}>
      <time dateTime={e.time} title={e.time}>
        {Number.isNaN(when.getTime()) ? e.time : when.toLocaleString()}
      </time>
      <code className="tt-mcp-native-name">{subjectOf(e)}</code>
      {e.kind !== undefined && e.kind !== 'tool_call' && <span className="tt-mcp-chip">{tr(e.kind === 'resource_read' ? 'audit_kind_read' : 'audit_kind_prompt')}</span>}
      <span className="tt-mcp-chip">{tr(SOURCE_TEXT[e.source])}</span>
      {(e.kind === undefined || e.kind === 'tool_call') && <span className="tt-mcp-chip">{tr(`approval_${e.approval}` as TextKey)}</span>}
      <span className="tt-mcp-call-outcome">
        {tr(outcomeKey(e))}
        {e.code !== '' && <> · <code>{e.code}</code></>}
      </span>
      {e.elicitations !== undefined && e.elicitations.length > 0 && (
        <span className="tt-mcp-chip tt-mcp-chip-asked">
          {tr('asked_chip', { answers: e.elicitations.map((q) => askedItem(q, tr)).join('; ') })}
          {(e.rounds ?? 1) > 1 && <> · {tr('asked_rounds', { count: e.rounds ?? 1 })}</>}
        </span>
      )}
      <ProgressSummary updates={e.progressUpdates} message={e.progressMessage} />
      <span className="tt-mcp-call-duration">{tr('duration_ms', { ms: Math.round(e.durationMs) })}</span>
      {e.resultId !== undefined && openResult && (
        <button type="button" className="menu_button tt-mcp-call-result" onClick={() => void openResult(e.resultId!)}>
          <i className="fa-solid fa-file-lines" aria-hidden="true" /> {tr('open_full_result')}
        </button>
      )}
    </li>
  );
}

/** A server's recent calls, read when opened. */
export function RecentCalls(props: { registrationId: string }) {
  const deps = useContext(ToolsContext);
  const tr = useTr();
  const [open, setOpen] = useState(false);
  const [entries, setEntries] = useState<McpAuditEntry[]>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const recentCalls = deps?.recentCalls;

  const load = useCallback(async () => {
    if (!recentCalls) return;
    setLoading(true);
    try {
      setEntries(await recentCalls(props.registrationId, RECENT_LIMIT));
      setError(undefined);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setLoading(false);
    }
  }, [recentCalls, props.registrationId]);

  useEffect(() => {
    if (open) void load();
  }, [open, load]);

  if (!recentCalls) return null;
  return (
    <details className="tt-mcp-recent" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>{tr('recent_calls')}</summary>
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {tr('recent_calls_failed', { message: error })}
        </p>
      )}
      {entries !== undefined && entries.length === 0 && <p className="tt-mcp-note">{tr('recent_calls_empty')}</p>}
      {entries !== undefined && entries.length > 0 && (
        <ul className="tt-mcp-calls">
          {entries.map((e) => (
            <CallRow key={`${e.time} ${e.callId}`} entry={e} openResult={deps?.openResult} />
          ))}
        </ul>
      )}
      <button type="button" className="menu_button" disabled={loading} onClick={() => void load()}>
        {tr('refresh_calls')}
      </button>
    </details>
  );
}
