import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import { advertised, capabilities, FakeMcp, fileTemplate, installSillyTavern, readme, SERVER_B, SERVER_ID, server, StChatDouble, textRead } from '../../../test/fakes';
import { ChatAttachments, snapshotOf } from './attachments';
import { stChatContext } from '../../host/sillytavern-chat';
import { englishTr } from '../../base/texts';
import { AttachmentsDialog, type AttachmentsDialogDeps } from './attachments-dialog';

function setup(mcp = new FakeMcp([server('active', { displayName: 'Docs', capabilities: capabilities() })])) {
  const st = new StChatDouble();
  installSillyTavern({ context: st.members });
  const attachments = new ChatAttachments({ context: stChatContext, read: (id, uri) => mcp.resources.read({ registrationId: id, uri }), tr: englishTr });
  attachments.install();
  const templates: string[] = [];
  const deps: AttachmentsDialogDeps = {
    attach: {
      chat: () => attachments.chat(),
      list: () => attachments.list(),
      attach: (chat, s, p) => attachments.attach(chat, s, p),
      lastPlacement: () => ({ position: 'in_chat', depth: 4, role: 'system' }),
      rememberPlacement: () => {},
    },
    remove: (chat, id) => attachments.remove(chat, id),
    refresh: (chat, id) => attachments.refresh(chat, id),
    setPlacement: (chat, id, p) => attachments.setPlacement(chat, id, p),
    onChange: (fn) => attachments.onChange(fn),
    servers: async () => (await mcp.servers.list()).servers,
    resources: (id) => mcp.resources.list(id),
    templates: (id) => mcp.resources.templates(id),
    read: (registrationId, uri) => mcp.resources.read({ registrationId, uri }),
    openTemplate: async (_s, t) => void templates.push(t.uriTemplate),
  };
  return { st, mcp, attachments, deps, templates };
}

async function attachOne(attachments: ChatAttachments, uri: string, text: string) {
  const r = textRead(uri, text);
  if (r.outcome !== 'known_response' || r.response.kind !== 'resource_contents') throw new Error('unreachable');
  return attachments.attach(attachments.chat()!, snapshotOf(r.response, { registrationId: SERVER_ID, serverName: 'Docs', name: uri.split('/').at(-1)! }), {
    position: 'in_chat',
    depth: 4,
    role: 'system',
  });
}

