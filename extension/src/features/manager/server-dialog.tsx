// The Add / Edit server dialog (reference §8.5): a SillyTavern confirm
// popup whose OK validates in place and saves; the popup closes only on a
// successful save (or Cancel), so a rejected draft keeps what the user
// typed.

import { forwardRef, useId, useImperativeHandle, useRef, useState, type Ref } from 'react';
import type {
  CreateMcpServerInput,
  McpProtocolVersion,
  TauriTavernMcpServer,
  UpdateMcpServerInput,
} from '../../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../../host/popup';
import { isHttpUrl, PROTOCOL_VERSIONS } from '../../base/protocol';
import type { Tr } from '../../base/texts';
import { StdioCommand, stdioOf } from './Stdio';
import { errorMessage } from '../../base/errors';
import { FormStatus } from '../../ui/FormStatus';
import { useTr } from '../../base/tr';
import { parseServerJson } from './server-json';

interface HeaderRow {
  id: number;
  name: string;
  value: string;
}

export interface ServerFormHandle {
  /** Validates and saves; resolves the saved server, or null (error shown in place, or a save already running). */
  submit(): Promise<TauriTavernMcpServer | null>;
  /** Whether a save is running (the popup must not close then). */
  busy(): boolean;
}

export interface ServerFormProps {
  /** The server being edited; absent for Add. */
  server?: TauriTavernMcpServer;
  onSubmit(draft: CreateMcpServerInput): Promise<TauriTavernMcpServer>;
}

type Mode = 'manual' | 'json';

function rowsOf(headers: Record<string, string> | undefined): HeaderRow[] {
  return Object.entries(headers ?? {}).map(([name, value], i) => ({ id: i + 1, name, value }));
}

/** The headers of the rows as typed (names untrimmed); blank rows are skipped, a repeated name keeps the last row. */
function headersOf(rows: HeaderRow[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const row of rows) {
    if (row.name === '' && row.value === '') continue;
    headers[row.name] = row.value;
  }
  return headers;
}

