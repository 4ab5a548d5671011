// The Manager with the sections boot/ gives it (Root.tsx's MANAGER_SECTIONS):
// a server's recent calls from the model-tools feature, inside the Manager's
// console.

import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import type { McpAuditEntry, McpDiscoveryResult } from '../../../jsapi/tauritavern-mcp';
import { apiError, deferred, FakeMcp, installSillyTavern, SERVER_B, SERVER_ID, server } from '../../test/fakes';
import { englishTr } from '../base/texts';
import { createManagerActions } from '../features/manager/actions';
import { McpManagerApp } from '../features/manager/McpManagerApp';
import { SectionsContext } from '../features/manager/sections';
import { ToolsContext } from '../features/model-tools/ToolsPanel';
import { MANAGER_SECTIONS } from './Root';

describe('recent calls', () => {
  const call = (registrationId: string, nativeName: string): McpAuditEntry => ({
    time: '2026-11-30T12:00:00.000000000Z', callId: `${registrationId}-${nativeName}`, source: 'model', registrationId,
    serverDisplayName: '', nativeName, permission: 'allow', approval: 'none', outcome: 'known_response', code: '',
    responseKind: 'tool_result', isError: false, durationMs: 3, argumentsBytes: 2, argumentsSha256: 'x',
  });

  test('are on every expanded server without a discovery: paused, discovering, failed; they stay open as the tools part changes', async () => {
    installSillyTavern();
    const mcp = new FakeMcp([server('paused'), server('active', { id: SERVER_B, displayName: 'Other' })]);
    const discovering = deferred<McpDiscoveryResult>();
    const recentCalls = vi.fn(async (id: string) => [call(id, id === SERVER_ID ? 'search' : 'fetch')]);
    render(
      <SectionsContext.Provider value={MANAGER_SECTIONS}>
        <ToolsContext.Provider value={{ reach: async () => ({ kind: 'nothing_allowed', diagnostics: 0 }), onChange: () => () => {}, recentCalls }}>
          <McpManagerApp
            initial={{ servers: structuredClone(mcp.registrations), storageIssues: [] }}
            actions={{ ...createManagerActions(mcp, englishTr), discover: () => discovering.promise }}
          />
        </ToolsContext.Provider>
      </SectionsContext.Provider>,
    );
    const user = userEvent.setup();
    const row = (name: string) => screen.getByText(name).closest('li')!;
    const [local, other] = screen.getAllByRole('button', { name: 'Show or hide tools' });

    // paused: never discovered, its calls are read from the log
    await user.click(local!);
    expect(within(row('Local tools')).getByText(/activate to discover/)).toBeTruthy();
    await user.click(within(row('Local tools')).getByText('Recent calls'));
    await waitFor(() => expect(recentCalls).toHaveBeenCalledWith(SERVER_ID, 10));
    expect(await within(row('Local tools')).findByText('search')).toBeTruthy();

    // active: while its discovery runs, and after it failed
    await user.click(other!);
    expect(within(row('Other')).getByRole('status').textContent).toMatch(/Discovering/);
    await user.click(within(row('Other')).getByText('Recent calls'));
    expect(await within(row('Other')).findByText('fetch')).toBeTruthy();
    await act(async () => discovering.reject(apiError('mcp.transport_failed', 'connection refused', 'Internal')));
    expect(await within(row('Other')).findByText(/connection refused/)).toBeTruthy();
    expect(within(row('Other')).getByText('fetch')).toBeTruthy(); // still open, not read again
    expect(recentCalls).toHaveBeenCalledTimes(2);
    expect(mcp.count('discover')).toBe(0);
  });
});
