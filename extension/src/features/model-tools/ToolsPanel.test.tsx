import { act, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import type { ReactNode } from 'react';
import type { McpAuditEntry } from '../../../../jsapi/tauritavern-mcp';
import type { ToolReach } from './reach';
import type { SearchSettings } from './search';
import { RecentCalls, ToolReachSection, ToolsContext, type ToolsPanelDeps } from './ToolsPanel';

function deps(reach: ToolReach[], entries: McpAuditEntry[] = []): ToolsPanelDeps & { fire(): void } {
  let listener = () => {};
  return {
    reach: vi.fn(async (): Promise<ToolReach> => reach.shift() ?? { kind: 'backend_down', message: '' }),
    onChange: (fn) => {
      listener = fn;
      return () => {};
    },
    recentCalls: vi.fn(async () => entries),
    fire: () => listener(),
  };
}

/** Renders node with d as the Manager's tools deps. */
function renderWith(d: ToolsPanelDeps, node: ReactNode) {
  return render(<ToolsContext.Provider value={d}>{node}</ToolsContext.Provider>);
}

const entry: McpAuditEntry = {
  time: '2026-11-30T12:00:00.000000000Z', callId: 'c1', source: 'model', registrationId: 'r', serverDisplayName: 'Demo',
  nativeName: 'echo', permission: 'ask', approval: 'once', outcome: 'known_response', code: '', responseKind: 'tool_result',
  isError: false, durationMs: 12.4, argumentsBytes: 2, argumentsSha256: 'x',
};

describe('tools for the model', () => {
  test('says whether the tools reach the model, and checks again on changes and on request', async () => {
    const d = deps([
      { kind: 'function_calling_off' },
      { kind: 'ready', search: false, mode: 'all', request: 4, tokens: 900, maxTools: 40, contextPercent: 10, tools: 3, servers: 2, diagnostics: 1, total: 3, leftOut: 0, local: 0, limit: 128, missing: [] },
      { kind: 'too_old' },
    ]);
    renderWith(d, <ToolReachSection />);
    expect(await screen.findByText(/function calling is off/)).toBeTruthy();
    d.fire();
    expect(await screen.findByText(/3 tools from 2 servers/)).toBeTruthy();
    expect(screen.getByText(/1 left out/)).toBeTruthy();
    expect(screen.getByText(/No tool set: every tool you allow/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Check again' }));
    expect(await screen.findByText(/too old/)).toBeTruthy();
  });

  test('an older check that answers last does not undo a newer one', async () => {
    // The first check read SillyTavern's settings before a change; the change
    // starts a second one, which answers first.
    const answers: Array<(r: ToolReach) => void> = [];
    let changed = () => {};
    const d: ToolsPanelDeps = {
      reach: () => new Promise<ToolReach>((resolve) => answers.push(resolve)),
      onChange: (fn) => {
        changed = fn;
        return () => {};
      },
    };
    renderWith(d, <ToolReachSection />);
    await waitFor(() => expect(answers).toHaveLength(1));
    answers[0]!({ kind: 'too_old' });
    const line = await screen.findByRole('status');
    const button = screen.getByRole<HTMLButtonElement>('button', { name: 'Check again' });
    await userEvent.click(button);
    act(() => changed());
    await waitFor(() => expect(answers).toHaveLength(3));
    answers[2]!({ kind: 'function_calling_off' });
    await waitFor(() => expect(line.textContent).toMatch(/function calling is off/));
    expect(button.disabled).toBe(false);
    await act(async () => answers[1]!({ kind: 'nothing_allowed', diagnostics: 0 }));
    expect(line.dataset['reach']).toBe('function_calling_off');
    expect(button.disabled).toBe(false);
  });

  test('names the tool set in use and what the provider\'s limit leaves out', async () => {
    const d = deps([
      { kind: 'ready', search: false, mode: 'all', request: 4, tokens: 900, maxTools: 40, contextPercent: 10, tools: 124, servers: 3, diagnostics: 0, total: 300, leftOut: 176, local: 3, limit: 128, set: { name: 'Coding', level: 'character' }, missing: [] },
      { kind: 'set_offers_nothing', diagnostics: 2, set: { name: 'Coding', level: 'chat' }, missing: ['default'] },
    ]);
    renderWith(d, <ToolReachSection />);
    const line = await screen.findByRole('status');
    await waitFor(() => expect(line.textContent).toContain('124 tools from 3 servers'));
    expect(line.textContent).toContain('Tool set “Coding” (this character).');
    expect(line.textContent).toContain('This source takes at most 128 tools and SillyTavern has 3 of its own, so 176 of the 300 MCP tools are left out');
    expect(line.closest('section')!.className).toContain('tt-mcp-reach-off'); // something is left out: not all is well
    d.fire();
    await waitFor(() => expect(line.textContent).toContain('the tool set of this chat offers none of its tools now'));
    expect(line.textContent).toContain('Tool set “Coding” (this chat).');
    expect(line.textContent).toContain('A tool set chosen here was removed');
  });

  test('without a tool set the limit leaves out by server name and tool, not by a set\'s order (walked in SillyTavern 1.18.0)', async () => {
    const d = deps([{ kind: 'ready', search: false, mode: 'all', request: 4, tokens: 900, maxTools: 40, contextPercent: 10, tools: 127, servers: 2, diagnostics: 0, total: 307, leftOut: 180, local: 0, limit: 128, missing: [] }]);
    renderWith(d, <ToolReachSection />);
    const line = await screen.findByRole('status');
    await waitFor(() => expect(line.textContent).toContain('180 of the 307 MCP tools are left out (by server name, then tool).'));
    expect(line.textContent).not.toContain('set’s order');
  });

  test('the sizes of the next request, in both modes, and automatic\'s budget (issue 31)', async () => {
    const d = deps([
      { kind: 'ready', search: true, mode: 'automatic', request: 4, tokens: 612, maxTools: 40, contextPercent: 10, context: 32000, tools: 300, servers: 5, diagnostics: 0, total: 300, leftOut: 0, local: 0, limit: 128, missing: [] },
      { kind: 'ready', search: false, mode: 'all', request: 12, tokens: 4321, maxTools: 40, contextPercent: 10, tools: 11, servers: 2, diagnostics: 0, total: 11, leftOut: 0, local: 0, limit: 128, missing: [] },
    ]);
    renderWith(d, <ToolReachSection />);
    const line = await screen.findByRole('status');
    await waitFor(() => expect(line.textContent).toContain('MCP tools reach the model through search: it can find 300 tools from 5 servers.'));
    expect(line.textContent).toContain('The next request carries 4 of ttmcp’s tool definitions, about 612 tokens of schemas.');
    expect(line.textContent).toContain('Automatic: search once more than 40 tools or 10 % of the context (3,200 tokens) would be offered.');
    d.fire();
    await waitFor(() => expect(line.textContent).toContain('the next generation offers 11 tools from 2 servers.'));
    expect(line.textContent).toContain('The next request carries 12 of ttmcp’s tool definitions, about 4,321 tokens of schemas.');
    expect(line.textContent).not.toContain('Automatic');
  });

  test('all tools whose schemas take more than a quarter of a known context: the line warns that the chat is crowded out', async () => {
    const ready = { kind: 'ready' as const, search: false, mode: 'all' as const, request: 32, maxTools: 40, contextPercent: 10, tools: 31, servers: 3, diagnostics: 0, total: 31, leftOut: 0, local: 0, limit: 128, missing: [] };
    const d = deps([
      { ...ready, tokens: 3857, context: 4095 },
      { ...ready, tokens: 3858, context: 32768 },
      { ...ready, tokens: 3859 },
      { ...ready, search: true, mode: 'search' as const, request: 4, tokens: 558, context: 1000 },
      { ...ready, mode: 'automatic' as const, maxTools: 100, contextPercent: 90, tokens: 3857, context: 4095 },
    ]);
    renderWith(d, <ToolReachSection />);
    const line = await screen.findByRole('status');
    await waitFor(() => expect(line.textContent).toContain('These schemas take about 94 % of the model’s context (4,095 tokens)'));
    expect(line.textContent).toContain('Search (or Automatic) mode offers a small constant set instead.');
    // 12 % of the context, an unknown context, search mode: no warning
    for (const tokens of ['about 3,858 tokens', 'about 3,859 tokens', 'about 558 tokens']) {
      d.fire();
      await waitFor(() => expect(line.textContent).toContain(tokens));
      expect(line.textContent).not.toContain('of the model’s context');
    }
    // automatic under a budget that lets them all through: the budget is what to change
    d.fire();
    await waitFor(() => expect(line.textContent).toContain('Automatic’s budget lets them all through: lower it, or choose Search.'));
    expect(line.textContent).not.toContain('Search (or Automatic)');
  });

  test('the default\'s search mode is read, saved as it changes, and the reach is checked again', async () => {
    let stored: SearchSettings = { mode: 'all', maxTools: 40, contextPercent: 10, pinned: [] };
    const write = vi.fn((s: SearchSettings) => void (stored = s));
    const d = { ...deps([{ kind: 'function_calling_off' }, { kind: 'function_calling_off' }, { kind: 'function_calling_off' }]), defaultSearch: { read: () => stored, write } };
    renderWith(d, <ToolReachSection />);
    await userEvent.click(await screen.findByText('Tool search for chats without a tool set'));
    await userEvent.selectOptions(screen.getByLabelText('How the tools reach the model'), 'automatic');
    expect(stored.mode).toBe('automatic');
    const max = screen.getByLabelText('Search above this many tools');
    await userEvent.clear(max);
    await userEvent.type(max, '0');
    await userEvent.tab(); // 0 is not a budget: nothing saved
    expect(write).toHaveBeenCalledTimes(1);
    await userEvent.clear(max);
    await userEvent.type(max, '64');
    await userEvent.tab();
    expect(stored).toEqual({ mode: 'automatic', maxTools: 64, contextPercent: 10, pinned: [] });
    expect(d.reach).toHaveBeenCalledTimes(3); // first check, and once per saved change
  });

  test('the default\'s pins: chosen from the offered tools in search mode, saved in the order pinned; a pin not offered now is kept and can be taken off', async () => {
    let stored: SearchSettings = { mode: 'search', maxTools: 40, contextPercent: 10, pinned: ['mcp/gone:old'] };
    const write = vi.fn((s: SearchSettings) => void (stored = s));
    const tools = vi.fn(async () => [
      { id: 'mcp/a:read', label: 'Read file (Files)' },
      { id: 'mcp/a:write', label: 'Write file (Files)' },
      ...Array.from({ length: 12 }, (_, i) => ({ id: `mcp/b:t${i}`, label: `Tool ${i} (Web)` })),
    ]);
    const d = { ...deps([{ kind: 'function_calling_off' }, { kind: 'function_calling_off' }, { kind: 'function_calling_off' }, { kind: 'function_calling_off' }]), defaultSearch: { read: () => stored, write, tools } };
    renderWith(d, <ToolReachSection />);
    await userEvent.click(await screen.findByText('Tool search for chats without a tool set'));
    expect(screen.getByText('Always offered with search (1 pinned)')).toBeTruthy();
    const gone = await screen.findByRole('checkbox', { name: 'mcp/gone:old' });
    expect((gone as HTMLInputElement).checked).toBe(true);
    await userEvent.click(screen.getByRole('checkbox', { name: 'Write file (Files)' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Read file (Files)' }));
    expect(stored.pinned).toEqual(['mcp/gone:old', 'mcp/a:write', 'mcp/a:read']);
    // 15 tools: a filter narrows the others; the pinned stay in view, in the order pinned
    await userEvent.type(screen.getByLabelText('Filter tools'), 'tool 1');
    expect(screen.queryByRole('checkbox', { name: 'Tool 2 (Web)' })).toBeNull();
    expect(screen.getAllByRole('checkbox', { checked: true }).map((c) => c.closest('label')?.textContent)).toEqual(['mcp/gone:old', 'Write file (Files)', 'Read file (Files)']);
    await userEvent.click(screen.getByRole('checkbox', { name: 'Tool 11 (Web)' }));
    await userEvent.clear(screen.getByLabelText('Filter tools'));
    await userEvent.click(screen.getByRole('checkbox', { name: 'mcp/gone:old' }));
    expect(stored.pinned).toEqual(['mcp/a:write', 'mcp/a:read', 'mcp/b:t11']);
    expect(tools).toHaveBeenCalledTimes(1);
    // all tools: nothing to pin for
    await userEvent.selectOptions(screen.getByLabelText('How the tools reach the model'), 'all');
    expect(screen.queryByText(/Always offered with search/)).toBeNull();
    expect(stored).toEqual({ mode: 'all', maxTools: 40, contextPercent: 10, pinned: ['mcp/a:write', 'mcp/a:read', 'mcp/b:t11'] });
  });

  test('a call whose result was kept offers it in full', async () => {
    const d = { ...deps([], [{ ...entry, resultId: 'r-1' }]), openResult: vi.fn(async () => {}) };
    renderWith(d, <RecentCalls registrationId="r" />);
    await userEvent.click(screen.getByText('Recent calls'));
    await userEvent.click(await screen.findByRole('button', { name: 'Full result' }));
    expect(d.openResult).toHaveBeenCalledWith('r-1');
  });

  test('renders nothing without the context', () => {
    const { container } = render(<ToolReachSection />);
    expect(container.innerHTML).toBe('');
  });

  test('recent calls of a server are read when opened', async () => {
    const d = deps([], [entry, { ...entry, callId: 'c2', approval: 'denied', outcome: 'not_sent', code: 'mcp.call_denied_by_user', responseKind: '' }]);
    renderWith(d, <RecentCalls registrationId="r" />);
    expect(d.recentCalls).not.toHaveBeenCalled();
    await userEvent.click(screen.getByText('Recent calls'));
    await waitFor(() => expect(d.recentCalls).toHaveBeenCalledWith('r', 10));
    const rows = await screen.findAllByRole('listitem');
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringMatching(/echo.*Model.*Allowed once.*Answered.*12 ms/),
      expect.stringMatching(/echo.*Model.*Denied.*Not sent · mcp\.call_denied_by_user/),
    ]);
  });

  test("an App's calls and reads say they came from the App", async () => {
    const app = { ...entry, source: 'app' as const, appTool: 'get-time' };
    const d = deps([], [
      { ...app, callId: 'a1', nativeName: 'get-time', approval: 'once' },
      { ...app, callId: 'a2', nativeName: '', permission: '' as const, approval: 'none' as const, kind: 'resource_read', uri: 'ui://get-time/mcp-app.html', responseKind: 'resource_contents', contentBytes: 11, contentCount: 1 },
    ]);
    renderWith(d, <RecentCalls registrationId="r" />);
    await userEvent.click(screen.getByText('Recent calls'));
    const rows = await screen.findAllByRole('listitem');
    expect(rows.map((r) => [...r.querySelectorAll('.tt-mcp-chip')].map((c) => c.textContent))).toEqual([
      ['App', 'Allowed once'],
      ['Read', 'App'],
    ]);
  });

  test('a call whose server asked the user says how each question was answered, and the requests it took', async () => {
    const d = deps([], [
      { ...entry, callId: 'e1', rounds: 3, elicitations: [{ mode: 'form', action: 'accept' }, { mode: 'url', action: 'decline' }] },
      { ...entry, callId: 'e2', outcome: 'outcome_unknown', code: 'mcp.call_cancelled', responseKind: '', rounds: 1, elicitations: [{ mode: 'form', action: 'cancel' }] },
      entry,
    ]);
    renderWith(d, <RecentCalls registrationId="r" />);
    await userEvent.click(screen.getByText('Recent calls'));
    const rows = await screen.findAllByRole('listitem');
    expect(rows.map((r) => r.querySelector('.tt-mcp-chip-asked')?.textContent ?? null)).toEqual([
      'Asked · A form: answered; A page to open: declined · 3 requests',
      'Asked · A form: not answered',
      null,
    ]);
  });

  test('a call whose server reported progress shows how many updates came and the last message', async () => {
    const d = deps([], [{ ...entry, callId: 'p1', progressUpdates: 5, progressMessage: 'step 5 of 5' }, { ...entry, callId: 'p2', progressUpdates: 1 }, entry]);
    renderWith(d, <RecentCalls registrationId="r" />);
    await userEvent.click(screen.getByText('Recent calls'));
    const rows = await screen.findAllByRole('listitem');
    expect(rows.map((r) => r.querySelector('.tt-mcp-chip-progress')?.textContent ?? null)).toEqual([
      'Progress · 5 updates · step 5 of 5',
      'Progress · 1 update',
      null,
    ]);
  });

  test('a resource read and a prompt get name what they asked for; a known response says what kind it was', async () => {
    const page = { ...entry, source: 'page' as const, nativeName: '', permission: '' as const, approval: 'none' as const };
    const d = deps([], [
      { ...page, callId: 'r1', kind: 'resource_read', uri: 'file:///docs/README.md', responseKind: 'resource_contents', contentBytes: 11, contentCount: 1 },
      { ...page, callId: 'g1', kind: 'prompt_get', promptName: 'summarize', responseKind: 'prompt_messages' },
      { ...page, callId: 'g2', kind: 'prompt_get', promptName: 'broken', responseKind: 'server_error' },
      { ...entry, callId: 'c3', responseKind: 'tool_result', isError: true },
      { ...entry, callId: 'c4', responseKind: 'unsupported_response', rounds: 1, elicitations: [{ mode: 'form', action: 'cancel' }] },
    ]);
    renderWith(d, <RecentCalls registrationId="r" />);
    await userEvent.click(screen.getByText('Recent calls'));
    const rows = await screen.findAllByRole('listitem');
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringMatching(/file:\/\/\/docs\/README\.mdReadPageAnswered/),
      expect.stringMatching(/summarize.*Prompt.*Page.*Answered/),
      expect.stringMatching(/brokenPromptPageServer error/),
      expect.stringMatching(/echo.*Model.*Allowed once.*Error result/),
      expect.stringMatching(/echo.*Model.*Allowed once.*Unusable answer/),
    ]);
  });
});
