// The tool description dialog (reference §8.7): edits the top-level
// description the model sees; property overrides are kept as they are.
// "Reset all customizations" (a custom popup result) deletes the whole
// override.

import { forwardRef, useId, useImperativeHandle, useRef, useState, type Ref } from 'react';
import type { McpDiscoveredTool, ToolDescriptionOverride } from '../../../../jsapi/tauritavern-mcp';
import { RESULT, showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import { FormStatus } from '../../ui/FormStatus';
import { useTr } from '../../base/tr';

/** The popup result of "Reset all customizations". */
export const RESET_RESULT = 2;

export interface ToolDialogInput {
  tool: McpDiscoveredTool;
  override: ToolDescriptionOverride | undefined;
  /** Saves the override (null deletes it); a rejection is shown in the dialog. */
  save(override: ToolDescriptionOverride | null): Promise<void>;
}

/**
 * The override to save for draft: the current one with its description
 * replaced by the draft verbatim, or removed when the draft is blank; null
 * when nothing customised remains.
 */
export function nextOverride(current: ToolDescriptionOverride | undefined, draft: string): ToolDescriptionOverride | null {
  const properties = { ...(current?.properties ?? {}) };
  if (draft.trim() !== '') return { description: draft, properties };
  return Object.keys(properties).length > 0 ? { properties } : null;
}

interface ToolDescriptionFormHandle {
  /** Saves the draft (reset: null); true when saved, false when the dialog must stay open. */
  save(reset: boolean): Promise<boolean>;
  busy(): boolean;
}

const ToolDescriptionForm = forwardRef(function ToolDescriptionForm(
  props: ToolDialogInput,
  ref: Ref<ToolDescriptionFormHandle>,
) {
  const tr = useTr();
  const id = useId();
  const { tool, override } = props;
  const [draft, setDraft] = useState(override?.description ?? '');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);
  const kept = Object.keys(override?.properties ?? {});

  useImperativeHandle(ref, () => ({
    busy: () => busyRef.current,
    async save(reset) {
      if (busyRef.current) return false;
      busyRef.current = true;
      setBusy(true);
      setError(undefined);
      try {
        await props.save(reset ? null : nextOverride(override, draft));
        return true;
      } catch (err) {
        setError(errorMessage(err));
        return false;
      } finally {
        busyRef.current = false;
        setBusy(false);
      }
    },
  }));

  const title = tool.title ?? tool.nativeName;
  return (
    <form className="tt-mcp-form" onSubmit={(e) => e.preventDefault()} aria-busy={busy}>
      <h3 className="tt-mcp-dialog-title">
        {title}
        {tool.title !== undefined && tool.title !== tool.nativeName && (
          <>
            {' '}
            <code className="tt-mcp-native-name">{tool.nativeName}</code>
          </>
        )}
      </h3>
      {tool.description !== undefined && tool.description !== '' && (
        <div className="tt-mcp-field">
          <span className="tt-mcp-label" id={`${id}-server`}>
            {tr('server_description')}
          </span>
          <p className="tt-mcp-readonly" aria-labelledby={`${id}-server`}>
            {tool.description}
          </p>
        </div>
      )}
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-custom`}>{tr('custom_description')}</label>
        <textarea
          id={`${id}-custom`}
          className="text_pole"
          rows={5}
          value={draft}
          disabled={busy}
          onChange={(e) => setDraft(e.target.value)}
          aria-describedby={`${id}-hint`}
          data-autofocus=""
        />
        <small id={`${id}-hint`} className="tt-mcp-hint">
          {tr('custom_description_hint')}
        </small>
      </div>
      {kept.length > 0 && <p className="tt-mcp-note">{tr('property_overrides_kept', { names: kept.join(', ') })}</p>}
      <FormStatus busy={busy ? tr('saving') : undefined} error={error} />
    </form>
  );
});

/** Opens the description dialog for one tool; resolves when it closes (saved or not). */
export async function openToolDialog(input: ToolDialogInput, tr: Tr): Promise<void> {
  const form: { current: ToolDescriptionFormHandle | null } = { current: null };
  await showDialog(
    <ToolDescriptionForm
      ref={(h) => {
        form.current = h;
      }}
      {...input}
    />,
    {
      kind: 'confirm',
      okButton: tr('save'),
      cancelButton: tr('cancel'),
      ...(input.override !== undefined
        ? { customButtons: [{ text: tr('reset_all'), result: RESET_RESULT, icon: 'fa-rotate-left' }] }
        : {}),
      scroll: true,
      async onClosing(result) {
        const f = form.current;
        if (!f) return true;
        if (result === RESULT.AFFIRMATIVE) return f.save(false);
        if (result === RESET_RESULT) return f.save(true);
        return !f.busy();
      },
    },
    tr,
  );
}
