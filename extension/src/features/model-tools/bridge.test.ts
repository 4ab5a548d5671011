// The tool bridge against a SillyTavern double (registry, events,
// stopGeneration) and a backend double that answers the legacy commands:
// roots and rounds, aliases, Ask answers, unknown outcomes and Stop.

import { describe, expect, test, vi } from 'vitest';
import type {
  LegacyMcpTool,
  McpCallOutcome,
  McpCallProgress,
  McpToolSearchHit,
  McpToolSet,
  SearchMcpToolsInput,
  TauriTavernMcpServer,
  TtmcpMcpApi,
} from '../../../../jsapi/tauritavern-mcp';
import { englishTr } from '../../base/texts';
import type { ApprovalAnswer, ApprovalRequest } from './approval';
import type { BindingScope } from '../../host/bindings';
import { ToolBridge, type ToolBridgeHost } from './bridge';
import { sentence } from './readable';
import { CALL_TOOL, definitionTokens, DETAILS_TOOL, SEARCH_TOOL, type SearchSettings } from './search';
import { toolReach } from './reach';
import { ST_EVENTS, type StFunctionTool, type StToolContext } from '../../host/sillytavern-tools';

const REG = '11111111-1111-4111-8111-111111111111';
const echo: LegacyMcpTool = {
  toolId: `mcp/${REG}:echo`,
  nativeName: 'echo',
  serverDisplayName: 'Demo',
  title: 'Echo',
  description: 'Echoes its text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};
const add: LegacyMcpTool = { ...echo, toolId: `mcp/${REG}:add`, nativeName: 'add', title: 'Add', description: 'Adds.' };

const known = (text: string): McpCallOutcome => ({
  outcome: 'known_response',
  response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text }], diagnostics: [] },
});

/** What the backend's projection makes of an outcome, in short (domain/readable.go is table-tested). */
function projected(o: McpCallOutcome): string {
  if (o.outcome !== 'known_response') return `not called (${o.code}): ${o.message}`;
  return o.response.kind === 'tool_result' ? o.response.textBlocks.map((b) => b.text).join('\n\n') : o.response.message;
}

/** SillyTavern as the bridge sees it: a registry, an awaited event bus, stopGeneration. */
class FakeSt {
  registry = new Map<string, StFunctionTool>();
  /** Registrations over a registered name (SillyTavern's ToolManager warns "has already been registered"). */
  overwrites: string[] = [];
  listeners = new Map<string, Array<(...args: unknown[]) => unknown>>();
  stops = 0;
  supported = true;
  context(): StToolContext {
    return {
      registerFunctionTool: (t) => {
        if (this.registry.has(t.name)) this.overwrites.push(t.name);
        this.registry.set(t.name, t);
      },
      unregisterFunctionTool: (n) => void this.registry.delete(n),
      isToolCallingSupported: () => this.supported,
      canPerformToolCalls: (type) => this.supported && !['quiet', 'impersonate', 'continue'].includes(type),
      ToolManager: { tools: [{ toFunctionOpenAI: () => ({ function: { name: 'mcp__Demo__add' } }) }] },
      mainApi: 'openai',
      chatCompletionSettings: { function_calling: this.supported, chat_completion_source: 'custom' },
      eventSource: {
        on: (e, fn) => void (this.listeners.get(e) ?? this.listeners.set(e, []).get(e))!.push(fn as (...args: unknown[]) => unknown),
        removeListener: (e, fn) => this.listeners.set(e, (this.listeners.get(e) ?? []).filter((f) => f !== fn)),
      },
      stopGeneration: () => {
        this.stops++;
        void this.emit(ST_EVENTS.GENERATION_STOPPED);
        return true;
      },
    };
  }
  async emit(event: string, ...args: unknown[]) {
    for (const fn of this.listeners.get(event) ?? []) await fn(...args);
  }
  /** The tools a request would carry: registered and shouldRegister. */
  async offered(): Promise<string[]> {
    const out: string[] = [];
    for (const t of this.registry.values()) if (await (t.shouldRegister?.() ?? true)) out.push(t.name);
    return out;
  }
  /** GENERATION_STARTED and AFTER_COMMANDS of a round. */
  async round(type = 'normal') {
    await this.emit(ST_EVENTS.GENERATION_STARTED, type, {}, false);
    await this.emit(ST_EVENTS.GENERATION_AFTER_COMMANDS, type, {}, false);
  }
  async saveBatch() {
    await this.emit(ST_EVENTS.TOOL_CALLS_PERFORMED, []);
    await this.emit(ST_EVENTS.TOOL_CALLS_RENDERED, []);
  }
  call(name: string, args: unknown) {
    return this.registry.get(name)!.action(args) as Promise<string>;
  }
}

interface World {
  st: FakeSt;
  bridge: ToolBridge;
  commands: Array<[string, unknown]>;
  toasts: Array<[string, string, boolean]>;
  permission: { value: 'off' | 'ask' | 'allow' };
  answers: ApprovalAnswer[];
  asked: ApprovalRequest[];
  setPermission: ReturnType<typeof vi.fn>;
  tools: LegacyMcpTool[];
  callAnswer: (dto: Record<string, unknown>, options?: { onProgress?: (p: McpCallProgress) => void }) => Promise<McpCallOutcome> | McpCallOutcome;
  /** The chat statuses the calls showed (issue 29). */
  statuses: Array<{ name: string; progress: McpCallProgress[]; ended: boolean }>;
  /** What the called hook heard (the App host's, issue 30): alias and native name. */
  calledHook: string[];
  userStops: number;
  connected: boolean;
  ttmcp: boolean;
  /** Whether invoke.safeInvoke is published (false: the API never loaded). */
  loaded: boolean;
  /** What an attempt to connect does (wake), and how many were made. */
  onWake: () => void;
  wakes: number;
  listed: number;
  changed: number;
  /** The tool sets the backend keeps, and the chat's bindings. */
  sets: McpToolSet[];
  scope: BindingScope;
  /** The lists the backend answers per tool set id ('' without one). */
  setTools: Record<string, LegacyMcpTool[]>;
  reads: unknown[];
  /** Whether the page says the last Stop came from a server's question popup. */
  stoppedInQuestion: boolean;
  /** What api.mcp.toolSearch answers, and what it was asked. */
  searchHits: (input: SearchMcpToolsInput) => McpToolSearchHit[];
  searches: SearchMcpToolsInput[];
  /** The default's search settings (no set). */
  defaultSearch?: SearchSettings;
}

