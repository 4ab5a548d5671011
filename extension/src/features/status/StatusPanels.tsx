// What the drawer shows when the Manager cannot work: each state says what
// is wrong, what to do about it, and offers Retry (no page reload needed).

import { useId, useState, type ReactNode } from 'react';
import { normalizeBackendUrl, serveCommand, type BackendRoute, type PluginStatus } from '../../host/backend';
import { useTr } from '../../base/tr';

function Panel(props: { icon: string; title: string; children: ReactNode; tone?: 'error' | 'warning' }) {
  return (
    <section className={`tt-mcp-state-panel tt-mcp-state-panel-${props.tone ?? 'error'}`} role="alert">
      <h4>
        <i className={`fa-solid ${props.icon}`} aria-hidden="true" /> {props.title}
      </h4>
      {props.children}
    </section>
  );
}

/** A command line; it wraps between its flags, never inside one. */
function Command(props: { text: string }) {
  const parts = props.text.split(/ (?=--)/);
  return (
    <code className="tt-mcp-command">
      {parts.map((part, i) => (
        <span key={i} className="tt-mcp-command-part">
          {i > 0 ? ' ' : ''}
          {part}
        </span>
      ))}
    </code>
  );
}

function Details(props: { message: string }) {
  const tr = useTr();
  if (props.message === '') return null;
  return <p className="tt-mcp-note tt-mcp-details">{tr('error_details', { message: props.message })}</p>;
}

function RetryButton(props: { busy: boolean; onRetry(): void }) {
  const tr = useTr();
  return (
    <button type="button" className="menu_button menu_button_icon" disabled={props.busy} onClick={props.onRetry}>
      <i className={props.busy ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-arrows-rotate'} aria-hidden="true" />
      <span>{props.busy ? tr('retrying') : tr('retry')}</span>
    </button>
  );
}

export function Connecting() {
  const tr = useTr();
  return (
    <p className="tt-mcp-note tt-mcp-connecting" role="status">
      <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('connecting')}
    </p>
  );
}

export interface BackendDownProps {
  backend: string;
  message: string;
  busy: boolean;
  /** The backend the host API was already loaded from, when that is not `backend` (a reload is needed). */
  loadedFrom?: string;
  /**
   * The page was opened from another device (its origin is not this
   * computer's loopback): no backend on loopback can be reached from it,
   * only SillyTavern's plugin can carry the traffic.
   */
  remotePage?: boolean;
  onRetry(): void;
  /** Saves a new backend URL (an origin) and retries with it. */
  onSaveUrl(url: string): void;
}

export function BackendDown(props: BackendDownProps) {
  const tr = useTr();
  const id = useId();
  const [draft, setDraft] = useState(props.backend);
  const [invalid, setInvalid] = useState(false);
  const save = () => {
    const url = normalizeBackendUrl(draft);
    if (!url) {
      setInvalid(true);
      return;
    }
    setInvalid(false);
    setDraft(url);
    props.onSaveUrl(url);
  };
  return (
    <Panel icon="fa-plug-circle-xmark" title={tr('backend_down_title')}>
      <p>{tr('backend_down_body', { url: props.backend })}</p>
      {props.remotePage ? (
        <>
          <p>{tr('backend_down_remote')}</p>
          <Command text="ttmcp install-extension --sillytavern <SillyTavern folder> --enable-server-plugins" />
        </>
      ) : (
        <>
          <p>{tr('backend_down_hint')}</p>
          <Command text={serveCommand(props.backend)} />
          <p className="tt-mcp-note">{tr('backend_down_plugin_hint')}</p>
        </>
      )}
      <Details message={props.message} />
      {props.loadedFrom !== undefined && (
        <p className="tt-mcp-note tt-mcp-warning">
          {tr('backend_url_reload', { url: props.loadedFrom, next: props.backend })}
        </p>
      )}
      <div className="tt-mcp-actions">
        <RetryButton busy={props.busy} onRetry={props.onRetry} />
      </div>
      <form
        className="tt-mcp-backend-url"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <label htmlFor={`${id}-url`}>{tr('backend_url')}</label>
        <div className="tt-mcp-inline">
          <input
            id={`${id}-url`}
            className="text_pole"
            type="text"
            inputMode="url"
            spellCheck={false}
            autoComplete="off"
            value={draft}
            disabled={props.busy}
            aria-invalid={invalid || undefined}
            aria-describedby={`${id}-hint${invalid ? ` ${id}-error` : ''}`}
            onChange={(e) => {
              setDraft(e.target.value);
              setInvalid(false);
            }}
          />
          <button type="submit" className="menu_button" disabled={props.busy}>
            {tr('backend_url_save')}
          </button>
        </div>
        <small id={`${id}-hint`} className="tt-mcp-hint">
          {tr('backend_url_hint')}
        </small>
        {invalid && (
          <small id={`${id}-error`} className="tt-mcp-field-error">
            {tr('endpoint_invalid')}
          </small>
        )}
      </form>
    </Panel>
  );
}

