// A server's question during one of this page's calls (elicitation, SPEC
// §10): a SillyTavern popup that names the server, the tool and the call
// (a test call or the model's), shows the server's message as plain text,
// and either a form built from the requested schema (form mode) or the page
// the server wants opened, its host set apart (URL mode). Accept, Decline
// and Cancel; Escape or closing is Cancel; the call's withdrawal (Stop, the
// backend's 10-minute bound) closes it and its answer is dropped. The popup
// is modal, so SillyTavern's own Stop button cannot be reached while it is
// open: a question during the model's call offers Stop generation itself. Nothing
// is filled in but the schema's defaults, nothing is accepted by itself,
// and a URL opens only on the user's click, in a new tab without an opener.

import { useLayoutEffect, useMemo, useState } from 'react';
import type { JsonObject, JsonValue, McpElicitationRequest, McpElicitationResponse } from '../../../../jsapi/tauritavern-mcp';
import { OkGate, RESULT, showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { SchemaFieldInput } from '../../ui/SchemaFieldInput';
import { useTr } from '../../base/tr';
import { collectContent, elicitationFields, initialValues, withoutError, type FieldError, type SchemaField } from '../../ui/schema-form';

/** The Cancel button's result (SillyTavern numbers custom buttons from 2). */
export const CANCEL_RESULT = 2;
/** The Stop generation button's result (a model's call only). */
export const STOP_RESULT = 3;

/** Where a URL-mode question would take the user. */
export type UrlTarget =
  /** http(s): openable; host is what the browser will connect to (punycode for a non-ASCII name). */
  | { kind: 'web'; href: string; host: string }
  /** Another scheme (javascript:, file:, a custom app's): shown, never opened. */
  | { kind: 'other'; scheme: string }
  /** Not a URL at all. */
  | { kind: 'invalid' };

/** Parses a question's URL with the browser's own parser (what a link would do). */
export function urlTarget(raw: string | undefined): UrlTarget {
  if (raw === undefined || raw.trim() === '') return { kind: 'invalid' };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { kind: 'invalid' };
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return { kind: 'web', href: u.href, host: u.host };
  return { kind: 'other', scheme: u.protocol };
}

/** What the popup reads from its form when the user accepts. */
export interface ElicitationHandle {
  /** The answer when the form fits; else undefined, with each field's error shown. */
  content(): Record<string, JsonValue> | undefined;
  /** What the user typed (kept in case the backend asks again). */
  values(): Record<string, string>;
}

export interface ElicitationDialogProps {
  request: McpElicitationRequest;
  /** The popup offers Stop generation (a model's call on a page that can stop it). */
  stoppable?: boolean;
  /** What the user typed the last time this question was asked (a re-ask with request.error); else the defaults. */
  values?: Record<string, string>;
  bind?(handle: ElicitationHandle | null): void;
  /** Told whether the form fits now (form mode), so Accept can look unavailable until it does. */
  onFits?(fits: boolean): void;
}

function fieldsOf(request: McpElicitationRequest): SchemaField[] {
  const schema = request.requestedSchema;
  return request.mode === 'form' && schema ? elicitationFields(schema as JsonObject) : [];
}

function Facts({ request }: { request: McpElicitationRequest }) {
  const tr = useTr();
  return (
    <dl className="tt-mcp-approval-facts">
      <dt>{tr('server')}</dt>
      <dd className="tt-mcp-elicit-server">{request.serverDisplayName}</dd>
      <dt>{tr('tool')}</dt>
      <dd>
        <code className="tt-mcp-native-name">{request.nativeName}</code>
      </dd>
      <dt>{tr('elicit_during')}</dt>
      <dd>{tr(request.source === 'test' ? 'elicit_during_test' : 'elicit_during_model')}</dd>
    </dl>
  );
}

function UrlPart({ request }: { request: McpElicitationRequest }) {
  const tr = useTr();
  const target = urlTarget(request.url);
  return (
    <div className="tt-mcp-elicit-url">
      {target.kind === 'web' && (
        <p className="tt-mcp-elicit-site">
          <span className="tt-mcp-elicit-label">{tr('elicit_site')}</span>
          <strong className="tt-mcp-elicit-host">{target.host}</strong>
        </p>
      )}
      <p className="tt-mcp-elicit-label">{tr('elicit_address')}</p>
      <code className="tt-mcp-elicit-href">{request.url ?? ''}</code>
      {target.kind === 'web' && (
        <p className="tt-mcp-note">{tr('elicit_url_warning', { host: target.host, server: request.serverDisplayName })}</p>
      )}
      {target.kind === 'other' && (
        <p className="tt-mcp-error" role="alert">
          {tr('elicit_url_not_web', { scheme: target.scheme })}
        </p>
      )}
      {target.kind === 'invalid' && (
        <p className="tt-mcp-error" role="alert">
          {tr('elicit_url_invalid')}
        </p>
      )}
    </div>
  );
}

/** The popup's body: the question and, in form mode, its form. */
export function ElicitationDialog(props: ElicitationDialogProps) {
  const tr = useTr();
  const { request, bind, onFits, stoppable } = props;
  const fields = useMemo(() => fieldsOf(request), [request]);
  const [values, setValues] = useState<Record<string, string>>(() => ({ ...initialValues(fields), ...props.values }));
  const [errors, setErrors] = useState<Record<string, FieldError>>({});
  const fits = useMemo(() => collectContent(fields, values).ok, [fields, values]);

  useLayoutEffect(() => onFits?.(fits), [onFits, fits]);
  useLayoutEffect(() => {
    bind?.({
      content() {
        const r = collectContent(fields, values);
        if (r.ok) return r.content;
        setErrors(r.errors);
        return undefined;
      },
      values: () => values,
    });
    return () => bind?.(null);
  }, [bind, fields, values]);

  function setValue(name: string, value: string) {
    setValues((vs) => ({ ...vs, [name]: value }));
    setErrors((es) => withoutError(es, name));
  }

  const form = request.mode === 'form';
  return (
    <div className="tt-mcp-approval tt-mcp-elicit">
      <h3 className="tt-mcp-approval-title">
        {tr(form ? 'elicit_title_form' : 'elicit_title_url', { server: request.serverDisplayName })}
      </h3>
      <Facts request={request} />
      {request.message !== '' && <p className="tt-mcp-elicit-message">{request.message}</p>}
      {request.error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {tr('elicit_retry', { error: request.error })}
        </p>
      )}
      {form &&
        (fields.length === 0 ? (
          <p className="tt-mcp-note">{tr('elicit_no_fields')}</p>
        ) : (
          <form className="tt-mcp-fieldset" onSubmit={(e) => e.preventDefault()} noValidate>
            {fields.map((f, i) => (
              <SchemaFieldInput
                key={f.name}
                field={f}
                value={values[f.name] ?? ''}
                error={errors[f.name]}
                onChange={(v) => setValue(f.name, v)}
                variant="elicitation"
                autoFocus={i === 0}
              />
            ))}
          </form>
        ))}
      {request.resend && (
        <p className="tt-mcp-note tt-mcp-elicit-resend">{tr('elicit_resend_note', { server: request.serverDisplayName })}</p>
      )}
      {!form && <UrlPart request={request} />}
      {request.resend ? (
        // nothing is answered to the server: the call is sent again, or not
        <p className="tt-mcp-note">{tr('elicit_resend_buttons_note', { server: request.serverDisplayName })}</p>
      ) : (
        <>
          <p className="tt-mcp-note tt-mcp-elicit-warning">
            <i className="fa-solid fa-triangle-exclamation" aria-hidden="true" />{' '}
            {tr(form ? 'elicit_form_warning' : 'elicit_url_answer', { server: request.serverDisplayName })}
          </p>
          <p className="tt-mcp-note">{tr('elicit_buttons_note')}</p>
        </>
      )}
      {stoppable && <p className="tt-mcp-note">{tr('elicit_stop_note')}</p>}
    </div>
  );
}