export const ServerForm = forwardRef(function ServerForm(props: ServerFormProps, ref: Ref<ServerFormHandle>) {
  const tr = useTr();
  const id = useId();
  const editing = props.server !== undefined;
  // A stdio server's command is configured on the backend's machine: only
  // its name can be changed here.
  const stdio = props.server ? stdioOf(props.server) : undefined;
  const [mode, setMode] = useState<Mode>('manual');
  const [name, setName] = useState(props.server?.displayName ?? '');
  const [endpoint, setEndpoint] = useState(props.server?.endpoint ?? '');
  const [protocolVersion, setProtocolVersion] = useState<McpProtocolVersion>(props.server?.protocolVersion ?? 'auto');
  const [rows, setRows] = useState<HeaderRow[]>(() => rowsOf(props.server?.headers));
  const nextRow = useRef(rows.length + 1);
  const [json, setJson] = useState('');
  const [advancedOpen, setAdvancedOpen] = useState(
    () => editing && (Object.keys(props.server?.headers ?? {}).length > 0 || props.server?.protocolVersion !== 'auto'),
  );
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);

  function draft(): CreateMcpServerInput | string {
    if (mode === 'json') {
      const parsed = parseServerJson(json);
      if (parsed.ok) return parsed.input;
      const e = parsed.error;
      return tr('json_invalid', { message: 'syntax' in e ? e.syntax : tr(e.key, e.params) });
    }
    const displayName = name.trim();
    const url = endpoint.trim();
    if (displayName === '') return tr('name_required');
    if (stdio && props.server) {
      return { displayName, endpoint: props.server.endpoint, headers: {}, protocolVersion: props.server.protocolVersion };
    }
    if (!isHttpUrl(url)) return tr('endpoint_invalid');
    return { displayName, endpoint: url, headers: headersOf(rows), protocolVersion };
  }

  useImperativeHandle(ref, () => ({
    busy: () => busyRef.current,
    async submit() {
      if (busyRef.current) return null;
      const d = draft();
      if (typeof d === 'string') {
        setError(d);
        if (mode === 'manual') setAdvancedOpen(true);
        return null;
      }
      busyRef.current = true;
      setBusy(true);
      setError(undefined);
      try {
        return await props.onSubmit(d);
      } catch (err) {
        setError(errorMessage(err));
        return null;
      } finally {
        busyRef.current = false;
        setBusy(false);
      }
    },
  }));

  const updateRow = (rowId: number, patch: Partial<HeaderRow>) =>
    setRows((rs) => rs.map((r) => (r.id === rowId ? { ...r, ...patch } : r)));

  return (
    <form
      className="tt-mcp-form"
      onSubmit={(e) => e.preventDefault()}
      aria-labelledby={`${id}-title`}
      aria-busy={busy}
    >
      <h3 id={`${id}-title`}>{editing ? tr('edit_title') : tr('add_title')}</h3>
      <fieldset className="tt-mcp-fieldset" disabled={busy}>
        {!editing && (
          <div className="tt-mcp-segmented" role="radiogroup" aria-label={tr('input_mode')}>
            {(['manual', 'json'] as const).map((m) => (
              <label key={m} className={mode === m ? 'tt-mcp-segment tt-mcp-segment-on' : 'tt-mcp-segment'}>
                <input
                  type="radio"
                  name={`${id}-mode`}
                  value={m}
                  checked={mode === m}
                  onChange={() => {
                    setMode(m);
                    setError(undefined);
                  }}
                />
                <span>{m === 'manual' ? tr('mode_manual') : tr('mode_json')}</span>
              </label>
            ))}
          </div>
        )}
        {mode === 'manual' ? (
          <>
            <div className="tt-mcp-field">
              <label htmlFor={`${id}-name`}>{tr('name')}</label>
              <input
                id={`${id}-name`}
                className="text_pole"
                type="text"
                autoComplete="off"
                placeholder={tr('name_placeholder')}
                value={name}
                onChange={(e) => setName(e.target.value)}
                data-autofocus=""
              />
            </div>
            {stdio ? (
              <div className="tt-mcp-field">
                <StdioCommand stdio={stdio} />
                <p className="tt-mcp-note">{tr('stdio_edit_note')}</p>
              </div>
            ) : (
              <>
                <div className="tt-mcp-field">
                  <label htmlFor={`${id}-endpoint`}>{tr('endpoint')}</label>
                  <input
                    id={`${id}-endpoint`}
                    className="text_pole"
                    type="text"
                    inputMode="url"
                    autoComplete="off"
                    spellCheck={false}
                    placeholder="http://127.0.0.1:3000/mcp"
                    value={endpoint}
                    onChange={(e) => setEndpoint(e.target.value)}
                    aria-describedby={`${id}-endpoint-hint`}
                  />
                  <small id={`${id}-endpoint-hint`} className="tt-mcp-hint">
                    {tr('endpoint_hint')}
                  </small>
                </div>
                {!editing && <p className="tt-mcp-note">{tr('new_server_note')}</p>}
                <details
                  className="tt-mcp-advanced"
                  open={advancedOpen}
                  onToggle={(e) => setAdvancedOpen(e.currentTarget.open)}
                >
                  <summary>{tr('advanced')}</summary>
                  <div className="tt-mcp-field">
                    <label htmlFor={`${id}-protocol`}>{tr('protocol_version')}</label>
                    <select
                      id={`${id}-protocol`}
                      className="text_pole"
                      value={protocolVersion}
                      onChange={(e) => setProtocolVersion(e.target.value as McpProtocolVersion)}
                      aria-describedby={`${id}-protocol-hint`}
                    >
                      <option value="auto">{tr('protocol_auto')}</option>
                      {PROTOCOL_VERSIONS.map((v) => (
                        <option key={v} value={v}>
                          {v}
                        </option>
                      ))}
                    </select>
                    <small id={`${id}-protocol-hint`} className="tt-mcp-hint">
                      {tr('protocol_hint')}
                    </small>
                  </div>
                  <div className="tt-mcp-field" role="group" aria-labelledby={`${id}-headers`}>
                    <span id={`${id}-headers`} className="tt-mcp-label">
                      {tr('custom_headers')}
                    </span>
                    {rows.map((row) => (
                      <div key={row.id} className="tt-mcp-header-row">
                        <input
                          className="text_pole"
                          type="text"
                          autoComplete="off"
                          spellCheck={false}
                          placeholder="x-api-key"
                          aria-label={tr('header_name')}
                          value={row.name}
                          onChange={(e) => updateRow(row.id, { name: e.target.value })}
                        />
                        <input
                          className="text_pole"
                          type="password"
                          autoComplete="new-password"
                          aria-label={tr('header_value')}
                          value={row.value}
                          onChange={(e) => updateRow(row.id, { value: e.target.value })}
                        />
                        <button
                          type="button"
                          className="menu_button tt-mcp-icon-button"
                          title={tr('remove_header')}
                          aria-label={tr('remove_header')}
                          onClick={() => setRows((rs) => rs.filter((r) => r.id !== row.id))}
                        >
                          <i className="fa-solid fa-trash-can" aria-hidden="true" />
                        </button>
                      </div>
                    ))}
                    <button
                      type="button"
                      className="menu_button menu_button_icon"
                      onClick={() => setRows((rs) => [...rs, { id: nextRow.current++, name: '', value: '' }])}
                    >
                      <i className="fa-solid fa-plus" aria-hidden="true" />
                      <span>{tr('add_header')}</span>
                    </button>
                    <p className="tt-mcp-note">{tr('headers_note')}</p>
                  </div>
                </details>
              </>
            )}
          </>
        ) : (
          <div className="tt-mcp-field">
            <label htmlFor={`${id}-json`}>{tr('json_label')}</label>
            <textarea
              id={`${id}-json`}
              className="text_pole tt-mcp-code-input"
              rows={8}
              spellCheck={false}
              placeholder={'{\n  "mcpServers": {\n    "exa": { "url": "https://mcp.exa.ai/mcp" }\n  }\n}'}
              value={json}
              onChange={(e) => setJson(e.target.value)}
              aria-describedby={`${id}-json-hint`}
            />
            <small id={`${id}-json-hint`} className="tt-mcp-hint">
              {tr('json_hint')}
            </small>
          </div>
        )}
      </fieldset>
      <FormStatus busy={busy ? (editing ? tr('saving') : tr('adding')) : undefined} error={error} />
    </form>
  );
});

