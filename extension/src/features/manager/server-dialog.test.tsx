import { act, fireEvent, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { CreateMcpServerInput, TauriTavernMcpServer, UpdateMcpServerInput } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern, server } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { openAddServerDialog, openEditServerDialog } from './server-dialog';
import { parseServerJson } from './server-json';

/** Pastes value into a field (typing JSON braces with user-event needs escaping). */
function setValue(el: HTMLTextAreaElement | HTMLInputElement, value: string) {
  fireEvent.change(el, { target: { value } });
}

describe('Add server dialog', () => {
  test('validates in place, keeps a rejected draft as typed, and returns the created server', async () => {
    installSillyTavern();
    const drafts: CreateMcpServerInput[] = [];
    const opened = openAddServerDialog((draft) => {
      drafts.push(draft);
      if (drafts.length === 1) return Promise.reject(new Error('endpoint host is not allowed'));
      return Promise.resolve(server());
    }, englishTr);
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    expect(dialog.getByRole('heading').textContent).toBe('Add MCP server');
    expect(popup.buttonNamed('Add server').dataset.result).toBe('1');
    expect(popup.buttonNamed('Cancel').dataset.result).toBe('0');
    const name = dialog.getByLabelText<HTMLInputElement>('Name');
    const endpoint = dialog.getByLabelText<HTMLInputElement>('Endpoint');
    expect(name.placeholder).toBe('Local tools');
    expect(endpoint.placeholder).toBe('http://127.0.0.1:3000/mcp');
    expect(dialog.getByText('Streamable HTTP endpoint.')).toBeTruthy();
    expect(dialog.getByText('New servers start paused, and every discovered tool starts Off.')).toBeTruthy();
    await waitFor(() => expect(document.activeElement).toBe(name));
    expect(dialog.getByRole<HTMLInputElement>('radio', { name: 'Manual' }).checked).toBe(true);

    expect(await popup.close(1)).toBe(false);
    expect(dialog.getByRole('alert').textContent).toBe('Enter a name.');
    expect(drafts).toEqual([]);

    const user = userEvent.setup();
    await user.type(name, '  Local tools  ');
    // the validation error opened Advanced
    expect((popup.dlg.querySelector('details') as HTMLDetailsElement).open).toBe(true);
    await user.click(dialog.getByRole('button', { name: 'Add header' }));
    await user.type(dialog.getByLabelText('Header name'), 'x-api-key');
    await user.type(dialog.getByLabelText('Header value'), 'secret');
    expect(dialog.getByLabelText<HTMLInputElement>('Header value').type).toBe('password');
    await user.type(endpoint, 'file:///etc/passwd');
    expect(await popup.close(1)).toBe(false);
    expect(dialog.getByRole('alert').textContent).toBe('Enter a valid http:// or https:// URL.');
    expect(drafts).toEqual([]);

    await user.clear(endpoint);
    await user.type(endpoint, ' http://127.0.0.1:3000/mcp ');
    expect(await popup.close(1)).toBe(false);
    expect(dialog.getByRole('alert').textContent).toBe('endpoint host is not allowed');
    expect(name.value).toBe('  Local tools  ');
    expect(endpoint.value).toBe(' http://127.0.0.1:3000/mcp ');

    expect(await popup.close(1)).toBe(true);
    expect(await opened).toEqual(server());
    const expected = {
      displayName: 'Local tools',
      endpoint: 'http://127.0.0.1:3000/mcp',
      headers: { 'x-api-key': 'secret' },
      protocolVersion: 'auto',
    };
    expect(drafts).toEqual([expected, expected]);
  });

  test('shows "Adding…" and disables every control while saving; Cancel waits for the save', async () => {
    installSillyTavern();
    let finish!: (s: TauriTavernMcpServer) => void;
    const opened = openAddServerDialog(
      () =>
        new Promise<TauriTavernMcpServer>((resolve) => {
          finish = resolve;
        }),
      englishTr,
    );
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    const user = userEvent.setup();
    await user.type(dialog.getByLabelText('Name'), 'A');
    await user.type(dialog.getByLabelText('Endpoint'), 'https://a.example/mcp');
    const closing = popup.complete(1);
    expect(await dialog.findByText('Adding…')).toBeTruthy();
    // (a disabled fieldset disables its controls; happy-dom does not apply that to :disabled)
    expect(dialog.getByLabelText('Name').closest('fieldset')?.disabled).toBe(true);
    expect(dialog.getByRole('radio', { name: 'JSON' }).closest('fieldset')?.disabled).toBe(true);
    expect(await popup.close(0)).toBe(false);
    expect(await popup.close(null)).toBe(false);
    await act(async () => {
      finish(server());
      await closing;
    });
    expect(popup.closed).toBe(true);
    expect(await opened).toEqual(server());
  });

  test('Cancel returns null without saving', async () => {
    installSillyTavern();
    let calls = 0;
    const opened = openAddServerDialog(() => {
      calls++;
      return Promise.resolve(server());
    }, englishTr);
    await userEvent.setup().click(currentPopup().buttonNamed('Cancel'));
    expect(await opened).toBeNull();
    expect(calls).toBe(0);
  });

  test('imports one server from the direct JSON form', async () => {
    installSillyTavern();
    const drafts: CreateMcpServerInput[] = [];
    const opened = openAddServerDialog((draft) => {
      drafts.push(draft);
      return Promise.resolve({ ...server(), displayName: draft.displayName, endpoint: draft.endpoint });
    }, englishTr);
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    await userEvent.setup().click(dialog.getByRole('radio', { name: 'JSON' }));
    expect(dialog.queryByLabelText('Name')).toBeNull();
    expect(dialog.getByText('Paste one Streamable HTTP server, as a direct object or under mcpServers.')).toBeTruthy();
    setValue(
      dialog.getByLabelText<HTMLTextAreaElement>('MCP JSON'),
      JSON.stringify({ exa: { url: 'https://mcp.exa.ai/mcp', headers: { 'x-api-key': 'YOUR_EXA_API_KEY' } } }),
    );
    expect(await popup.close(1)).toBe(true);
    expect((await opened)?.displayName).toBe('exa');
    expect(drafts).toEqual([
      {
        displayName: 'exa',
        endpoint: 'https://mcp.exa.ai/mcp',
        headers: { 'x-api-key': 'YOUR_EXA_API_KEY' },
        protocolVersion: 'auto',
      },
    ]);
  });

  test('rejects invalid JSON in place, with nothing imported', async () => {
    installSillyTavern();
    let calls = 0;
    void openAddServerDialog(() => {
      calls++;
      return Promise.resolve(server());
    }, englishTr);
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    await userEvent.setup().click(dialog.getByRole('radio', { name: 'JSON' }));
    const box = dialog.getByLabelText<HTMLTextAreaElement>('MCP JSON');
    setValue(box, JSON.stringify({ mcpServers: { a: { url: 'https://a/mcp' }, b: { url: 'https://b/mcp' } } }));
    expect(await popup.close(1)).toBe(false);
    expect(dialog.getByRole('alert').textContent).toBe('Invalid MCP JSON: configuration must contain exactly one server');
    setValue(box, '{"a":');
    expect(await popup.close(1)).toBe(false);
    expect(dialog.getByRole('alert').textContent).toMatch(/^Invalid MCP JSON: .+/);
    expect(calls).toBe(0);
  });
});

