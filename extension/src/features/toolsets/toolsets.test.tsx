// The tool sets' screen and its dialogs: the list with the set in use, the
// editor (whole servers and single tools, the order, a description per
// tool, the limit and the reader), the choice for the chat, and removal.

import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import type { LegacyMcpTool, McpToolSet, SaveMcpToolSetInput } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern, server, SERVER_B, SERVER_ID } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import type { BindingLevel, BindingScope } from '../../host/bindings';
import { englishTr } from '../../base/texts';
import { TrContext } from '../../base/tr';
import { openBindingDialog } from './binding-dialog';
import { confirmRemoveToolSet } from './remove-dialog';
import { openToolSetDialog, saveInput } from './toolset-dialog';
import { selectionSummary } from './ToolSetsPanel';
import { ToolSetsContext, ToolSetsSection, type ToolSetsDeps } from './ToolSetsPanel';

const coding: McpToolSet = {
  id: 'set-1',
  name: 'Coding',
  tools: [`mcp/${SERVER_ID}:*`, `mcp/${SERVER_B}:fetch`],
  descriptionOverrides: { [`mcp/${SERVER_B}:fetch`]: { description: 'Fetch docs', properties: { url: 'The page' } } },
  resultInlineCharLimit: 20000,
  readerTool: false,
  toolMode: 'all',
  searchMaxTools: 40,
  searchContextPercent: 10,
  pinnedTools: [],
};
const tool = (server: string, name: string, title: string, serverName: string): LegacyMcpTool => ({
  toolId: `mcp/${server}:${name}`, nativeName: name, serverDisplayName: serverName, title, inputSchema: { type: 'object' },
});

describe('the list', () => {
  test('sets by name with where they are bound, the set in use, New, Edit and Remove', async () => {
    const scope: BindingScope = { chatOpen: true, character: { key: 'ada.png', name: 'Ada', toolSetId: 'set-1' }, default: 'set-1' };
    const deps: ToolSetsDeps = {
      list: vi.fn(async () => ({ toolSets: [coding], storageIssues: [{ fileName: 'tool-sets/x.json', message: 'Invalid JSON' }] })),
      edit: vi.fn(async () => null),
      remove: vi.fn(async () => true),
      choose: vi.fn(async () => {}),
      scope: () => scope,
      onChange: () => () => {},
    };
    render(
      <TrContext.Provider value={englishTr}>
        <ToolSetsContext.Provider value={deps}>
          <ToolSetsSection />
        </ToolSetsContext.Provider>
      </TrContext.Provider>,
    );
    expect(await screen.findByText('Tool sets · 1')).toBeTruthy();
    expect(screen.getByText('This chat uses the tool set “Coding” (chosen for Ada).')).toBeTruthy();
    const row = screen.getByText('Coding').closest('li')!;
    expect(row.textContent).toContain('This character');
    expect(row.textContent).toContain('Default');
    expect(row.textContent).toContain('whole servers: 1 · single tools: 1 · results inline up to 20,000 characters · no reader tool');
    expect(screen.getByText('tool-sets/x.json')).toBeTruthy();
    await userEvent.click(within(row).getByRole('button', { name: 'Edit tool set Coding' }));
    expect(deps.edit).toHaveBeenCalledWith(coding, [coding]);
    await userEvent.click(within(row).getByRole('button', { name: 'Remove tool set Coding' }));
    expect(deps.remove).toHaveBeenCalledWith(coding);
    await userEvent.click(screen.getByRole('button', { name: 'New tool set' }));
    expect(deps.edit).toHaveBeenLastCalledWith(undefined, [coding]);
    await userEvent.click(screen.getByRole('button', { name: 'Choose for this chat' }));
    expect(deps.choose).toHaveBeenCalledWith([coding]);
    await waitFor(() => expect((deps.list as ReturnType<typeof vi.fn>).mock.calls.length).toBeGreaterThanOrEqual(4)); // listed again after each
  });
});