function world(): World {
  const st = new FakeSt();
  const w = {
    st,
    commands: [],
    toasts: [],
    permission: { value: 'allow' },
    answers: [],
    asked: [],
    setPermission: vi.fn(async () => ({})),
    tools: [echo, add],
    callAnswer: (dto: Record<string, unknown>) => known(String(dto.argumentsJson)),
    connected: true,
    ttmcp: true,
    loaded: true,
    onWake: () => {},
    wakes: 0,
    listed: 0,
    changed: 0,
    sets: [],
    scope: { chatOpen: true },
    setTools: {},
    reads: [],
    stoppedInQuestion: false,
    statuses: [],
    calledHook: [],
    userStops: 0,
    searchHits: () => [],
    searches: [],
  } as unknown as World;
  const server = (): TauriTavernMcpServer => ({
    id: REG, displayName: 'Demo', endpoint: 'http://x/mcp', headers: {}, protocolVersion: 'auto', state: 'active',
    toolPermissions: w.permission.value === 'off' ? {} : Object.fromEntries([echo, add, ...w.tools, ...Object.values(w.setTools).flat()].map((t) => [t.nativeName, w.permission.value as 'ask' | 'allow'])),
    toolDescriptionOverrides: {},
  });
  const api = {
    servers: { list: async () => ({ servers: [server()], storageIssues: [] }) },
    tools: { setPermission: w.setPermission },
    toolSets: { list: async () => ({ toolSets: w.sets, storageIssues: [] }) },
    toolSearch: {
      search: async (input: SearchMcpToolsInput) => {
        w.searches.push(input);
        return { hits: w.searchHits(input) };
      },
    },
    results: {
      read: async (input: unknown) => {
        w.reads.push(input);
        return { resultId: 'r-1', registrationId: REG, storedAt: '2026-12-01T00:00:00Z', charCount: 9, totalLines: 3, startLine: 2, endLine: 2, text: 'line two', nextStartLine: 3 };
      },
    },
  } as unknown as TtmcpMcpApi;
  const host: ToolBridgeHost = {
    context: () => st.context(),
    api: () => api,
    invokeCommand: () =>
      w.loaded
        ? async (command: string, args?: unknown, options?: { onProgress?: (p: McpCallProgress) => void }) => {
            w.commands.push([command, args]);
            if (command === 'list_legacy_mcp_tools') {
              const setId = (args as { dto?: { toolSetId?: string } } | undefined)?.dto?.toolSetId;
              return { tools: setId === undefined ? w.tools : (w.setTools[setId] ?? []), diagnostics: [] };
            }
            if (command === 'call_legacy_mcp_tool') {
              const dto = (args as { dto: Record<string, unknown> }).dto;
              const o = await w.callAnswer(dto, options);
              // the backend answers the readable text when asked (and never otherwise)
              return dto.readable ? { ...o, readable: { text: projected(o), isError: o.outcome !== 'known_response' } } : o;
            }
            return null;
          }
        : undefined,
    isTtmcp: () => w.ttmcp,
    connected: () => w.connected,
    wake: async () => {
      w.wakes++;
      w.onWake();
    },
    askApproval: async (req, signal) => {
      w.asked.push(req);
      const answer = w.answers.shift();
      if (answer !== undefined) return answer;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve('denied'), { once: true }));
    },
    toast: (level, text, title, persistent = false) => void w.toasts.push([level, `${title}: ${text}`, persistent]),
    called: ({ alias, tool }) => void w.calledHook.push(`${alias} ${tool.nativeName}`),
    stopped: () => void w.userStops++,
    callStatus: (name) => {
      const st = { name, progress: [] as McpCallProgress[], ended: false };
      w.statuses.push(st);
      return { progress: (p) => void st.progress.push(p), end: () => void (st.ended = true) };
    },
    listed: () => void w.listed++,
    changed: () => void w.changed++,
    scope: () => w.scope,
    stoppedWhileAsked: () => {
      const asked = w.stoppedInQuestion;
      w.stoppedInQuestion = false;
      return asked;
    },
    defaultSearch: () => w.defaultSearch ?? { mode: 'all', maxTools: 40, contextPercent: 10, pinned: [] },
    tr: englishTr,
  };
  w.bridge = new ToolBridge(host);
  expect(w.bridge.install()).toBe(true);
  return w;
}

const names = (w: World) => w.commands.map(([c]) => c);

