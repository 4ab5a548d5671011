// The dialog that chooses which tool set a generation uses: the chat's
// (kept in the chat), the character's or group's, and the default (kept in
// SillyTavern's settings), each "none" to let the next level decide. It
// shows the set in use as the choices change.

import { forwardRef, useId, useImperativeHandle, useRef, useState, type Ref } from 'react';
import type { McpToolSet } from '../../../../jsapi/tauritavern-mcp';
import { showSaveDialog, type SaveHandle } from '../../host/popup';
import type { BindingLevel, BindingScope } from '../../host/bindings';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import { FormStatus } from '../../ui/FormStatus';
import { useTr } from '../../base/tr';
import { appliedText } from './ToolSetsPanel';

export interface BindingDialogInput {
  sets: McpToolSet[];
  scope: BindingScope;
  /** Saves one level's binding (undefined: none); false when it cannot be kept. */
  bind(level: BindingLevel, id: string | undefined): Promise<boolean>;
}

const NONE = '';

const BindingForm = forwardRef(function BindingForm(props: BindingDialogInput, ref: Ref<SaveHandle>) {
  const tr = useTr();
  const id = useId();
  const { sets, scope } = props;
  const known = new Set(sets.map((s) => s.id));
  // A binding to a set that is gone (removed, or made with another data
  // root) is skipped when a generation picks its set. It shows as a
  // choice of its own, kept unless the user picks another: saving the
  // dialog for another level must not clear it behind the user's back.
  const initial = (v: string | undefined) => v ?? NONE;
  const [chat, setChat] = useState(initial(scope.chat));
  const [character, setCharacter] = useState(initial(scope.character?.toolSetId ?? scope.group?.toolSetId));
  const [def, setDef] = useState(initial(scope.default));
  const [error, setError] = useState<string>();
  const busy = useRef(false);
  const personal: BindingLevel | undefined = scope.group ? 'group' : scope.character ? 'character' : undefined;
  const value = (v: string) => (v === NONE ? undefined : v);

  const chatId = value(chat);
  const personalId = value(character);
  const defaultId = value(def);
  const preview: BindingScope = {
    chatOpen: scope.chatOpen,
    ...(chatId !== undefined ? { chat: chatId } : {}),
    ...(scope.character
      ? { character: { key: scope.character.key, name: scope.character.name, ...(personal === 'character' && personalId ? { toolSetId: personalId } : {}) } }
      : {}),
    ...(scope.group ? { group: { key: scope.group.key, name: scope.group.name, ...(personalId ? { toolSetId: personalId } : {}) } } : {}),
    ...(defaultId !== undefined ? { default: defaultId } : {}),
  };

  useImperativeHandle(ref, () => ({
    async save() {
      if (busy.current) return false;
      busy.current = true;
      setError(undefined);
      try {
        type Change = [BindingLevel, string | undefined, string | undefined];
        const changes: Change[] = [['default', defaultId, scope.default]];
        if (personal) changes.push([personal, personalId, personal === 'group' ? scope.group?.toolSetId : scope.character?.toolSetId]);
        if (scope.chatOpen) changes.push(['chat', chatId, scope.chat]);
        for (const [level, next, before] of changes) {
          if (next === before) continue;
          if (!(await props.bind(level, next))) {
            setError(tr('toolset_bind_failed'));
            return false;
          }
        }
        return true;
      } catch (err) {
        setError(errorMessage(err));
        return false;
      } finally {
        busy.current = false;
      }
    },
  }));

  /** One level's choice; a gone set is a short option, with what it means said below (a long option is cut off in a narrow select). */
  const choice = (level: string, label: string, none: string, current: string, set: (v: string) => void, autoFocus = false) => {
    const gone = current !== NONE && !known.has(current);
    return (
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-${level}`}>{label}</label>
        <select
          id={`${id}-${level}`}
          className="text_pole"
          value={current}
          onChange={(e) => set(e.target.value)}
          {...(autoFocus ? { 'data-autofocus': '' } : {})}
          {...(gone ? { 'aria-describedby': `${id}-${level}-gone` } : {})}
        >
          <option value={NONE}>{none}</option>
          {gone && <option value={current}>{tr('toolset_gone')}</option>}
          {sets.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
        {gone && (
          <p className="tt-mcp-note" id={`${id}-${level}-gone`}>
            {tr('toolset_gone_note')}
          </p>
        )}
      </div>
    );
  };
  return (
    <form className="tt-mcp-form tt-mcp-binding-form" onSubmit={(e) => e.preventDefault()}>
      <h3 className="tt-mcp-dialog-title">{tr('toolset_choose_title')}</h3>
      <p className="tt-mcp-note">{tr('toolset_choose_body')}</p>
      {scope.chatOpen && choice('chat', tr('toolset_for_chat'), tr('toolset_inherit'), chat, setChat, true)}
      {personal &&
        choice(
          'personal',
          personal === 'group' ? tr('toolset_for_group', { name: scope.group!.name }) : tr('toolset_for_character', { name: scope.character!.name }),
          tr('toolset_inherit_default'),
          character,
          setCharacter,
        )}
      {choice('default', tr('toolset_for_default'), tr('toolset_all_permitted'), def, setDef)}
      <p className="tt-mcp-note" role="status">
        {appliedText(preview, sets, tr)}
      </p>
      <FormStatus error={error} />
    </form>
  );
});

/** Opens the dialog; resolves once it closed (saved or not). */
export async function openBindingDialog(input: BindingDialogInput, tr: Tr): Promise<void> {
  await showSaveDialog((bind) => <BindingForm ref={bind} {...input} />, {}, tr);
}