/** What the user answered, and what they typed (for a re-ask of the same question). */
export interface ElicitationAnswer {
  response: McpElicitationResponse;
  values?: Record<string, string>;
}

export interface AskOptions {
  /** The question is withdrawn: the popup closes and its answer is dropped. */
  signal: AbortSignal;
  /** The values typed the last time this question was asked (request.error says why they were refused). */
  values?: Record<string, string>;
  /** Opens a URL-mode page (tests); window.open in a new tab without an opener by default. */
  open?(href: string): void;
  /**
   * Stops the generation the question came from (SillyTavern's
   * stopGeneration): offered as Stop generation for the model's calls,
   * since the modal popup hides SillyTavern's Stop. Stopping withdraws the
   * question (the signal aborts), as SillyTavern's Stop would.
   */
  stop?(): void;
}

function openInNewTab(href: string): void {
  window.open(href, '_blank', 'noopener,noreferrer');
}

/**
 * Puts one question to the user in a popup and resolves the answer: OK is
 * Accept (form mode: only once the form fits; URL mode: "Open page", which
 * opens it in a new tab within the click and then says the server goes on
 * once the user is done there), Decline, Cancel; Escape is Cancel. The
 * signal aborting closes the popup (the answer then is cancel, and nobody
 * reads it). Rejects when the page has no Popup (the transport answers
 * cancel).
 */
