// "Attach to this chat" under a resource's preview: which chat it goes to,
// how many characters it adds against the chat's cap, where in the prompt
// (PlacementFields), and the outcome. The attachment itself is the chat
// adapter's (chat/attachments.ts).

import { useState } from 'react';
import {
  ATTACHMENT_CHAR_CAP,
  attachmentChars,
  totalChars,
  type ChatAttachment,
  type ChatRef,
  type Placement,
  type Snapshot,
} from './attachments';
import { errorMessage } from '../../base/errors';
import { PlacementFields, placementText } from './PlacementFields';
import { useTr } from '../../base/tr';

/** What attaching needs from the page. */
export interface AttachDeps {
  /** The chat open now; undefined when none is. */
  chat(): ChatRef | undefined;
  /** The open chat's attachments. */
  list(): ChatAttachment[];
  attach(chat: ChatRef, snapshot: Snapshot, placement: Placement): Promise<ChatAttachment>;
  /** Where the user put the last attachment (the default for the next). */
  lastPlacement(): Placement;
  rememberPlacement(p: Placement): void;
}

/** "12,345 / 100,000 characters": the chat's attachments against the cap. */
export function capText(used: number, tr: ReturnType<typeof useTr>): string {
  return tr('chars_of_cap', { used: used.toLocaleString(), cap: ATTACHMENT_CHAR_CAP.toLocaleString() });
}

export function AttachPanel(props: { snapshot: Snapshot; deps: AttachDeps }) {
  const tr = useTr();
  const { snapshot, deps } = props;
  const [chat] = useState(() => deps.chat());
  const [placement, setPlacement] = useState(() => deps.lastPlacement());
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<ChatAttachment>();
  const [error, setError] = useState<string>();

  if (!chat) {
    return (
      <section className="tt-mcp-attach" aria-label={tr('attach_title')}>
        <p className="tt-mcp-note">{tr('attach_no_chat')}</p>
      </section>
    );
  }
  const chars = attachmentChars(snapshot);
  const used = totalChars(deps.list());
  // Known before any press: a resource the chat cannot take says so at once, without an Attach that can only fail.
  const noRoom =
    chars > ATTACHMENT_CHAR_CAP
      ? tr('attach_too_long', { name: snapshot.name, chars: chars.toLocaleString(), cap: ATTACHMENT_CHAR_CAP.toLocaleString() })
      : used + chars > ATTACHMENT_CHAR_CAP
        ? tr('attach_no_room', { name: snapshot.name, chars: chars.toLocaleString(), free: (ATTACHMENT_CHAR_CAP - used).toLocaleString() })
        : undefined;
  const attach = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const a = await deps.attach(chat, snapshot, placement);
      deps.rememberPlacement(placement);
      setDone(a);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="tt-mcp-attach" aria-label={tr('attach_title')}>
      <h4>{tr('attach_to_chat', { chat: chat.name })}</h4>
      {snapshot.parts.length === 0 ? (
        <p className="tt-mcp-note">{tr('attach_nothing_textual')}</p>
      ) : (
        <>
          {!done && noRoom === undefined && (
            <p className="tt-mcp-note">
              {tr('attach_adds', { chars: chars.toLocaleString() })} {capText(used, tr)}
            </p>
          )}
          {snapshot.skipped.length > 0 && <p className="tt-mcp-note">{tr('attach_skipped', { count: snapshot.skipped.length })}</p>}
          {noRoom !== undefined && !done ? (
            <p className="tt-mcp-note" role="status">
              {noRoom}
            </p>
          ) : done ? (
            <p className="tt-mcp-note" role="status">
              <i className="fa-solid fa-circle-check" aria-hidden="true" /> {tr('attached', { chat: chat.name, place: placementText(done.placement, tr) })}{' '}
              {capText(used, tr)}
            </p>
          ) : (
            <>
              <PlacementFields value={placement} disabled={busy} label={tr('placement_legend')} onChange={setPlacement} />
              <div className="tt-mcp-actions">
                <button type="button" className="menu_button menu_button_icon" disabled={busy} onClick={() => void attach()}>
                  <i className={busy ? 'fa-solid fa-spinner fa-spin' : 'fa-solid fa-paperclip'} aria-hidden="true" />
                  <span>{tr('attach')}</span>
                </button>
              </div>
            </>
          )}
        </>
      )}
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
