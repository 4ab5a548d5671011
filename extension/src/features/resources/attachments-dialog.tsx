// The chat's MCP resources (issue 18 item 5), opened from SillyTavern's wand
// menu: what is attached to the chat open now — each by name, with its
// server, URI, size and place in the prompt (changeable), Refresh (read it
// again now) and Remove — the count against the cap, and a picker that
// attaches a server's resource (a template opens its form, which has its
// own "Attach to this chat").

import { useEffect, useId, useReducer, useState } from 'react';
import type {
  McpResource,
  McpResourceList,
  McpResourceReadOutcome,
  McpResourceTemplate,
  McpResourceTemplateList,
  TauriTavernMcpServer,
} from '../../../../jsapi/tauritavern-mcp';
import { attachmentChars, snapshotOf, totalChars, type ChatAttachment, type ChatRef, type Placement } from './attachments';
import { requestFailure } from './failure';
import { showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { capText, type AttachDeps } from './AttachPanel';
import { ResourceChips } from '../../ui/ContentView';
import { errorMessage } from '../../base/errors';
import { PlacementFields, placementText } from './PlacementFields';
import { useTr } from '../../base/tr';

export interface AttachmentsDialogDeps {
  attach: AttachDeps;
  remove(chat: ChatRef, id: string): Promise<void>;
  refresh(chat: ChatRef, id: string): Promise<ChatAttachment>;
  setPlacement(chat: ChatRef, id: string, placement: Placement): Promise<void>;
  /** Calls fn when the attachments changed (here or elsewhere); returns the unsubscribe function. */
  onChange(fn: () => void): () => void;
  servers(): Promise<TauriTavernMcpServer[]>;
  resources(registrationId: string): Promise<McpResourceList>;
  templates(registrationId: string): Promise<McpResourceTemplateList>;
  read(registrationId: string, uri: string): Promise<McpResourceReadOutcome>;
  /** Opens a template's form (the resource dialog, with its own Attach). */
  openTemplate(server: TauriTavernMcpServer, template: McpResourceTemplate): Promise<void>;
}

type ItemState = { busy?: boolean; error?: string; note?: string };

/** How an item's last action ended: a note, or an error. */
function ItemStatus(props: { state: ItemState }) {
  const { note, error } = props.state;
  return (
    <>
      {note !== undefined && (
        <p className="tt-mcp-note" role="status">
          {note}
        </p>
      )}
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

function AttachmentItem(props: { a: ChatAttachment; chat: ChatRef; deps: AttachmentsDialogDeps }) {
  const tr = useTr();
  const { a, chat, deps } = props;
  const [state, setState] = useState<ItemState>({});
  const run = async (work: () => Promise<string | undefined>) => {
    setState({ busy: true });
    try {
      const note = await work();
      setState(note !== undefined ? { note } : {});
    } catch (err) {
      setState({ error: errorMessage(err) });
    }
  };
  const readAt = new Date(a.readAt);
  return (
    <li className="tt-mcp-attachment">
      <div className="tt-mcp-resource-head">
        <span className="tt-mcp-tool-title">{a.name}</span>
        <span className="tt-mcp-chips">
          <span className="tt-mcp-chip">{tr('char_count', { count: attachmentChars(a), chars: attachmentChars(a).toLocaleString() })}</span>
        </span>
        <button
          type="button"
          className="menu_button tt-mcp-icon-button"
          title={tr('refresh_attachment', { name: a.name })}
          aria-label={tr('refresh_attachment', { name: a.name })}
          disabled={state.busy}
          onClick={() =>
            void run(async () => {
              await deps.refresh(chat, a.id);
              return tr('refreshed');
            })
          }
        >
          <i className={state.busy ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-arrows-rotate'} aria-hidden="true" />
        </button>
        <button
          type="button"
          className="menu_button tt-mcp-icon-button tt-mcp-danger"
          title={tr('remove_attachment', { name: a.name })}
          aria-label={tr('remove_attachment', { name: a.name })}
          disabled={state.busy}
          onClick={() =>
            void run(async () => {
              await deps.remove(chat, a.id);
              return undefined;
            })
          }
        >
          <i className="fa-solid fa-trash-can" aria-hidden="true" />
        </button>
      </div>
      <p className="tt-mcp-note">
        {tr('from_server', { server: a.serverName })} · <code className="tt-mcp-uri">{a.uri}</code>
      </p>
      <p className="tt-mcp-note">
        {tr('snapshot_of', { time: Number.isNaN(readAt.getTime()) ? a.readAt : readAt.toLocaleString() })} · {placementText(a.placement, tr)}
      </p>
      {a.skipped.length > 0 && <p className="tt-mcp-note">{tr('attach_skipped', { count: a.skipped.length })}</p>}
      <details className="tt-mcp-advanced">
        <summary>{tr('change_placement')}</summary>
        <PlacementFields
          value={a.placement}
          disabled={state.busy ?? false}
          label={tr('placement_legend')}
          onChange={(p) =>
            void run(async () => {
              await deps.setPlacement(chat, a.id, p);
              return undefined;
            })
          }
        />
      </details>
      <ItemStatus state={state} />
    </li>
  );
}

function PickResource(props: {
  server: TauriTavernMcpServer;
  resource: McpResource;
  chat: ChatRef;
  placement: Placement;
  deps: AttachmentsDialogDeps;
}) {
  const tr = useTr();
  const { server, resource: r, chat, deps } = props;
  const name = r.title ?? r.name;
  const [state, setState] = useState<ItemState>({});
  const attach = async () => {
    setState({ busy: true });
    try {
      const outcome = await deps.read(server.id, r.uri);
      const failed = requestFailure(outcome, tr);
      if (failed !== undefined || outcome.outcome !== 'known_response' || outcome.response.kind !== 'resource_contents') {
        throw new Error(failed ?? '');
      }
      const a = await deps.attach.attach(chat, snapshotOf(outcome.response, { registrationId: server.id, serverName: server.displayName, name }), props.placement);
      deps.attach.rememberPlacement(props.placement);
      setState({ note: tr('attached', { chat: chat.name, place: placementText(a.placement, tr) }) });
    } catch (err) {
      setState({ error: errorMessage(err) });
    }
  };
  return (
    <li className="tt-mcp-resource">
      <div className="tt-mcp-resource-head">
        <span className="tt-mcp-tool-title">{name}</span>
        <button type="button" className="menu_button menu_button_icon" aria-label={tr('attach_named', { name })} disabled={state.busy} onClick={() => void attach()}>
          <i className={state.busy ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-paperclip'} aria-hidden="true" />
          <span>{tr('attach')}</span>
        </button>
      </div>
      <ResourceChips mimeType={r.mimeType} size={r.size} />
      <code className="tt-mcp-uri">{r.uri}</code>
      <ItemStatus state={state} />
    </li>
  );
}

/** The servers whose resources may be attached: active, resources allowed and not known to be absent. */
function offersResources(s: TauriTavernMcpServer): boolean {
  return s.state === 'active' && s.capabilities?.allowed.resources !== false && s.capabilities?.advertised?.resources !== false;
}

function Picker(props: { chat: ChatRef; deps: AttachmentsDialogDeps }) {
  const tr = useTr();
  const id = useId();
  const { deps, chat } = props;
  const [servers, setServers] = useState<TauriTavernMcpServer[]>();
  const [serverId, setServerId] = useState('');
  const [lists, setLists] = useState<{ resources?: McpResource[]; templates?: McpResourceTemplate[]; error?: string; loading?: boolean }>({});
  const [placement, setPlacement] = useState(() => deps.attach.lastPlacement());
  const [error, setError] = useState<string>();

  const choose = (next: string) => {
    setServerId(next);
    setLists(next === '' ? {} : { loading: true });
    if (next === '') return;
    Promise.all([deps.resources(next), deps.templates(next).catch(() => undefined)]).then(
      ([r, t]) => setLists({ resources: r.items, ...(t ? { templates: t.items } : {}) }),
      (err: unknown) => setLists({ error: errorMessage(err) }),
    );
  };

  useEffect(() => {
    let live = true;
    deps.servers().then(
      async (all) => {
        // only servers with something to attach: each candidate's lists are
        // read (the backend keeps them), and one that answered two empty
        // lists is left out; one whose list failed stays, to say why
        const candidates = all.filter(offersResources);
        const counts = await Promise.all(
          candidates.map(async (s) => {
            const [r, t] = await Promise.all([deps.resources(s.id).catch(() => undefined), deps.templates(s.id).catch(() => undefined)]);
            return r === undefined ? undefined : r.items.length + (t?.items.length ?? 0);
          }),
        );
        if (!live) return;
        const offered = candidates.filter((_, i) => counts[i] !== 0);
        setServers(offered);
        if (offered.length === 1) choose(offered[0]!.id);
      },
      (err: unknown) => live && setError(errorMessage(err)),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const server = servers?.find((s) => s.id === serverId);
  return (
    <section className="tt-mcp-picker" aria-label={tr('attach_a_resource')}>
      <h4>{tr('attach_a_resource')}</h4>
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
      {servers === undefined && error === undefined && (
        <p className="tt-mcp-note" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('finding_resource_servers')}
        </p>
      )}
      {servers && servers.length === 0 && <p className="tt-mcp-note">{tr('no_resource_servers')}</p>}
      {servers && servers.length > 0 && (
        <>
          <div className="tt-mcp-field">
            <label htmlFor={`${id}-server`}>{tr('server')}</label>
            <select id={`${id}-server`} className="text_pole" value={serverId} onChange={(e) => choose(e.target.value)}>
              {servers.length > 1 && <option value="">{tr('select_server')}</option>}
              {servers.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.displayName}
                </option>
              ))}
            </select>
          </div>
          <PlacementFields value={placement} label={tr('placement_new')} onChange={setPlacement} />
        </>
      )}
      {lists.loading && (
        <p className="tt-mcp-note" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('listing_resources')}
        </p>
      )}
      {lists.error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {lists.error}
        </p>
      )}
      {server && lists.resources && (
        <>
          {lists.resources.length === 0 && <p className="tt-mcp-note">{tr('no_resources')}</p>}
          <ul className="tt-mcp-resources" aria-label={tr('resources_of', { server: server.displayName })}>
            {lists.resources.map((r) => (
              <PickResource key={r.uri} server={server} resource={r} chat={chat} placement={placement} deps={deps} />
            ))}
          </ul>
          {lists.templates && lists.templates.length > 0 && (
            <ul className="tt-mcp-resources" aria-label={tr('templates_title')}>
              {lists.templates.map((t) => (
                <li key={t.uriTemplate} className="tt-mcp-resource">
                  <div className="tt-mcp-resource-head">
                    <span className="tt-mcp-tool-title">{t.title ?? t.name}</span>
                    <button
                      type="button"
                      className="menu_button"
                      aria-label={tr('open_template', { name: t.title ?? t.name })}
                      onClick={() => void deps.openTemplate(server, t)}
                    >
                      {tr('open')}
                    </button>
                  </div>
                  <code className="tt-mcp-uri">{t.uriTemplate}</code>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

export function AttachmentsDialog(props: { deps: AttachmentsDialogDeps }) {
  const tr = useTr();
  const { deps } = props;
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => deps.onChange(rerender), [deps]);
  const chat = deps.attach.chat();
  if (!chat) {
    return (
      <div className="tt-mcp-attachments">
        <h3>{tr('attachments_title')}</h3>
        <p className="tt-mcp-note">{tr('attach_no_chat')}</p>
      </div>
    );
  }
  const list = deps.attach.list();
  return (
    <div className="tt-mcp-attachments">
      <h3>{tr('attachments_title_chat', { chat: chat.name })}</h3>
      <p className="tt-mcp-note" role="status">
        {tr('attachment_count', { count: list.length })} · {capText(totalChars(list), tr)}
      </p>
      <p className="tt-mcp-note">{tr('attachments_rule')}</p>
      {list.length > 0 && (
        <ul className="tt-mcp-attachment-list" aria-label={tr('attachments_title')}>
          {list.map((a) => (
            <AttachmentItem key={a.id} a={a} chat={chat} deps={deps} />
          ))}
        </ul>
      )}
      <Picker chat={chat} deps={deps} />
    </div>
  );
}

export async function openAttachmentsDialog(deps: AttachmentsDialogDeps, tr: Tr): Promise<void> {
  await showDialog(<AttachmentsDialog deps={deps} />, { kind: 'text', okButton: tr('close'), wide: true, leftAlign: true, scroll: true }, tr);
}
