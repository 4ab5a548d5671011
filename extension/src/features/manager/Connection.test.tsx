// The connection line of an Active remote server: open (with its protocol)
// and following or not, closed, short-lived sessions; nothing for a paused
// or stdio server, or without api.mcp.connections.

import { act, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { McpConnectionStatus } from '../../../../jsapi/tauritavern-mcp';
import { server } from '../../../test/fakes';
import { ConnectionContext, ConnectionLine, STATUS_REREAD_MS } from './Connection';

function show(status: McpConnectionStatus | undefined, s = server('active')) {
  const deps = status ? { status: async () => status } : undefined;
  return render(
    <ConnectionContext.Provider value={deps}>
      <ConnectionLine server={s} refreshKey="" />
    </ConnectionContext.Provider>,
  );
}

const base = { registrationId: 'r', sessions: 'kept', following: false } as const;

describe('ConnectionLine', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  test('open and following', async () => {
    show({ ...base, state: 'open', protocolVersion: '2026-07-28', following: true });
    expect(await screen.findByText('Connected (MCP 2026-07-28) · follows its server’s changes')).toBeTruthy();
  });
  test('open, not following, with the reason', async () => {
    show({ ...base, state: 'open', note: 'the server offers no notification stream' });
    expect(await screen.findByText('Connected · its changes show after Refresh')).toBeTruthy();
    expect(screen.getByText('the server offers no notification stream')).toBeTruthy();
  });
  test('closed, with short-lived sessions', async () => {
    show({ ...base, state: 'closed', sessions: 'short_lived' });
    expect(await screen.findByText('Not connected: the next use connects')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toContain('opens a fresh session for each one');
  });
  test('nothing for a paused server, a stdio one, or a host without the API', () => {
    const { container: paused } = show({ ...base, state: 'open' }, server('paused'));
    expect(paused.textContent).toBe('');
    const { container: stdio } = show({ ...base, state: 'open' }, server('active', { transport: 'stdio' }));
    expect(stdio.textContent).toBe('');
    const { container: none } = show(undefined);
    expect(none.textContent).toBe('');
  });
  test('read again while shown: a connection changes without a page action (its stream ends, it idles out)', async () => {
    vi.useFakeTimers();
    let status: McpConnectionStatus = { ...base, state: 'open', protocolVersion: '2025-11-25', following: true };
    const read = vi.fn(async () => status);
    render(
      <ConnectionContext.Provider value={{ status: read }}>
        <ConnectionLine server={server('active')} refreshKey="" />
      </ConnectionContext.Provider>,
    );
    await act(async () => {});
    expect(screen.getByText('Connected (MCP 2025-11-25) · follows its server’s changes')).toBeTruthy();
    status = { ...base, state: 'open', protocolVersion: '2025-11-25', note: 'the server ended its notification stream' };
    await act(async () => {
      await vi.advanceTimersByTimeAsync(STATUS_REREAD_MS);
    });
    expect(screen.getByText('Connected (MCP 2025-11-25) · its changes show after Refresh')).toBeTruthy();
    expect(screen.getByText('the server ended its notification stream')).toBeTruthy();
    expect(read).toHaveBeenCalledTimes(2);
  });
});
