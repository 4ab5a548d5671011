// The Manager's Resources and Prompts tabs as boot/ wires them: the
// manager feature's tabs with the resources feature's dialogs
// (chat-features.ts' primitivesDeps).

import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { McpServerCapabilities } from '../../../jsapi/tauritavern-mcp';
import { advertised, capabilities, FakeMcp, installSillyTavern, readme, SERVER_ID, server, summarize } from '../../test/fakes';
import { TestPopup } from '../../test/popup-double';
import { primitivesDeps } from './chat-features';
import type { ServerChange } from '../host/changes';
import { createManagerActions } from '../features/manager/actions';
import type { PrimitivesApi } from '../host/tauritavern';
import { englishTr } from '../base/texts';
import { McpManagerApp } from '../features/manager/McpManagerApp';
import { PrimitivesContext, visibleTabs } from '../features/manager/Primitives';

/** The Manager on a fake api.mcp, with the Resources and Prompts tabs and their real dialogs in the Popup double. */
function renderManager(mcp: FakeMcp, opts: { watch?: (fn: (c?: ServerChange) => void) => void } = {}) {
  installSillyTavern();
  render(
    <PrimitivesContext.Provider value={primitivesDeps(mcp as unknown as PrimitivesApi, englishTr, undefined)}>
      <McpManagerApp
        initial={{ servers: mcp.registrations.map((s) => structuredClone(s)), storageIssues: [] }}
        actions={createManagerActions(mcp, englishTr)}
        {...(opts.watch
          ? {
              watchChanges: (fn: (c?: ServerChange) => void) => {
                opts.watch!(fn);
                return () => {};
              },
            }
          : {})}
      />
    </PrimitivesContext.Provider>,
  );
}

async function expand(user: ReturnType<typeof userEvent.setup>, name = 'Local tools') {
  const row = screen.getByText(name).closest('li')!;
  await user.click(within(row).getByRole('button', { name: 'Show or hide tools' }));
  return row as HTMLElement;
}

describe('visibleTabs', () => {
  test('only the primitives the server has; tools until it is known to offer none', () => {
    expect(visibleTabs(undefined, false)).toEqual(['tools']);
    expect(visibleTabs(capabilities(), false)).toEqual(['tools', 'resources', 'prompts']);
    expect(visibleTabs(capabilities({ advertised: advertised({ resources: false, prompts: false }) }), false)).toEqual(['tools']);
    expect(visibleTabs(capabilities({ advertised: advertised({ tools: false, prompts: false }) }), false)).toEqual(['resources']);
    expect(visibleTabs(capabilities({ advertised: advertised({ tools: false }) }), true)).toEqual(['tools', 'resources', 'prompts']);
  });
});

