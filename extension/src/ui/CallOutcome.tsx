// How a test call ended (reference §8.8), for every outcome kind, and what
// its server asked the user on the way (elicitation).

import type { ReactNode } from 'react';
import type {
  McpResultResource,
  McpServerErrorResponse,
  McpTestCallOutcome,
  McpToolResultResponse,
  McpUnsupportedResponse,
} from '../../../jsapi/tauritavern-mcp';
import { AskedSummary } from './Asked';
import { formatBytes } from './ContentView';
import { useTr } from '../base/tr';
import { linkTarget, type ResourceTarget } from './resource-target';

/** Opens a resource a result names (the resource dialog: preview, attach). */
export type OpenResultResource = (target: ResourceTarget) => void;

/** A result's resource as the resource dialog opens it: a link by URI, an embedded one as it came. */
export function resultResourceTarget(r: McpResultResource): ResourceTarget {
  if (r.type === 'resource_link') return linkTarget(r);
  return { kind: 'embedded', name: r.resource.uri, content: r.resource };
}

/** The resource links and embedded resources of a result, each openable when the page can. */
function ResultResources(props: { resources: McpResultResource[]; open?: OpenResultResource | undefined }) {
  const tr = useTr();
  return (
    <>
      <h5>{tr('result_resources', { count: props.resources.length })}</h5>
      <ul className="tt-mcp-result-resources">
        {props.resources.map((r) => {
          const name = r.type === 'resource_link' ? (r.title ?? r.name) : r.resource.uri;
          const mime = r.type === 'resource_link' ? r.mimeType : r.resource.mimeType;
          const size = r.type === 'resource_link' ? r.size : r.resource.size;
          return (
            <li key={r.index}>
              <span className="tt-mcp-resource-name">{name}</span>{' '}
              {r.type === 'resource_link' && <code className="tt-mcp-uri">{r.uri}</code>}{' '}
              <span className="tt-mcp-chip">{r.type === 'resource_link' ? tr('resource_link') : tr('embedded_resource')}</span>
              {mime !== undefined && <span className="tt-mcp-chip">{mime}</span>}
              {size !== undefined && <span className="tt-mcp-chip">{formatBytes(size)}</span>}
              {props.open && (
                <button
                  type="button"
                  className="menu_button menu_button_icon"
                  aria-label={tr('open_resource_named', { name })}
                  onClick={() => props.open?.(resultResourceTarget(r))}
                >
                  <i className="fa-solid fa-book-open" aria-hidden="true" />
                  <span>{tr('open')}</span>
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/**
 * The notes worth showing beside a result: not the "not supported" notes
 * of blocks listed as its resources (upstream reports those, and the page
 * keeps them; the Open list shows what ttmcp does with them), as the
 * model's readable text leaves them out.
 */
export function resultNotes(r: McpToolResultResponse): McpToolResultResponse['diagnostics'] {
  const listed = new Set((r.resources ?? []).map((x) => x.index));
  return r.diagnostics.filter((d) => d.contentIndex === undefined || !listed.has(d.contentIndex));
}

function ToolResult(props: { response: McpToolResultResponse; openResource?: OpenResultResource | undefined }) {
  const tr = useTr();
  const r = props.response;
  const hasStructured = r.structuredJson !== undefined && r.structuredJson !== '';
  const notes = resultNotes(r);
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
      {r.resources !== undefined && r.resources.length > 0 && <ResultResources resources={r.resources} open={props.openResource} />}
      {r.textBlocks.length === 0 && !hasStructured && (r.resources ?? []).length === 0 && <p className="tt-mcp-note">{tr('no_content')}</p>}
      {notes.length > 0 && (
        <details className="tt-mcp-notes">
          <summary>{tr('result_notes', { count: notes.length })}</summary>
          <ul>
            {notes.map((d, i) => (
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

export function CallOutcome(props: { outcome: McpTestCallOutcome; openResource?: OpenResultResource | undefined }) {
  const o = props.outcome;
  return (
    <>
      {o.outcome === 'known_response' && o.response.kind === 'tool_result' ? (
        <ToolResult response={o.response} openResource={props.openResource} />
      ) : (
        <RequestProblem outcome={o} />
      )}
      <AskedSummary rounds={o.rounds} elicitations={o.elicitations} />
    </>
  );
}
