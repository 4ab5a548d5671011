// A prompt in the Manager (issue 18 item 4): its description, a form for
// its arguments (required ones marked and checked before the request, the
// server's completion suggestions when it offers them), and what the
// server returned: the messages by role. "Put in the input box" puts the
// prompt's user text into SillyTavern's chat input (prompt-text.ts), and
// says what was left out of it. A resource link in the messages opens.

import { useRef, useState } from 'react';
import type { McpPrompt, McpPromptGetOutcome, McpPromptMessagesResponse } from '../../../../jsapi/tauritavern-mcp';
import { leftOutText, promptText } from './prompt-text';
import { showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { ArgumentFields, missingRequired, type Completer } from '../../ui/ArgumentFields';
import { PromptMessages } from '../../ui/ContentView';
import { errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';
import { RequestProblem } from '../../ui/CallOutcome';

export interface PromptDialogDeps {
  server: { id: string; displayName: string };
  get(name: string, args: Record<string, string>): Promise<McpPromptGetOutcome>;
  /** The server's suggestions for an argument; absent when it offers no completion. */
  complete?: ((promptName: string, name: string, value: string, context: Record<string, string>) => Promise<string[]>) | undefined;
  /** Puts text into the chat's input box; false when the page has none. Absent: no such box here. */
  putInInputBox?: ((text: string) => boolean) | undefined;
  /** Opens a resource the messages link to. */
  openLink?: ((uri: string, name: string) => void) | undefined;
}

function PutInInput(props: { response: McpPromptMessagesResponse; put: (text: string) => boolean }) {
  const tr = useTr();
  const { text, leftOut } = promptText(props.response);
  const [state, setState] = useState<'idle' | 'done' | 'no_box'>('idle');
  return (
    <section className="tt-mcp-put" aria-label={tr('put_in_input')}>
      {leftOut.length > 0 && (
        <div className="tt-mcp-warning" role="note">
          <p>{tr('left_out_intro', { count: leftOut.length })}</p>
          <ul>
            {leftOut.map((l, i) => (
              <li key={i}>{leftOutText(l, tr)}</li>
            ))}
          </ul>
        </div>
      )}
      {text === '' ? (
        <p className="tt-mcp-note">{tr('prompt_no_user_text')}</p>
      ) : (
        <div className="tt-mcp-actions">
          <button type="button" className="menu_button menu_button_icon" onClick={() => setState(props.put(text) ? 'done' : 'no_box')}>
            <i className="fa-solid fa-keyboard" aria-hidden="true" />
            <span>{tr('put_in_input')}</span>
          </button>
          {state === 'done' && (
            <span className="tt-mcp-note" role="status">
              {tr('put_in_input_done', { count: text.length, chars: text.length.toLocaleString() })}
            </span>
          )}
          {state === 'no_box' && (
            <span className="tt-mcp-error" role="alert">
              {tr('put_in_input_missing')}
            </span>
          )}
        </div>
      )}
    </section>
  );
}

export function PromptDialog(props: PromptDialogDeps & { prompt: McpPrompt }) {
  const tr = useTr();
  const { prompt, server } = props;
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [getting, setGetting] = useState(false);
  const [outcome, setOutcome] = useState<McpPromptGetOutcome>();
  const [error, setError] = useState<string>();
  const running = useRef(false);

  const complete: Completer | undefined = props.complete
    ? (name, value, all) =>
        props.complete!(prompt.name, name, value, Object.fromEntries(Object.entries(all).filter(([k, v]) => k !== name && v !== '')))
    : undefined;

  const get = async () => {
    if (running.current) return;
    const missing = missingRequired(prompt.arguments, values, tr('argument_required'));
    setErrors(missing);
    if (Object.keys(missing).length > 0) return;
    running.current = true;
    setGetting(true);
    setError(undefined);
    setOutcome(undefined);
    try {
      // an argument left empty is not sent: the server's default applies
      const args = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
      setOutcome(await props.get(prompt.name, args));
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      running.current = false;
      setGetting(false);
    }
  };

  const messages = outcome?.outcome === 'known_response' && outcome.response.kind === 'prompt_messages' ? outcome.response : undefined;
  return (
    <div className="tt-mcp-prompt-dialog">
      <h3 className="tt-mcp-dialog-title">
        {prompt.title ?? prompt.name}
        {prompt.title !== undefined && <code className="tt-mcp-native-name"> {prompt.name}</code>}
      </h3>
      <p className="tt-mcp-note">{tr('from_server', { server: server.displayName })}</p>
      {prompt.description !== undefined && <p className="tt-mcp-description">{prompt.description}</p>}
      <form
        className="tt-mcp-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void get();
        }}
      >
        <fieldset className="tt-mcp-fieldset" disabled={getting}>
          <legend className="tt-mcp-sr-only">{tr('prompt_arguments')}</legend>
          {prompt.arguments.length === 0 ? (
            <p className="tt-mcp-note">{tr('prompt_no_arguments')}</p>
          ) : (
            <ArgumentFields
              fields={prompt.arguments}
              values={values}
              errors={errors}
              complete={complete}
              onChange={(name, v) => {
                setValues((all) => ({ ...all, [name]: v }));
                setErrors((all) => {
                  if (!(name in all)) return all;
                  const { [name]: _cleared, ...rest } = all;
                  return rest;
                });
              }}
            />
          )}
        </fieldset>
        {prompt.arguments.some((a) => a.required) && <p className="tt-mcp-note">{tr('required_note')}</p>}
        <div className="tt-mcp-actions">
          <button type="submit" className="menu_button menu_button_icon" disabled={getting}>
            <i className={getting ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-wand-magic-sparkles'} aria-hidden="true" />
            <span>{tr('get_prompt')}</span>
          </button>
        </div>
      </form>
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
      {outcome &&
        (messages ? (
          <>
            <PromptMessages response={messages} {...(props.openLink ? { onOpenLink: props.openLink } : {})} />
            {props.putInInputBox && <PutInInput response={messages} put={props.putInInputBox} />}
          </>
        ) : (
          <RequestProblem outcome={outcome} unknownNote={tr('read_unknown_note')} />
        ))}
    </div>
  );
}

export async function openPromptDialog(deps: PromptDialogDeps, prompt: McpPrompt, tr: Tr): Promise<void> {
  await showDialog(<PromptDialog {...deps} prompt={prompt} />, { kind: 'text', okButton: tr('close'), wide: true, leftAlign: true, scroll: true }, tr);
}