describe('the console tabs', () => {
  test('a server with resources and prompts shows three tabs; the Resources tab lists resources and templates', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    mcp.resourcesFor = () => [readme(), readme({ uri: 'file:///docs/logo.png', name: 'logo.png', title: undefined, mimeType: 'image/png', size: 2048, description: 'The logo' })];
    renderManager(mcp);
    const row = await expand(user);
    const tabs = await within(row).findByRole('tablist', { name: 'What Local tools offers' });
    expect(within(tabs).getAllByRole('tab').map((t) => [t.textContent, t.getAttribute('aria-selected')])).toEqual([
      ['Tools', 'true'],
      ['Resources', 'false'],
      ['Prompts', 'false'],
    ]);
    expect(within(row).getByRole('tabpanel')).toHaveProperty('textContent', expect.stringContaining('Search files'));

    await user.click(within(tabs).getByRole('tab', { name: 'Resources' }));
    const panel = within(row).getByRole('tabpanel');
    expect(panel.getAttribute('aria-labelledby')).toBe(within(tabs).getByRole('tab', { name: 'Resources' }).id);
    const list = await within(panel).findByRole('list', { name: 'Resources' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual([
      'Read meREADME.mdOpentext/markdown11 Bfile:///docs/README.md',
      'logo.pngOpenimage/png2.0 KiBfile:///docs/logo.pngThe logo',
    ]);
    expect(within(panel).getByText('2 resources')).toBeTruthy();
    const templates = within(panel).getByRole('region', { name: 'Resource templates' });
    expect(templates.textContent).toContain('file:///docs/{name}');
    expect(mcp.inputs('listResources')).toEqual([{ registrationId: SERVER_ID, refresh: false }]);

    // Refresh asks the server
    await user.click(within(panel).getByRole('button', { name: 'Refresh resources' }));
    await waitFor(() => expect(mcp.inputs('listResources')).toContainEqual({ registrationId: SERVER_ID, refresh: true }));
    expect(mcp.inputs('listTemplates')).toContainEqual({ registrationId: SERVER_ID, refresh: true });

    // arrow keys move between tabs
    within(tabs).getByRole('tab', { name: 'Resources' }).focus();
    await user.keyboard('{ArrowRight}');
    expect(within(tabs).getByRole('tab', { name: 'Prompts' }).getAttribute('aria-selected')).toBe('true');
    expect(document.activeElement).toBe(within(tabs).getByRole('tab', { name: 'Prompts' }));
    const prompts = await within(row).findByRole('list', { name: 'Prompts' });
    expect(within(prompts).getByRole('listitem').textContent).toBe('SummarizesummarizeUseSummarize a topic.Arguments: topic *, style');
  });

  test('while the backend learns what a server offers (a stdio process starting), the console says more may come', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active', { capabilities: { allowed: { resources: true, prompts: true } } })]);
    let answer: (c: McpServerCapabilities) => void = () => {};
    mcp.servers.capabilities = () => new Promise((r) => (answer = r));
    renderManager(mcp);
    const row = await expand(user);
    expect(await within(row).findByText('Asking the server whether it also offers resources and prompts…')).toBeTruthy();
    expect(within(row).queryByRole('tablist')).toBeNull();
    await act(async () => answer(capabilities()));
    expect(await within(row).findByRole('tablist', { name: 'What Local tools offers' })).toBeTruthy();
    expect(within(row).queryByText(/Asking the server whether/)).toBeNull();
  });

  test('a server that advertises only tools shows no tabs at all', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    mcp.capabilitiesFor = () => capabilities({ advertised: advertised({ resources: false, prompts: false, completions: false }) });
    renderManager(mcp);
    const row = await expand(user);
    await within(row).findByText('Search files');
    await waitFor(() => expect(mcp.count('capabilities')).toBeGreaterThan(0));
    await act(async () => {});
    expect(within(row).queryByRole('tablist')).toBeNull();
    expect(within(row).queryByRole('tab')).toBeNull();
    expect(mcp.count('listResources') + mcp.count('listPrompts')).toBe(0);
  });

  test('the switch turns resources off: the tab stays and says they are off, and nothing is listed', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    renderManager(mcp);
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Resources' }));
    // SillyTavern's a11y.js gives every .menu_button role="button": the state must survive it
    for (const el of row.querySelectorAll('.menu_button')) el.setAttribute('role', 'button');
    const sw = within(row).getByRole('button', { name: 'Resources from this server', pressed: true });
    await within(row).findByRole('list', { name: 'Resources' });
    await user.click(sw);
    await waitFor(() => expect(within(row).getByRole('button', { name: 'Resources from this server' }).getAttribute('aria-pressed')).toBe('false'));
    expect(mcp.inputs('setCapabilities')).toEqual([{ registrationId: SERVER_ID, resources: false }]);
    expect(within(row).getByText(/Resources are off for this server/)).toBeTruthy();
    expect(within(row).queryByRole('list', { name: 'Resources' })).toBeNull();
    expect(within(row).queryByRole('alert')).toBeNull();
    // the registration the Manager shows is the one the switch returned
    expect(mcp.registrations[0]!.capabilities?.allowed).toEqual({ resources: false, prompts: true });

    const lists = mcp.count('listResources');
    await user.click(within(row).getByRole('button', { name: 'Resources from this server' }));
    await within(row).findByRole('list', { name: 'Resources' });
    expect(mcp.count('listResources')).toBe(lists + 1);
  });

  test('a damaged allowlist says so in the panel, and a switch writes it again', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active', { capabilities: capabilities({ issue: 'capabilities.json: unexpected end of JSON input' }) })]);
    renderManager(mcp);
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Prompts' }));
    expect(within(row).getByText(/settings of this server cannot be read, so both are refused: capabilities.json: unexpected end/)).toBeTruthy();
    await user.click(within(row).getByRole('button', { name: 'Prompts from this server' }));
    await waitFor(() => expect(within(row).queryByText(/cannot be read/)).toBeNull());
  });

  test('a paused server with known capabilities keeps its tabs and says it is paused', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('paused', { capabilities: capabilities() })]);
    renderManager(mcp);
    const row = await expand(user);
    await user.click(within(row).getByRole('tab', { name: 'Resources' }));
    expect(within(row).getByText('Paused — activate to browse this server’s resources.')).toBeTruthy();
    expect(mcp.count('listResources')).toBe(0);
    expect(mcp.count('capabilities')).toBe(0); // a paused server is not connected to learn them
  });

  test('a failed list is an error with Retry', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    mcp.failNext('listPrompts', Object.assign(new Error('mcp.list_cursor_cycle: the server repeated a cursor'), { code: 'mcp.list_cursor_cycle' }));
    renderManager(mcp);
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Prompts' }));
    expect((await within(row).findByRole('alert')).textContent).toBe('mcp.list_cursor_cycle: the server repeated a cursor');
    await user.click(within(row).getByRole('button', { name: 'Retry' }));
    await within(row).findByRole('list', { name: 'Prompts' });
  });

  test('the backend saying the prompts changed lists them again', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    let notify: ((c?: ServerChange) => void) | undefined;
    renderManager(mcp, { watch: (fn) => (notify = fn) });
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Prompts' }));
    await within(row).findByRole('list', { name: 'Prompts' });
    mcp.promptsFor = () => [summarize(), summarize({ name: 'translate', title: 'Translate' })];
    await act(async () => notify!({ registrationId: SERVER_ID, lists: ['prompts'] }));
    await within(row).findByText('Translate');
    expect(mcp.count('listPrompts')).toBe(2);
  });
});

