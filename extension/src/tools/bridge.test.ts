// The tool bridge against a SillyTavern double (registry, events,
// stopGeneration) and a backend double that answers the legacy commands:
// roots and rounds, aliases, Ask answers, unknown outcomes and Stop.

import { describe, expect, test, vi } from 'vitest';
import type { LegacyMcpTool, McpCallOutcome, TauriTavernMcpServer, TtmcpMcpApi } from '../../../jsapi/tauritavern-mcp';
import { englishTr } from '../texts';
import type { ApprovalAnswer, ApprovalRequest } from './approval';
import { sentence, ToolBridge, type ToolBridgeHost } from './bridge';
import { toolReach } from './reach';
import { ST_EVENTS, type StFunctionTool, type StToolContext } from './sillytavern-tools';

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

/** SillyTavern as the bridge sees it: a registry, an awaited event bus, stopGeneration. */
class FakeSt {
  registry = new Map<string, StFunctionTool>();
  listeners = new Map<string, Array<(...args: unknown[]) => unknown>>();
  stops = 0;
  supported = true;
  context(): StToolContext {
    return {
      registerFunctionTool: (t) => void this.registry.set(t.name, t),
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
  callAnswer: (dto: Record<string, unknown>) => Promise<McpCallOutcome> | McpCallOutcome;
  connected: boolean;
  ttmcp: boolean;
  /** Whether invoke.safeInvoke is published (false: the API never loaded). */
  loaded: boolean;
  /** What an attempt to connect does (wake), and how many were made. */
  onWake: () => void;
  wakes: number;
  listed: number;
  changed: number;
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
  } as unknown as World;
  const server = (): TauriTavernMcpServer => ({
    id: REG, displayName: 'Demo', endpoint: 'http://x/mcp', headers: {}, protocolVersion: 'auto', state: 'active',
    toolPermissions: w.permission.value === 'off' ? {} : { echo: w.permission.value, add: w.permission.value },
    toolDescriptionOverrides: {},
  });
  const api = {
    servers: { list: async () => ({ servers: [server()], storageIssues: [] }) },
    tools: { setPermission: w.setPermission },
  } as unknown as TtmcpMcpApi;
  const host: ToolBridgeHost = {
    context: () => st.context(),
    api: () => api,
    invokeCommand: () =>
      w.loaded
        ? async (command: string, args?: unknown) => {
            w.commands.push([command, args]);
            if (command === 'list_legacy_mcp_tools') return { tools: w.tools, diagnostics: [] };
            if (command === 'call_legacy_mcp_tool') return w.callAnswer((args as { dto: Record<string, unknown> }).dto);
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
    listed: () => void w.listed++,
    changed: () => void w.changed++,
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
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2']);
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
    expect(await w.st.offered()).toEqual(['mcp__Demo__add__2']);
    expect(w.st.registry.has('mcp__Demo__echo')).toBe(false);
    w.connected = false;
    expect(await w.st.offered()).toEqual([]);
  });

  test('names seen in requests count as local names (SillyTavern without ToolManager in its context)', async () => {
    const w = world();
    await w.st.emit(ST_EVENTS.CHAT_COMPLETION_SETTINGS_READY, { tools: [{ function: { name: 'mcp__Demo__echo' } }] });
    await w.st.round();
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo__2', 'mcp__Demo__add__2']);
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
    expect(await w.st.offered()).toEqual(['mcp__Demo__echo', 'mcp__Demo__add__2']);
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
  test.each([
    ['may have executed', 'may have executed.'],
    ['Timed out.', 'Timed out.'],
    ['Really?  ', 'Really?'],
    ['', ''],
  ])('sentence(%j) = %j', (text, want) => {
    expect(sentence(text)).toBe(want);
  });

  test('Allow: start and call with the arguments as SillyTavern parsed them; the pretty outcome is the result', async () => {
    const w = world();
    await w.st.round();
    w.commands.length = 0;
    const result = await w.st.call('mcp__Demo__echo', { text: 'hi', n: 1 });
    expect(names(w)).toEqual(['start_legacy_mcp_tool_call', 'call_legacy_mcp_tool']);
    const dto = (w.commands[1]![1] as { dto: Record<string, unknown> }).dto;
    expect(dto).toEqual({ executionCallId: expect.any(String), toolId: echo.toolId, argumentsJson: '{"text":"hi","n":1}' });
    expect(result).toBe(JSON.stringify(known('{"text":"hi","n":1}'), null, 2));
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

  test('Ask denied: the denial is sent (recorded, never called) and its answer, naming the tool, is the result', async () => {
    const w = world();
    w.permission.value = 'ask';
    w.answers.push('denied', 'denied', 'denied');
    const denied: McpCallOutcome = { outcome: 'not_sent', code: 'mcp.call_denied_by_user', message: `The user denied the call to MCP tool \`${echo.toolId}\`; it was not sent` };
    w.callAnswer = (dto) => (dto.approval === 'denied' ? denied : known('ran'));
    await w.st.round();
    const named = { ...denied, message: 'The user denied the call to MCP tool Echo (Demo); it was not sent.' };
    expect(await w.st.call('mcp__Demo__echo', {})).toBe(JSON.stringify(named, null, 2));
    // another answer of the backend (the registration is gone) is passed on as it is
    const gone: McpCallOutcome = { outcome: 'not_sent', code: 'mcp.registration_not_found', message: 'gone' };
    w.callAnswer = () => gone;
    expect(await w.st.call('mcp__Demo__echo', {})).toBe(JSON.stringify(gone, null, 2));
    // a denial the backend could not record still names the tool
    w.callAnswer = () => Promise.reject(new Error('mcp.host_unavailable: down'));
    expect(JSON.parse(await w.st.call('mcp__Demo__echo', {}))).toEqual(named);
  });

  test('an unknown outcome: the persistent warning, the rest of the batch skipped, the next round stopped', async () => {
    const w = world();
    // the backend's messages end without a full stop
    w.callAnswer = () => ({ outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'Timed out waiting for the tool response; echo may have executed' });
    await w.st.round();
    const first = JSON.parse(await w.st.call('mcp__Demo__echo', {}));
    expect(first).toEqual({
      outcome: 'outcome_unknown',
      code: 'mcp.call_timeout',
      message: 'Timed out waiting for the tool response; echo may have executed. The tool may have run; ttmcp did not retry it, and the tool loop ends here.',
    });
    expect(w.toasts).toHaveLength(1);
    expect(w.toasts[0]![0]).toBe('warning');
    expect(w.toasts[0]![1]).toContain('MCP tool result unknown: Echo (Demo) may have run');
    expect(w.toasts[0]![2]).toBe(true);
    const calls = names(w).length;
    const second = JSON.parse(await w.st.call('mcp__Demo__add__2', {}));
    expect(second).toMatchObject({ outcome: 'not_sent', code: 'mcp.call_skipped_after_unknown' });
    expect(names(w)).toHaveLength(calls); // nothing sent
    await w.st.saveBatch();
    await w.st.round(); // SillyTavern's next round is stopped before its request
    expect(w.st.stops).toBe(1);
    await w.st.round(); // the user's next generation is not
    expect(w.st.stops).toBe(1);
  });

  test('Stop during a call: cancelled, and the next round stopped', async () => {
    const w = world();
    let release: (o: McpCallOutcome) => void = () => {};
    w.callAnswer = () => new Promise((r) => (release = r));
    await w.st.round();
    const pending = w.st.call('mcp__Demo__echo', {});
    await vi.waitFor(() => expect(names(w)).toContain('call_legacy_mcp_tool'));
    await w.st.emit(ST_EVENTS.GENERATION_STOPPED);
    expect(names(w)).toContain('cancel_legacy_mcp_tool_call');
    release({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'Stopped waiting.' });
    expect(JSON.parse(await pending)).toMatchObject({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled' });
    await w.st.saveBatch();
    await w.st.round();
    expect(w.st.stops).toBe(1);
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
    ['tool_calling_unsupported', { ...base, context: ctx({ isToolCallingSupported: () => false, chatCompletionSettings: undefined }), invokeCommand: list([echo]) }],
    ['backend_down', { ...base, connected: false, context: ctx({}), invokeCommand: list([echo]) }],
    ['nothing_allowed', { ...base, context: ctx({}), invokeCommand: list([]) }],
    ['ready', { ...base, context: ctx({}), invokeCommand: list([echo, add]) }],
  ] as const)('%s', async (kind, inputs) => {
    const r = await toolReach(inputs);
    expect(r.kind).toBe(kind);
    if (r.kind === 'ready') expect(r).toEqual({ kind: 'ready', tools: 2, servers: 1, diagnostics: 1 });
  });
});