export interface OriginRefusedProps {
  backend: string;
  origin: string;
  message: string;
  /** The backend's own restart command with --allow-origin (absent: an older backend; the panel builds one). */
  command?: string;
  busy: boolean;
  onRetry(): void;
}

export function OriginRefused(props: OriginRefusedProps) {
  const tr = useTr();
  return (
    <Panel icon="fa-ban" title={tr('origin_refused_title')}>
      <p>{tr('origin_refused_body', { url: props.backend, origin: props.origin })}</p>
      <p>{tr('origin_refused_hint')}</p>
      <Command text={props.command ?? serveCommand(props.backend, `--allow-origin ${props.origin}`)} />
      <Details message={props.message} />
      <div className="tt-mcp-actions">
        <RetryButton busy={props.busy} onRetry={props.onRetry} />
      </div>
    </Panel>
  );
}

export function ApiMissing() {
  const tr = useTr();
  return (
    <Panel icon="fa-puzzle-piece" title={tr('api_missing_title')}>
      <p>{tr('api_missing_body')}</p>
    </Panel>
  );
}

export function LoadFailed(props: { message: string; busy: boolean; onRetry(): void }) {
  const tr = useTr();
  return (
    <Panel icon="fa-circle-exclamation" title={tr('load_failed')}>
      <Details message={props.message} />
      <div className="tt-mcp-actions">
        <RetryButton busy={props.busy} onRetry={props.onRetry} />
      </div>
    </Panel>
  );
}

/** Shown above a working Manager while the bridge is reconnecting. */
export function ConnectionLost(props: { backend: string; busy: boolean; onReconnect?: () => void }) {
  const tr = useTr();
  return (
    <div className="tt-mcp-connection-lost" role="status">
      <span>
        <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('connection_lost', { url: props.backend })}
      </span>
      {props.onReconnect && (
        <button type="button" className="menu_button" disabled={props.busy} onClick={props.onReconnect}>
          {tr('reconnect')}
        </button>
      )}
    </div>
  );
}

/**
 * The plugin answers on SillyTavern's origin but the backend behind it does
 * not (yet): the plugin starts it, so there is no command to give, only what
 * is happening and where its log is.
 */
export function PluginBackendDown(props: { plugin: PluginStatus; message: string; busy: boolean; onRetry(): void }) {
  const tr = useTr();
  const untrusted = props.plugin.backend === 'untrusted';
  return (
    <Panel icon="fa-plug-circle-xmark" title={tr(untrusted ? 'plugin_untrusted_title' : 'plugin_backend_down_title')} tone={untrusted ? 'error' : 'warning'}>
      {untrusted ? (
        <p>{tr('plugin_untrusted_body')}</p>
      ) : (
        <>
          <p>{tr('plugin_backend_down_body')}</p>
          <p>{tr('plugin_backend_down_hint')}</p>
        </>
      )}
      <Details message={props.message} />
      <div className="tt-mcp-actions">
        <RetryButton busy={props.busy} onRetry={props.onRetry} />
      </div>
    </Panel>
  );
}

/** Which way the Manager reaches ttmcp: through SillyTavern's plugin, or directly. */
export function RouteLine(props: { route: BackendRoute }) {
  const tr = useTr();
  const { route } = props;
  return (
    <p className="tt-mcp-note tt-mcp-route">
      <i className={`fa-solid ${route.via === 'plugin' ? 'fa-shield-halved' : 'fa-plug'}`} aria-hidden="true" />{' '}
      {route.via === 'plugin'
        ? // the user is named where SillyTavern has accounts (without them everyone is its default user)
          tr(route.plugin.user !== undefined && route.plugin.user !== '' && route.plugin.user !== 'default-user' ? 'route_plugin_user' : 'route_plugin', {
            user: route.plugin.user ?? '',
          })
        : tr('route_direct', { url: route.url })}
    </p>
  );
}
