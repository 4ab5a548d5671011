// The test-call console (reference §8.8): pick an active server (its
// tools are discovered on selection), pick a tool, fill the form built from
// its input schema, run one explicit call and see how it ended. Closing the
// popup ends the local wait of a call in flight. A tool with an MCP App
// (issue 30) shows it below the result, drawn by the renderer boot/ gives
// (the chat's App host), torn down when the result goes or the console
// closes.

import { useEffect, useId, useRef, useState } from 'react';
import type {
  McpCallProgress,
  McpDiscoveredTool,
  McpDiscoveryResult,
  McpTestCallOutcome,
  TauriTavernMcpServer,
  TestMcpToolCallInput,
  TtmcpTestCallOptions,
} from '../../../../jsapi/tauritavern-mcp';
import { CallProgress, ProgressSummary } from '../../ui/CallProgress';
import { showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { DiscoveryNotes } from '../../ui/DiscoveryNotes';
import { errorMessage } from '../../base/errors';
import { SchemaFieldInput } from '../../ui/SchemaFieldInput';
import { useTr } from '../../base/tr';
import { CallOutcome } from '../../ui/CallOutcome';
import type { ResourceTarget } from '../../ui/resource-target';
import { collectArguments, initialValues, schemaFields, withoutError, type FieldError, type SchemaField } from '../../ui/schema-form';

export interface TestCallDialogDeps {
  /** The registrations; only active ones are offered. */
  servers: TauriTavernMcpServer[];
  discover(registrationId: string): Promise<McpDiscoveryResult>;
  refresh(registrationId: string): Promise<McpDiscoveryResult>;
  testCall(input: TestMcpToolCallInput, options: TtmcpTestCallOptions): Promise<McpTestCallOutcome>;
  /** Opens a resource the result links to or embeds (preview, attach); absent where the page cannot. */
  openResource?: ((server: TauriTavernMcpServer, target: ResourceTarget) => void) | undefined;
  /** Draws a tool's MCP App in container; returns its teardown. Absent where the page renders no Apps. */
  renderApp?: ((container: HTMLElement, app: TestCallApp) => () => void) | undefined;
}

/** The App of a test call: whose tool, the call's arguments and how it ended. */
export interface TestCallApp {
  registrationId: string;
  serverDisplayName: string;
  toolName: string;
  input: Record<string, unknown>;
  result: McpTestCallOutcome;
}

/**
 * Whether tool has an App to show: an interface (`ui.resourceUri`) that the
 * model or an App may see (absent visibility: both; an empty one: nobody).
 */
export function hasApp(tool: McpDiscoveredTool): boolean {
  const ui = tool.ui;
  if (!ui?.resourceUri) return false;
  return ui.visibility === undefined || ui.visibility.includes('model') || ui.visibility.includes('app');
}

/** Lets the popup end the local wait of a call in flight when it closes. */
export interface TestCallLifecycle {
  abort?: () => void;
}

export interface TestCallDialogProps extends TestCallDialogDeps {
  lifecycle?: TestCallLifecycle;
}

export function TestCallDialog(props: TestCallDialogProps) {
  const tr = useTr();
  const id = useId();
  const active = props.servers.filter((s) => s.state === 'active');
  const [serverId, setServerId] = useState(() => (active.length === 1 && active[0] ? active[0].id : ''));
  const [discovery, setDiscovery] = useState<McpDiscoveryResult>();
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string>();
  const loadSeq = useRef(0);
  const [toolName, setToolName] = useState('');
  const [fields, setFields] = useState<SchemaField[]>([]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, FieldError>>({});
  const [running, setRunning] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [outcome, setOutcome] = useState<McpTestCallOutcome>();
  /** The arguments of the call whose outcome is shown (the App's input). */
  const [calledWith, setCalledWith] = useState<Record<string, unknown>>({});
  const appBox = useRef<HTMLDivElement>(null);
  const [callError, setCallError] = useState<string>();
  const [progress, setProgress] = useState<McpCallProgress>();
  const [startedAt, setStartedAt] = useState(0);
  const controller = useRef<AbortController | null>(null);
  const mounted = useRef(true);

  // A discovery answer for a server no longer selected is dropped.
  async function load(registrationId: string, mode: 'discover' | 'refresh') {
    const seq = ++loadSeq.current;
    setLoading(true);
    setLoadError(undefined);
    setDiscovery(undefined);
    try {
      const result = await (mode === 'discover' ? props.discover(registrationId) : props.refresh(registrationId));
      if (seq === loadSeq.current && mounted.current) setDiscovery(result);
    } catch (err) {
      if (seq === loadSeq.current && mounted.current) setLoadError(errorMessage(err));
    } finally {
      if (seq === loadSeq.current && mounted.current) setLoading(false);
    }
  }

  useEffect(() => {
    mounted.current = true;
    if (props.lifecycle) props.lifecycle.abort = () => controller.current?.abort();
    if (serverId !== '') void load(serverId, 'discover');
    return () => {
      mounted.current = false;
      controller.current?.abort();
    };
    // load once for the preselected server; later selections load in selectServer
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  function resetTool() {
    setToolName('');
    setFields([]);
    setValues({});
    setErrors({});
    setOutcome(undefined);
    setCallError(undefined);
    setProgress(undefined);
  }

  function selectServer(next: string) {
    setServerId(next);
    resetTool();
    if (next === '') {
      loadSeq.current++;
      setDiscovery(undefined);
      setLoadError(undefined);
      setLoading(false);
    } else void load(next, 'discover');
  }

  function selectTool(next: string) {
    resetTool();
    setToolName(next);
    const tool = discovery?.tools.find((t) => t.nativeName === next);
    const fs = tool ? schemaFields(tool.inputSchema) : [];
    setFields(fs);
    setValues(initialValues(fs));
  }

  function setValue(name: string, value: string) {
    setValues((vs) => ({ ...vs, [name]: value }));
    setErrors((es) => withoutError(es, name));
  }

  async function run(tool: McpDiscoveredTool) {
    if (controller.current) return;
    const collected = collectArguments(fields, values);
    if (!collected.ok) {
      setErrors(collected.errors);
      return;
    }
    const abort = new AbortController();
    controller.current = abort;
    setErrors({});
    setOutcome(undefined);
    setCallError(undefined);
    setProgress(undefined);
    setStartedAt(Date.now());
    setRunning(true);
    try {
      const result = await props.testCall(
        { registrationId: serverId, nativeName: tool.nativeName, argumentsJson: collected.json },
        { signal: abort.signal, onProgress: (p) => mounted.current && controller.current === abort && setProgress(p) },
      );
      if (mounted.current) {
        setCalledWith(JSON.parse(collected.json) as Record<string, unknown>);
        setOutcome(result);
      }
    } catch (err) {
      if (mounted.current) setCallError(errorMessage(err));
    } finally {
      controller.current = null;
      if (mounted.current) {
        setRunning(false);
        setStopping(false);
      }
    }
  }

  function stop() {
    controller.current?.abort();
    setStopping(true);
  }

  const server = active.find((s) => s.id === serverId);
  const tool = discovery?.tools.find((t) => t.nativeName === toolName);
  // The App of the shown result: only for a call the server answered (a
  // call never sent or of unknown fate has no result to show); drawn again
  // for each call, torn down with its result or the console.
  const showApp = !!props.renderApp && !!tool && hasApp(tool) && outcome?.outcome === 'known_response';
  const renderApp = props.renderApp;
  useEffect(() => {
    const box = appBox.current;
    if (!showApp || !renderApp || !box || !server || !tool || !outcome) return;
    const teardown = renderApp(box, {
      registrationId: server.id,
      serverDisplayName: server.displayName,
      toolName: tool.nativeName,
      input: calledWith,
      result: outcome,
    });
    return () => teardown();
    // drawn once per shown outcome
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [showApp, outcome]);

  const title = <h3>{tr('test_title')}</h3>;
  if (active.length === 0) {
    return (
      <div className="tt-mcp-test-call">
        {title}
        <p className="tt-mcp-note">{tr('no_active_servers')}</p>
      </div>
    );
  }

  return (
    <div className="tt-mcp-test-call">
      {title}
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-server`}>{tr('server')}</label>
        <select
          id={`${id}-server`}
          className="text_pole"
          value={serverId}
          disabled={running}
          onChange={(e) => selectServer(e.target.value)}
          data-autofocus=""
        >
          {active.length > 1 && <option value="">{tr('select_server')}</option>}
          {active.map((s) => (
            <option key={s.id} value={s.id}>
              {s.displayName}
            </option>
          ))}
        </select>
        {server && <code className="tt-mcp-endpoint">{server.endpoint}</code>}
      </div>
      {loadError !== undefined && (
        <div className="tt-mcp-inline-error">
          <p className="tt-mcp-error" role="alert">
            {loadError}
          </p>
          <button type="button" className="menu_button" onClick={() => void load(serverId, 'refresh')}>
            {tr('retry')}
          </button>
        </div>
      )}
      {discovery && <DiscoveryNotes diagnostics={discovery.diagnostics} open />}
      {server && loadError === undefined && (
        <div className="tt-mcp-field">
          <label htmlFor={`${id}-tool`}>{tr('tool')}</label>
          <select
            id={`${id}-tool`}
            className="text_pole"
            value={toolName}
            disabled={running || loading}
            onChange={(e) => selectTool(e.target.value)}
          >
            <option value="">{loading ? tr('loading_tools') : tr('select_tool')}</option>
            {discovery?.tools.map((t) => (
              <option key={t.nativeName} value={t.nativeName}>
                {t.title ?? t.nativeName}
              </option>
            ))}
          </select>
        </div>
      )}
      {tool && (
        <>
          <div className="tt-mcp-tool-heading">
            <code className="tt-mcp-native-name">{tool.nativeName}</code>
            {tool.description !== undefined && <p className="tt-mcp-description">{tool.description}</p>}
          </div>
          <fieldset className="tt-mcp-fieldset" disabled={running}>
            {fields.length === 0 ? (
              <p className="tt-mcp-note">{tr('no_arguments')}</p>
            ) : (
              fields.map((f) => (
                <SchemaFieldInput
                  key={f.name}
                  field={f}
                  value={values[f.name] ?? ''}
                  error={errors[f.name]}
                  onChange={(v) => setValue(f.name, v)}
                />
              ))
            )}
          </fieldset>
          <p className="tt-mcp-note">{tr('side_effects_note')}</p>
          <p className="tt-mcp-note">
            {tr('permission_note', { permission: tr(`permission_${tool.permission}`) })}
          </p>
          <div className="tt-mcp-actions">
            {running ? (
              <>
                <CallProgress progress={progress} startedAt={startedAt} stopping={stopping} />
                <button type="button" className="menu_button" disabled={stopping} onClick={stop}>
                  {tr('stop_waiting')}
                </button>
              </>
            ) : (
              <button type="button" className="menu_button menu_button_icon" onClick={() => void run(tool)}>
                <i className="fa-solid fa-play" aria-hidden="true" />
                <span>{tr('run_test')}</span>
              </button>
            )}
          </div>
          {running && <p className="tt-mcp-note">{tr('stop_note')}</p>}
          {callError !== undefined && (
            <p className="tt-mcp-error" role="alert">
              {callError}
            </p>
          )}
          {!running && progress && <ProgressSummary updates={progress.updates} message={progress.message} />}
          {outcome && (
            <CallOutcome
              outcome={outcome}
              openResource={props.openResource && server ? (target) => props.openResource?.(server, target) : undefined}
            />
          )}
          {showApp && <div ref={appBox} className="tt-mcp-test-app ttmcp-apps" data-testid="test-call-app" />}
        </>
      )}
    </div>
  );
}

/** Opens the console in a wide popup; resolves when it closes (ending the local wait of a call in flight). */
export async function openTestCallDialog(deps: TestCallDialogDeps, tr: Tr): Promise<void> {
  const lifecycle: TestCallLifecycle = {};
  await showDialog(<TestCallDialog {...deps} lifecycle={lifecycle} />, {
    kind: 'text',
    okButton: tr('close'),
    wide: true,
    leftAlign: true,
    scroll: true,
    onClosing() {
      lifecycle.abort?.();
      return true;
    },
  }, tr);
}
