// A resource in the Manager (issue 18 item 4): a listed resource is read
// when the dialog opens (the user's Open), a template first asks for its
// variables (with the server's completion suggestions when it offers
// them) and shows the URI they make; the preview shows every content of
// the read, and, in a chat, "Attach to this chat" (AttachPanel). Every read
// is the user's: nothing is read again unless they press Read again.

import { useEffect, useRef, useState } from 'react';
import type { McpResourceContent, McpResourceReadOutcome } from '../../../../jsapi/tauritavern-mcp';
import { snapshotOf } from './attachments';
import { expandUriTemplate } from './uri-template';
import { showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { ArgumentFields, type Completer } from '../../ui/ArgumentFields';
import { AttachPanel, type AttachDeps } from './AttachPanel';
import { ReadContents, formatBytes } from '../../ui/ContentView';
import { errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';
import { RequestProblem } from '../../ui/CallOutcome';
import type { ResourceTarget } from '../../ui/resource-target';

export type { ResourceTarget } from '../../ui/resource-target';

/** An embedded resource as a read's answer, for the preview and the attach panel. */
function embeddedOutcome(content: McpResourceContent): McpResourceReadOutcome {
  return {
    outcome: 'known_response',
    response: { kind: 'resource_contents', uri: content.uri, contents: [content], totalBytes: content.size, diagnostics: [] },
  };
}

export interface ResourceDialogDeps {
  server: { id: string; displayName: string };
  read(uri: string): Promise<McpResourceReadOutcome>;
  /** The server's suggestions for a template variable; absent when it offers no completion. */
  complete?: ((uriTemplate: string, name: string, value: string, context: Record<string, string>) => Promise<string[]>) | undefined;
  /** Attaching to the open chat; absent where the page cannot. */
  attach?: AttachDeps | undefined;
}

function targetName(t: ResourceTarget): string {
  switch (t.kind) {
    case 'resource':
      return t.title ?? t.name;
    case 'template':
      return t.template.title ?? t.template.name;
    case 'embedded':
      return t.name;
  }
}

/** The values filled in besides name (the completion's context). */
function others(values: Readonly<Record<string, string>>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== name && v !== ''));
}

export function ResourceDialog(props: ResourceDialogDeps & { target: ResourceTarget }) {
  const tr = useTr();
  const { target, server } = props;
  const [values, setValues] = useState<Record<string, string>>({});
  const [reading, setReading] = useState(false);
  const [result, setResult] = useState<{ uri: string; outcome: McpResourceReadOutcome } | undefined>(() =>
    target.kind === 'embedded' ? { uri: target.content.uri, outcome: embeddedOutcome(target.content) } : undefined,
  );
  const [error, setError] = useState<string>();
  const mounted = useRef(true);
  const running = useRef(false);

  const uri =
    target.kind === 'resource' ? target.uri : target.kind === 'embedded' ? target.content.uri : expandUriTemplate(target.template.uriTemplate, values);

  const read = async (at: string) => {
    if (running.current) return;
    running.current = true;
    setReading(true);
    setError(undefined);
    try {
      const outcome = await props.read(at);
      if (mounted.current) setResult({ uri: at, outcome });
    } catch (err) {
      if (mounted.current) setError(errorMessage(err));
    } finally {
      running.current = false;
      if (mounted.current) setReading(false);
    }
  };

  useEffect(() => {
    mounted.current = true;
    if (target.kind === 'resource') void read(target.uri);
    return () => {
      mounted.current = false;
    };
    // a listed resource is read once, when opened
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const complete: Completer | undefined =
    props.complete && target.kind === 'template'
      ? (name, value, all) => props.complete!(target.template.uriTemplate, name, value, others(all, name))
      : undefined;

  const description = target.kind === 'resource' ? target.description : target.kind === 'template' ? target.template.description : undefined;
  const mime = target.kind === 'resource' ? target.mimeType : target.kind === 'template' ? target.template.mimeType : target.content.mimeType;
  const contents = result?.outcome.outcome === 'known_response' && result.outcome.response.kind === 'resource_contents' ? result.outcome.response : undefined;
  return (
    <div className="tt-mcp-resource-dialog">
      <h3 className="tt-mcp-dialog-title">{targetName(target)}</h3>
      <p className="tt-mcp-note tt-mcp-from">
        <span>{tr('from_server', { server: server.displayName })}</span>
        {mime !== undefined && <span className="tt-mcp-chip">{mime}</span>}
        {target.kind === 'resource' && target.size !== undefined && <span className="tt-mcp-chip">{formatBytes(target.size)}</span>}
      </p>
      {description !== undefined && <p className="tt-mcp-description">{description}</p>}
      {target.kind === 'template' ? (
        <form
          className="tt-mcp-form"
          onSubmit={(e) => {
            e.preventDefault();
            void read(uri);
          }}
        >
          <p className="tt-mcp-note">
            {tr('template')} <code className="tt-mcp-uri">{target.template.uriTemplate}</code>
          </p>
          <fieldset className="tt-mcp-fieldset" disabled={reading}>
            <legend className="tt-mcp-sr-only">{tr('template_variables')}</legend>
            {target.template.variables.length === 0 && <p className="tt-mcp-note">{tr('no_variables')}</p>}
            <ArgumentFields
              fields={target.template.variables.map((name) => ({ name, required: false }))}
              values={values}
              errors={{}}
              complete={complete}
              onChange={(name, v) => setValues((all) => ({ ...all, [name]: v }))}
            />
          </fieldset>
          <p className="tt-mcp-note">
            {tr('uri_to_read')} <code className="tt-mcp-uri" aria-live="polite">{uri}</code>
          </p>
          <div className="tt-mcp-actions">
            <button type="submit" className="menu_button menu_button_icon" disabled={reading}>
              <i className="fa-solid fa-book-open" aria-hidden="true" />
              <span>{tr('read')}</span>
            </button>
          </div>
        </form>
      ) : (
        <p className="tt-mcp-note">
          <code className="tt-mcp-uri">{uri}</code>
          {target.kind === 'embedded' && <> · {tr('embedded_resource_note')}</>}
        </p>
      )}
      {reading && (
        <p className="tt-mcp-note" role="status">
          <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" /> {tr('reading')}
        </p>
      )}
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
      {result && !reading && (
        <>
          {contents ? <ReadContents response={contents} /> : <RequestProblem outcome={result.outcome} unknownNote={tr('read_unknown_note')} />}
          {target.kind === 'resource' && (
            <div className="tt-mcp-actions">
              <button type="button" className="menu_button" onClick={() => void read(result.uri)}>
                {tr('read_again')}
              </button>
            </div>
          )}
          {contents && props.attach && (
            <AttachPanel
              key={`${result.uri}|${contents.totalBytes}|${contents.contents.length}`}
              snapshot={snapshotOf(contents, { registrationId: server.id, serverName: server.displayName, name: targetName(target) })}
              deps={props.attach}
            />
          )}
        </>
      )}
    </div>
  );
}

export async function openResourceDialog(deps: ResourceDialogDeps, target: ResourceTarget, tr: Tr): Promise<void> {
  await showDialog(<ResourceDialog {...deps} target={target} />, { kind: 'text', okButton: tr('close'), wide: true, leftAlign: true, scroll: true }, tr);
}