describe('roots and rounds', () => {
  test('one listing per root; aliases avoid the other tools; a batch continues its root', async () => {
    const w = world();
    await w.st.round();
    // "mcp__Demo__add" is a local tool's name: the MCP add takes __2.
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']);
    expect(w.st.registry.get('mcp__Demo__echo')).toMatchObject({ displayName: 'Echo (Demo)', description: 'Echoes its text.' });
    expect(await w.st.registry.get('mcp__Demo__echo')!.formatMessage!({})).toBe('Invoking MCP tool: Echo (Demo)');
    await w.st.saveBatch();
    await w.st.round(); // the round after a batch: same root
    expect(names(w).filter((c) => c === 'list_legacy_mcp_tools')).toHaveLength(1);
    await w.st.round(); // a new root
    expect(names(w).filter((c) => c === 'list_legacy_mcp_tools')).toHaveLength(2);
    await w.st.round('quiet'); // quiet generations offer no tools and list nothing
    expect(names(w).filter((c) => c === 'list_legacy_mcp_tools')).toHaveLength(2);
    expect(w.listed).toBe(2); // the Manager is told after each root's listing
  });

  test('a tool no longer listed is unregistered at the next root; a lost backend offers nothing', async () => {
    const w = world();
    await w.st.round();
    w.tools = [add];
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__add__2', 'ttmcp_read_result']);
    expect(w.st.registry.has('mcp__Demo__echo')).toBe(false);
    w.connected = false;
    expect(await w.st.offered()).toEqual([]);
  });

  test('a tool whose definition changed is registered again, never over its old registration (walked in SillyTavern 1.18.0)', async () => {
    const w = world();
    await w.st.round();
    await w.st.round(); // a new root, nothing changed: nothing registered again
    w.tools = [{ ...echo, description: 'Echoes, as the set says.' }, add];
    await w.st.round();
    expect(w.st.registry.get('mcp__Demo__echo')?.description).toBe('Echoes, as the set says.');
    expect(w.st.overwrites).toEqual([]);
  });

  test('names seen in requests count as local names (SillyTavern without ToolManager in its context)', async () => {
    const w = world();
    await w.st.emit(ST_EVENTS.CHAT_COMPLETION_SETTINGS_READY, { tools: [{ function: { name: 'mcp__Demo__echo' } }] });
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo__2', 'mcp__Demo__add__2', 'ttmcp_read_result']);
  });

  test('not ttmcp (TauriTavern offers its own), or no registerFunctionTool: nothing is offered', async () => {
    const w = world();
    w.ttmcp = false;
    w.connected = false;
    await w.st.round();
    expect(w.st.registry.size).toBe(0);
    expect(w.commands).toEqual([]);
    expect(w.toasts).toEqual([]); // not ours to say
    expect(w.wakes).toBe(0);
    const old = new ToolBridge({ ...({} as ToolBridgeHost), context: () => ({ eventSource: w.st.context().eventSource }) });
    expect(old.install()).toBe(false);
  });

  const unavailable = ['error', 'MCP tools unavailable: MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.', false];

  test.each([
    ['the API never loaded', { loaded: false, connected: false }],
    ['the connection is lost or refused', { loaded: true, connected: false }],
  ])('%s: one attempt to connect, then each generation says once that the tools are unavailable', async (_, state) => {
    const w = world();
    Object.assign(w, state);
    await w.st.round();
    expect(w.wakes).toBe(1);
    expect(w.st.registry.size).toBe(0);
    expect(w.toasts).toEqual([unavailable]);
    await w.st.saveBatch();
    await w.st.round(); // the same generation's next round: not said again
    await w.st.round(); // the next generation: said again
    expect(w.toasts).toEqual([unavailable, unavailable]);
    expect(w.commands).toEqual([]);
  });

  test('a generation that starts while the backend comes up: the attempt connects, the tools are offered', async () => {
    const w = world();
    Object.assign(w, { loaded: false, connected: false });
    w.onWake = () => Object.assign(w, { loaded: true, connected: true });
    await w.st.round();
    expect(w.wakes).toBe(1);
    expect(w.toasts).toEqual([]);
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']);
    await w.st.round(); // connected: no further attempt
    expect(w.wakes).toBe(1);
  });

  test('a failed listing: the error toast, no tools', async () => {
    const w = world();
    w.tools = 'nope' as unknown as LegacyMcpTool[];
    await w.st.round();
    expect(w.st.registry.size).toBe(0);
    expect(w.toasts).toEqual([['error', 'MCP tools unavailable: MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.', false]]);
  });
});

