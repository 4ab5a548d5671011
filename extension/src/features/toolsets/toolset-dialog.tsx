// The tool set editor: a name, the tools it selects — whole servers ("all
// the tools you allow", so new ones join once allowed) or single tools —
// in the order that decides what a provider's tool limit keeps, a
// description per tool that the model reads instead of the server's (and
// the registration's), the inline limit of a result and the reader tool,
// and how the tools reach the model (issue 31): every schema, search, or
// automatic with its budget, and the tools pinned beside the search tools.
// Selecting a tool never grants it: the tools offered are the permitted
// ones (Ask or Allow on an active server); a selected entry that is not
// offered now is shown as such.

import { forwardRef, useId, useImperativeHandle, useRef, useState, type Ref } from 'react';
import type {
  LegacyMcpTool,
  McpToolSelector,
  McpToolSet,
  SaveMcpToolSetInput,
  McpToolMode,
  TauriTavernMcpServer,
  ToolDescriptionOverride,
} from '../../../../jsapi/tauritavern-mcp';
import { showSaveDialog, type SaveHandle } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import { FormStatus } from '../../ui/FormStatus';
import { PinPicker } from '../../ui/PinPicker';
import { MAX_PINS } from '../../base/protocol';
import { useTr } from '../../base/tr';

export const DEFAULT_LIMIT = 50_000;

export interface ToolSetDialogInput {
  /** The set to edit; undefined: a new one. */
  set: McpToolSet | undefined;
  /** Every registration. */
  servers: TauriTavernMcpServer[];
  /** The tools a model may be offered now (list_legacy_mcp_tools without a set). */
  tools: LegacyMcpTool[];
  save(input: SaveMcpToolSetInput): Promise<McpToolSet>;
}

const serverEntry = (id: string): McpToolSelector => `mcp/${id}:*`;

function serverOf(entry: string): string {
  return entry.slice('mcp/'.length, entry.indexOf(':'));
}

/** What the form saves: overrides only of selected tools, each overriding something. */
export function saveInput(
  set: McpToolSet | undefined,
  draft: {
    name: string;
    tools: McpToolSelector[];
    descriptions: Record<string, string>;
    limit: number;
    reader: boolean;
    /** Issue 31; absent: the set's own (an older caller). */
    search?: { mode: McpToolMode; maxTools: number; contextPercent: number; pinned: string[] };
  },
): SaveMcpToolSetInput {
  const selected = new Set(draft.tools);
  const servers = new Set(draft.tools.filter((t) => t.endsWith(':*')).map(serverOf));
  const overrides: Record<string, ToolDescriptionOverride> = {};
  const keys = new Set([...Object.keys(set?.descriptionOverrides ?? {}), ...Object.keys(draft.descriptions)]);
  for (const id of keys) {
    if (!selected.has(id as McpToolSelector) && !servers.has(serverOf(id))) continue;
    const properties = { ...(set?.descriptionOverrides[id]?.properties ?? {}) };
    const description = draft.descriptions[id] ?? set?.descriptionOverrides[id]?.description ?? '';
    if (description.trim() !== '') overrides[id] = { description, properties };
    else if (Object.keys(properties).length > 0) overrides[id] = { properties };
  }
  return {
    ...(set ? { id: set.id } : {}),
    name: draft.name,
    tools: draft.tools,
    descriptionOverrides: overrides,
    resultInlineCharLimit: draft.limit,
    readerTool: draft.reader,
    ...(draft.search
      ? {
          toolMode: draft.search.mode,
          searchMaxTools: draft.search.maxTools,
          searchContextPercent: draft.search.contextPercent,
          // a pin of a tool no longer selected goes with it
          pinnedTools: draft.search.pinned.filter((id) => selected.has(id as McpToolSelector) || servers.has(serverOf(id))),
        }
      : {}),
  };
}

