import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type {
  McpDiscoveredTool,
  McpDiscoveryResult,
  McpTestCallOutcome,
  TestMcpToolCallInput,
  TtmcpTestCallOptions,
} from '../../../../jsapi/tauritavern-mcp';
import { discovery, installSillyTavern, SERVER_B, SERVER_ID, server } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { hasApp, openTestCallDialog, TestCallDialog, type TestCallApp, type TestCallDialogDeps } from './test-call-dialog';

function richTool(): McpDiscoveredTool {
  return {
    id: `mcp/${SERVER_ID}:search`,
    nativeName: 'search',
    title: 'Search files',
    description: 'Search local files by name.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Search query' },
        limit: { type: 'integer' },
        recursive: { type: 'boolean' },
        mode: { enum: ['fast', 'deep'] },
        tags: { type: 'array', items: { type: 'string' } },
        options: { type: 'object' },
      },
      required: ['query'],
    },
    annotations: {},
    permission: 'off',
  };
}

function pingTool(): McpDiscoveredTool {
  return { id: `mcp/${SERVER_ID}:ping`, nativeName: 'ping', inputSchema: { type: 'object' }, annotations: {}, permission: 'ask' };
}

function found(tools: McpDiscoveredTool[], patch: Partial<McpDiscoveryResult> = {}, id = SERVER_ID): McpDiscoveryResult {
  return discovery({ tools, ...patch }, id);
}

function deps(overrides: Partial<TestCallDialogDeps> = {}): TestCallDialogDeps {
  return {
    servers: [server('active')],
    discover: () => Promise.resolve(found([richTool()])),
    refresh: () => Promise.resolve(found([richTool()])),
    testCall: () => Promise.reject(new Error('unexpected testCall')),
    ...overrides,
  };
}

function renderDialog(overrides: Partial<TestCallDialogDeps> = {}) {
  return render(<TestCallDialog {...deps(overrides)} />);
}

function toolResult(patch: object = {}): McpTestCallOutcome {
  return {
    outcome: 'known_response',
    response: { kind: 'tool_result', isError: false, textBlocks: [], diagnostics: [], ...patch },
  };
}