export async function askElicitation(request: McpElicitationRequest, opts: AskOptions, tr: Tr): Promise<ElicitationAnswer> {
  const handle: { current: ElicitationHandle | null } = { current: null };
  const gate = new OkGate();
  const target = request.mode === 'url' ? urlTarget(request.url) : undefined;
  if (target && target.kind !== 'web') gate.set(false);
  let content: Record<string, JsonValue> | undefined;
  let values: Record<string, string> | undefined;
  const stop = request.source === 'model' ? opts.stop : undefined;
  const buttons = [{ text: tr('cancel'), result: CANCEL_RESULT, appendAtEnd: true }];
  if (stop) buttons.push({ text: tr('elicit_stop'), result: STOP_RESULT, appendAtEnd: true });
  const result = await showDialog(
    <ElicitationDialog
      request={request}
      stoppable={stop !== undefined}
      {...(opts.values ? { values: opts.values } : {})}
      bind={(h) => {
        handle.current = h;
      }}
      {...(request.mode === 'form' ? { onFits: (fits: boolean) => gate.set(fits) } : {})}
    />,
    {
      kind: 'confirm',
      okButton: tr(request.mode === 'form' ? 'elicit_accept' : 'elicit_open'),
      cancelButton: tr('elicit_decline'),
      customButtons: buttons,
      defaultResult: CANCEL_RESULT,
      wide: true,
      leftAlign: true,
      scroll: true,
      signal: opts.signal,
      okGate: gate,
      onClosing(r) {
        values = handle.current?.values(); // the body is gone once the popup closed
        if (r === STOP_RESULT) {
          stop?.(); // the bridge aborts the call; its answer is not read
          return true;
        }
        if (r !== RESULT.AFFIRMATIVE) return true;
        if (target) {
          if (target.kind !== 'web') return false;
          (opts.open ?? openInNewTab)(target.href); // within the user's click (or Enter)
          return true;
        }
        content = handle.current?.content();
        return content !== undefined;
      },
    },
    tr,
  );
  const typed = values ? { values } : {};
  if (opts.signal.aborted || result === STOP_RESULT) return { response: { action: 'cancel' } };
  if (result === RESULT.AFFIRMATIVE) {
    if (target?.kind === 'web' && request.resend) {
      // The call waits for the user to be done there: that is the answer.
      return { response: { action: (await askDone(request, target.host, opts.signal, tr)) ? 'accept' : 'cancel' } };
    }
    if (target?.kind === 'web') {
      void showOpened(request, target.host, tr).catch(() => {});
      return { response: { action: 'accept' } };
    }
    return { response: { action: 'accept', content: content ?? {} }, ...typed };
  }
  if (result === RESULT.NEGATIVE) return { response: { action: 'decline' }, ...typed };
  return { response: { action: 'cancel' }, ...typed };
}

/** After "Open page": where to go on, and that the server continues once the user is done there. */
async function showOpened(request: McpElicitationRequest, host: string, tr: Tr): Promise<void> {
  await showDialog(
    <div className="tt-mcp-approval tt-mcp-elicit-opened">
      <h3 className="tt-mcp-approval-title">{tr('elicit_opened_title')}</h3>
      <p>{tr('elicit_opened', { host, server: request.serverDisplayName })}</p>
    </div>,
    { kind: 'text', okButton: tr('close') },
    tr,
  );
}

/**
 * After "Open page" for a call the server refused until the user is done
 * there (request.resend): Done says so and the call is sent again; Cancel
 * (or Escape) leaves the refusal as the call's answer. The backend
 * withdraws the question (the signal) when the server announces the page
 * done, or the call is stopped.
 */
async function askDone(request: McpElicitationRequest, host: string, signal: AbortSignal, tr: Tr): Promise<boolean> {
  if (signal.aborted) return false;
  const result = await showDialog(
    <div className="tt-mcp-approval tt-mcp-elicit-opened">
      <h3 className="tt-mcp-approval-title">{tr('elicit_opened_title')}</h3>
      <p>{tr('elicit_done_ask', { host, server: request.serverDisplayName })}</p>
    </div>,
    { kind: 'confirm', okButton: tr('elicit_done'), cancelButton: tr('cancel'), defaultResult: RESULT.AFFIRMATIVE, signal },
    tr,
  );
  return !signal.aborted && result === RESULT.AFFIRMATIVE;
}