async function openServerDialog(
  server: TauriTavernMcpServer | undefined,
  onSubmit: (draft: CreateMcpServerInput) => Promise<TauriTavernMcpServer>,
  tr: Tr,
): Promise<TauriTavernMcpServer | null> {
  const form: { current: ServerFormHandle | null } = { current: null };
  let saved: TauriTavernMcpServer | null = null;
  await showDialog(
    <ServerForm
      ref={(h) => {
        form.current = h;
      }}
      {...(server ? { server } : {})}
      onSubmit={onSubmit}
    />,
    {
      kind: 'confirm',
      okButton: server ? tr('save') : tr('add_server'),
      cancelButton: tr('cancel'),
      scroll: true,
      async onClosing(result) {
        const f = form.current;
        if (!f) return true;
        if (result !== RESULT.AFFIRMATIVE) return !f.busy();
        saved = await f.submit();
        return saved !== null;
      },
    },
    tr,
  );
  return saved;
}

/** Opens the Add dialog; resolves the created server, or null when cancelled. */
export function openAddServerDialog(
  create: (input: CreateMcpServerInput) => Promise<TauriTavernMcpServer>,
  tr: Tr,
): Promise<TauriTavernMcpServer | null> {
  return openServerDialog(undefined, create, tr);
}

/** Opens the Edit dialog for server; resolves the updated server, or null when cancelled. */
export function openEditServerDialog(
  server: TauriTavernMcpServer,
  update: (input: UpdateMcpServerInput) => Promise<TauriTavernMcpServer>,
  tr: Tr,
): Promise<TauriTavernMcpServer | null> {
  return openServerDialog(
    server,
    (draft) =>
      update({
        registrationId: server.id,
        displayName: draft.displayName,
        endpoint: draft.endpoint,
        headers: draft.headers ?? {},
        protocolVersion: draft.protocolVersion ?? 'auto',
      }),
    tr,
  );
}
