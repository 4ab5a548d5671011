// What a resource read or a prompt get returned, for the user: each content
// of a read (text as it is, JSON pretty-printed, an image or audio shown, a
// text blob decoded, any other blob as a download), and a prompt's messages
// by role with their blocks (text, images, audio, embedded resources,
// resource links the user can open). Presentational: opening a link is the
// caller's.

import { useEffect, useMemo } from 'react';
import type {
  McpCallDiagnostic,
  McpContentBlock,
  McpPromptMessagesResponse,
  McpResourceContent,
  McpResourceContentsResponse,
} from '../../../jsapi/tauritavern-mcp';
import { base64Bytes, contentText, isJsonMime, isTextualMime } from './content-text';
import { useTr } from '../base/tr';

/** A size in bytes as people read it (B, KiB, MiB). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A resource's mime type and size, as chips (each when the server said). */
export function ResourceChips(props: { mimeType?: string | undefined; size?: number | undefined }) {
  return (
    <span className="tt-mcp-chips">
      {props.mimeType !== undefined && <span className="tt-mcp-chip">{props.mimeType}</span>}
      {props.size !== undefined && <span className="tt-mcp-chip">{formatBytes(props.size)}</span>}
    </span>
  );
}

/** text pretty-printed when it is JSON; else as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A download's file name: the URI's last path segment, else "resource". */
export function fileNameOf(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    const name = decodeURIComponent(last);
    return name !== '' && !/[\\/:*?"<>|]/.test(name) ? name : 'resource';
  } catch {
    return 'resource';
  }
}

/** A blob offered as a download: a Blob URL made when shown, revoked when gone. */
function Download(props: { data: string; mimeType: string | undefined; uri: string }) {
  const tr = useTr();
  const url = useMemo(() => {
    const bytes = base64Bytes(props.data);
    if (!bytes || typeof URL.createObjectURL !== 'function') return undefined;
    return URL.createObjectURL(new Blob([bytes as BlobPart], { type: props.mimeType ?? 'application/octet-stream' }));
  }, [props.data, props.mimeType]);
  useEffect(
    () => () => {
      if (url !== undefined) URL.revokeObjectURL?.(url);
    },
    [url],
  );
  if (url === undefined) return <p className="tt-mcp-note">{tr('blob_not_base64')}</p>;
  return (
    <a className="menu_button menu_button_icon tt-mcp-download" href={url} download={fileNameOf(props.uri)}>
      <i className="fa-solid fa-download" aria-hidden="true" />
      <span>{tr('download_file', { name: fileNameOf(props.uri) })}</span>
    </a>
  );
}

function TextBody(props: { text: string; mimeType: string | undefined }) {
  const json = isJsonMime(props.mimeType);
  return <pre className={json ? 'tt-mcp-json-output' : 'tt-mcp-text-output'}>{json ? prettyJson(props.text) : props.text}</pre>;
}

function MediaBody(props: { data: string; mimeType: string | undefined; uri: string; label: string }) {
  const m = props.mimeType?.toLowerCase() ?? '';
  if (m.startsWith('image/')) return <img className="tt-mcp-image" src={`data:${m};base64,${props.data}`} alt={props.label} />;
  if (m.startsWith('audio/')) return <audio className="tt-mcp-audio" controls src={`data:${m};base64,${props.data}`} aria-label={props.label} />;
  return <Download data={props.data} mimeType={props.mimeType} uri={props.uri} />;
}

/** One content of a read (or an embedded resource). */
export function ResourceContentView(props: { content: McpResourceContent }) {
  const tr = useTr();
  const c = props.content;
  const text = c.text ?? (c.blob !== undefined && isTextualMime(c.mimeType) ? contentText(c) : undefined);
  return (
    <article className="tt-mcp-content" aria-label={c.uri}>
      <div className="tt-mcp-content-head">
        <code className="tt-mcp-uri">{c.uri}</code>
        {c.mimeType !== undefined && <span className="tt-mcp-chip">{c.mimeType}</span>}
        <span className="tt-mcp-chip">{formatBytes(c.size)}</span>
      </div>
      {text !== undefined ? (
        <TextBody text={text} mimeType={c.mimeType} />
      ) : c.blob !== undefined ? (
        <MediaBody data={c.blob} mimeType={c.mimeType} uri={c.uri} label={c.uri} />
      ) : (
        <p className="tt-mcp-note">{tr('content_not_kept')}</p>
      )}
    </article>
  );
}