describe('test-call console', () => {
  test('with no active server it says so and offers no Run', () => {
    renderDialog({ servers: [server('paused')] });
    expect(screen.getByRole('heading').textContent).toBe('Test MCP tool');
    expect(screen.getByText('No active servers. Activate a server in the list first.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Run test' })).toBeNull();
    expect(screen.queryByLabelText('Server')).toBeNull();
  });

  test('preselects the only active server, discovers it and lists its notes; Retry after a failure uses refresh', async () => {
    let discovers = 0;
    let refreshes = 0;
    const user = userEvent.setup();
    renderDialog({
      servers: [server('active'), server('paused', { id: SERVER_B, displayName: 'Paused one' })],
      discover: () => {
        discovers++;
        return Promise.reject(new Error('stored catalog is invalid'));
      },
      refresh: () => {
        refreshes++;
        return Promise.resolve(
          found([richTool()], { diagnostics: [{ code: 'mcp.catalog_persistence_failed', message: 'Catalog remains memory-only' }] }),
        );
      },
    });
    const select = screen.getByLabelText<HTMLSelectElement>('Server');
    expect([...select.options].map((o) => o.text)).toEqual(['Local tools']);
    expect(screen.getByText('http://127.0.0.1:3000/mcp')).toBeTruthy();
    expect((await screen.findByRole('alert')).textContent).toBe('stored catalog is invalid');
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('option', { name: 'Search files' })).toBeTruthy();
    expect(screen.getByText('Catalog remains memory-only').closest('details')?.open).toBe(true);
    expect(screen.getByText('mcp.catalog_persistence_failed').tagName).toBe('CODE');
    expect([discovers, refreshes]).toEqual([1, 1]);
  });

  test('builds the exact arguments JSON from friendly fields, keeping 9007199254740993', async () => {
    let received: TestMcpToolCallInput | undefined;
    const user = userEvent.setup();
    renderDialog({
      testCall: (input) => {
        received = input;
        return Promise.resolve(
          toolResult({ textBlocks: [{ index: 0, text: '3 matches' }], structuredJson: '{\n  "matches": 3\n}' }),
        );
      },
    });
    const toolSelect = screen.getByLabelText<HTMLSelectElement>('Tool');
    await screen.findByRole('option', { name: 'Search files' });
    expect(toolSelect.value).toBe('');
    expect(toolSelect.options[0]?.text).toBe('Select a tool…');
    await user.selectOptions(toolSelect, 'search');
    expect(screen.getByText('Search local files by name.')).toBeTruthy();
    expect(screen.getByText('Current permission: Off. This explicit test call does not change it.')).toBeTruthy();
    expect(
      screen.getByText('This is a real call and may have side effects. ttmcp sends it again only where the server says it has not run it.'),
    ).toBeTruthy();

    await user.type(screen.getByLabelText(/query/), 'hello world');
    const limit = screen.getByLabelText<HTMLInputElement>('limit');
    expect(limit.inputMode).toBe('numeric');
    await user.type(limit, '9007199254740993');
    await user.click(within(screen.getByRole('radiogroup', { name: 'recursive' })).getByRole('radio', { name: 'true' }));
    const mode = screen.getByLabelText<HTMLSelectElement>('mode');
    expect([...mode.options].map((o) => o.text)).toEqual(['Not set', '"fast"', '"deep"']);
    await user.selectOptions(mode, '"deep"');
    await user.type(screen.getByLabelText('tags'), 'alpha{enter}  {enter}beta ');
    expect(screen.getByText('One value per line.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('options'), { target: { value: '{"x":1}' } });

    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() =>
      expect(received).toEqual({
        registrationId: SERVER_ID,
        nativeName: 'search',
        argumentsJson:
          '{"query":"hello world","limit":9007199254740993,"recursive":true,"mode":"deep","tags":["alpha","beta"],"options":{"x":1}}',
      }),
    );
    expect(await screen.findByText('3 matches')).toBeTruthy();
    expect(screen.getByText('3 matches').tagName).toBe('PRE');
    expect(screen.getByText('Server responded')).toBeTruthy();
    expect(screen.getByText('Structured result')).toBeTruthy();
    expect(document.querySelector('.tt-mcp-json-output')?.textContent).toBe('{\n  "matches": 3\n}');
  });

  test('missing required and malformed fields block the call, with errors tied to their fields', async () => {
    let calls = 0;
    const user = userEvent.setup();
    renderDialog({
      testCall: () => {
        calls++;
        return Promise.reject(new Error('should not run'));
      },
    });
    await screen.findByRole('option', { name: 'Search files' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'search');
    const query = screen.getByLabelText(/query/);
    expect(query.hasAttribute('required')).toBe(true);
    expect(screen.getByLabelText('limit').hasAttribute('required')).toBe(false);
    await user.type(screen.getByLabelText('limit'), '1.5');
    fireEvent.change(screen.getByLabelText('options'), { target: { value: '{broken' } });
    await user.click(screen.getByRole('button', { name: 'Run test' }));

    expect(calls).toBe(0);
    expect(screen.getByText('Required')).toBeTruthy();
    expect(screen.getByText('Enter a whole number.')).toBeTruthy();
    expect(screen.getByText('Enter valid JSON.')).toBeTruthy();
    expect(query.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByLabelText('options').getAttribute('aria-invalid')).toBe('true');
    // the error is announced with the field's own hint
    expect(screen.getByRole('textbox', { name: /query/, description: 'Search query Required' })).toBe(query);

    await user.type(query, 'anything');
    expect(screen.queryByText('Required')).toBeNull();
    expect(screen.getByText('Enter a whole number.')).toBeTruthy();
    expect(query.hasAttribute('aria-invalid')).toBe(false);
    expect(screen.getByRole('textbox', { name: /query/, description: 'Search query' })).toBe(query);
  });

  test('a number field rejects what is not a JSON number', async () => {
    const sent: string[] = [];
    const user = userEvent.setup();
    const tool: McpDiscoveredTool = {
      ...pingTool(),
      inputSchema: { type: 'object', properties: { x: { type: 'number' }, xs: { type: 'array', items: { type: 'integer' } } } },
    };
    renderDialog({
      discover: () => Promise.resolve(found([tool])),
      testCall: (input) => {
        sent.push(input.argumentsJson);
        return Promise.resolve(toolResult());
      },
    });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    expect(screen.getByLabelText<HTMLInputElement>('x').inputMode).toBe('decimal');
    await user.type(screen.getByLabelText('x'), '01');
    await user.type(screen.getByLabelText('xs'), '1{enter}2.5');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect(screen.getByText('Enter a valid number.')).toBeTruthy();
    expect(screen.getByText('Enter a whole number.')).toBeTruthy();
    await user.clear(screen.getByLabelText('x'));
    await user.type(screen.getByLabelText('x'), '-1.5e+3');
    await user.clear(screen.getByLabelText('xs'));
    await user.type(screen.getByLabelText('xs'), '1{enter}18446744073709551617');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() => expect(sent).toEqual(['{"x":-1.5e+3,"xs":[1,18446744073709551617]}']));
    expect(await screen.findByText('The server responded, but there is no displayable content.')).toBeTruthy();
  });

  test('a tool without arguments says so and sends {}', async () => {
    const sent: string[] = [];
    const user = userEvent.setup();
    renderDialog({
      discover: () => Promise.resolve(found([pingTool()])),
      testCall: (input) => {
        sent.push(input.argumentsJson);
        return Promise.resolve(toolResult({ isError: true, textBlocks: [{ index: 0, text: 'boom' }] }));
      },
    });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    expect(screen.getByText('This tool takes no arguments.')).toBeTruthy();
    expect(screen.getByText('Current permission: Ask. This explicit test call does not change it.')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect(await screen.findByText('Tool returned an error')).toBeTruthy();
    expect(screen.getByText('boom')).toBeTruthy();
    expect(sent).toEqual(['{}']);
  });

  /** Runs ping with a call that stays pending; its options and finish are the test's. */
  async function runPending() {
    const call: { options?: TtmcpTestCallOptions; finish: (o: McpTestCallOutcome) => void } = { finish: () => {} };
    const user = userEvent.setup();
    renderDialog({
      discover: () => Promise.resolve(found([pingTool()])),
      testCall: (_input, options) => {
        call.options = options;
        return new Promise((resolve) => {
          call.finish = resolve;
        });
      },
    });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect(await screen.findByText('Waiting for server…')).toBeTruthy();
    return { call, user };
  }

  test('"Stop waiting" aborts the local wait and says it is stopping', async () => {
    const { call, user } = await runPending();
    const signal = call.options?.signal;
    const finish = (o: McpTestCallOutcome) => call.finish(o);
    expect(
      screen.getByText('Stopping only ends the local wait; it cannot undo a call the server already received.'),
    ).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Run test' })).toBeNull();
    expect(screen.getByLabelText<HTMLSelectElement>('Server').disabled).toBe(true);
    await user.click(screen.getByRole('button', { name: 'Stop waiting' }));
    expect(signal?.aborted).toBe(true);
    expect(screen.getByText('Stopping local wait…')).toBeTruthy();
    await act(async () => {
      finish({ outcome: 'not_sent', code: 'mcp.call_cancelled_before_send', message: 'The tool request was cancelled before it started' });
    });
    expect(await screen.findByText('Not sent')).toBeTruthy();
    expect(screen.getByText('The tool request was cancelled before it started')).toBeTruthy();
    expect(screen.getByText('mcp.call_cancelled_before_send')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Run test' })).toBeTruthy();
  });

  test('a running call shows its progress (bar, step, message, elapsed); after it, the count and the last message', async () => {
    const { call } = await runPending();
    const onProgress = call.options?.onProgress;
    const finish = (o: McpTestCallOutcome) => call.finish(o);
    expect(screen.getByText('0 s')).toBeTruthy();
    act(() => onProgress?.({ progress: 2, total: 5, message: 'Crawling page 2', updates: 2 }));
    expect(screen.getByText('2 of 5')).toBeTruthy();
    expect(screen.getByText('Crawling page 2')).toBeTruthy();
    expect(screen.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('40');
    act(() => onProgress?.({ progress: 7, message: 'Crawling page 2', updates: 9 })); // no total: a step and the spinner
    expect(screen.getByText('Step 7')).toBeTruthy();
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.getByRole('button', { name: 'Stop waiting' })).toBeTruthy();
    await act(async () => finish(toolResult()));
    expect(await screen.findByText('Progress · 9 updates · Crawling page 2')).toBeTruthy();
    expect(screen.queryByRole('status', { name: /Step/ })).toBeNull();
    act(() => onProgress?.({ progress: 8, updates: 10 })); // after the call: nothing changes
    expect(screen.getByText('Progress · 9 updates · Crawling page 2')).toBeTruthy();
  });

  test.each<[string, McpTestCallOutcome, string[]]>([
    [
      'outcome unknown',
      { outcome: 'outcome_unknown', code: 'mcp.call_timeout', message: 'No answer in time' },
      ['Outcome unknown', 'No answer in time', 'The call may have executed. ttmcp will not retry it automatically.', 'mcp.call_timeout'],
    ],
    [
      'server error',
      { outcome: 'known_response', response: { kind: 'server_error', code: -32602, message: 'Invalid params', dataJson: '{"field":"q"}' } },
      ['Server error', 'Invalid params', 'Code -32602', '{"field":"q"}'],
    ],
    [
      'unsupported response',
      { outcome: 'known_response', response: { kind: 'unsupported_response', responseType: 'task', message: 'Tasks are not supported' } },
      ['Unsupported server response', 'Tasks are not supported', 'Response type: task'],
    ],
    [
      'tool result with diagnostics',
      {
        outcome: 'known_response',
        response: {
          kind: 'tool_result',
          isError: false,
          textBlocks: [{ index: 0, text: 'a' }, { index: 2, text: 'b' }],
          diagnostics: [{ code: 'mcp.content_unsupported', message: 'image skipped', contentIndex: 1 }],
        },
      },
      ['Server responded', 'a', 'b', 'Notes · 1', 'mcp.content_unsupported [1]', 'image skipped'],
    ],
    [
      'the rounds of a call whose server asked',
      {
        outcome: 'known_response',
        response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'hello octo' }], diagnostics: [] },
        rounds: 3,
        elicitations: [
          { mode: 'form', action: 'accept' },
          { mode: 'url', action: 'decline' },
        ],
      },
      ['Server responded', 'hello octo', 'The server asked you', '3 requests', 'A form: answered', 'A page to open: declined'],
    ],
    [
      'a 2025 question stopped mid-call',
      { outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'Stopped', rounds: 1, elicitations: [{ mode: 'form', action: 'cancel' }] },
      ['Outcome unknown', 'The server asked you', '1 request', 'A form: not answered'],
    ],
  ])('renders %s', async (_name, outcome, texts) => {
    const user = userEvent.setup();
    renderDialog({ discover: () => Promise.resolve(found([pingTool()])), testCall: () => Promise.resolve(outcome) });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await screen.findByText(texts[0]!);
    for (const t of texts) expect(screen.getByText(t)).toBeTruthy();
  });

  test('a rejected call shows its message as an alert', async () => {
    const user = userEvent.setup();
    renderDialog({
      discover: () => Promise.resolve(found([pingTool()])),
      testCall: () => Promise.reject(new Error('mcp.host_connection_lost: the connection closed')),
    });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect((await screen.findByRole('alert')).textContent).toBe('mcp.host_connection_lost: the connection closed');
  });

  test('switching servers discovers the new one and ignores a late answer for the old one', async () => {
    const answers = new Map<string, (d: McpDiscoveryResult) => void>();
    const user = userEvent.setup();
    renderDialog({
      servers: [server('active'), server('active', { id: SERVER_B, displayName: 'Beta', endpoint: 'https://b.example/mcp' })],
      discover: (id) => new Promise((resolve) => answers.set(id, resolve)),
    });
    const select = screen.getByLabelText<HTMLSelectElement>('Server');
    expect(select.value).toBe('');
    expect(select.options[0]?.text).toBe('Select a server…');
    expect(screen.queryByLabelText('Tool')).toBeNull();
    await user.selectOptions(select, SERVER_ID);
    expect(screen.getByLabelText<HTMLSelectElement>('Tool').options[0]?.text).toBe('Loading tools…');
    await user.selectOptions(select, SERVER_B);
    expect(screen.getByText('https://b.example/mcp')).toBeTruthy();
    await act(async () => {
      answers.get(SERVER_B)?.(found([{ ...pingTool(), nativeName: 'beta_tool' }], {}, SERVER_B));
    });
    await act(async () => {
      answers.get(SERVER_ID)?.(found([richTool()]));
    });
    expect(screen.getByRole('option', { name: 'beta_tool' })).toBeTruthy();
    expect(screen.queryByRole('option', { name: 'Search files' })).toBeNull();
  });

  test('schema defaults pre-fill the form', async () => {
    const sent: string[] = [];
    const user = userEvent.setup();
    const tool: McpDiscoveredTool = {
      ...pingTool(),
      inputSchema: {
        type: 'object',
        properties: {
          s: { type: 'string', default: 'hi' },
          n: { type: 'integer', default: 3 },
          b: { type: 'boolean', default: false },
          e: { enum: [1, 2], default: 2 },
          l: { type: 'array', items: { type: 'string' }, default: ['a', 'b'] },
          o: { type: 'object', default: { k: true } },
          bad: { type: 'integer', default: 'x' },
        },
      },
    };
    renderDialog({
      discover: () => Promise.resolve(found([tool])),
      testCall: (input) => {
        sent.push(input.argumentsJson);
        return Promise.resolve(toolResult());
      },
    });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    expect(screen.getByLabelText<HTMLInputElement>('bad').value).toBe('');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() => expect(sent).toEqual(['{"s":"hi","n":3,"b":false,"e":2,"l":["a","b"],"o":{\n  "k": true\n}}']));
    expect(JSON.parse(sent[0]!)).toEqual({ s: 'hi', n: 3, b: false, e: 2, l: ['a', 'b'], o: { k: true } });
  });

  test('closing the popup aborts the local wait of a call in flight; the server select has focus', async () => {
    installSillyTavern();
    let signal: AbortSignal | undefined;
    let resolveCall!: (o: McpTestCallOutcome) => void;
    let argumentsJson: string | undefined;
    const opened = openTestCallDialog(
      deps({
        discover: () => Promise.resolve(found([pingTool()])),
        testCall: (input, options) => {
          argumentsJson = input.argumentsJson;
          signal = options.signal;
          return new Promise((resolve) => {
            resolveCall = resolve;
          });
        },
      }),
      englishTr,
    );
    const popup = currentPopup();
    expect(popup.dlg.classList.contains('wide_dialogue_popup')).toBe(true);
    expect(popup.dlg.classList.contains('left_aligned_dialogue_popup')).toBe(true);
    expect([...popup.dlg.querySelectorAll('.popup-controls [role=button]')].map((b) => b.textContent)).toEqual(['Close']);
    const user = userEvent.setup();
    await screen.findByRole('option', { name: 'ping' });
    await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText('Server')));
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect(await screen.findByText('Waiting for server…')).toBeTruthy();
    expect(argumentsJson).toBe('{}');

    expect(await popup.close(1)).toBe(true);
    expect(signal?.aborted).toBe(true);
    resolveCall({ outcome: 'outcome_unknown', code: 'mcp.call_cancelled', message: 'cancelled' });
    await opened;
  });

  /** A tool with an MCP App (its interface ui://board/view). */
  function boardTool(visibility?: Array<'model' | 'app'>): McpDiscoveredTool {
    return {
      id: `mcp/${SERVER_ID}:show_board`,
      nativeName: 'show_board',
      inputSchema: { type: 'object', properties: { size: { type: 'integer' } } },
      annotations: {},
      permission: 'allow',
      ui: { resourceUri: 'ui://board/view', ...(visibility ? { visibility } : {}) },
    };
  }

  test.each<[string, McpDiscoveredTool, boolean]>([
    ['an interface, visibility absent', boardTool(), true],
    ['an interface, app only', boardTool(['app']), true],
    ['an interface, model only', boardTool(['model']), true],
    ['an interface nobody may see', boardTool([]), false],
    ['no interface', pingTool(), false],
    ['ui without resourceUri', { ...pingTool(), ui: { visibility: ['model', 'app'] } }, false],
  ])('hasApp: %s', (_name, tool, want) => {
    expect(hasApp(tool)).toBe(want);
  });

  /** An App renderer recording what it drew and what it tore down. */
  function recordingRenderer() {
    const log: string[] = [];
    const drawn: Array<{ container: HTMLElement; app: TestCallApp }> = [];
    const renderApp = (container: HTMLElement, app: TestCallApp) => {
      drawn.push({ container, app });
      const frame = document.createElement('iframe');
      frame.title = `App ${app.toolName}`;
      container.append(frame);
      log.push(`draw ${app.toolName} ${JSON.stringify(app.input)}`);
      return () => {
        frame.remove();
        log.push(`teardown ${app.toolName}`);
      };
    };
    return { log, drawn, renderApp };
  }

  test('a tool with an interface shows its App below the result (input and outcome given); a new call draws it again; another tool tears it down', async () => {
    const r = recordingRenderer();
    const user = userEvent.setup();
    const result = toolResult({ textBlocks: [{ index: 0, text: 'board of 3' }] });
    renderDialog({
      discover: () => Promise.resolve(found([boardTool(), pingTool()])),
      testCall: () => Promise.resolve(result),
      renderApp: r.renderApp,
    });
    await screen.findByRole('option', { name: 'show_board' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'show_board');
    await user.type(screen.getByLabelText(/size/), '3');
    expect(r.log).toEqual([]); // nothing before a call
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    expect(await screen.findByText('board of 3')).toBeTruthy();
    await waitFor(() => expect(r.log).toEqual(['draw show_board {"size":3}']));
    const [first] = r.drawn;
    expect(first?.app).toEqual({ registrationId: SERVER_ID, serverDisplayName: 'Local tools', toolName: 'show_board', input: { size: 3 }, result });
    // drawn in the console, after the result
    const box = screen.getByTestId('test-call-app');
    expect(first?.container).toBe(box);
    expect(within(box).getByTitle('App show_board')).toBeTruthy();
    expect(screen.getByText('board of 3').compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() => expect(r.log).toEqual(['draw show_board {"size":3}', 'teardown show_board', 'draw show_board {"size":3}']));

    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await waitFor(() => expect(r.log.at(-1)).toBe('teardown show_board'));
    expect(screen.queryByTestId('test-call-app')).toBeNull();
  });

  test.each<[string, McpDiscoveredTool, McpTestCallOutcome]>([
    ['a tool without an interface', pingTool(), toolResult({ textBlocks: [{ index: 0, text: 'pong' }] })],
    ['an interface nobody may see', { ...boardTool([]), nativeName: 'ping', id: `mcp/${SERVER_ID}:ping` }, toolResult()],
    ['a call never sent', { ...boardTool(), nativeName: 'ping', id: `mcp/${SERVER_ID}:ping` }, { outcome: 'not_sent', code: 'mcp.server_paused', message: 'paused' }],
  ])('no App for %s', async (_name, tool, outcome) => {
    const r = recordingRenderer();
    const user = userEvent.setup();
    renderDialog({ discover: () => Promise.resolve(found([tool])), testCall: () => Promise.resolve(outcome), renderApp: r.renderApp });
    await screen.findByRole('option', { name: 'ping' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'ping');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() => expect(document.querySelector('.tt-mcp-test-call section h4')).toBeTruthy()); // the outcome is shown
    expect(r.log).toEqual([]);
    expect(screen.queryByTestId('test-call-app')).toBeNull();
  });

  test('closing the console tears its App down', async () => {
    installSillyTavern();
    const r = recordingRenderer();
    const opened = openTestCallDialog(
      deps({
        discover: () => Promise.resolve(found([boardTool()])),
        testCall: () => Promise.resolve(toolResult({ textBlocks: [{ index: 0, text: 'board' }] })),
        renderApp: r.renderApp,
      }),
      englishTr,
    );
    const popup = currentPopup();
    const user = userEvent.setup();
    await screen.findByRole('option', { name: 'show_board' });
    await user.selectOptions(screen.getByLabelText('Tool'), 'show_board');
    await user.click(screen.getByRole('button', { name: 'Run test' }));
    await waitFor(() => expect(r.log).toEqual(['draw show_board {}']));
    expect(await popup.close(1)).toBe(true);
    await opened;
    await waitFor(() => expect(r.log).toEqual(['draw show_board {}', 'teardown show_board']));
  });
});
