import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import type { McpStdioApi, McpStdioStatus, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import { FakeMcp, installSillyTavern, SERVER_ID, server } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { parseServerJson } from './server-json';
import { createManagerActions } from './actions';
import { englishTr } from '../../base/texts';
import { McpManagerApp } from './McpManagerApp';
import { ServerTarget } from './ServerRow';
import { StdioProcess } from './Stdio';

const COMMAND_LINE = "npx -y @modelcontextprotocol/server-everything 'it'\\''s'";

/** A stdio server as the backend lists it. */
function stdioServer(state: 'active' | 'paused' = 'paused'): TauriTavernMcpServer {
  return server(state, {
    displayName: 'everything',
    endpoint: 'stdio:' + COMMAND_LINE,
    transport: 'stdio',
    stdio: {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything', "it's"],
      envNames: ['API_KEY'],
      cwd: '/home/me/mcp',
      commandLine: COMMAND_LINE,
    },
  });
}

/** FakeMcp with ttmcp's api.mcp.stdio. */
class FakeTtmcp extends FakeMcp {
  statuses: McpStdioStatus[] = [];
  statusCalls = 0;
  stdio: McpStdioApi = {
    status: (input: string | { registrationId: string }): Promise<McpStdioStatus> => {
      this.statusCalls++;
      const registrationId = typeof input === 'string' ? input : input.registrationId;
      const next = this.statuses.length > 1 ? this.statuses.shift()! : this.statuses[0];
      return Promise.resolve({ ...(next ?? { state: 'stopped' }), registrationId });
    },
  };
}

function renderManager(mcp: FakeMcp) {
  installSillyTavern();
  render(
    <McpManagerApp
      initial={{ servers: mcp.registrations.map((s) => structuredClone(s)), storageIssues: [] }}
      actions={createManagerActions(mcp, englishTr)}
    />,
  );
}

describe('stdio servers', () => {
  test('the row shows "stdio" and the command line where a remote server shows its endpoint', () => {
    renderManager(new FakeTtmcp([stdioServer(), server('paused', { id: '33333333-3333-4333-8333-333333333333', displayName: 'Remote' })]));
    const rows = screen.getAllByRole('listitem');
    const stdioRow = rows.find((r) => within(r).queryByText('everything'))!;
    expect(within(stdioRow).getByText('stdio')).toBeTruthy();
    expect(within(stdioRow).getByText(COMMAND_LINE).tagName).toBe('CODE');
    expect(within(stdioRow).queryByText('stdio:' + COMMAND_LINE)).toBeNull();
    const remoteRow = rows.find((r) => within(r).queryByText('Remote'))!;
    expect(within(remoteRow).getByText('http://127.0.0.1:3000/mcp')).toBeTruthy();
    expect(within(remoteRow).queryByText('stdio')).toBeNull();
  });

  test('activation shows the exact command, the environment names and the working directory', async () => {
    const mcp = new FakeTtmcp([stdioServer()]);
    renderManager(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Paused' }));
    const dialog = within(currentPopup().dlg);
    expect(dialog.getByRole('heading').textContent).toBe('Activate this MCP server?');
    expect(dialog.getByText(COMMAND_LINE).tagName).toBe('CODE');
    expect(dialog.getByText('API_KEY')).toBeTruthy();
    expect(dialog.getByText('/home/me/mcp')).toBeTruthy();
    expect(dialog.getByText(/Activation lets the backend run this command on its own machine/)).toBeTruthy();
    expect(dialog.queryByText(/unencrypted/)).toBeNull();
    await user.click(currentPopup().buttonNamed('Activate'));
    expect(await screen.findByRole('button', { name: 'Active' })).toBeTruthy();
    expect(mcp.inputs('setState')).toEqual([{ registrationId: SERVER_ID, state: 'active' }]);
  });

  test('Edit offers the name only and sends back what the list showed', async () => {
    const mcp = new FakeTtmcp([stdioServer()]);
    renderManager(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    const dialog = within(currentPopup().dlg);
    expect(dialog.queryByRole('textbox', { name: 'Endpoint' })).toBeNull();
    expect(dialog.queryByText('Advanced')).toBeNull();
    expect(dialog.getByText(/configured on the backend’s machine with ttmcp stdio add, import and remove/)).toBeTruthy();
    const name = dialog.getByRole<HTMLInputElement>('textbox', { name: 'Name' });
    await user.clear(name);
    await user.type(name, '  Everything  ');
    expect(await currentPopup().close(1)).toBe(true);
    expect(mcp.inputs('update')).toEqual([
      { registrationId: SERVER_ID, displayName: 'Everything', endpoint: 'stdio:' + COMMAND_LINE, headers: {}, protocolVersion: 'auto' },
    ]);
  });

  test('the console shows the process and, after a failure, its last stderr lines', async () => {
    const mcp = new FakeTtmcp([stdioServer('active')]);
    mcp.statuses = [
      { registrationId: SERVER_ID, state: 'stopped' },
      {
        registrationId: SERVER_ID,
        state: 'stopped',
        lastExit: {
          time: '2026-11-30T10:00:00Z',
          code: 'mcp.stdio_exited_at_start',
          message: 'the process exited (exit status 1) before completing MCP startup',
          stderr: ['npm ERR! 404 Not Found', 'npm ERR! could not find @modelcontextprotocol/server-everythin'],
        },
      },
    ];
    mcp.failNext('discover', new Error('mcp.stdio_exited_at_start: the process exited (exit status 1)'));
    renderManager(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    const process = await screen.findByRole('region', { name: 'Process' });
    expect(await within(process).findByText('npm ERR! 404 Not Found', { exact: false })).toBeTruthy();
    expect(within(process).getByText('mcp.stdio_exited_at_start')).toBeTruthy();
    expect(within(process).getByText(/Its last lines on stderr · 2/)).toBeTruthy();
    expect(screen.getByText(COMMAND_LINE, { selector: '.tt-mcp-command-line' })).toBeTruthy();
    expect(mcp.statusCalls).toBeGreaterThanOrEqual(2);
  });

  test('a host without api.mcp.stdio still shows the command, without a process line', async () => {
    const mcp = new FakeMcp([stdioServer('paused')]);
    renderManager(mcp);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show or hide tools' }));
    expect(screen.getByText(COMMAND_LINE, { selector: '.tt-mcp-command-line' })).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'Process' })).toBeNull();
  });

  test('what a Manager that knows only remote servers sees: the endpoint text, never a URL', () => {
    // Upstream's row and confirmations show server.endpoint as text; its edit
    // dialog validates it as an http(s) URL before sending anything.
    const s = stdioServer();
    const { transport: _t, stdio: _s, ...upstreamView } = s;
    render(<ServerTarget server={upstreamView} />);
    expect(screen.getByText('stdio:' + COMMAND_LINE).tagName).toBe('CODE');
    expect(() => new URL(s.endpoint)).not.toThrow(); // "stdio:" parses as an opaque URL, never http(s)
    expect(new URL(s.endpoint).protocol).toBe('stdio:');
  });

  test('a Manager that knows only remote servers renders a stdio server without errors', async () => {
    // The list entry with ttmcp's members left out is what such a Manager
    // reads: every member of upstream's McpServer, nothing else; the
    // endpoint is text that is never an http(s) URL.
    const { transport: _t, stdio: _s, ...upstreamView } = stdioServer('active');
    expect(Object.keys(upstreamView).sort()).toEqual([
      'displayName',
      'endpoint',
      'headers',
      'id',
      'protocolVersion',
      'state',
      'toolDescriptionOverrides',
      'toolPermissions',
    ]);
    const errors = vi.spyOn(console, 'error');
    try {
      const mcp = new FakeMcp([upstreamView]); // upstream's surface: no api.mcp.stdio
      renderManager(mcp);
      const user = userEvent.setup();
      const row = screen.getByRole('listitem');
      expect(within(row).getByText('stdio:' + COMMAND_LINE).tagName).toBe('CODE');
      await user.click(within(row).getByRole('button', { name: 'Show or hide tools' }));
      expect(await screen.findByText('Search files')).toBeTruthy();
      expect(mcp.count('discover')).toBe(1);
      // Its Edit dialog refuses the endpoint as not an http(s) URL before
      // anything is sent.
      await user.click(within(row).getByRole('button', { name: 'Edit' }));
      const dialog = within(currentPopup().dlg);
      expect(dialog.getByLabelText<HTMLInputElement>('Endpoint').value).toBe('stdio:' + COMMAND_LINE);
      expect(await currentPopup().close(1)).toBe(false);
      expect(dialog.getByRole('alert').textContent).toBe('Enter a valid http:// or https:// URL.');
      expect(mcp.inputs('update')).toEqual([]);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });

  test('a desktop client entry with a command is refused by the JSON import with where to add it', () => {
    const out = parseServerJson('{"mcpServers":{"memory":{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}}}');
    expect(out).toEqual({ ok: false, error: { key: 'json_stdio' } });
    expect(englishTr('json_stdio')).toContain('ttmcp stdio import');
  });
});

describe('the process line', () => {
  test('a process read while starting is read again until it runs, without a click (walked in SillyTavern 1.18.0)', async () => {
    const states: McpStdioStatus['state'][] = ['starting', 'starting', 'running'];
    const load = vi.fn(async (registrationId: string): Promise<McpStdioStatus> => ({ registrationId, state: states.length > 1 ? states.shift()! : states[0]! }));
    render(<StdioProcess registrationId={SERVER_ID} load={load} refreshKey="" recheckMs={5} />);
    expect(await screen.findByText(/running/)).toBeTruthy();
    expect(load).toHaveBeenCalledTimes(3);
    await new Promise((r) => setTimeout(r, 30));
    expect(load).toHaveBeenCalledTimes(3); // running: no more reads
  });
});