/** Diagnostics of a read or a get ("Notes · N"), open. */
export function ContentNotes(props: { diagnostics: McpCallDiagnostic[] }) {
  const tr = useTr();
  if (props.diagnostics.length === 0) return null;
  return (
    <details className="tt-mcp-notes" open>
      <summary>
        <i className="fa-solid fa-circle-info" aria-hidden="true" /> {tr('content_notes', { count: props.diagnostics.length })}
      </summary>
      <ul>
        {props.diagnostics.map((d, i) => (
          <li key={i}>
            <code>{d.code}</code> <span>{d.message}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** Every content of a read, in order, with its notes. */
export function ReadContents(props: { response: McpResourceContentsResponse }) {
  const tr = useTr();
  const r = props.response;
  return (
    <section className="tt-mcp-read" aria-label={tr('read_result')}>
      <p className="tt-mcp-note">
        {tr('content_count', { count: r.contents.length })} · {formatBytes(r.totalBytes)}
      </p>
      {r.contents.length === 0 && <p className="tt-mcp-note">{tr('no_contents')}</p>}
      {r.contents.map((c, i) => (
        <ResourceContentView key={i} content={c} />
      ))}
      <ContentNotes diagnostics={r.diagnostics} />
    </section>
  );
}

/** A resource link: its name, URI and facts, and Open when the caller can read it. */
function ResourceLink(props: { block: Extract<McpContentBlock, { type: 'resource_link' }>; onOpen?: ((uri: string, name: string) => void) | undefined }) {
  const tr = useTr();
  const b = props.block;
  const { onOpen } = props;
  return (
    <div className="tt-mcp-link">
      <i className="fa-solid fa-link" aria-hidden="true" />
      <div className="tt-mcp-link-body">
        <span className="tt-mcp-link-name">{b.title ?? b.name}</span>
        <code className="tt-mcp-uri">{b.uri}</code>
        {b.description !== undefined && <p className="tt-mcp-description">{b.description}</p>}
        <span className="tt-mcp-chips">
          {b.mimeType !== undefined && <span className="tt-mcp-chip">{b.mimeType}</span>}
          {b.size !== undefined && <span className="tt-mcp-chip">{formatBytes(b.size)}</span>}
        </span>
      </div>
      {onOpen && (
        <button type="button" className="menu_button" aria-label={tr('open_link', { name: b.title ?? b.name })} onClick={() => onOpen(b.uri, b.title ?? b.name)}>
          {tr('open')}
        </button>
      )}
    </div>
  );
}

/** One content block of a prompt message. */
export function BlockView(props: { block: McpContentBlock; onOpenLink?: ((uri: string, name: string) => void) | undefined }) {
  const tr = useTr();
  const b = props.block;
  switch (b.type) {
    case 'text':
      return <pre className="tt-mcp-text-output">{b.text}</pre>;
    case 'image':
    case 'audio':
      return <MediaBody data={b.data} mimeType={b.mimeType} uri={`${b.type}.${b.mimeType.split('/')[1] ?? 'bin'}`} label={tr(b.type === 'image' ? 'image_content' : 'audio_content', { mime: b.mimeType })} />;
    case 'resource':
      return <ResourceContentView content={b.resource} />;
    case 'resource_link':
      return <ResourceLink block={b} onOpen={props.onOpenLink} />;
  }
}

/** A prompt's messages by role, then its notes. */
export function PromptMessages(props: { response: McpPromptMessagesResponse; onOpenLink?: (uri: string, name: string) => void }) {
  const tr = useTr();
  const r = props.response;
  return (
    <section className="tt-mcp-messages" aria-label={tr('prompt_messages')}>
      {r.description !== undefined && <p className="tt-mcp-description">{r.description}</p>}
      {r.messages.length === 0 && <p className="tt-mcp-note">{tr('no_messages')}</p>}
      <ol className="tt-mcp-message-list">
        {r.messages.map((m, i) => (
          <li key={i} className={`tt-mcp-message tt-mcp-message-${m.role}`}>
            <span className={`tt-mcp-chip tt-mcp-role tt-mcp-role-${m.role}`}>{tr(m.role === 'user' ? 'role_user' : 'role_assistant')}</span>
            <BlockView block={m.content} onOpenLink={props.onOpenLink} />
          </li>
        ))}
      </ol>
      <ContentNotes diagnostics={r.diagnostics} />
    </section>
  );
}