describe('calls', () => {
  test('a call shows its progress in the chat while it runs, and the status ends with the call; a denial shows none', async () => {
    const w = world();
    await w.st.round();
    const seenWhileRunning: boolean[] = [];
    w.callAnswer = (dto, options) => {
      options?.onProgress?.({ progress: 1, total: 2, message: 'half', updates: 1 });
      options?.onProgress?.({ progress: 2, total: 2, updates: 2 });
      seenWhileRunning.push(w.statuses[0]?.ended === false);
      return known(String(dto.argumentsJson));
    };
    await w.st.call('mcp__Demo__echo', { text: 'hi' });
    expect(w.statuses).toEqual([
      { name: 'Echo (Demo)', progress: [{ progress: 1, total: 2, message: 'half', updates: 1 }, { progress: 2, total: 2, updates: 2 }], ended: true },
    ]);
    expect(seenWhileRunning).toEqual([true]);
    w.permission.value = 'ask';
    w.answers.push('denied');
    await w.st.call('mcp__Demo__echo', { text: 'no' });
    expect(w.statuses).toHaveLength(1);
  });

  test.each([
    ['may have executed', 'may have executed.'],
    ['Timed out.', 'Timed out.'],
    ['Really?  ', 'Really?'],
    ['', ''],
  ])('sentence(%j) = %j', (text, want) => {
    expect(sentence(text)).toBe(want);
  });

  test('Allow: start and call with the arguments as SillyTavern parsed them; the model reads the readable text, not the outcome JSON', async () => {
    const w = world();
    await w.st.round();
    w.commands.length = 0;
    const result = await w.st.call('mcp__Demo__echo', { text: 'hi', n: 1 });
    expect(names(w)).toEqual(['start_legacy_mcp_tool_call', 'call_legacy_mcp_tool']);
    const dto = (w.commands[1]![1] as { dto: Record<string, unknown> }).dto;
    expect(dto).toEqual({
      executionCallId: expect.any(String),
      toolId: echo.toolId,
      argumentsJson: '{"text":"hi","n":1}',
      readable: { inlineCharLimit: 50000, readerTool: true }, // no tool set: upstream's 50,000, the reader on
    });
    expect(result).toBe('{"text":"hi","n":1}');
    expect(w.asked).toEqual([]);
  });

  test.each([
    ['once', 'once', 0],
    ['always', 'always', 1],
  ] as const)('Ask answered %s: the call carries approval %s', async (answer, approval, setPermissions) => {
    const w = world();
    w.permission.value = 'ask';
    w.answers.push(answer);
    await w.st.round();
    await w.st.call('mcp__Demo__echo', { text: 'x' });
    expect(w.asked).toEqual([{ serverDisplayName: 'Demo', toolTitle: 'Echo', nativeName: 'echo', argumentsJson: '{"text":"x"}' }]);
    const call = w.commands.find(([c]) => c === 'call_legacy_mcp_tool')![1] as { dto: Record<string, unknown> };
    expect(call.dto.approval).toBe(approval);
    expect(w.setPermission).toHaveBeenCalledTimes(setPermissions);
    if (setPermissions) expect(w.setPermission).toHaveBeenCalledWith({ registrationId: REG, nativeName: 'echo', permission: 'allow' });
    // the Manager is told of the new permission at once
    expect(w.changed).toBe(setPermissions);
  });

  test('an "Always allow" that could not be saved: the error toast, no change notice, the call still runs once', async () => {
    const w = world();
    w.permission.value = 'ask';
    w.answers.push('always');
    w.setPermission.mockRejectedValueOnce(new Error('mcp.registration_not_found: gone'));
    await w.st.round();
    await w.st.call('mcp__Demo__echo', { text: 'x' });
    expect(w.changed).toBe(0);
    expect(w.toasts.map(([level]) => level)).toEqual(['error']);
    expect(names(w).filter((c) => c === 'call_legacy_mcp_tool')).toHaveLength(1);
  });

  test('Ask denied: the denial is sent (recorded, never called) and the backend\'s readable answer is the result', async () => {
    const w = world();
    w.permission.value = 'ask';
    w.answers.push('denied', 'denied');
    const denied: McpCallOutcome = { outcome: 'not_sent', code: 'mcp.call_denied_by_user', message: 'The user denied the call to MCP tool `Echo`; it was not sent' };
    w.callAnswer = (dto) => (dto.approval === 'denied' ? denied : known('ran'));
    await w.st.round();
    expect(await w.st.call('mcp__Demo__echo', {})).toBe('not called (mcp.call_denied_by_user): The user denied the call to MCP tool `Echo`; it was not sent');
    const call = w.commands.find(([c]) => c === 'call_legacy_mcp_tool')![1] as { dto: Record<string, unknown> };
    expect(call.dto).toMatchObject({ approval: 'denied', readable: { inlineCharLimit: 50000, readerTool: true } });
    // a denial the backend could not record still names the tool, as the backend would
    w.callAnswer = () => Promise.reject(new Error('mcp.host_unavailable: down'));
    expect(await w.st.call('mcp__Demo__echo', {})).toBe(
      'The MCP tool `Echo` (Demo) was not called (mcp.call_denied_by_user): The user denied the call to MCP tool `Echo`; it was not sent.',
    );
  });

  test('an unknown outcome: the persistent warning, the rest of the batch skipped, the next round stopped', async () => {
    const w = world();
    // the backend's messages end without a full stop
    w.callAnswer = () => ({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'Timed out waiting for the tool response; echo may have executed' });
    await w.st.round();
    const first = await w.st.call('mcp__Demo__echo', {});
    expect(first).toBe(
      'The MCP tool `Echo` (Demo) may have run, but its result is unknown (mcp.call_timeout): Timed out waiting for the tool response; echo may have executed. It was not retried, and the tool loop ends here.',
    );
    expect(w.toasts).toHaveLength(1);
    expect(w.toasts[0]![0]).toBe('warning');
    expect(w.toasts[0]![1]).toContain('MCP tool result unknown: Echo (Demo) may have run');
    expect(w.toasts[0]![2]).toBe(true);
    const calls = names(w).length;
    const second = await w.st.call('mcp__Demo__add__2', {});
    expect(second).toBe(
      'The MCP tool `Add` (Demo) was not called (mcp.call_skipped_after_unknown): an earlier MCP tool call in this batch may have run, but its result is unknown; the tool loop ends here.',
    );
    expect(names(w)).toHaveLength(calls); // nothing sent
    await w.st.saveBatch();
    await w.st.round(); // SillyTavern's next round is stopped before its request
    expect(w.st.stops).toBe(1);
    await w.st.round(); // the user's next generation is not
    expect(w.st.stops).toBe(1);
  });

  test.each([
    [false, 'MCP tool stopped: You stopped Echo (Demo) after ttmcp had sent it, so it may have run, in part or in full; its result is unknown.'],
    // the question popup's Stop generation (walked in SillyTavern 1.18.0 with a 2025 server)
    [true, 'MCP tool stopped: You stopped Echo (Demo) while its server was asking you a question. The server may have done part of its work before it asked;'],
  ])('Stop during a call (from a question: %s): cancelled, the warning says the user stopped it, and the next round stopped', async (inQuestion, warning) => {
    const w = world();
    let release: (o: McpCallOutcome) => void = () => {};
    w.callAnswer = () => new Promise((r) => (release = r));
    await w.st.round();
    const pending = w.st.call('mcp__Demo__echo', {});
    await vi.waitFor(() => expect(names(w)).toContain('call_legacy_mcp_tool'));
    w.stoppedInQuestion = inQuestion;
    await w.st.emit(ST_EVENTS.GENERATION_STOPPED);
    expect(names(w)).toContain('cancel_legacy_mcp_tool_call');
    release({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'Stopped waiting.' });
    expect(await pending).toContain('may have run, but its result is unknown (mcp.call_cancelled): Stopped waiting.');
    expect(w.toasts).toHaveLength(1);
    expect(w.toasts[0]![1]).toContain(warning);
    expect(w.toasts[0]![1]).not.toContain('affected systems');
    expect(w.toasts[0]![2]).toBe(true);
    await w.st.saveBatch();
    await w.st.round();
    expect(w.st.stops).toBe(1);
  });

  test('the stopped hook (MCP Apps stop their calls) hears the user’s Stop, never the bridge’s own stop of its loop', async () => {
    const w = world();
    await w.st.round();
    await w.st.emit(ST_EVENTS.GENERATION_STOPPED); // the user's, no call under way
    expect(w.userStops).toBe(1);
    w.callAnswer = () => ({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'Timed out' });
    await w.st.call('mcp__Demo__echo', {});
    await w.st.saveBatch();
    await w.st.round(); // the bridge stops SillyTavern's next round itself
    expect(w.st.stops).toBe(1);
    expect(w.userStops).toBe(1);
  });

  test('a Stop in a question of an earlier generation says nothing of the next one', async () => {
    const w = world();
    w.stoppedInQuestion = true; // that call ended otherwise
    await w.st.round(); // a new generation
    w.callAnswer = () => ({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'Timed out' });
    await w.st.call('mcp__Demo__echo', {});
    expect(w.toasts[0]![1]).toContain('MCP tool result unknown');
  });

  test('Stop during the Ask prompt: the prompt closes, the denial is recorded, the loop ends', async () => {
    const w = world();
    w.permission.value = 'ask';
    await w.st.round();
    const pending = w.st.call('mcp__Demo__echo', {});
    await vi.waitFor(() => expect(w.asked).toHaveLength(1));
    await w.st.emit(ST_EVENTS.GENERATION_STOPPED);
    await pending;
    const call = w.commands.find(([c]) => c === 'call_legacy_mcp_tool')![1] as { dto: Record<string, unknown> };
    expect(call.dto.approval).toBe('denied');
    await w.st.saveBatch();
    await w.st.round();
    expect(w.st.stops).toBe(1);
  });
});