describe('AttachmentsDialog', () => {
  test('lists the chat’s attachments with their size against the cap; Remove takes one away', async () => {
    const user = userEvent.setup();
    const { st, attachments, deps } = setup();
    await attachOne(attachments, 'file:///docs/a.md', 'A'.repeat(1200));
    await attachOne(attachments, 'file:///docs/b.md', 'B'.repeat(34));
    render(<AttachmentsDialog deps={deps} />);
    expect(screen.getByRole('heading', { name: 'MCP resources in the chat with Seraphina' })).toBeTruthy();
    expect(screen.getAllByRole('status')[0]!.textContent).toBe('2 attachments · The chat’s attachments: 1,234 of 100,000 characters.');
    const list = screen.getByRole('list', { name: 'MCP resources in this chat' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.tt-mcp-tool-title')!.textContent)).toEqual(['a.md', 'b.md']);
    expect(within(items[0]!).getByText('1,200 characters')).toBeTruthy();
    expect(items[0]!.textContent).toContain('in the chat at depth 4, as system');
    await user.click(within(items[0]!).getByRole('button', { name: 'Remove a.md' }));
    await waitFor(() => expect(within(list).getAllByRole('listitem')).toHaveLength(1));
    expect(Object.keys(st.extensionPrompts)).toEqual(['mcp_manager_resource_000']);
    expect(screen.getAllByRole('status')[0]!.textContent).toBe('1 attachment · The chat’s attachments: 34 of 100,000 characters.');
  });

  test('Refresh reads it again; a placement change moves it', async () => {
    const user = userEvent.setup();
    const { st, mcp, attachments, deps } = setup();
    await attachOne(attachments, 'file:///docs/a.md', 'old');
    mcp.readImpl = (input) => Promise.resolve(textRead(input.uri, 'new text'));
    render(<AttachmentsDialog deps={deps} />);
    const item = within(screen.getByRole('list', { name: 'MCP resources in this chat' })).getByRole('listitem');
    await user.click(within(item).getByRole('button', { name: 'Read a.md again' }));
    expect((await within(item).findByRole('status')).textContent).toBe('Read again: the text is the server’s now.');
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toContain('\nnew text\n');
    expect(mcp.inputs('read')).toEqual([{ registrationId: SERVER_ID, uri: 'file:///docs/a.md' }]);

    await user.click(within(item).getByText('Change where it goes'));
    await user.selectOptions(within(item).getByRole('combobox', { name: 'Position' }), 'after_main');
    await waitFor(() => expect(st.extensionPrompts.mcp_manager_resource_000!.position).toBe(0));
    expect(item.textContent).toContain('after the main prompt, as system');
  });

  test('the picker lists an active server’s resources and attaches one at the place chosen; a template opens its form', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([
      server('active', { displayName: 'Docs', capabilities: capabilities() }),
      server('active', { id: SERVER_B, displayName: 'Tools only', capabilities: capabilities({ advertised: advertised({ resources: false }) }) }),
      server('paused', { id: '33333333-3333-4333-8333-333333333333', displayName: 'Paused' }),
    ]);
    const { st, deps, templates } = setup(mcp);
    render(<AttachmentsDialog deps={deps} />);
    const picker = screen.getByRole('region', { name: 'Attach a resource' });
    // only Docs offers resources: chosen at once
    const select = await within(picker).findByRole('combobox', { name: 'Server' });
    expect([...(select as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['Docs']);
    const resources = await within(picker).findByRole('list', { name: 'Resources of Docs' });
    await user.selectOptions(within(picker).getByRole('combobox', { name: 'Position' }), 'before_main');
    await user.click(within(resources).getByRole('button', { name: 'Attach Read me' }));
    expect((await within(resources).findByRole('status')).textContent).toBe('Attached to the chat with Seraphina: before the main prompt, as system.');
    expect(st.extensionPrompts.mcp_manager_resource_000).toMatchObject({ position: 2 });
    expect(st.extensionPrompts.mcp_manager_resource_000!.value).toBe(
      '<mcp_resource name="Read me" server="Docs" uri="file:///docs/README.md">\ntext of file:///docs/README.md\n</mcp_resource>',
    );
    // the list above shows it at once
    expect(within(screen.getByRole('list', { name: 'MCP resources in this chat' })).getByText('Read me')).toBeTruthy();

    await user.click(within(picker).getByRole('button', { name: 'Open template Docs file' }));
    expect(templates).toEqual([fileTemplate().uriTemplate]);
    expect(readme().uri).toBe('file:///docs/README.md');
  });

  test('the picker leaves out servers with nothing to attach, known or learnt by listing (walked in SillyTavern 1.18.0)', async () => {
    const mcp = new FakeMcp([
      server('active', { displayName: 'Docs', capabilities: capabilities() }),
      // resources advertised, but none and no template
      server('active', { id: SERVER_B, displayName: 'Empty', capabilities: capabilities() }),
      // not connected yet: what it advertises is unknown, and it has none
      server('active', { id: '33333333-3333-4333-8333-333333333333', displayName: 'Unknown', capabilities: { allowed: { resources: true, prompts: true } } }),
    ]);
    mcp.resourcesFor = (id) => (id === SERVER_ID ? [readme()] : []);
    mcp.templatesFor = () => [];
    const { deps } = setup(mcp);
    render(<AttachmentsDialog deps={deps} />);
    const picker = screen.getByRole('region', { name: 'Attach a resource' });
    expect(within(picker).getByRole('status').textContent).toContain('Looking for servers with resources');
    const select = await within(picker).findByRole('combobox', { name: 'Server' });
    expect([...(select as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['Docs']);
  });

  test('a failed read attaches nothing and says why', async () => {
    const user = userEvent.setup();
    const { st, mcp, deps } = setup();
    mcp.readImpl = () => Promise.resolve({ outcome: 'not_sent', code: 'mcp.server_paused', message: 'the server is paused' });
    render(<AttachmentsDialog deps={deps} />);
    const resources = await screen.findByRole('list', { name: 'Resources of Docs' });
    await user.click(within(resources).getByRole('button', { name: 'Attach Read me' }));
    expect((await within(resources).findByRole('alert')).textContent).toBe('The request was not sent (mcp.server_paused): the server is paused');
    expect(st.extensionPrompts).toEqual({});
  });

  test('no chat open: nothing to attach to; another chat opened shows its own', async () => {
    const { st, attachments, deps } = setup();
    await attachOne(attachments, 'file:///docs/a.md', 'A');
    render(<AttachmentsDialog deps={deps} />);
    st.metadata['Other - chat'] = {};
    await act(() => st.openChat('Other - chat'));
    expect(screen.getByText('0 attachments · The chat’s attachments: 0 of 100,000 characters.')).toBeTruthy();
    await act(() => st.openChat(undefined));
    expect(screen.getByText('Open a chat to attach resources to it.')).toBeTruthy();
  });
});
