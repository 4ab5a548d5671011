import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { McpResourceReadOutcome } from '../../../../jsapi/tauritavern-mcp';
import { fileTemplate, installSillyTavern, SERVER_ID, StChatDouble, textRead } from '../../../test/fakes';
import { ATTACHMENT_CHAR_CAP, ChatAttachments, type Placement } from './attachments';
import { stChatContext } from '../../host/sillytavern-chat';
import { englishTr } from '../../base/texts';
import type { AttachDeps } from './AttachPanel';
import { ResourceDialog, type ResourceDialogDeps, type ResourceTarget } from './resource-dialog';

const png = 'iVBORw0KGgo=';
const readmeTarget: ResourceTarget = { kind: 'resource', uri: 'file:///docs/README.md', name: 'README.md', title: 'Read me', mimeType: 'text/markdown', size: 11 };

function renderDialog(target: ResourceTarget, deps: Partial<ResourceDialogDeps> = {}) {
  const reads: string[] = [];
  const props: ResourceDialogDeps = {
    server: { id: SERVER_ID, displayName: 'Docs' },
    read: (uri) => {
      reads.push(uri);
      return Promise.resolve(textRead(uri, `text of ${uri}`));
    },
    ...deps,
  };
  render(<ResourceDialog {...props} target={target} />);
  return reads;
}

/** Attaching in a SillyTavern chat double, with the placement last used kept in memory. */
function chatAttach(): { st: StChatDouble; attach: AttachDeps; remembered: Placement[] } {
  const st = new StChatDouble();
  installSillyTavern({ context: st.members });
  const attachments = new ChatAttachments({ context: stChatContext, read: () => Promise.reject(new Error('unexpected read')), tr: englishTr });
  const remembered: Placement[] = [];
  return {
    st,
    remembered,
    attach: {
      chat: () => attachments.chat(),
      list: () => attachments.list(),
      attach: (chat, s, p) => attachments.attach(chat, s, p),
      lastPlacement: () => ({ position: 'in_chat', depth: 4, role: 'system' }),
      rememberPlacement: (p) => remembered.push(p),
    },
  };
}