describe('reach', () => {
  const base = { isTtmcp: true, connected: true };
  const ctx = (patch: Partial<StToolContext>): StToolContext => ({ ...new FakeSt().context(), ...patch });
  const list = (tools: LegacyMcpTool[]) => async () => ({ tools, diagnostics: [{ code: 'x', message: 'y' }] });

  test.each([
    ['host_offers_tools', { ...base, isTtmcp: false, context: ctx({}), invokeCommand: list([echo]) }],
    ['too_old', { ...base, context: ctx({ registerFunctionTool: undefined }), invokeCommand: list([echo]) }],
    ['not_chat_completion', { ...base, context: ctx({ mainApi: 'textgenerationwebui' }), invokeCommand: list([echo]) }],
    ['function_calling_off', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: { function_calling: false } }), invokeCommand: list([echo]) }],
    ['source_without_tools', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: { function_calling: true, chat_completion_source: 'ai21' } }), invokeCommand: list([echo]) }],
    ['source_without_tools', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: { function_calling: true, chat_completion_source: 'ai21', custom_prompt_post_processing: 'strict_tools' } }), invokeCommand: list([echo]) }],
    ['post_processing_without_tools', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: { function_calling: true, chat_completion_source: 'custom', custom_prompt_post_processing: 'merge' } }), invokeCommand: list([echo]) }],
    ['tool_calling_unsupported', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: undefined }), invokeCommand: list([echo]) }],
    ['backend_down', { ...base, connected: false, context: ctx({}), invokeCommand: list([echo]) }],
    ['nothing_allowed', { ...base, context: ctx({}), invokeCommand: list([]) }],
    ['ready', { ...base, context: ctx({}), invokeCommand: list([echo, add]) }],
  ] as const)('%s', async (kind, inputs) => {
    const r = await toolReach(inputs);
    expect(r.kind).toBe(kind);
    if (r.kind === 'ready') {
      expect(r).toMatchObject({ kind: 'ready', tools: 2, servers: 1, diagnostics: 1, total: 2, leftOut: 0, local: 0, limit: 128, missing: [] });
      expect(r).toMatchObject({ search: false, mode: 'all', request: 3, maxTools: 40, contextPercent: 10 });
    }
  });
});

