import { describe, expect, test } from 'vitest';
import type { McpPromptMessagesResponse } from '../../../../jsapi/tauritavern-mcp';
import { FakeMcp, installSillyTavern, SERVER_B, SERVER_ID, server, summarize } from '../../../test/fakes';
import { englishTr } from '../../base/texts';
import { COMMAND_NAME, findServer, PromptCatalog, promptArguments, registerPromptCommand, RETRY_MS, runPromptCommand, typingCommand, type PromptCommandHost } from './prompt-command';
import { leftOutText, promptText } from './prompt-text';
import { stChatContext } from '../../host/sillytavern-chat';

const png = 'iVBORw0KGgo=';

function messages(...m: McpPromptMessagesResponse['messages']): McpPromptMessagesResponse {
  return { kind: 'prompt_messages', name: 'p', messages: m, diagnostics: [] };
}

describe('promptText', () => {
  test('user text and embedded text resources become text; everything else is named', () => {
    const r = messages(
      { role: 'user', content: { type: 'text', text: 'Summarize this:' } },
      { role: 'user', content: { type: 'resource', resource: { type: 'text', uri: 'file:///a', text: 'The document.', size: 13 } } },
      { role: 'assistant', content: { type: 'text', text: 'Sure, here is a summary of the document you gave me, in three points.' } },
      { role: 'user', content: { type: 'image', data: png, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'resource', resource: { type: 'blob', uri: 'file:///b.bin', blob: png, mimeType: 'application/octet-stream', size: 8 } } },
      { role: 'user', content: { type: 'resource_link', uri: 'file:///c', name: 'c.md', title: 'Chapter C' } },
      { role: 'user', content: { type: 'audio', data: png, mimeType: 'audio/wav' } },
      { role: 'assistant', content: { type: 'image', data: png, mimeType: 'image/png' } },
    );
    r.diagnostics = [{ code: 'mcp.prompt_message_invalid', message: 'Message 9 was left out: its role `system` is neither user nor assistant', contentIndex: 9 }];
    const out = promptText(r);
    expect(out.text).toBe('Summarize this:\n\nThe document.');
    expect(out.leftOut.map((l) => leftOutText(l, englishTr))).toEqual([
      'An assistant message: “Sure, here is a summary of the document you gave me, in thre…”',
      'An image (image/png).',
      'A binary resource, file:///b.bin.',
      'A link to the resource Chapter C (file:///c); open it in the Manager to attach it.',
      'Audio (audio/wav).',
      'An assistant message.',
      'A message ttmcp could not show (mcp.prompt_message_invalid): Message 9 was left out: its role `system` is neither user nor assistant',
    ]);
  });

  test('a prompt of assistant messages only has no text', () => {
    expect(promptText(messages({ role: 'assistant', content: { type: 'text', text: 'hi' } })).text).toBe('');
  });
});

describe('promptArguments', () => {
  test("every named argument but the command's own and SillyTavern's members; args= JSON first, named ones win", () => {
    expect(
      promptArguments({ server: 'Docs', name: 'summarize', topic: 'x', _scope: {}, _hasUnnamedArgument: false, args: '{"style-guide":"AP","topic":"from json"}' }, englishTr),
    ).toEqual({ 'style-guide': 'AP', topic: 'x' });
    expect(promptArguments({ n: 3, list: ['a', 'b'] }, englishTr)).toEqual({ n: '3', list: 'b' });
  });

  test('args must be a JSON object of strings', () => {
    expect(() => promptArguments({ args: '[1]' }, englishTr)).toThrow('args must be a JSON object of strings: not an object');
    expect(() => promptArguments({ args: '{"a":1}' }, englishTr)).toThrow('args must be a JSON object of strings: a is not a string');
    expect(() => promptArguments({ args: '{' }, englishTr)).toThrow('args must be a JSON object of strings:');
  });
});

describe('findServer', () => {
  const servers = [server('active', { displayName: 'Docs' }), server('active', { id: SERVER_B, displayName: 'docs' })];
  test('by display name, case-insensitively; by id; ambiguity and unknown names explained', () => {
    expect(findServer([servers[0]!], ' DOCS ', englishTr).id).toBe(SERVER_ID);
    expect(findServer(servers, SERVER_B, englishTr).id).toBe(SERVER_B);
    expect(() => findServer(servers, 'Docs', englishTr)).toThrow(`Several MCP servers are named “Docs”; use its id instead: ${SERVER_ID}, ${SERVER_B}.`);
    expect(() => findServer(servers, 'Web', englishTr)).toThrow('No MCP server is named “Web”. Servers: Docs, docs.');
  });
});