describe('opening a resource and a prompt from the tabs', () => {
  test('Open reads the resource into the preview dialog', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    renderManager(mcp);
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Resources' }));
    await user.click(await within(row).findByRole('button', { name: 'Open Read me' }));
    const dialog = await screen.findByRole('dialog');
    await within(dialog).findByText('text of file:///docs/README.md');
    expect(mcp.inputs('read')).toEqual([{ registrationId: SERVER_ID, uri: 'file:///docs/README.md' }]);
    expect(TestPopup.current?.options.wide).toBe(true);
  });

  test('a template opens its form; a prompt opens its own', async () => {
    const user = userEvent.setup();
    const mcp = new FakeMcp([server('active')]);
    renderManager(mcp);
    const row = await expand(user);
    await user.click(await within(row).findByRole('tab', { name: 'Resources' }));
    await user.click(await within(row).findByRole('button', { name: 'Open template Docs file' }));
    let dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByLabelText('name')).toBeTruthy();
    expect(mcp.count('read')).toBe(0);
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));

    await user.click(within(row).getByRole('tab', { name: 'Prompts' }));
    await user.click(await within(row).findByRole('button', { name: 'Use prompt Summarize' }));
    dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByRole('combobox', { name: /^topic/ }).getAttribute('aria-required')).toBe('true');
  });
});
