import type { ServerChange } from '../../host/changes';
import { useEffect } from 'react';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import type { McpDiscoveryResult, McpServerList, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { apiError, deferred, discovery, FakeMcp, FakeStore, installSillyTavern, SERVER_B, SERVER_ID, searchTool, server, strictActions } from '../../../test/fakes';
import { currentPopup, TestPopup } from '../../../test/popup-double';
import { createManagerActions } from './actions';
import { EXA_MARKER, EXA_SERVER, ensureExaRecommendation } from './recommendation';
import { englishTr } from '../../base/texts';
import { SectionsContext, type ManagerSections } from './sections';
import { McpManagerApp, type McpManagerActions } from './McpManagerApp';

/** The Manager on a fake api.mcp with the real dialogs in the Popup double. */
function renderWithApi(mcp: FakeMcp) {
  installSillyTavern();
  render(
    <McpManagerApp
      initial={{ servers: mcp.registrations.map((s) => structuredClone(s)), storageIssues: mcp.storageIssues }}
      actions={createManagerActions(mcp, englishTr)}
    />,
  );
}

describe('Exa Search recommendation', () => {
  test('is created once; after deleting it a second run does not re-create it', async () => {
    const mcp = new FakeMcp();
    const store = new FakeStore();
    const first = await ensureExaRecommendation({ servers: [], storageIssues: [] }, mcp.servers.create, store);
    expect(first.error).toBeUndefined();
    expect(first.initial.servers.map((s) => [s.displayName, s.endpoint, s.state])).toEqual([
      [EXA_SERVER.displayName, EXA_SERVER.endpoint, 'paused'],
    ]);
    expect(store.data.get(`${EXA_MARKER.namespace}/main/${EXA_MARKER.key}`)).toBe(true);

    await mcp.servers.remove(first.initial.servers[0]!.id);
    const second = await ensureExaRecommendation(await mcp.servers.list(), mcp.servers.create, store);
    expect(second.error).toBeUndefined();
    expect(second.initial.servers).toEqual([]);
    expect(mcp.count('create')).toBe(1);
  });

  test('an existing registration of the endpoint is not duplicated, but the marker is set', async () => {
    const mcp = new FakeMcp([server('paused', { endpoint: EXA_SERVER.endpoint, displayName: 'Mine' })]);
    const store = new FakeStore();
    const out = await ensureExaRecommendation(await mcp.servers.list(), mcp.servers.create, store);
    expect(mcp.count('create')).toBe(0);
    expect(out.initial.servers.map((s) => s.displayName)).toEqual(['Mine']);
    expect(store.calls.map((c) => c.method)).toEqual(['tryGetJson', 'setJson']);
  });

  test('a failure is the initial error and keeps the server created so far', async () => {
    const mcp = new FakeMcp();
    const store = new FakeStore();
    store.failNextSet = new Error('store is read-only');
    const out = await ensureExaRecommendation({ servers: [], storageIssues: [] }, mcp.servers.create, store);
    expect(out.error).toBe('store is read-only');
    expect(out.initial.servers.map((s) => s.displayName)).toEqual(['Exa Search']);
  });
});

describe('McpManagerApp', () => {
  test('shows storage issues, the empty state, and adds a server from it', async () => {
    const user = userEvent.setup();
    const created = server();
    let adds = 0;
    render(
      <McpManagerApp
        initial={{ servers: [], storageIssues: [{ fileName: 'broken.json', message: 'mcp.registration_invalid: bad' }] }}
        actions={strictActions({
          addServer: () => {
            adds++;
            return Promise.resolve(created);
          },
        })}
      />,
    );
    const issues = screen.getByRole('status');
    expect(within(issues).getByText('Registration files needing attention')).toBeTruthy();
    expect(within(issues).getByText('broken.json').tagName).toBe('CODE');
    expect(screen.getByText('No MCP servers yet')).toBeTruthy();
    expect(screen.getByText('Add a Streamable HTTP endpoint to see the tools it offers.')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Add server' }));
    expect(await screen.findByText('Servers · 1')).toBeTruthy();
    expect(screen.getByText('Local tools')).toBeTruthy();
    expect(adds).toBe(1);
  });

  test('shows the initial error and sorts servers by name, then id', () => {
    render(
      <McpManagerApp
        initial={{
          servers: [
            server('paused', { id: SERVER_B, displayName: 'beta' }),
            server('paused', { id: SERVER_ID, displayName: 'Alpha' }),
            server('paused', { id: '00000000-0000-4000-8000-000000000001', displayName: 'beta' }),
          ],
          storageIssues: [],
          error: 'TauriTavern extension store is unavailable',
        }}
        actions={strictActions()}
      />,
    );
    expect(screen.getByRole('alert').textContent).toBe('TauriTavern extension store is unavailable');
    const names = [...document.querySelectorAll('.tt-mcp-server')].map(
      (li) => `${li.querySelector('.tt-mcp-server-name')?.textContent}`,
    );
    expect(names).toEqual(['Alpha', 'beta', 'beta']);
    const rows = [...document.querySelectorAll('.tt-mcp-server')];
    expect(rows[1]?.querySelector('code')?.textContent).toBe('http://127.0.0.1:3000/mcp');
  });

  test('expanding an active server discovers once; Refresh tools refreshes; Allow is saved and shown', async () => {
    const mcp = new FakeMcp([server('active')]);
    renderWithApi(mcp);
    const user = userEvent.setup();

    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(screen.getByText('search').tagName).toBe('CODE');
    expect(screen.getByText('Local MCP · MCP 2026-07-28')).toBeTruthy();
    expect(screen.getByText('1 tool')).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);

    await user.click(screen.getByRole('button', { name: 'Refresh tools' }));
    await waitFor(() => expect(mcp.count('refresh')).toBe(1));
    expect(mcp.count('discover')).toBe(1);

    const group = screen.getByRole('radiogroup', { name: 'Permission for Search files' });
    expect(within(group).getByRole<HTMLInputElement>('radio', { name: 'Off' }).checked).toBe(true);
    await user.click(within(group).getByRole('radio', { name: 'Allow' }));
    await waitFor(() =>
      expect(mcp.inputs('setPermission')).toEqual([{ registrationId: SERVER_ID, nativeName: 'search', permission: 'allow' }]),
    );
    await waitFor(() => expect(within(group).getByRole<HTMLInputElement>('radio', { name: 'Allow' }).checked).toBe(true));
    expect(mcp.registrations[0]?.toolPermissions).toEqual({ search: 'allow' });

    // collapsing and expanding again reuses the discovery
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);
  });

  test('a tool shows its parameters, the effective description and its schema', async () => {
    const mcp = new FakeMcp([server('active')]);
    mcp.discoveryFor = (id) =>
      discovery(
        {
          serverName: 'files',
          serverVersion: '1.2.0',
          tools: [
            {
              id: `mcp/${id}:search`,
              nativeName: 'search',
              description: 'Search local files by name.',
              inputSchema: {
                type: 'object',
                properties: { query: { type: 'string', description: 'Search terms' }, limit: { type: 'integer' } },
                required: ['query'],
              },
              outputSchema: { type: 'object' },
              annotations: { readOnlyHint: true },
              permission: 'ask',
            },
          ],
          diagnostics: [{ code: 'mcp.tool_schema_invalid', nativeName: 'broken', message: 'tool skipped' }],
        },
        id,
      );
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('files 1.2.0 · MCP 2026-07-28')).toBeTruthy();
    // no title: the native name is the title, without a repeated code
    expect(screen.getByText('search').className).toBe('tt-mcp-tool-title');
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'Ask' }).checked).toBe(true);
    const chips = [...document.querySelectorAll('.tt-mcp-chips > li')];
    expect(chips.map((c) => c.textContent)).toEqual(['query* (required)', 'limit']);
    expect(chips[0]?.getAttribute('title')).toBe('Search terms');
    // folded in the list
    expect(screen.getByText('Discovery notes · 1').closest('details')?.open).toBe(false);
    expect(screen.getByText('broken').tagName).toBe('CODE');
    expect(screen.getByText('tool skipped')).toBeTruthy();
    expect(screen.getByText('Schema & hints')).toBeTruthy();
    const schema = JSON.parse(document.querySelector('.tt-mcp-schema-json')?.textContent ?? '') as unknown;
    expect(schema).toEqual({
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'Search terms' }, limit: { type: 'integer' } },
        required: ['query'],
      },
      outputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
    });
  });

  test('Edit description opens the dialog with the override and applies the saved one', async () => {
    const mcp = new FakeMcp([
      server('active', { toolDescriptionOverrides: { search: { properties: { query: 'Search terms.' } } } }),
    ]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(await screen.findByRole('button', { name: 'Edit description' }));

    const popup = currentPopup();
    const dialog = within(popup.dlg);
    expect(dialog.getByRole('heading').textContent).toBe('Search files search');
    expect(dialog.getByText('Search local files by name.')).toBeTruthy();
    expect(dialog.getByRole<HTMLTextAreaElement>('textbox', { name: 'Custom description' }).value).toBe('');
    expect(dialog.getByText('Custom parameter descriptions are kept: query.')).toBeTruthy();
    // until saved, the row shows the server's text and no Custom chip
    const row = document.querySelector('.tt-mcp-tool') as HTMLElement;
    expect(within(row).getByText('Search local files by name.')).toBeTruthy();
    expect(within(row).queryByText('Custom')).toBeNull();

    await user.type(dialog.getByRole('textbox', { name: 'Custom description' }), 'Use only for local filename searches.');
    expect(await popup.close(1)).toBe(true);
    expect(mcp.inputs('setDescriptionOverride')).toEqual([
      {
        registrationId: SERVER_ID,
        nativeName: 'search',
        override: { description: 'Use only for local filename searches.', properties: { query: 'Search terms.' } },
      },
    ]);
    expect(await within(row).findByText('Use only for local filename searches.')).toBeTruthy();
    expect(within(row).getByText('Custom')).toBeTruthy();
    expect(within(row).queryByText('Search local files by name.')).toBeNull();
  });

  test('a paused server explains itself on expand and never discovers', async () => {
    const mcp = new FakeMcp([server('paused')]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(screen.getByText('Paused — activate to discover and test this server’s tools.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Show or hide tools' }).getAttribute('aria-expanded')).toBe('true');
    expect(mcp.count('discover')).toBe(0);
  });

  test('a discovery error stays the only alert while an unrelated Edit is pending and after it is cancelled', async () => {
    const edit = deferred<TauriTavernMcpServer | null>();
    const user = userEvent.setup();
    render(
      <McpManagerApp
        initial={{ servers: [server('active')], storageIssues: [] }}
        actions={strictActions({
          discover: () => Promise.reject(new Error('discovery failed')),
          editServer: () => edit.promise,
        })}
      />,
    );
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect((await screen.findByRole('alert')).textContent).toBe('discovery failed');

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    expect(screen.queryByText('Discovering tools…')).toBeNull();
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toEqual(['discovery failed']);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Retry' }).disabled).toBe(true);

    await act(async () => {
      edit.resolve(null);
      await edit.promise;
    });
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toEqual(['discovery failed']);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Retry' }).disabled).toBe(false);
  });

  test('Retry after a failed catalog load uses refresh once, then shows the tools', async () => {
    const mcp = new FakeMcp([server('active')]);
    mcp.failNext('discover', apiError('mcp.catalog_invalid', 'stored catalog is invalid'));
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect((await screen.findByRole('alert')).textContent).toBe('mcp.catalog_invalid: stored catalog is invalid');
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(mcp.count('refresh')).toBe(1);
    expect(mcp.count('discover')).toBe(1);
    expect(screen.queryByRole('alert')).toBeNull();
  });

  test('a collapsed row shows its error under the row', async () => {
    const mcp = new FakeMcp([server('active')]);
    mcp.failNext('setState', apiError('mcp.storage_failed', 'disk full', 'Internal'));
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Active' }));
    expect((await screen.findByRole('alert')).textContent).toBe('mcp.storage_failed: disk full');
    expect(screen.getByRole('button', { name: 'Active' }).getAttribute('aria-pressed')).toBe('true');
  });

  test('an active server without discovery offers "Discover tools" after its activation', async () => {
    const mcp = new FakeMcp([server('paused')]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(screen.getByRole('button', { name: 'Paused' }));
    expect(await currentPopup().close(1)).toBe(true);
    expect(await screen.findByRole('button', { name: 'Discover tools' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Discover tools' }));
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);
    // a paused server cannot be refreshed
    await user.click(screen.getByRole('button', { name: 'Active' }));
    await waitFor(() => expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Refresh tools' }).disabled).toBe(true));
  });

  test('activating asks first (plain-HTTP warning); cancelling changes nothing; pausing is immediate', async () => {
    const mcp = new FakeMcp([server('paused', { endpoint: 'http://192.168.1.20:3000/mcp' })]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Paused' }));
    let popup = currentPopup();
    expect(within(popup.dlg).getByRole('heading').textContent).toBe('Activate this MCP server?');
    expect(within(popup.dlg).getByText('http://192.168.1.20:3000/mcp').tagName).toBe('CODE');
    expect(within(popup.dlg).getByText(/This endpoint uses unencrypted HTTP\./)).toBeTruthy();
    expect(popup.buttonNamed('Activate')).toBeTruthy();
    await user.click(popup.buttonNamed('Cancel'));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Paused' })).toBeTruthy());
    expect(mcp.count('setState')).toBe(0);

    await user.click(screen.getByRole('button', { name: 'Paused' }));
    popup = currentPopup();
    await user.click(popup.buttonNamed('Activate'));
    const toggle = await screen.findByRole('button', { name: 'Active' });
    expect(toggle.getAttribute('aria-pressed')).toBe('true');
    expect(mcp.inputs('setState')).toEqual([{ registrationId: SERVER_ID, state: 'active' }]);

    await user.click(toggle);
    expect(await screen.findByRole('button', { name: 'Paused' })).toBeTruthy();
    expect(TestPopup.shown).toHaveLength(2);
    expect(mcp.inputs('setState')).toEqual([
      { registrationId: SERVER_ID, state: 'active' },
      { registrationId: SERVER_ID, state: 'paused' },
    ]);
  });

  test.each(['https://mcp.example.com/mcp', 'http://127.0.0.1:3000/mcp', 'http://localhost:7879/mcp'])(
    '%s gets the plain activation note (its traffic is encrypted or never leaves the machine)',
    async (endpoint) => {
      const mcp = new FakeMcp([server('paused', { endpoint })]);
      renderWithApi(mcp);
      await userEvent.setup().click(screen.getByRole('button', { name: 'Paused' }));
      const popup = currentPopup();
      expect(within(popup.dlg).queryByText(/unencrypted/)).toBeNull();
      expect(within(popup.dlg).getByText(/Activation allows manual discovery and test calls to this exact endpoint/)).toBeTruthy();
    },
  );

  test('Remove asks, then deletes the registration and forgets its discovery', async () => {
    const mcp = new FakeMcp([server('active'), server('paused', { id: SERVER_B, displayName: 'Other' })]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    const row = () => screen.getByText('Local tools').closest('li') as HTMLElement;
    await user.click(within(row()).getByRole('button', { name: 'Show or hide tools' }));
    await screen.findByText('Search files');
    await user.click(within(row()).getByRole('button', { name: 'Remove' }));
    const popup = currentPopup();
    expect(within(popup.dlg).getByRole('heading').textContent).toBe('Remove this MCP server?');
    expect(within(popup.dlg).getByText('The registration and all saved tool settings will be removed.')).toBeTruthy();
    await user.click(popup.buttonNamed('Remove'));
    await waitFor(() => expect(screen.queryByText('Local tools')).toBeNull());
    expect(screen.queryByText('Search files')).toBeNull();
    expect(screen.getByText('Servers · 1')).toBeTruthy();
    expect(mcp.inputs('remove')).toEqual([{ registrationId: SERVER_ID }]);
  });

  test('stale permissions are listed and "Set Off" clears one', async () => {
    const mcp = new FakeMcp([server('active', { toolPermissions: { gone: 'allow', old: 'ask' } })]);
    mcp.discoveryFor = (id) =>
      discovery(
        {
          staleTools: [
            { nativeName: 'gone', permission: 'allow' },
            { nativeName: 'old', permission: 'ask' },
          ],
        },
        id,
      );
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    const stale = (await screen.findByText('Not offered by this discovery')).closest('section') as HTMLElement;
    const gone = within(stale).getByText('gone').closest('li') as HTMLElement;
    expect(within(gone).getByText('Allow')).toBeTruthy();
    await user.click(within(gone).getByRole('button', { name: 'Set Off' }));
    await waitFor(() => expect(within(stale).queryByText('gone')).toBeNull());
    expect(within(stale).getByText('old')).toBeTruthy();
    expect(mcp.inputs('setPermission')).toEqual([{ registrationId: SERVER_ID, nativeName: 'gone', permission: 'off' }]);
    expect(mcp.registrations[0]?.toolPermissions).toEqual({ old: 'ask' });
  });

  test('an edit that changes the connection drops the cached discovery; a rename keeps it', async () => {
    const mcp = new FakeMcp([server('active')]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await screen.findByText('Search files');

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    const name = within(currentPopup().dlg).getByRole('textbox', { name: 'Name' });
    await user.clear(name);
    await user.type(name, 'Renamed');
    expect(await currentPopup().close(1)).toBe(true);
    expect(await screen.findByText('Renamed')).toBeTruthy();
    expect(screen.getByText('Search files')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.selectOptions(within(currentPopup().dlg).getByRole('combobox', { name: 'Protocol version' }), '2025-03-26');
    expect(await currentPopup().close(1)).toBe(true);
    await waitFor(() => expect(screen.queryByText('Search files')).toBeNull());
    expect(screen.getByRole('button', { name: 'Discover tools' })).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);
  });

  test('double clicks start nothing twice', async () => {
    const mcp = new FakeMcp([server('paused')]);
    renderWithApi(mcp);
    const user = userEvent.setup();
    const toggle = screen.getByRole('button', { name: 'Paused' });
    // two clicks before React renders the busy state
    act(() => {
      toggle.click();
      toggle.click();
    });
    await waitFor(() => expect(TestPopup.shown).toHaveLength(1));
    await user.click(currentPopup().buttonNamed('Cancel'));

    const add = screen.getByRole('button', { name: 'Add server' });
    act(() => {
      add.click();
      add.click();
    });
    await waitFor(() => expect(TestPopup.shown).toHaveLength(2));
    // two quick OKs on the Add dialog create one server
    const popup = currentPopup();
    await user.type(within(popup.dlg).getByRole('textbox', { name: 'Name' }), 'Second');
    await user.type(within(popup.dlg).getByRole('textbox', { name: 'Endpoint' }), 'https://example.com/mcp');
    const ok = popup.buttonNamed('Add server');
    ok.click();
    ok.click();
    await waitFor(() => expect(popup.closed).toBe(true));
    expect(mcp.count('create')).toBe(1);
    expect(await screen.findByText('Second')).toBeTruthy();
    expect(screen.getByText('Servers · 2')).toBeTruthy();
    expect(TestPopup.shown).toHaveLength(2);
  });

  test('without SillyTavern Popup the action fails with a panel error', async () => {
    installSillyTavern({ popup: false });
    const mcp = new FakeMcp([server('paused')]);
    render(
      <McpManagerApp initial={{ servers: mcp.registrations, storageIssues: [] }} actions={createManagerActions(mcp, englishTr)} />,
    );
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Add server' }));
    expect((await screen.findByRole('alert')).textContent).toBe('SillyTavern Popup API is unavailable');
    await user.click(screen.getByRole('button', { name: 'Paused' }));
    await waitFor(() => expect(screen.getAllByRole('alert')).toHaveLength(2));
  });

  test('"Test call" opens the console over the registrations and is disabled while open', async () => {
    const opened = deferred<void>();
    let given: TauriTavernMcpServer[] = [];
    const user = userEvent.setup();
    render(
      <McpManagerApp
        initial={{ servers: [server('active')], storageIssues: [] }}
        actions={strictActions({
          openTestCall: (servers) => {
            given = servers;
            return opened.promise;
          },
        })}
      />,
    );
    await user.click(screen.getByRole('button', { name: 'Test call' }));
    expect(given.map((s) => s.id)).toEqual([SERVER_ID]);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Test call' }).disabled).toBe(true);
    await act(async () => {
      opened.resolve();
      await opened.promise;
    });
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Test call' }).disabled).toBe(false);
  });
});

describe('changes made outside the panel', () => {
  /** The Manager over mcp with a watch whose notices the test sends (notify()). */
  function renderWatched(mcp: FakeMcp, overrides: Partial<McpManagerActions> = {}, sections: ManagerSections = {}) {
    installSillyTavern();
    let listener: ((change?: ServerChange) => void) | undefined;
    const watchChanges = (fn: (change?: ServerChange) => void) => {
      listener = fn;
      return () => {
        listener = undefined;
      };
    };
    const view = render(
      <SectionsContext.Provider value={sections}>
        <McpManagerApp
          initial={{ servers: mcp.registrations.map((s) => structuredClone(s)), storageIssues: mcp.storageIssues }}
          actions={{ ...createManagerActions(mcp, englishTr), ...overrides }}
          watchChanges={watchChanges}
        />
      </SectionsContext.Provider>,
    );
    return {
      view,
      notify: (change?: ServerChange) => act(async () => listener?.(change)),
      subscribed: () => listener !== undefined,
    };
  }

  const radio = (name: string) =>
    within(screen.getByRole('radiogroup', { name: 'Permission for Search files' })).getByRole<HTMLInputElement>('radio', { name });

  test('"Always allow" in the approval popup shows as Allow at the next notice, without a reload', async () => {
    const mcp = new FakeMcp([server('active', { toolPermissions: { search: 'ask' } })]);
    mcp.discoveryFor = (id) => discovery({ tools: [searchTool({ permission: 'ask' }, id)] }, id);
    const w = renderWatched(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await waitFor(() => expect(radio('Ask').checked).toBe(true));

    // the tool bridge sets Allow (the popup's "Always allow"), then notifies
    await mcp.tools.setPermission({ registrationId: SERVER_ID, nativeName: 'search', permission: 'allow' });
    await w.notify();
    await waitFor(() => expect(radio('Allow').checked).toBe(true));
    expect(mcp.count('discover')).toBe(1); // the cached discovery is kept: no new discovery
    expect(mcp.count('refresh')).toBe(0);
  });

  test('a server that announced new tools: the backend refreshed them, and the expanded server shows them (Off) without a click', async () => {
    const mcp = new FakeMcp([server('active', { toolPermissions: { search: 'allow' } })]);
    mcp.discoveryFor = (id) => discovery({ tools: [searchTool({ permission: 'allow' }, id)] }, id);
    const w = renderWatched(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await waitFor(() => expect(screen.getByText('Search files')).toBeTruthy());

    // the backend followed the server: its memory now holds the new tool
    mcp.discoveryFor = (id) =>
      discovery({ tools: [searchTool({ permission: 'allow' }, id), searchTool({ id: `mcp/${id}:grep`, nativeName: 'grep', title: 'Grep', permission: 'off' }, id)] }, id);
    await w.notify({ registrationId: SERVER_ID, lists: ['tools'] });
    await waitFor(() => expect(screen.getByText('Grep')).toBeTruthy());
    expect(radio('Allow').checked).toBe(true);
    expect(mcp.count('refresh')).toBe(0); // the backend refreshed; the page only read it

    // another server's change, or lists other than tools, read no discovery
    const before = mcp.count('discover');
    await w.notify({ registrationId: SERVER_B, lists: ['tools'] });
    await w.notify({ registrationId: SERVER_ID, lists: ['prompts'] });
    expect(mcp.count('discover')).toBe(before);
  });

  test('servers added, removed or changed elsewhere; storage issues; stale permissions; an edited endpoint drops the discovery', async () => {
    const mcp = new FakeMcp([server('active'), server('active', { id: SERVER_B, displayName: 'Other' })]);
    const w = renderWatched(mcp);
    const user = userEvent.setup();
    const [first, second] = screen.getAllByRole('button', { name: 'Show or hide tools' });
    await user.click(second!); // Local tools (sorted first)…
    await user.click(first!);
    await waitFor(() => expect(screen.getAllByText('Search files')).toHaveLength(2));

    // another tab: Local tools allows a tool it no longer lists, Other moves, a third server appears, a file breaks
    const local = mcp.registrations[0]!;
    local.toolPermissions = { search: 'allow', gone: 'ask' };
    local.displayName = 'Local tools (renamed)';
    mcp.registrations[1]!.endpoint = 'http://127.0.0.1:4000/mcp';
    mcp.registrations.push(server('paused', { id: '33333333-3333-4333-8333-333333333333', displayName: 'Third' }));
    mcp.storageIssues = [{ fileName: 'broken.json', message: 'mcp.registration_invalid: bad' }];
    await w.notify();

    expect(await screen.findByText('Local tools (renamed)')).toBeTruthy();
    expect(screen.getByText('Third')).toBeTruthy();
    expect(screen.getByText('Servers · 3')).toBeTruthy();
    expect(screen.getByText('broken.json')).toBeTruthy();
    const localRow = screen.getByText('Local tools (renamed)').closest('li')!;
    expect(within(localRow).getByRole<HTMLInputElement>('radio', { name: 'Allow' }).checked).toBe(true);
    expect(within(localRow).getByText('gone')).toBeTruthy(); // a stale permission now
    // Other is reached elsewhere now: its old tools are not shown as its tools
    const otherRow = screen.getByText('Other').closest('li')!;
    expect(within(otherRow).queryByText('Search files')).toBeNull();
    expect(within(otherRow).getByText('http://127.0.0.1:4000/mcp')).toBeTruthy();

    mcp.registrations = mcp.registrations.filter((s) => s.id !== SERVER_B);
    await w.notify();
    await waitFor(() => expect(screen.queryByText('Other')).toBeNull());
    expect(screen.getByText('Servers · 2')).toBeTruthy();
  });

  test('a list read before the panel saved its own change is not shown over it; it is read again', async () => {
    const mcp = new FakeMcp([server('active')]);
    const lists: Array<ReturnType<typeof deferred<McpServerList>>> = [];
    const w = renderWatched(mcp, {
      list: () => {
        const d = deferred<McpServerList>();
        lists.push(d);
        return d.promise;
      },
    });
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await waitFor(() => expect(radio('Off').checked).toBe(true));

    const stale = { servers: structuredClone(mcp.registrations), storageIssues: [] }; // read now: search is off
    await w.notify();
    await w.notify(); // a second notice while the first list runs: one more list after it, not two at once
    expect(lists).toHaveLength(1);
    await user.click(radio('Allow'));
    await waitFor(() => expect(radio('Allow').checked).toBe(true));
    await act(async () => lists[0]!.resolve(stale));
    expect(radio('Allow').checked).toBe(true);
    await waitFor(() => expect(lists).toHaveLength(2));
    await act(async () => lists[1]!.resolve({ servers: structuredClone(mcp.registrations), storageIssues: [] }));
    expect(radio('Allow').checked).toBe(true);
    expect(lists).toHaveLength(2);
  });

  test('a failed list changes nothing; the next notice lists again; unmounting unsubscribes', async () => {
    const mcp = new FakeMcp([server('paused')]);
    const w = renderWatched(mcp);
    mcp.failNext('list', apiError('mcp.host_unavailable', 'backend gone', 'Internal'));
    await w.notify();
    expect(screen.getByText('Local tools')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    mcp.registrations[0]!.displayName = 'Renamed';
    await w.notify();
    expect(await screen.findByText('Renamed')).toBeTruthy();
    expect(mcp.count('list')).toBe(2);
    expect(w.subscribed()).toBe(true);
    w.view.unmount();
    expect(w.subscribed()).toBe(false);
  });

  test('a list that changed nothing re-renders nothing: the reach section is not given a new version', async () => {
    const mcp = new FakeMcp([server('active', { toolPermissions: { search: 'allow' } })]);
    mcp.discoveryFor = (id) => discovery({ tools: [searchTool({ permission: 'allow' }, id)] }, id);
    // the model-tools line checks again whenever its version changes (ToolsPanel.tsx)
    const reach = vi.fn();
    const Reach = ({ version }: { version?: unknown }) => {
      useEffect(() => reach(), [version]);
      return null;
    };
    const w = renderWatched(mcp, {}, { reach: Reach });
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await waitFor(() => expect(radio('Allow').checked).toBe(true));
    await waitFor(() => expect(reach).toHaveBeenCalledTimes(1));

    for (let i = 0; i < 5; i++) await w.notify();
    expect(mcp.count('list')).toBe(5);
    expect(reach).toHaveBeenCalledTimes(1);

    // a real change does count
    await mcp.tools.setPermission({ registrationId: SERVER_ID, nativeName: 'search', permission: 'off' });
    await w.notify();
    await waitFor(() => expect(radio('Off').checked).toBe(true));
    await waitFor(() => expect(reach).toHaveBeenCalledTimes(2));
  });

  /**
   * A paused server activated from the row, where the backend has made it
   * active and said so (a change notice, listed) but its answer is late.
   */
  async function activatingLate() {
    const mcp = new FakeMcp([server('paused')]);
    const answer = deferred<void>();
    const w = renderWatched(mcp, {
      setState: async (input) => {
        const updated = await mcp.servers.setState(input);
        await answer.promise;
        return updated;
      },
    });
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Paused' }));
    await user.click(currentPopup().buttonNamed('Activate'));
    await w.notify();
    await screen.findByRole('button', { name: 'Active' });
    return { mcp, answer, user };
  }

  test('a row opened while its activation is still answering discovers once the answer is in (the list showed it active first)', async () => {
    const { mcp, answer, user } = await activatingLate();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(mcp.count('discover')).toBe(0); // the row is busy: nothing yet

    await act(async () => answer.resolve());
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);

    // closed and opened again: the discovery is kept, none runs
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(await screen.findByText('Search files')).toBeTruthy();
    expect(mcp.count('discover')).toBe(1);
  });

  test('a row opened and closed again while its activation answers does not discover', async () => {
    const { mcp, answer, user } = await activatingLate();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    await act(async () => answer.resolve());
    await waitFor(() => expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Active' }).disabled).toBe(false));
    expect(mcp.count('discover')).toBe(0);
  });

  test('a discovery running when the endpoint changed elsewhere is not shown as the new endpoint\'s tools; the old error goes', async () => {
    const mcp = new FakeMcp([server('active'), server('active', { id: SERVER_B, displayName: 'Other' })]);
    const running = deferred<McpDiscoveryResult>();
    const w = renderWatched(mcp, {
      discover: (id) => (id === SERVER_ID ? running.promise : mcp.servers.discover({ registrationId: id })),
      refresh: () => Promise.reject(apiError('mcp.transport_failed', 'connection refused', 'Internal')),
    });
    const user = userEvent.setup();
    const [local, other] = screen.getAllByRole('button', { name: 'Show or hide tools' });
    await user.click(local!); // Local tools: its discovery hangs
    await user.click(other!); // Other: a failed refresh leaves an error
    const otherRow = () => screen.getByText('Other').closest('li')!;
    await waitFor(() => expect(within(otherRow()).getByText('Search files')).toBeTruthy());
    await user.click(within(otherRow()).getByRole('button', { name: 'Refresh tools' }));
    expect(await within(otherRow()).findByText(/connection refused/)).toBeTruthy();

    // another tab points both elsewhere
    mcp.registrations[0]!.endpoint = 'http://127.0.0.1:4001/mcp';
    mcp.registrations[1]!.endpoint = 'http://127.0.0.1:4002/mcp';
    await w.notify();
    expect(within(otherRow()).queryByText(/connection refused/)).toBeNull();
    expect(within(otherRow()).queryByText('Search files')).toBeNull();

    await act(async () => running.resolve(discovery({}, SERVER_ID)));
    const localRow = screen.getByText('Local tools').closest('li')!;
    expect(within(localRow).queryByText('Search files')).toBeNull();
    expect(within(localRow).getByRole('button', { name: 'Discover tools' })).toBeTruthy();
  });
});