const ToolSetForm = forwardRef(function ToolSetForm(props: ToolSetDialogInput, ref: Ref<SaveHandle>) {
  const tr = useTr();
  const id = useId();
  const { set, servers, tools } = props;
  const [name, setName] = useState(set?.name ?? '');
  const [selection, setSelection] = useState<McpToolSelector[]>(set?.tools ?? []);
  const [descriptions, setDescriptions] = useState<Record<string, string>>({});
  const [limit, setLimit] = useState(String(set?.resultInlineCharLimit ?? DEFAULT_LIMIT));
  const [reader, setReader] = useState(set?.readerTool ?? true);
  const [mode, setMode] = useState<McpToolMode>(set?.toolMode ?? 'all');
  const [maxTools, setMaxTools] = useState(String(set?.searchMaxTools ?? 40));
  const [percent, setPercent] = useState(String(set?.searchContextPercent ?? 10));
  const [pinned, setPinned] = useState<string[]>(set?.pinnedTools ?? []);
  const [error, setError] = useState<string>();
  const [invalid, setInvalid] = useState<'name' | 'limit' | 'budget'>();
  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);

  const byServer = new Map<string, LegacyMcpTool[]>();
  for (const t of tools) {
    const sid = serverOf(t.toolId);
    byServer.set(sid, [...(byServer.get(sid) ?? []), t]);
  }
  const toolById = new Map(tools.map((t) => [t.toolId, t]));
  const serverById = new Map(servers.map((s) => [s.id, s]));
  const sorted = [...servers].sort((a, b) => a.displayName.localeCompare(b.displayName) || (a.id < b.id ? -1 : 1));

  const label = (entry: McpToolSelector): { text: string; offered: boolean } => {
    const server = serverById.get(serverOf(entry));
    if (entry.endsWith(':*')) {
      return { text: tr('toolset_entry_server', { server: server?.displayName ?? serverOf(entry) }), offered: server !== undefined };
    }
    const t = toolById.get(entry);
    if (t) return { text: `${t.title || t.nativeName} (${t.serverDisplayName})`, offered: true };
    return { text: entry.slice(entry.indexOf(':') + 1) + (server ? ` (${server.displayName})` : ''), offered: false };
  };

  const toggle = (entry: McpToolSelector, on: boolean) =>
    setSelection((all) => (on ? (all.includes(entry) ? all : [...all, entry]) : all.filter((e) => e !== entry)));
  const move = (i: number, by: number) =>
    setSelection((all) => {
      const j = i + by;
      if (j < 0 || j >= all.length) return all;
      const next = [...all];
      [next[i], next[j]] = [next[j]!, next[i]!];
      return next;
    });

  useImperativeHandle(ref, () => ({
    busy: () => busyRef.current,
    async save() {
      if (busyRef.current) return false;
      const n = Number(limit.trim());
      if (name.trim() === '') {
        setInvalid('name');
        setError(tr('toolset_name_required'));
        return false;
      }
      if (!Number.isInteger(n) || n < 1) {
        setInvalid('limit');
        setError(tr('toolset_limit_invalid'));
        return false;
      }
      const m = Number(maxTools.trim());
      const p = Number(percent.trim());
      if (!Number.isInteger(m) || m < 1 || m > 2048 || !Number.isInteger(p) || p < 1 || p > 100) {
        setInvalid('budget');
        setError(tr('toolset_budget_invalid'));
        return false;
      }
      setInvalid(undefined);
      busyRef.current = true;
      setBusy(true);
      setError(undefined);
      try {
        await props.save(saveInput(set, { name, tools: selection, descriptions, limit: n, reader, search: { mode, maxTools: m, contextPercent: p, pinned } }));
        return true;
      } catch (err) {
        setError(errorMessage(err));
        return false;
      } finally {
        busyRef.current = false;
        setBusy(false);
      }
    },
  }));

  const selected = new Set(selection);
  return (
    <form className="tt-mcp-form tt-mcp-toolset-form" onSubmit={(e) => e.preventDefault()} aria-busy={busy}>
      <h3 className="tt-mcp-dialog-title">{set ? tr('toolset_edit_title') : tr('toolset_new_title')}</h3>
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-name`}>{tr('toolset_name')}</label>
        <input
          id={`${id}-name`}
          className="text_pole"
          value={name}
          maxLength={100}
          disabled={busy}
          onChange={(e) => setName(e.target.value)}
          aria-invalid={invalid === 'name'}
          data-autofocus=""
        />
      </div>
      <fieldset className="tt-mcp-field tt-mcp-toolset-choices" disabled={busy}>
        <legend>{tr('toolset_choose_tools')}</legend>
        <small className="tt-mcp-hint">{tr('toolset_choose_hint')}</small>
        {sorted.length === 0 && <p className="tt-mcp-note">{tr('toolset_no_servers')}</p>}
        {sorted.map((s) => {
          const entry = serverEntry(s.id);
          const own = (byServer.get(s.id) ?? []).slice().sort((a, b) => (a.toolId < b.toolId ? -1 : 1));
          return (
            <div key={s.id} className="tt-mcp-toolset-server">
              <label className="checkbox_label">
                <input type="checkbox" checked={selected.has(entry)} onChange={(e) => toggle(entry, e.target.checked)} />
                <span>
                  {tr('toolset_all_of', { server: s.displayName })}
                  {s.state !== 'active' && <> · {tr('state_paused')}</>}
                </span>
              </label>
              {own.length > 0 && (
                <ul className="tt-mcp-toolset-tools">
                  {own.map((t) => (
                    <li key={t.toolId}>
                      <label className="checkbox_label">
                        <input
                          type="checkbox"
                          checked={selected.has(t.toolId as McpToolSelector)}
                          onChange={(e) => toggle(t.toolId as McpToolSelector, e.target.checked)}
                        />
                        <span>{t.title || t.nativeName}</span>
                        {t.title && t.title !== t.nativeName && <code className="tt-mcp-native-name">{t.nativeName}</code>}
                      </label>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          );
        })}
      </fieldset>
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-mode`}>{tr('toolset_mode')}</label>
        <select id={`${id}-mode`} className="text_pole" value={mode} disabled={busy} onChange={(e) => setMode(e.target.value as McpToolMode)} aria-describedby={`${id}-mode-hint`}>
          <option value="all">{tr('toolset_mode_all')}</option>
          <option value="search">{tr('toolset_mode_search')}</option>
          <option value="automatic">{tr('toolset_mode_automatic')}</option>
        </select>
        <small id={`${id}-mode-hint`} className="tt-mcp-hint">
          {tr('toolset_mode_hint')}
        </small>
      </div>
      {mode === 'automatic' && (
        <div className="tt-mcp-field tt-mcp-toolset-budget">
          <label htmlFor={`${id}-max`}>{tr('toolset_budget_tools')}</label>
          <input id={`${id}-max`} className="text_pole" inputMode="numeric" value={maxTools} disabled={busy} onChange={(e) => setMaxTools(e.target.value)} aria-invalid={invalid === 'budget'} />
          <label htmlFor={`${id}-percent`}>{tr('toolset_budget_percent')}</label>
          <input id={`${id}-percent`} className="text_pole" inputMode="numeric" value={percent} disabled={busy} onChange={(e) => setPercent(e.target.value)} aria-invalid={invalid === 'budget'} />
        </div>
      )}
      <div className="tt-mcp-field">
        <span className="tt-mcp-label" id={`${id}-order`}>
          {tr('toolset_order')}
        </span>
        <small className="tt-mcp-hint">{tr('toolset_order_hint')}</small>
        {selection.length === 0 && <p className="tt-mcp-note">{tr('toolset_nothing_selected')}</p>}
        <ol className="tt-mcp-toolset-order" aria-labelledby={`${id}-order`}>
          {selection.map((entry, i) => {
            const l = label(entry);
            const single = !entry.endsWith(':*');
            const current = descriptions[entry] ?? set?.descriptionOverrides[entry]?.description ?? '';
            return (
              <li key={entry}>
                <div className="tt-mcp-toolset-order-row">
                  <span className="tt-mcp-toolset-entry">
                    {l.text}
                    {!l.offered && <span className="tt-mcp-chip">{tr('toolset_not_offered')}</span>}
                  </span>
                  <button type="button" className="menu_button" disabled={busy || i === 0} aria-label={tr('toolset_move_up', { name: l.text })} onClick={() => move(i, -1)}>
                    <i className="fa-solid fa-arrow-up" aria-hidden="true" />
                  </button>
                  <button
                    type="button"
                    className="menu_button"
                    disabled={busy || i === selection.length - 1}
                    aria-label={tr('toolset_move_down', { name: l.text })}
                    onClick={() => move(i, 1)}
                  >
                    <i className="fa-solid fa-arrow-down" aria-hidden="true" />
                  </button>
                  <button type="button" className="menu_button" disabled={busy} aria-label={tr('toolset_drop', { name: l.text })} onClick={() => toggle(entry, false)}>
                    <i className="fa-solid fa-xmark" aria-hidden="true" />
                  </button>
                </div>
                {!single && mode !== 'all' && (byServer.get(serverOf(entry))?.length ?? 0) > 0 && (
                  <details className="tt-mcp-toolset-server-pins" open={pinned.some((p) => serverOf(p) === serverOf(entry) && !selection.includes(p as McpToolSelector))}>
                    <summary>{tr('toolset_server_pins', { count: pinned.filter((p) => serverOf(p) === serverOf(entry)).length })}</summary>
                    <PinPicker
                      tools={(byServer.get(serverOf(entry)) ?? []).map((t) => ({ id: t.toolId, label: t.title || t.nativeName }))}
                      pinned={pinned}
                      max={MAX_PINS}
                      disabled={busy}
                      onChange={setPinned}
                    />
                  </details>
                )}
                {single && (
                  <label className="checkbox_label tt-mcp-toolset-pin">
                    <input
                      type="checkbox"
                      checked={pinned.includes(entry)}
                      disabled={busy}
                      onChange={(e) => setPinned((all) => (e.target.checked ? [...all.filter((x) => x !== entry), entry] : all.filter((x) => x !== entry)))}
                    />
                    <span>{tr('toolset_pin', { name: l.text })}</span>
                  </label>
                )}
                {single && (
                  <details className="tt-mcp-toolset-description" open={current !== ''}>
                    <summary>{tr('toolset_description')}</summary>
                    <textarea
                      className="text_pole"
                      rows={3}
                      value={current}
                      disabled={busy}
                      aria-label={tr('toolset_description_for', { name: l.text })}
                      onChange={(e) => setDescriptions((all) => ({ ...all, [entry]: e.target.value }))}
                    />
                    <small className="tt-mcp-hint">{tr('toolset_description_hint')}</small>
                  </details>
                )}
              </li>
            );
          })}
        </ol>
      </div>
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-limit`}>{tr('toolset_limit_label')}</label>
        <input
          id={`${id}-limit`}
          className="text_pole"
          inputMode="numeric"
          value={limit}
          disabled={busy}
          onChange={(e) => setLimit(e.target.value)}
          aria-invalid={invalid === 'limit'}
          aria-describedby={`${id}-limit-hint`}
        />
        <small id={`${id}-limit-hint`} className="tt-mcp-hint">
          {tr('toolset_limit_hint')}
        </small>
      </div>
      <label className="checkbox_label">
        <input type="checkbox" checked={reader} disabled={busy} onChange={(e) => setReader(e.target.checked)} />
        <span>{tr('toolset_reader')}</span>
      </label>
      <FormStatus busy={busy ? tr('saving') : undefined} error={error} />
    </form>
  );
});

/** Opens the editor; resolves the saved set, or null when it was closed without saving. */
export async function openToolSetDialog(input: ToolSetDialogInput, tr: Tr): Promise<McpToolSet | null> {
  let saved: McpToolSet | null = null;
  const save = async (dto: SaveMcpToolSetInput) => {
    saved = await input.save(dto);
    return saved;
  };
  await showSaveDialog((bind) => <ToolSetForm ref={bind} {...input} save={save} />, { wide: true, scroll: true }, tr);
  return saved;
}