function host(mcp: FakeMcp, toasts: string[] = [], now = () => 0): PromptCommandHost {
  return {
    context: stChatContext,
    servers: async () => (await mcp.servers.list()).servers,
    prompts: (id) => mcp.prompts.list(id),
    get: (input) => mcp.prompts.get(input),
    toast: (level, lines, title) => toasts.push(`${level}: ${title}: ${lines.join(" | ")}`),
    now,
    tr: englishTr,
  };
}

describe('runPromptCommand', () => {
  test('gets the prompt with its arguments and returns its user text; what was left out is a toast', async () => {
    const mcp = new FakeMcp([server('active', { displayName: 'Docs' })]);
    mcp.getImpl = (input) =>
      Promise.resolve({
        outcome: 'known_response',
        response: messages(
          { role: 'user', content: { type: 'text', text: `Summarize ${input.arguments?.topic}.` } },
          { role: 'assistant', content: { type: 'text', text: 'OK.' } },
        ),
      });
    const toasts: string[] = [];
    const text = await runPromptCommand(host(mcp, toasts), { server: 'Docs', name: 'summarize', topic: 'tides', _scope: {} });
    expect(text).toBe('Summarize tides.');
    expect(mcp.inputs('getPrompt')).toEqual([{ registrationId: SERVER_ID, name: 'summarize', arguments: { topic: 'tides' } }]);
    expect(toasts).toEqual(['warning: Parts of summarize left out: An assistant message: “OK.”']);
  });

  test('refusals and failures are errors naming the prompt and the server; a prompt without user text too', async () => {
    const mcp = new FakeMcp([server('active', { displayName: 'Docs' })]);
    await expect(runPromptCommand(host(mcp), { server: 'Docs' })).rejects.toThrow('Name a server and a prompt');
    mcp.failNext('getPrompt', Object.assign(new Error('mcp.prompt_argument_missing: the prompt summarize needs topic'), { code: 'mcp.prompt_argument_missing' }));
    await expect(runPromptCommand(host(mcp), { server: 'Docs', name: 'summarize' })).rejects.toThrow(
      'The prompt summarize of Docs could not be got: mcp.prompt_argument_missing: the prompt summarize needs topic',
    );
    mcp.getImpl = () => Promise.resolve({ outcome: 'known_response', response: { kind: 'server_error', code: -32602, message: 'Invalid params' } });
    await expect(runPromptCommand(host(mcp), { server: 'Docs', name: 'summarize' })).rejects.toThrow(
      'The prompt summarize of Docs could not be got: The server answered with an error (-32602): Invalid params',
    );
    mcp.getImpl = () => Promise.resolve({ outcome: 'known_response', response: messages({ role: 'assistant', content: { type: 'text', text: 'only me' } }) });
    await expect(runPromptCommand(host(mcp), { server: 'Docs', name: 'summarize' })).rejects.toThrow('The prompt summarize of Docs has no user text to return.');
  });
});

/** SillyTavern's slash-command classes as far as registration goes (SlashCommand.fromProps keeps the props). */
function slashClasses() {
  const commands: Record<string, Record<string, unknown>> = {};
  class EnumValue {
    constructor(
      public value: string,
      public description: string | null = null,
      public type: string | null = 'enum',
    ) {}
  }
  return {
    commands,
    context: {
      SlashCommandParser: { addCommandObject: (c: Record<string, unknown>) => void (commands[c.name as string] = c), commands },
      SlashCommand: { fromProps: (p: Record<string, unknown>) => ({ ...p }) },
      SlashCommandNamedArgument: { fromProps: (p: Record<string, unknown>) => ({ ...p }) },
      SlashCommandEnumValue: EnumValue,
      ARGUMENT_TYPE: { STRING: 'string', DICTIONARY: 'dictionary' },
    },
  };
}

type Arg = { name: string; isRequired?: boolean; enumProvider?: (executor: unknown, scope: unknown) => Array<{ value: string; description: string | null }> };