describe('tool sets, the provider limit and the reader', () => {
  const set = (patch: Partial<McpToolSet>): McpToolSet => ({
    id: 'set-coding',
    name: 'Coding',
    tools: [`mcp/${REG}:echo`],
    descriptionOverrides: {},
    resultInlineCharLimit: 1000,
    readerTool: true,
    toolMode: 'all',
    searchMaxTools: 40,
    searchContextPercent: 10,
    pinnedTools: [],
    ...patch,
  } as McpToolSet);

  test('a root lists the tools of the set its chat uses; calls carry the set\'s inline limit and reader', async () => {
    const w = world();
    w.sets = [set({}), set({ id: 'set-other', name: 'Other', readerTool: false })];
    w.setTools = { 'set-coding': [echo], 'set-other': [add] };
    w.scope = { chatOpen: true, character: { key: 'a.png', name: 'Ada', toolSetId: 'set-coding' }, default: 'set-other' };
    await w.st.round();
    const list = w.commands.find(([c]) => c === 'list_legacy_mcp_tools')!;
    expect(list[1]).toEqual({ dto: { toolSetId: 'set-coding' } });
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'ttmcp_read_result']);
    await w.st.call('mcp__Demo__echo', {});
    const call = w.commands.find(([c]) => c === 'call_legacy_mcp_tool')![1] as { dto: Record<string, unknown> };
    expect(call.dto.readable).toEqual({ inlineCharLimit: 1000, readerTool: true });
    // the chat's own choice wins over the character's; that set has the reader off
    w.scope = { ...w.scope, chat: 'set-other' };
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__add__2']);
    await w.st.call('mcp__Demo__add__2', {});
    const last = w.commands.filter(([c]) => c === 'call_legacy_mcp_tool').at(-1)![1] as { dto: Record<string, unknown> };
    expect(last.dto.readable).toEqual({ inlineCharLimit: 1000, readerTool: false });
    // a chat bound to a removed set falls through to the character's; the
    // console says so once, not at every generation
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      w.scope = { ...w.scope, chat: 'set-gone' };
      await w.st.round();
      expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'ttmcp_read_result']);
      await w.st.round();
      expect(warn.mock.calls.map((c) => String(c[0]))).toEqual(['[mcp-manager] The tool set bound to the chat no longer exists; the next binding applies.']);
      w.scope = { ...w.scope, chat: 'set-gone-too' };
      await w.st.round();
      expect(warn).toHaveBeenCalledTimes(2);
    } finally {
      warn.mockRestore();
    }
  });

  test('without the tool set API, or when it fails, every permitted tool is offered', async () => {
    const w = world();
    w.scope = { chatOpen: true, default: 'set-coding' };
    (w as unknown as { sets: unknown }).sets = undefined; // toolSets.list() answers something broken
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']);
    expect(w.commands.find(([c]) => c === 'list_legacy_mcp_tools')![1]).toBeUndefined();
  });

  test('300 tools and no set: no request carries more than 128 tools; the listing\'s order decides; the generation says so once', async () => {
    const w = world();
    w.tools = Array.from({ length: 300 }, (_, i) => ({ ...echo, toolId: `mcp/${REG}:t${String(i).padStart(3, '0')}`, nativeName: `t${String(i).padStart(3, '0')}`, title: `T${i}` }));
    await w.st.round();
    const offered = await w.st.offered();
    // one tool of SillyTavern's own (mcp__Demo__add) and the reader count: 126 MCP tools
    expect(offered).toHaveLength(127);
    expect(offered.length + 1).toBe(128);
    expect(offered.at(-1)).toBe('ttmcp_read_result');
    expect(offered[0]).toBe('mcp__Demo__t000');
    expect(offered[125]).toBe('mcp__Demo__t125');
    expect(w.toasts).toHaveLength(1);
    expect(w.toasts[0]![0]).toBe('warning');
    expect(w.toasts[0]![1]).toBe(
      'MCP tools left out: This source takes at most 128 tools, 1 of them SillyTavern’s own: 126 of 300 MCP tools are offered. Left out (the last in order): ' +
        'T126 (Demo), T127 (Demo), T128 (Demo), T129 (Demo), T130 (Demo), T131 (Demo), T132 (Demo), T133 (Demo) and 166 more.',
    );
    await w.st.saveBatch();
    await w.st.round(); // the same generation: not said again
    expect(w.toasts).toHaveLength(1);
    // a source SillyTavern converts to another API: no cap of ttmcp's
    const ctx = w.st.context.bind(w.st);
    w.st.context = () => ({ ...ctx(), chatCompletionSettings: { function_calling: true, chat_completion_source: 'claude' } });
    await w.st.round();
    expect(await w.st.offered()).toHaveLength(301);
  });

  test('the reader reads the kept result by lines and says where to go on', async () => {
    const w = world();
    w.sets = [set({ resultInlineCharLimit: 8000 })];
    w.setTools = { 'set-coding': [echo] };
    w.scope = { chatOpen: true, default: 'set-coding' };
    await w.st.round();
    const reader = w.st.registry.get('ttmcp_read_result')!;
    expect(reader.parameters).toMatchObject({ required: ['resultId'] });
    const text = await w.st.call('ttmcp_read_result', { resultId: 'r-1', startLine: 2, lineCount: 9999 });
    expect(w.reads).toEqual([{ resultId: 'r-1', startLine: 2, lineCount: 500, maxChars: 8000 }]);
    expect(text).toBe('Result r-1, lines 2–2 of 3:\n\nline two\n\nMore follows: call ttmcp_read_result with {"resultId": "r-1", "startLine": 3}.');
  });
});

describe('the stable tools array (issue 31)', () => {
  test('after a bound chat, a chat without a set offers its tools in the listing\'s order; ten requests, one array, registered once', async () => {
    const w = world();
    const registrations: string[] = [];
    const ctx = w.st.context.bind(w.st);
    w.st.context = () => {
      const c = ctx();
      return { ...c, registerFunctionTool: (t) => (registrations.push(t.name), c.registerFunctionTool!(t)) };
    };
    w.sets = [{ id: 'set-add', name: 'Add', tools: [`mcp/${REG}:add`], descriptionOverrides: {}, resultInlineCharLimit: 1000, readerTool: false } as unknown as McpToolSet];
    w.setTools = { 'set-add': [add] };
    w.scope = { chatOpen: true, chat: 'set-add' };
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__add__2']);
    // another chat, no set: before issue 31 add stayed first (registered earlier) and echo came after it
    w.scope = { chatOpen: true };
    registrations.length = 0;
    const arrays: string[] = [];
    for (let i = 0; i < 10; i++) {
      await w.st.round();
      arrays.push(JSON.stringify(await w.st.offered()));
    }
    expect(JSON.parse(arrays[0]!)).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']);
    expect(new Set(arrays).size).toBe(1);
    expect(registrations).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']); // once, in order
    expect(w.bridge.offered).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2', 'ttmcp_read_result']);
    expect(w.st.overwrites).toEqual([]);
  });

  test('a tool another extension registered after ttmcp\'s: ttmcp\'s are registered again after it, in order', async () => {
    const w = world();
    const ctx = w.st.context.bind(w.st);
    const names = () => [...w.st.registry.keys()].map((name) => ({ toFunctionOpenAI: () => ({ function: { name } }) }));
    w.st.context = () => ({ ...ctx(), ToolManager: { tools: names() } });
    await w.st.round();
    expect([...w.st.registry.keys()]).toEqual(['mcp__Demo__echo', 'mcp__Demo__add', 'ttmcp_read_result']);
    w.st.registry.set('weather', { name: 'weather', description: 'w', parameters: {}, action: () => '' });
    await w.st.round();
    expect([...w.st.registry.keys()]).toEqual(['weather', 'mcp__Demo__echo', 'mcp__Demo__add', 'ttmcp_read_result']);
  });
});

