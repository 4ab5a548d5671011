// The Manager's tool sets (issue 19): the named selections of tools a chat,
// a character (or group) or the default uses, with New, Edit and Remove,
// and which set the chat open now uses, with the dialog that chooses it.
// It reads what it needs through ToolSetsContext (the boot code provides
// it); without it (TauriTavern, an older backend) it renders nothing.

import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import type { McpStorageIssue, McpToolSet } from '../../../../jsapi/tauritavern-mcp';
import { applyBindings, type BindingLevel, type BindingScope } from '../../host/bindings';
import type { TextKey, Tr } from '../../base/texts';
import { CODE_HOST_UNAVAILABLE, errorCode, errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';

export interface ToolSetsDeps {
  list(): Promise<{ toolSets: McpToolSet[]; storageIssues: McpStorageIssue[] }>;
  /** Opens the editor (a new set when set is undefined); resolves the saved set, or null when cancelled. */
  edit(set: McpToolSet | undefined, all: McpToolSet[]): Promise<McpToolSet | null>;
  /** Asks, then removes; resolves whether it was removed. */
  remove(set: McpToolSet): Promise<boolean>;
  /** Opens the dialog that chooses the chat's, the character's (or group's) and the default set. */
  choose(sets: McpToolSet[]): Promise<void>;
  /** The bindings of the chat open now. */
  scope(): BindingScope;
  /** Calls fn when the chat or a binding may have changed; returns the unsubscribe function. */
  onChange(fn: () => void): () => void;
}

export const ToolSetsContext = createContext<ToolSetsDeps | undefined>(undefined);

/** Where the set in use comes from, in words. */
export function appliedText(scope: BindingScope, sets: readonly McpToolSet[], tr: Tr): string {
  const applied = applyBindings(scope, sets);
  if (!applied.set) return tr('toolset_in_use_none');
  return tr(`toolset_in_use_${applied.level}` as TextKey, {
    name: applied.set.name,
    character: scope.character?.name ?? '',
    group: scope.group?.name ?? '',
  });
}

/** What a set selects, in short. */
export function selectionSummary(set: McpToolSet, tr: Tr): string {
  const servers = set.tools.filter((t) => t.endsWith(':*')).length;
  const tools = set.tools.length - servers;
  const parts: string[] = [];
  if (servers > 0) parts.push(tr('toolset_servers', { count: servers }));
  if (tools > 0) parts.push(tr('toolset_tools', { count: tools }));
  if (parts.length === 0) parts.push(tr('toolset_nothing'));
  parts.push(tr('toolset_limit', { limit: set.resultInlineCharLimit.toLocaleString('en-US') }));
  if (!set.readerTool) parts.push(tr('toolset_no_reader'));
  const pinned = set.pinnedTools?.length ?? 0;
  if (set.toolMode === 'search') parts.push(tr('toolset_search_summary', { count: pinned }));
  if (set.toolMode === 'automatic') {
    parts.push(tr('toolset_automatic_summary', { count: pinned, maxTools: set.searchMaxTools ?? 40, percent: set.searchContextPercent ?? 10 }));
  }
  return parts.join(' · ');
}

/** The levels of scope bound to set. */
function boundLevels(scope: BindingScope, set: McpToolSet): BindingLevel[] {
  const out: BindingLevel[] = [];
  if (scope.chat === set.id) out.push('chat');
  if (scope.character?.toolSetId === set.id) out.push('character');
  if (scope.group?.toolSetId === set.id) out.push('group');
  if (scope.default === set.id) out.push('default');
  return out;
}

export function ToolSetsSection() {
  const deps = useContext(ToolSetsContext);
  const tr = useTr();
  const [sets, setSets] = useState<McpToolSet[]>();
  const [issues, setIssues] = useState<McpStorageIssue[]>([]);
  const [scope, setScope] = useState<BindingScope>(() => deps?.scope() ?? { chatOpen: false });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    if (!deps) return;
    try {
      const list = await deps.list();
      setSets(list.toolSets);
      setIssues(list.storageIssues);
      setScope(deps.scope());
      setError(undefined);
    } catch (err) {
      // What the backend holds is unknown now: neither the sets it listed
      // before nor "none yet". A backend that is not connected is said once,
      // by the drawer's banner, not again here.
      setSets(undefined);
      setError(errorCode(err) === CODE_HOST_UNAVAILABLE ? undefined : tr('toolsets_failed', { message: errorMessage(err) }));
    }
  }, [deps, tr]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => deps?.onChange(() => void load()), [deps, load]);

  if (!deps) return null;
  const run = async (work: () => Promise<unknown>) => {
    if (busy) return;
    setBusy(true);
    try {
      await work();
      await load();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const all = sets ?? [];
  return (
    <section className="tt-mcp-toolsets" aria-labelledby="tt-mcp-toolsets-title">
      <div className="tt-mcp-toolbar">
        <h4 className="tt-mcp-toolbar-title" id="tt-mcp-toolsets-title">
          {tr('toolsets_count', { count: all.length })}
        </h4>
        <div className="tt-mcp-toolbar-actions">
          <button type="button" className="menu_button menu_button_icon" disabled={busy || sets === undefined} onClick={() => void run(() => deps.choose(all))}>
            <i className="fa-solid fa-link" aria-hidden="true" />
            <span>{tr('toolset_choose')}</span>
          </button>
          <button type="button" className="menu_button menu_button_icon" disabled={busy || sets === undefined} onClick={() => void run(() => deps.edit(undefined, all))}>
            <i className="fa-solid fa-plus" aria-hidden="true" />
            <span>{tr('toolset_new')}</span>
          </button>
        </div>
      </div>
      {sets !== undefined && (
        <p className="tt-mcp-note tt-mcp-toolset-in-use" role="status">
          {appliedText(scope, all, tr)}
        </p>
      )}
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
      {issues.length > 0 && (
        <ul className="tt-mcp-storage-issues">
          {issues.map((i) => (
            <li key={i.fileName}>
              <code>{i.fileName}</code> {i.message}
            </li>
          ))}
        </ul>
      )}
      {sets !== undefined && sets.length === 0 && <p className="tt-mcp-note">{tr('toolsets_empty')}</p>}
      {all.length > 0 && (
        <ul className="tt-mcp-toolset-list">
          {all.map((set) => (
            <li key={set.id} className="tt-mcp-toolset">
              <div className="tt-mcp-toolset-main">
                <span className="tt-mcp-toolset-name">{set.name}</span>
                {boundLevels(scope, set).map((level) => (
                  <span key={level} className="tt-mcp-chip">
                    {tr(`toolset_bound_${level}` as TextKey)}
                  </span>
                ))}
                <span className="tt-mcp-toolset-summary">{selectionSummary(set, tr)}</span>
              </div>
              <div className="tt-mcp-toolset-actions">
                <button type="button" className="menu_button" disabled={busy} aria-label={tr('toolset_edit_named', { name: set.name })} onClick={() => void run(() => deps.edit(set, all))}>
                  {tr('edit')}
                </button>
                <button type="button" className="menu_button" disabled={busy} aria-label={tr('toolset_remove_named', { name: set.name })} onClick={() => void run(() => deps.remove(set))}>
                  {tr('remove')}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