describe('registerPromptCommand', () => {
  test('registers /mcp-prompt whose server and name arguments autocomplete from what the page read', async () => {
    const st = slashClasses();
    installSillyTavern({ context: st.context });
    const mcp = new FakeMcp([
      server('active', { displayName: 'Docs', endpoint: 'http://127.0.0.1:3000/mcp' }),
      server('paused', { id: SERVER_B, displayName: 'Asleep' }),
    ]);
    mcp.promptsFor = () => [summarize(), summarize({ name: 'plain', title: undefined, description: 'No arguments.', arguments: [] })];
    let t = 0;
    const h = host(mcp, [], () => t);
    const catalog = new PromptCatalog(h);
    expect(registerPromptCommand(h, catalog)).toBe(true);
    const cmd = st.commands[COMMAND_NAME]!;
    const [serverArg, nameArg, argsArg] = cmd.namedArgumentList as Arg[];
    expect([serverArg!.name, serverArg!.isRequired, nameArg!.name, nameArg!.isRequired, argsArg!.name]).toEqual(['server', true, 'name', true, 'args']);

    // SillyTavern asks synchronously: the first ask reads, the next keystroke has the answer
    expect(serverArg!.enumProvider!({}, {})).toEqual([]);
    await catalog.settled();
    expect(serverArg!.enumProvider!({}, {}).map((v) => [v.value, v.description])).toEqual([['Docs', 'http://127.0.0.1:3000/mcp']]);
    const executor = { namedArgumentList: [{ name: 'server', value: 'docs' }] };
    expect(nameArg!.enumProvider!(executor, {})).toEqual([]);
    await catalog.settled();
    expect(nameArg!.enumProvider!(executor, {}).map((v) => [v.value, v.description])).toEqual([
      ['summarize', 'Summarize · arguments: topic*, style'],
      ['plain', 'No arguments.'],
    ]);
    expect(nameArg!.enumProvider!({ namedArgumentList: [{ name: 'server', value: 'nobody' }] }, {})).toEqual([]);
    // read once per 10 s at most, and again once invalidated
    expect(mcp.count('listPrompts')).toBe(1);
    t = 20_000;
    nameArg!.enumProvider!(executor, {});
    await catalog.settled();
    expect(mcp.count('listPrompts')).toBe(2);
    catalog.invalidate(SERVER_ID);
    nameArg!.enumProvider!(executor, {});
    await catalog.settled();
    expect(mcp.count('listPrompts')).toBe(3);

    const callback = cmd.callback as (named: Record<string, unknown>, unnamed: string) => Promise<string>;
    expect(await callback({ server: 'Docs', name: 'summarize', topic: 'x', _scope: {} }, '')).toBe('Prompt summarize {"topic":"x"}');
    // SillyTavern shows a command's error as HTML: the usage's <server> and <prompt> stay text
    await expect(callback({ _scope: {} }, '')).rejects.toThrow('Name a server and a prompt: /mcp-prompt server=&lt;server&gt; name=&lt;prompt&gt; [argument=value …]');
    await expect(callback({ server: '<b>x</b>', name: 'summarize', _scope: {} }, '')).rejects.toThrow('No MCP server is named “&lt;b&gt;x&lt;/b&gt;”.');
  });

  test('prefetch reads the servers and the prompts of those that offer them, so the first ask has them; a failed read is tried again after a second', async () => {
    const st = slashClasses();
    installSillyTavern({ context: st.context });
    const mcp = new FakeMcp([
      server('active', { displayName: 'Docs' }),
      server('paused', { id: SERVER_B, displayName: 'Asleep' }),
    ]);
    mcp.promptsFor = () => [summarize()];
    let t = 0;
    let down = true;
    const h = host(mcp, [], () => t);
    const catalog = new PromptCatalog({ ...h, servers: () => (down ? Promise.reject(new Error('not loaded')) : h.servers()) });
    registerPromptCommand(h, catalog);
    const [serverArg, nameArg] = st.commands[COMMAND_NAME]!.namedArgumentList as Arg[];

    await catalog.prefetch(); // the API not loaded yet
    down = false;
    t = RETRY_MS - 1;
    await catalog.prefetch();
    expect(serverArg!.enumProvider!({}, {})).toEqual([]); // not again at once
    t = RETRY_MS;
    await catalog.prefetch();
    await catalog.settled();
    expect(serverArg!.enumProvider!({}, {}).map((v) => v.value)).toEqual(['Docs']);
    expect(nameArg!.enumProvider!({ namedArgumentList: [{ name: 'server', value: 'Docs' }] }, {}).map((v) => v.value)).toEqual(['summarize']);
    expect(mcp.count('listPrompts')).toBe(1); // the paused server's were not read
  });

  test('typingCommand: any /mcp command in the input, piped or not', () => {
    expect(['/mcp', '/mcp-prompt server=Docs', '/echo hi | /mcp-prompt', 'Hello', '/send hi'].map(typingCommand)).toEqual([true, true, true, false, false]);
  });

  test('a SillyTavern without the slash-command classes gets no command', () => {
    installSillyTavern({ context: {} });
    expect(registerPromptCommand(host(new FakeMcp()))).toBe(false);
  });
});