describe('ResourceDialog: a resource', () => {
  test('is read when it opens and shows its text; Read again reads it again', async () => {
    const user = userEvent.setup();
    const reads = renderDialog(readmeTarget);
    expect(screen.getByRole('heading', { name: 'Read me' })).toBeTruthy();
    expect(screen.getByText('From Docs').parentElement!.textContent).toBe('From Docstext/markdown11 B');
    await screen.findByText('text of file:///docs/README.md');
    expect(reads).toEqual(['file:///docs/README.md']);
    expect(screen.getByText('1 content · 30 B')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Read again' }));
    await waitFor(() => expect(reads).toHaveLength(2));
  });

  test('every content of a multi-content read: text, pretty JSON, an image, a text blob decoded, a download for the rest, and the notes', async () => {
    const outcome: McpResourceReadOutcome = {
      outcome: 'known_response',
      response: {
        kind: 'resource_contents',
        uri: 'bundle://x',
        contents: [
          { type: 'text', uri: 'bundle://x/a.txt', mimeType: 'text/plain', text: 'plain text', size: 10 },
          { type: 'text', uri: 'bundle://x/b.json', mimeType: 'application/json', text: '{"a":[1,2]}', size: 11 },
          { type: 'blob', uri: 'bundle://x/c.png', mimeType: 'image/png', blob: png, size: 8 },
          { type: 'blob', uri: 'bundle://x/d.txt', mimeType: 'text/plain', blob: btoa('decoded'), size: 7 },
          { type: 'blob', uri: 'bundle://x/e.bin', mimeType: 'application/octet-stream', blob: png, size: 8 },
          { type: 'blob', uri: 'bundle://x/f.bin', size: 20971520 },
        ],
        totalBytes: 20971564,
        diagnostics: [{ code: 'mcp.resource_content_too_large', message: 'Content 5 is a blob of 20971520 bytes, over the limit of 8388608; it was not kept', contentIndex: 5 }],
      },
    };
    renderDialog(readmeTarget, { read: () => Promise.resolve(outcome) });
    const region = await screen.findByRole('region', { name: 'What the server returned' });
    const articles = within(region).getAllByRole('article');
    expect(articles.map((a) => a.getAttribute('aria-label'))).toEqual(['bundle://x/a.txt', 'bundle://x/b.json', 'bundle://x/c.png', 'bundle://x/d.txt', 'bundle://x/e.bin', 'bundle://x/f.bin']);
    expect(within(articles[0]!).getByText('plain text')).toBeTruthy();
    expect(articles[1]!.querySelector('pre')!.textContent).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(within(articles[2]!).getByRole('img', { name: 'bundle://x/c.png' }).getAttribute('src')).toBe(`data:image/png;base64,${png}`);
    expect(within(articles[3]!).getByText('decoded')).toBeTruthy();
    const download = within(articles[4]!).getByRole('link', { name: 'Download e.bin' });
    expect(download.getAttribute('download')).toBe('e.bin');
    expect(download.getAttribute('href')).toMatch(/^blob:/);
    expect(within(articles[5]!).getByText('Not kept: see the notes.')).toBeTruthy();
    expect(within(articles[5]!).getByText('20.0 MiB')).toBeTruthy();
    expect(within(region).getByText(/Content 5 is a blob of 20971520 bytes/)).toBeTruthy();
    expect(within(region).getByText('6 contents · 20.0 MiB')).toBeTruthy();
  });

  test('an unknown outcome and a refusal are said as such', async () => {
    renderDialog(readmeTarget, { read: () => Promise.resolve({ outcome: 'outcome_unknown', code: 'mcp.resource_too_large', message: 'the answer went over 12 MiB' }) });
    expect(await screen.findByText('Outcome unknown')).toBeTruthy();
    expect(screen.getByText('the answer went over 12 MiB')).toBeTruthy();
    expect(screen.getByText('The request may have reached the server. ttmcp will not retry it automatically.')).toBeTruthy();
  });

  test('a rejection (resources turned off) is an alert', async () => {
    renderDialog(readmeTarget, { read: () => Promise.reject(Object.assign(new Error('mcp.resources_disabled: resources are turned off'), { code: 'mcp.resources_disabled' })) });
    expect((await screen.findByRole('alert')).textContent).toBe('mcp.resources_disabled: resources are turned off');
  });
});

describe('ResourceDialog: a template', () => {
  test('a form for its variables, with the server’s suggestions, the URI it makes, and Read', async () => {
    const user = userEvent.setup();
    const asked: Array<[string, string, string, Record<string, string>]> = [];
    const reads = renderDialog(
      { kind: 'template', template: fileTemplate({ uriTemplate: 'file:///{dir}/{name}{?rev}', variables: ['dir', 'name', 'rev'] }) },
      {
        complete: (template, name, value, context) => {
          asked.push([template, name, value, context]);
          return Promise.resolve(name === 'name' ? ['notes.md', 'news.md'].filter((v) => v.startsWith(value)) : []);
        },
      },
    );
    expect(reads).toEqual([]); // nothing is read before the user asks
    await user.type(screen.getByRole('combobox', { name: 'dir' }), 'docs');
    await user.type(screen.getByRole('combobox', { name: 'name' }), 'no');
    await waitFor(() => expect(asked.at(-1)).toEqual(['file:///{dir}/{name}{?rev}', 'name', 'no', { dir: 'docs' }]));
    const list = document.getElementById(screen.getByRole('combobox', { name: 'name' }).getAttribute('list')!)!;
    await waitFor(() => expect([...list.querySelectorAll('option')].map((o) => o.value)).toEqual(['notes.md']));
    expect(screen.getByText('file:///docs/no').textContent).toBe('file:///docs/no');
    await user.type(screen.getByRole('combobox', { name: 'name' }), 'tes.md');
    await user.click(screen.getByRole('button', { name: 'Read' }));
    await screen.findByText('text of file:///docs/notes.md');
    expect(reads).toEqual(['file:///docs/notes.md']);
  });

  test('without completion the fields have no suggestions list', () => {
    renderDialog({ kind: 'template', template: fileTemplate() });
    expect(screen.getByRole('textbox', { name: 'name' }).getAttribute('list')).toBeNull();
  });
});

describe('ResourceDialog: Attach to this chat', () => {
  test('attaches the read text at the chosen place, saying where, and remembers the place', async () => {
    const user = userEvent.setup();
    const { st, attach, remembered } = chatAttach();
    renderDialog(readmeTarget, { attach });
    const panel = await screen.findByRole('region', { name: 'Attach to this chat' });
    expect(within(panel).getByRole('heading').textContent).toBe('Attach to the chat with Seraphina');
    expect(within(panel).getByText(/Adds 30 characters\. The chat’s attachments: 0 of 100,000 characters\./)).toBeTruthy();
    await user.clear(within(panel).getByRole('spinbutton', { name: 'Depth' }));
    await user.type(within(panel).getByRole('spinbutton', { name: 'Depth' }), '2');
    await user.selectOptions(within(panel).getByRole('combobox', { name: 'As' }), 'user');
    await user.click(within(panel).getByRole('button', { name: 'Attach' }));
    expect((await within(panel).findByRole('status')).textContent).toContain('Attached to the chat with Seraphina: in the chat at depth 2, as user.');
    expect(st.extensionPrompts.mcp_manager_resource_000).toMatchObject({ position: 1, depth: 2, role: 1 });
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toContain('text of file:///docs/README.md');
    expect(remembered).toEqual([{ position: 'in_chat', depth: 2, role: 'user' }]);
  });

  test('before the main prompt hides the depth', async () => {
    const user = userEvent.setup();
    const { st, attach } = chatAttach();
    renderDialog(readmeTarget, { attach });
    const panel = await screen.findByRole('region', { name: 'Attach to this chat' });
    await user.selectOptions(within(panel).getByRole('combobox', { name: 'Position' }), 'before_main');
    expect(within(panel).queryByRole('spinbutton', { name: 'Depth' })).toBeNull();
    await user.click(within(panel).getByRole('button', { name: 'Attach' }));
    await within(panel).findByRole('status');
    expect(st.extensionPrompts.mcp_manager_resource_000).toMatchObject({ position: 2, depth: 0, role: 0 });
  });

  test('over the cap: the refusal says why and nothing is attached', async () => {
    const { st, attach } = chatAttach();
    renderDialog(readmeTarget, { attach, read: (uri) => Promise.resolve(textRead(uri, 'x'.repeat(ATTACHMENT_CHAR_CAP + 1))) });
    const panel = await screen.findByRole('region', { name: 'Attach to this chat' });
    // known before any press: no Attach that can only fail
    expect((await within(panel).findByRole('status')).textContent).toBe(
      'Read me has 100,001 characters, more than a chat’s attachments can hold (100,000 together). It cannot be attached.',
    );
    expect(within(panel).queryByRole('button', { name: 'Attach' })).toBeNull();
    expect(panel.textContent).not.toContain('Adds 100,001 characters'); // not offered as something it would add
    expect(st.extensionPrompts).toEqual({});
    expect(st.saves).toBe(0);
  });

  test('a chat too full for it says how much room is left, before any press', async () => {
    const { attach } = chatAttach();
    const chat = attach.chat()!;
    const big = { registrationId: SERVER_ID, serverName: 'Docs', uri: 'file:///big', name: 'Big', parts: [{ uri: 'file:///big', text: 'x'.repeat(ATTACHMENT_CHAR_CAP - 5) }], skipped: [] };
    await attach.attach(chat, big, { position: 'in_chat', depth: 4, role: 'system' });
    renderDialog(readmeTarget, { attach, read: (uri) => Promise.resolve(textRead(uri, 'y'.repeat(6))) });
    const panel = await screen.findByRole('region', { name: 'Attach to this chat' });
    expect((await within(panel).findByRole('status')).textContent).toBe(
      'Read me has 6 characters; the chat’s attachments can take only 5 more. Remove an attachment to make room.',
    );
    expect(within(panel).queryByRole('button', { name: 'Attach' })).toBeNull();
  });

  test('without an open chat, or for binary contents only, there is nothing to attach', async () => {
    const { st, attach } = chatAttach();
    st.chatId = undefined;
    renderDialog(readmeTarget, { attach });
    expect(await screen.findByText('Open a chat to attach resources to it.')).toBeTruthy();
  });

  test('binary contents only', async () => {
    const { attach } = chatAttach();
    renderDialog(readmeTarget, {
      attach,
      read: (uri) =>
        Promise.resolve({
          outcome: 'known_response',
          response: { kind: 'resource_contents', uri, contents: [{ type: 'blob', uri, mimeType: 'image/png', blob: png, size: 8 }], totalBytes: 8, diagnostics: [] },
        }),
    });
    expect(await screen.findByText('This resource has no text to attach (only binary contents): a chat takes only text.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Attach' })).toBeNull();
  });
});

describe('ResourceDialog: a resource a tool result embedded', () => {
  test('shows its content as it came, reads nothing, and attaches it', async () => {
    const user = userEvent.setup();
    const { st, attach } = chatAttach();
    const reads = renderDialog(
      { kind: 'embedded', name: 'notes://today', content: { type: 'text', uri: 'notes://today', mimeType: 'text/plain', text: 'buy milk', size: 8 } },
      { attach },
    );
    expect(screen.getByRole('heading', { name: 'notes://today' })).toBeTruthy();
    expect(screen.getByText(/as the tool returned it/)).toBeTruthy();
    expect(screen.getByText('buy milk')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Read again' })).toBeNull();
    const panel = screen.getByRole('region', { name: 'Attach to this chat' });
    await user.click(within(panel).getByRole('button', { name: 'Attach' }));
    await within(panel).findByRole('status');
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toContain('buy milk');
    expect(reads).toEqual([]);
  });
});