describe('a failed listing', () => {
  test('says so, and neither shows the sets it knew nor claims there are none', async () => {
    let change = () => {};
    let fail = false;
    const deps: ToolSetsDeps = {
      list: vi.fn(async () => {
        if (fail) throw Object.assign(new Error('The ttmcp backend is not reachable'), { code: 'mcp.backend_unavailable' });
        return { toolSets: [], storageIssues: [] };
      }),
      edit: vi.fn(async () => null),
      remove: vi.fn(async () => true),
      choose: vi.fn(async () => {}),
      scope: () => ({ chatOpen: false }),
      onChange: (listener) => {
        change = listener;
        return () => {};
      },
    };
    render(
      <TrContext.Provider value={englishTr}>
        <ToolSetsContext.Provider value={deps}>
          <ToolSetsSection />
        </ToolSetsContext.Provider>
      </TrContext.Provider>,
    );
    expect(await screen.findByText(/No tool sets yet/)).toBeTruthy();
    fail = true;
    change();
    expect(await screen.findByRole('alert')).toBeTruthy();
    expect(screen.queryByText(/No tool sets yet/)).toBeNull();
    expect((screen.getByRole('button', { name: 'New tool set' }) as HTMLButtonElement).disabled).toBe(true);
  });

  test('a backend that is not connected is not said again under the drawer’s banner (walked in SillyTavern 1.18.0)', async () => {
    const deps: ToolSetsDeps = {
      list: vi.fn(async () => {
        throw Object.assign(new Error('mcp.host_unavailable: The ttmcp backend at http://127.0.0.1:7878 is not reachable'), { code: 'mcp.host_unavailable' });
      }),
      edit: vi.fn(async () => null),
      remove: vi.fn(async () => true),
      choose: vi.fn(async () => {}),
      scope: () => ({ chatOpen: false }),
      onChange: () => () => {},
    };
    render(
      <TrContext.Provider value={englishTr}>
        <ToolSetsContext.Provider value={deps}>
          <ToolSetsSection />
        </ToolSetsContext.Provider>
      </TrContext.Provider>,
    );
    await waitFor(() => expect(deps.list).toHaveBeenCalled());
    await waitFor(() => expect((screen.getByRole('button', { name: 'New tool set' }) as HTMLButtonElement).disabled).toBe(true));
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.queryByText(/host_unavailable|No tool sets yet/)).toBeNull();
  });
});

