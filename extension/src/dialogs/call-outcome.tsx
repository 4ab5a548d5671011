// How a test call ended (reference §8.8), for every outcome kind, and what
// its server asked the user on the way (elicitation).

import type { ReactNode } from 'react';
import type { McpServerErrorResponse, McpTestCallOutcome, McpToolResultResponse, McpUnsupportedResponse } from '../../../jsapi/tauritavern-mcp';
import { AskedSummary } from '../ui/Asked';
import { useTr } from '../ui/tr';

function ToolResult(props: { response: McpToolResultResponse }) {
  const tr = useTr();
  const r = props.response;
  const hasStructured = r.structuredJson !== undefined && r.structuredJson !== '';
  return (
    <section className={r.isError ? 'tt-mcp-outcome tt-mcp-outcome-error' : 'tt-mcp-outcome tt-mcp-outcome-ok'}>
      <h4>
        <i className={r.isError ? 'fa-solid fa-circle-exclamation' : 'fa-solid fa-circle-check'} aria-hidden="true" />{' '}
        {r.isError ? tr('outcome_tool_error') : tr('outcome_responded')}
      </h4>
      {r.textBlocks.map((b) => (
        <pre key={b.index} className="tt-mcp-text-output">
          {b.text}
        </pre>
      ))}
      {hasStructured && (
        <>
          <h5>{tr('structured_result')}</h5>
          <pre className="tt-mcp-json-output">{r.structuredJson}</pre>
        </>
      )}
      {r.textBlocks.length === 0 && !hasStructured && <p className="tt-mcp-note">{tr('no_content')}</p>}
      {r.diagnostics.length > 0 && (
        <details className="tt-mcp-notes">
          <summary>{tr('discovery_notes', { count: r.diagnostics.length })}</summary>
          <ul>
            {r.diagnostics.map((d, i) => (
              <li key={i}>
                <code>
                  {d.code}
                  {d.contentIndex !== undefined ? ` [${d.contentIndex}]` : ''}
                </code>{' '}
                <span>{d.message}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function Failure(props: { title: string; message: string; note?: string; code?: string; children?: ReactNode }) {
  return (
    <section className="tt-mcp-outcome tt-mcp-outcome-error">
      <h4>
        <i className="fa-solid fa-circle-exclamation" aria-hidden="true" /> {props.title}
      </h4>
      <p>{props.message}</p>
      {props.note !== undefined && <p className="tt-mcp-note">{props.note}</p>}
      {props.code !== undefined && (
        <p className="tt-mcp-note">
          <code>{props.code}</code>
        </p>
      )}
      {props.children}
    </section>
  );
}

/** A request's outcome that is not the answer asked for, shown as the failure it is; null for an answer. */
type Problem =
  | { outcome: 'not_sent' | 'outcome_unknown'; code: string; message: string }
  | { outcome: 'known_response'; response: { kind: string } | McpServerErrorResponse | McpUnsupportedResponse };

/**
 * How a request that gave no answer ended (not sent, outcome unknown, a
 * server error, an unsupported response), or null when it answered.
 * unknownNote: what an unknown outcome means for this request.
 */
export function RequestProblem(props: { outcome: Problem; unknownNote?: string }) {
  const tr = useTr();
  const o = props.outcome;
  switch (o.outcome) {
    case 'not_sent':
      return (
        <Failure
          title={tr('outcome_not_sent')}
          message={o.message}
          note={o.code === 'mcp.auth_required' ? tr('call_auth_note') : undefined}
          code={o.code}
        />
      );
    case 'outcome_unknown':
      return <Failure title={tr('outcome_unknown')} message={o.message} note={props.unknownNote ?? tr('outcome_unknown_note')} code={o.code} />;
    case 'known_response': {
      const r = o.response;
      if (isServerError(r)) {
        return (
          <Failure title={tr('outcome_server_error')} message={r.message} code={tr('error_code', { code: r.code })}>
            {r.dataJson !== undefined && (
              <>
                <h5>{tr('error_data')}</h5>
                <pre className="tt-mcp-json-output">{r.dataJson}</pre>
              </>
            )}
          </Failure>
        );
      }
      if (isUnsupported(r)) {
        return <Failure title={tr('outcome_unsupported')} message={r.message} code={tr('response_type', { type: r.responseType })} />;
      }
      return null;
    }
  }
}

function isServerError(r: { kind: string }): r is McpServerErrorResponse {
  return r.kind === 'server_error';
}

function isUnsupported(r: { kind: string }): r is McpUnsupportedResponse {
  return r.kind === 'unsupported_response';
}

export function CallOutcome(props: { outcome: McpTestCallOutcome }) {
  const o = props.outcome;
  return (
    <>
      {o.outcome === 'known_response' && o.response.kind === 'tool_result' ? <ToolResult response={o.response} /> : <RequestProblem outcome={o} />}
      <AskedSummary rounds={o.rounds} elicitations={o.elicitations} />
    </>
  );
}