describe('Edit server dialog', () => {
  test('edits endpoint, one header value and the protocol; header names stay verbatim', async () => {
    installSillyTavern();
    const existing = {
      ...server(),
      headers: { ' X-API-Key ': 'old-secret', 'x-api-key': 'second-secret' },
      protocolVersion: '2025-11-25' as const,
    };
    const updates: UpdateMcpServerInput[] = [];
    const opened = openEditServerDialog(
      existing,
      (input) => {
        updates.push(input);
        return Promise.resolve({ ...existing, ...input, id: existing.id });
      },
      englishTr,
    );
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    expect(dialog.getByRole('heading').textContent).toBe('Edit MCP server');
    expect(popup.buttonNamed('Save')).toBeTruthy();
    expect(dialog.queryByRole('radio', { name: 'JSON' })).toBeNull();
    expect(dialog.queryByText('New servers start paused, and every discovered tool starts Off.')).toBeNull();
    // headers and a pinned protocol open Advanced
    expect((popup.dlg.querySelector('details') as HTMLDetailsElement).open).toBe(true);

    const user = userEvent.setup();
    const endpoint = dialog.getByLabelText<HTMLInputElement>('Endpoint');
    await user.clear(endpoint);
    await user.type(endpoint, 'https://user:pass@example.com/mcp?tenant=updated');
    const value = dialog.getAllByLabelText<HTMLInputElement>('Header value')[0]!;
    await user.clear(value);
    await user.type(value, 'new-secret');
    await user.selectOptions(dialog.getByLabelText('Protocol version'), '2025-06-18');
    expect(await popup.close(1)).toBe(true);
    await opened;
    expect(updates).toEqual([
      {
        registrationId: existing.id,
        displayName: 'Local tools',
        endpoint: 'https://user:pass@example.com/mcp?tenant=updated',
        headers: { ' X-API-Key ': 'new-secret', 'x-api-key': 'second-secret' },
        protocolVersion: '2025-06-18',
      },
    ]);
  });

  test('removes a header row, repeated names keep the last row, "Saving…" while saving', async () => {
    installSillyTavern();
    const existing = { ...server(), headers: { a: '1', b: '2' } };
    const updates: UpdateMcpServerInput[] = [];
    let release!: () => void;
    const opened = openEditServerDialog(
      existing,
      (input) => {
        updates.push(input);
        return new Promise((resolve) => {
          release = () => resolve({ ...existing, ...input, id: existing.id });
        });
      },
      englishTr,
    );
    const popup = currentPopup();
    const dialog = within(popup.dlg);
    const user = userEvent.setup();
    expect(dialog.getByLabelText<HTMLSelectElement>('Protocol version').value).toBe('auto');
    expect([...dialog.getByLabelText<HTMLSelectElement>('Protocol version').options].map((o) => o.text)).toEqual([
      'Auto (recommended)',
      '2026-07-28',
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
    ]);
    await user.click(dialog.getAllByRole('button', { name: 'Remove header' })[0]!);
    await user.click(dialog.getByRole('button', { name: 'Add header' }));
    const names = dialog.getAllByLabelText<HTMLInputElement>('Header name');
    await user.type(names[1]!, 'b');
    await user.type(dialog.getAllByLabelText('Header value')[1]!, '3');
    await user.click(dialog.getByRole('button', { name: 'Add header' })); // a blank row is ignored
    const closing = popup.complete(1);
    expect(await dialog.findByText('Saving…')).toBeTruthy();
    await act(async () => {
      release();
      await closing;
    });
    expect(popup.closed).toBe(true);
    await opened;
    expect(updates[0]?.headers).toEqual({ b: '3' });
  });
});