describe('the editor', () => {
  test('whole servers and single tools, in order, a description of the set\'s own, the limit and the reader', async () => {
    installSillyTavern();
    const user = userEvent.setup();
    const saved: SaveMcpToolSetInput[] = [];
    const opened = openToolSetDialog(
      {
        set: undefined,
        servers: [server('active', { displayName: 'Local tools' }), server('paused', { id: SERVER_B, displayName: 'Web' })],
        tools: [tool(SERVER_ID, 'search', 'Search files', 'Local tools'), tool(SERVER_ID, 'read', 'Read file', 'Local tools'), tool(SERVER_B, 'fetch', 'Fetch page', 'Web')],
        save: async (dto) => {
          saved.push(dto);
          return { ...coding, ...dto, id: 'new' } as McpToolSet;
        },
      },
      englishTr,
    );
    await user.type(await screen.findByLabelText('Name'), 'Research');
    await user.click(screen.getByRole('checkbox', { name: /^Read file/ }));
    await user.click(screen.getByRole('checkbox', { name: /All tools of Web that you allow/ }));
    await user.click(screen.getByRole('checkbox', { name: /^Search files/ }));
    // the order: Read file, Web's tools, Search files; Search files moves to the top
    await user.click(screen.getByRole('button', { name: 'Move Search files (Local tools) up' }));
    await user.click(screen.getByRole('button', { name: 'Move Search files (Local tools) up' }));
    await user.type(screen.getByLabelText('Description of Search files (Local tools) for this set'), 'Search the repository');
    const limit = screen.getByLabelText('Inline limit of a result (characters)');
    await user.clear(limit);
    await user.type(limit, '0');
    expect(await currentPopup().close(1)).toBe(false); // vetoed: the limit is invalid
    expect(limit.getAttribute('aria-invalid')).toBe('true');
    await user.clear(limit);
    await user.type(limit, '8000');
    await user.click(screen.getByRole('checkbox', { name: /Let the model read long results/ }));
    // issue 31: automatic, with a budget, and Search files pinned beside the search tools
    await user.selectOptions(screen.getByLabelText('How the tools reach the model'), 'automatic');
    const max = screen.getByLabelText('Search above this many tools');
    await user.clear(max);
    await user.type(max, '0');
    expect(await currentPopup().close(1)).toBe(false); // vetoed: the budget is invalid
    expect(screen.getByRole('alert').textContent).toContain('The budget is a whole number of tools');
    await user.clear(max);
    await user.type(max, '25');
    await user.click(screen.getByRole('checkbox', { name: 'Always offered with search: Search files (Local tools)' }));
    await user.click(screen.getByRole('checkbox', { name: 'Always offered with search: Read file (Local tools)' }));
    await user.click(screen.getByRole('checkbox', { name: 'Always offered with search: Read file (Local tools)' })); // and off again
    // a tool selected only through its whole server can be pinned too, under that server's entry
    await user.click(screen.getByText('Tools of this server always offered with search (0 pinned)'));
    await user.click(screen.getByRole('checkbox', { name: 'Fetch page' }));
    expect(screen.getByText('Tools of this server always offered with search (1 pinned)')).toBeTruthy();
    expect(await currentPopup().close(1)).toBe(true);
    expect(await opened).toMatchObject({ id: 'new' });
    expect(saved).toEqual([
      {
        name: 'Research',
        tools: [`mcp/${SERVER_ID}:search`, `mcp/${SERVER_ID}:read`, `mcp/${SERVER_B}:*`],
        descriptionOverrides: { [`mcp/${SERVER_ID}:search`]: { description: 'Search the repository', properties: {} } },
        resultInlineCharLimit: 8000,
        readerTool: false,
        toolMode: 'automatic',
        searchMaxTools: 25,
        searchContextPercent: 10,
        pinnedTools: [`mcp/${SERVER_ID}:search`, `mcp/${SERVER_B}:fetch`],
      },
    ]);
  });

  test('an entry not offered now is shown as such; the backend\'s refusal keeps the dialog open', async () => {
    installSillyTavern();
    const save = vi.fn(async () => {
      throw Object.assign(new Error('mcp.tool_set_name_taken: a tool set called `Coding` exists already'), { code: 'mcp.tool_set_name_taken' });
    });
    const opened = openToolSetDialog({ set: coding, servers: [server('active')], tools: [], save }, englishTr);
    const order = await screen.findByRole('list', { name: 'Selected, in order' });
    expect(within(order).getByText(/^fetch/).textContent).toContain('fetch');
    expect(within(order).getAllByText('not offered now')).toHaveLength(1); // Web is gone; Local tools' * still names its server
    expect(await currentPopup().close(1)).toBe(false);
    expect(await screen.findByRole('alert')).toHaveProperty('textContent', 'mcp.tool_set_name_taken: a tool set called `Coding` exists already');
    expect(await currentPopup().close(0)).toBe(true);
    expect(await opened).toBeNull();
  });

  test('a set\'s summary says its search mode and pins', () => {
    expect(selectionSummary({ ...coding, toolMode: 'search', pinnedTools: [`mcp/${SERVER_B}:fetch`] }, englishTr)).toBe(
      'whole servers: 1 · single tools: 1 · results inline up to 20,000 characters · no reader tool · search mode, 1 pinned',
    );
    expect(selectionSummary({ ...coding, toolMode: 'automatic', searchMaxTools: 64, searchContextPercent: 5 }, englishTr)).toContain('· automatic above 64 tools or 5 %, 0 pinned');
    expect(selectionSummary(coding, englishTr)).not.toContain('search');
  });

  test('overrides are kept only for what is still selected, with their property texts', () => {
    const kept = saveInput(coding, { name: 'Coding', tools: [`mcp/${SERVER_ID}:*`], descriptions: { [`mcp/${SERVER_ID}:x`]: 'X' }, limit: 1, reader: true });
    // fetch left the set: its override goes; x is selected through its server's *
    expect(kept.descriptionOverrides).toEqual({ [`mcp/${SERVER_ID}:x`]: { description: 'X', properties: {} } });
    const same = saveInput(coding, { name: 'Coding', tools: coding.tools, descriptions: { [`mcp/${SERVER_B}:fetch`]: '' }, limit: 1, reader: true });
    expect(same.descriptionOverrides).toEqual({ [`mcp/${SERVER_B}:fetch`]: { properties: { url: 'The page' } } });
  });
});