describe('search mode (issue 31)', () => {
  const many = Array.from({ length: 300 }, (_, i): LegacyMcpTool => {
    const n = String(i).padStart(3, '0');
    return { ...echo, toolId: `mcp/${REG}:t${n}`, nativeName: `t${n}`, title: `Tool ${n}`, description: `Does thing ${n}.\nMore.` };
  });
  const searchSet = (patch: Partial<McpToolSet> = {}): McpToolSet =>
    ({ id: 'set-many', name: 'Many', tools: [`mcp/${REG}:*`], descriptionOverrides: {}, resultInlineCharLimit: 1000, readerTool: true,
       toolMode: 'search', searchMaxTools: 40, searchContextPercent: 10, pinnedTools: [], ...patch }) as McpToolSet;
  const hit = (t: LegacyMcpTool, score: number): McpToolSearchHit => ({
    toolId: t.toolId, registrationId: REG, serverDisplayName: t.serverDisplayName, nativeName: t.nativeName, title: t.title!, description: 'Does thing.', score,
  });

  test('300 tools: the request carries the constant set, the pinned tool and the reader; search, details and call reach the real tool through Ask', async () => {
    const w = world();
    w.sets = [searchSet({ pinnedTools: [`mcp/${REG}:t007`] })];
    w.setTools = { 'set-many': many };
    w.scope = { chatOpen: true, default: 'set-many' };
    w.searchHits = () => [hit(many[42]!, 9), hit(many[5]!, 3)];
    await w.st.round();
    expect(await w.st.offered()).toEqual([SEARCH_TOOL, DETAILS_TOOL, CALL_TOOL, 'mcp__Demo__t007', 'ttmcp_read_result']);
    expect(w.bridge.searching).toBe(true);
    expect(w.toasts).toEqual([]); // nothing is left out: the limit is not reached
    const found = await w.st.call(SEARCH_TOOL, { query: 'thing 42', limit: 5 });
    expect(w.searches).toEqual([{ query: 'thing 42', limit: 5, toolSetId: 'set-many' }]);
    expect(found).toBe(
      '2 MCP tools for "thing 42", best first (read one\'s parameters with ttmcp_tool_details, call it with ttmcp_call_tool):\n\n' +
        'Demo:\n- mcp__Demo__t042 — Tool 042: Does thing.\n- mcp__Demo__t005 — Tool 005: Does thing.',
    );
    const details = await w.st.call(DETAILS_TOOL, { name: 'mcp__Demo__t042' });
    expect(JSON.parse(details.slice(0, details.indexOf('\n\nCall it')))).toEqual({
      name: 'mcp__Demo__t042', server: 'Demo', title: 'Tool 042', description: 'Does thing 042.\nMore.', inputSchema: echo.inputSchema,
    });
    // Ask: the popup names the real tool; the backend is asked for the real ToolId
    w.permission.value = 'ask';
    w.answers.push('once');
    const text = await w.st.call(CALL_TOOL, { name: 'mcp__Demo__t042', arguments: { text: 'hi' } });
    expect(w.asked).toEqual([{ serverDisplayName: 'Demo', toolTitle: 'Tool 042', nativeName: 't042', argumentsJson: '{"text":"hi"}' }]);
    const calls = w.commands.filter(([c]) => c === 'call_legacy_mcp_tool');
    expect(calls).toHaveLength(1);
    expect((calls[0]![1] as { dto: Record<string, unknown> }).dto).toMatchObject({ toolId: `mcp/${REG}:t042`, argumentsJson: '{"text":"hi"}', approval: 'once' });
    expect(text).toBe('{"text":"hi"}');
    // the App host hears the real tool under the name SillyTavern saves the invocation by
    expect(w.calledHook).toEqual([`${CALL_TOOL} t042`]);
    expect(await w.st.registry.get(CALL_TOOL)!.formatMessage!({ name: 'mcp__Demo__t042', arguments: {} })).toBe('Invoking MCP tool: Tool 042 (Demo)');
    // SillyTavern's record names the real tool (the call keeps the call tool's name, as the tools array has it)
    const invocations = [{ id: 'c1', displayName: 'Call an MCP tool', name: CALL_TOOL, parameters: '{"name":"mcp__Demo__t042","arguments":{"text":"hi"}}', result: text }];
    const message = { mes: 'Tool calls: Call an MCP tool\n[{"displayName": "Call an MCP tool"}]', extra: { tool_invocations: invocations } };
    const ctx = w.st.context.bind(w.st);
    w.st.context = () => ({ ...ctx(), chat: [message] }) as StToolContext;
    await w.st.emit(ST_EVENTS.TOOL_CALLS_PERFORMED, invocations);
    expect(invocations[0]!.displayName).toBe('Tool 042 (Demo)');
    expect(invocations[0]!.name).toBe(CALL_TOOL);
    expect(message.mes).toBe('Tool calls: Tool 042 (Demo)\n[{"displayName": "Tool 042 (Demo)"}]');
    // the round after the batch offers the same array
    await w.st.round();
    expect(await w.st.offered()).toEqual([SEARCH_TOOL, DETAILS_TOOL, CALL_TOOL, 'mcp__Demo__t007', 'ttmcp_read_result']);
  });

  test('only the root\'s tools are found and called: a hit outside the listing is not shown; a listing change applies at the next root', async () => {
    const w = world();
    w.defaultSearch = { mode: 'search', maxTools: 40, contextPercent: 10, pinned: [] };
    w.tools = [echo];
    // the backend's index answering a tool this root does not list (an Off tool, another set's) is never shown
    w.searchHits = () => [hit(add, 5), hit(echo, 2)];
    await w.st.round();
    expect(await w.st.call(SEARCH_TOOL, { query: 'x' })).toBe(
      '1 MCP tool for "x", best first (read one\'s parameters with ttmcp_tool_details, call it with ttmcp_call_tool):\n\nDemo:\n- mcp__Demo__echo — Echo: Does thing.',
    );
    expect(await w.st.call(CALL_TOOL, { name: 'mcp__Demo__add', arguments: {} })).toContain('Nothing was called');
    expect(w.commands.filter(([c]) => c === 'call_legacy_mcp_tool')).toHaveLength(0);
    // the listing changed (a refresh, a permission): the next root finds and calls the new tool
    w.tools = [echo, add];
    await w.st.round();
    expect(await w.st.call(CALL_TOOL, { name: 'mcp__Demo__add__2', arguments: {} })).toBe('{}');
    expect(w.commands.filter(([c]) => c === 'call_legacy_mcp_tool')).toHaveLength(1);
  });

  test('the default\'s pins are offered by their own names after the constant set, in their order; a pin not listed is left out', async () => {
    const w = world();
    w.tools = [echo, add];
    w.defaultSearch = { mode: 'search', maxTools: 40, contextPercent: 10, pinned: [add.toolId, 'mcp/gone:tool', echo.toolId] };
    await w.st.round();
    expect(await w.st.offered()).toEqual([SEARCH_TOOL, DETAILS_TOOL, CALL_TOOL, 'mcp__Demo__add__2', 'mcp__Demo__echo', 'ttmcp_read_result']);
  });

  test('a server filter, unknown names and a missing query: told in words, nothing called', async () => {
    const w = world();
    w.defaultSearch = { mode: 'search', maxTools: 40, contextPercent: 10, pinned: [] };
    await w.st.round(); // no set: the default's settings, the permitted tools
    expect(await w.st.offered()).toEqual([SEARCH_TOOL, DETAILS_TOOL, CALL_TOOL, 'ttmcp_read_result']);
    await w.st.call(SEARCH_TOOL, { query: 'echo', server: 'demo' });
    expect(w.searches).toEqual([{ query: 'echo', limit: 10, registrationId: REG }]);
    expect(await w.st.call(SEARCH_TOOL, { query: 'echo', server: 'Nope' })).toBe('No MCP server is named "Nope" here. The servers are: Demo.');
    expect(await w.st.call(SEARCH_TOOL, {})).toBe('ttmcp_search_tools needs a query: a few words on what you want to do.');
    expect(await w.st.call(DETAILS_TOOL, { name: 'mcp__Demo__nothing' })).toBe('No MCP tool is named "mcp__Demo__nothing" here. Find one with ttmcp_search_tools.');
    expect(await w.st.call(CALL_TOOL, { name: 'nothing', arguments: {} })).toBe(
      'No MCP tool is named "nothing" here. Nothing was called; find one with ttmcp_search_tools.',
    );
    // a native name only one tool has is taken; arguments as a JSON string too
    expect(await w.st.call(CALL_TOOL, { name: 'echo', arguments: '{"text":"x"}' })).toBe('{"text":"x"}');
    expect(w.commands.filter(([c]) => c === 'call_legacy_mcp_tool')).toHaveLength(1);
  });

  test.each([
    ['all', 2, undefined, false],
    ['search', 2, undefined, true],
    ['automatic under both budgets', 2, 100_000, false],
    ['automatic over the count', 1, undefined, true],
    ['automatic over the share of a small context', 40, 400, true],
  ] as const)('%s', async (name, maxTools, context, searching) => {
    const w = world();
    const mode = name.startsWith('automatic') ? 'automatic' : (name as 'all' | 'search');
    w.defaultSearch = { mode, maxTools, contextPercent: 10, pinned: [] };
    if (context !== undefined) {
      const ctx = w.st.context.bind(w.st);
      w.st.context = () => ({ ...ctx(), chatCompletionSettings: { function_calling: true, chat_completion_source: 'custom', openai_max_context: context } as never });
    }
    await w.st.round();
    expect(w.bridge.searching).toBe(searching);
    expect((await w.st.offered()).includes(SEARCH_TOOL)).toBe(searching);
  });
});