describe('parseServerJson', () => {
  const ok = (input: object) => ({ ok: true, input });
  const err = (key: string, params?: object) => ({ ok: false, error: params ? { key, params } : { key } });
  test.each([
    ['direct object', { exa: { url: 'https://mcp.exa.ai/mcp' } }, ok({ displayName: 'exa', endpoint: 'https://mcp.exa.ai/mcp', headers: {}, protocolVersion: 'auto' })],
    [
      'under mcpServers, trimmed name, type and protocol',
      { mcpServers: { ' My server ': { type: 'Streamable-HTTP', url: ' http://127.0.0.1:3000/mcp ', protocolVersion: '2025-06-18', headers: { A: 'b' } } } },
      ok({ displayName: 'My server', endpoint: 'http://127.0.0.1:3000/mcp', headers: { A: 'b' }, protocolVersion: '2025-06-18' }),
    ],
    ['type http', { a: { type: 'http', url: 'https://a/mcp' } }, ok({ displayName: 'a', endpoint: 'https://a/mcp', headers: {}, protocolVersion: 'auto' })],
    ['type streamable_http', { a: { type: 'streamable_http', url: 'https://a/mcp' } }, ok({ displayName: 'a', endpoint: 'https://a/mcp', headers: {}, protocolVersion: 'auto' })],
    ['root array', [1], err('json_not_object', { label: 'configuration' })],
    ['root string', 'x', err('json_not_object', { label: 'configuration' })],
    ['mcpServers not object', { mcpServers: [] }, err('json_not_object', { label: 'mcpServers' })],
    ['no server', { mcpServers: {} }, err('json_one_server')],
    ['two servers', { a: { url: 'https://a' }, b: { url: 'https://b' } }, err('json_one_server')],
    ['blank name', { '  ': { url: 'https://a' } }, err('json_name_required')],
    ['entry not object', { a: 'https://a' }, err('json_not_object', { label: 'a' })],
    ['no url', { a: {} }, err('json_url')],
    ['url not string', { a: { url: 5 } }, err('json_url')],
    ['file url', { a: { url: 'file:///etc/passwd' } }, err('json_url')],
    ['stdio command', { a: { command: 'npx', args: ['x'] } }, err('json_stdio')],
    ['type not string', { a: { type: 1, url: 'https://a' } }, err('json_type_string')],
    ['type sse', { a: { type: 'sse', url: 'https://a' } }, err('json_type_unsupported', { type: 'sse' })],
    ['headers array', { a: { url: 'https://a', headers: [] } }, err('json_headers_object')],
    ['header number', { a: { url: 'https://a', headers: { k: 1 } } }, err('json_header_string', { name: 'k' })],
    ['bad protocol', { a: { url: 'https://a', protocolVersion: '2024-11-05' } }, err('json_protocol')],
  ])('%s', (_name, value, expected) => {
    expect(parseServerJson(JSON.stringify(value))).toEqual(expected);
  });

  test('a syntax error carries the parser message', () => {
    const r = parseServerJson('{');
    expect(r.ok).toBe(false);
    expect(!r.ok && 'syntax' in r.error && r.error.syntax.length > 0).toBe(true);
  });
});