describe('choosing and removing', () => {
  test('the chat, the character and the default; the set in use follows the choices', async () => {
    installSillyTavern();
    const user = userEvent.setup();
    const bound: Array<[BindingLevel, string | undefined]> = [];
    const other = { ...coding, id: 'set-2', name: 'Roleplay' };
    const opened = openBindingDialog(
      {
        sets: [coding, other],
        scope: { chatOpen: true, character: { key: 'ada.png', name: 'Ada', toolSetId: 'set-1' }, default: 'gone' },
        bind: async (level, id) => {
          bound.push([level, id]);
          return true;
        },
      },
      englishTr,
    );
    const status = await screen.findByRole('status');
    expect(status.textContent).toBe('This chat uses the tool set “Coding” (chosen for Ada).');
    await user.selectOptions(screen.getByLabelText('This chat'), 'Roleplay');
    expect(status.textContent).toBe('This chat uses the tool set “Roleplay” (chosen for this chat).');
    await user.selectOptions(screen.getByLabelText('The character Ada'), 'The default choice');
    await user.selectOptions(screen.getByLabelText('Default (every other chat)'), 'Coding');
    expect(await currentPopup().close(1)).toBe(true);
    await opened;
    expect(bound).toEqual([
      ['default', 'set-1'],
      ['character', undefined],
      ['chat', 'set-2'],
    ]);
  });

  test('a binding to a set that is gone shows as such and is kept unless the user changes it', async () => {
    installSillyTavern();
    const user = userEvent.setup();
    const bound: Array<[BindingLevel, string | undefined]> = [];
    const opened = openBindingDialog(
      {
        sets: [coding],
        scope: { chatOpen: true, character: { key: 'ada.png', name: 'Ada', toolSetId: 'from-another-data-root' } },
        bind: async (level, id) => {
          bound.push([level, id]);
          return true;
        },
      },
      englishTr,
    );
    const status = await screen.findByRole('status');
    const personal = screen.getByLabelText('The character Ada') as HTMLSelectElement;
    expect(personal.selectedOptions[0]?.textContent).toBe('A removed tool set');
    expect(personal.getAttribute('aria-describedby') && document.getElementById(personal.getAttribute('aria-describedby')!)?.textContent).toBe(
      'The tool set chosen here no longer exists: it is skipped, and the next choice applies. Keep it, or choose another.',
    );
    expect(screen.getByLabelText('This chat').getAttribute('aria-describedby')).toBeNull(); // only where the set is gone
    expect(status.textContent).toBe(englishTr('toolset_in_use_none'));
    expect((screen.getByLabelText('This chat') as HTMLSelectElement).querySelectorAll('option')).toHaveLength(2); // none, Coding
    await user.selectOptions(screen.getByLabelText('This chat'), 'Coding');
    expect(await currentPopup().close(1)).toBe(true);
    await opened;
    expect(bound).toEqual([['chat', 'set-1']]);
  });

  test('removal asks first', async () => {
    installSillyTavern();
    const asked = confirmRemoveToolSet(coding, englishTr);
    expect(await screen.findByText('Remove the tool set “Coding”?')).toBeTruthy();
    await currentPopup().close(1);
    expect(await asked).toBe(true);
  });
});