describe('honest sizes (issue 31)', () => {
  /** What the request carries of ttmcp's: the registered definitions a request would include, and their estimate. */
  async function carried(w: World): Promise<{ count: number; tokens: number }> {
    const names = await w.st.offered();
    let tokens = 0;
    for (const n of names) {
      const t = w.st.registry.get(n)!;
      tokens += definitionTokens(t.name, t.description, t.parameters);
    }
    return { count: names.length, tokens };
  }
  const many = Array.from({ length: 300 }, (_, i): LegacyMcpTool => ({ ...echo, toolId: `mcp/${REG}:t${i}`, nativeName: `t${i}`, title: `T${i}`, description: `Tool ${i}.` }));

  test.each([
    ['all, two tools', 'all', [echo, add]],
    ['all, 300 tools under the limit', 'all', many],
    ['search, 300 tools', 'search', many],
  ] as const)('%s: the reach line says what the next request carries', async (_name, mode, tools) => {
    const w = world();
    w.tools = [...tools];
    w.defaultSearch = { mode, maxTools: 40, contextPercent: 10, pinned: [] };
    await w.st.round();
    const st = w.st.context();
    const r = await toolReach({
      context: st,
      isTtmcp: true,
      connected: true,
      invokeCommand: async () => ({ tools: w.tools, diagnostics: [] }),
      localTools: () => w.bridge.localToolCount(),
      defaultSearch: () => w.defaultSearch!,
    });
    expect(r.kind).toBe('ready');
    if (r.kind !== 'ready') return;
    const got = await carried(w);
    expect(r.request).toBe(got.count);
    // the aliases may differ by a suffix where a local tool's name is taken: within a few tokens
    expect(Math.abs(r.tokens - got.tokens)).toBeLessThanOrEqual(2);
    expect(r.search).toBe(mode === 'search');
    if (mode === 'search') expect(r.tools).toBe(300);
  });
});
