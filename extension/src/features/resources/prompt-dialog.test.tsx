import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { GetMcpPromptInput, McpPromptGetOutcome } from '../../../../jsapi/tauritavern-mcp';
import { SERVER_ID, summarize } from '../../../test/fakes';
import { putInInputBox } from '../../host/input-box';
import { PromptDialog, type PromptDialogDeps } from './prompt-dialog';

const png = 'iVBORw0KGgo=';

function richAnswer(name: string, args: Record<string, string>): McpPromptGetOutcome {
  return {
    outcome: 'known_response',
    response: {
      kind: 'prompt_messages',
      name,
      description: 'A summary prompt',
      messages: [
        { role: 'user', content: { type: 'text', text: `Summarize ${args.topic}.` } },
        { role: 'assistant', content: { type: 'text', text: 'Which length?' } },
        { role: 'user', content: { type: 'image', data: png, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'resource', resource: { type: 'text', uri: 'file:///notes.md', mimeType: 'text/markdown', text: 'Notes on tides.', size: 15 } } },
        { role: 'user', content: { type: 'resource_link', uri: 'file:///more.md', name: 'more.md', description: 'More notes', mimeType: 'text/markdown', size: 2048 } },
      ],
      diagnostics: [],
    },
  };
}

function renderDialog(deps: Partial<PromptDialogDeps> = {}, prompt = summarize()) {
  const gets: GetMcpPromptInput[] = [];
  const props: PromptDialogDeps = {
    server: { id: SERVER_ID, displayName: 'Docs' },
    get: (name, args) => {
      gets.push({ registrationId: SERVER_ID, name, arguments: args });
      return Promise.resolve(richAnswer(name, args));
    },
    ...deps,
  };
  render(<PromptDialog {...props} prompt={prompt} />);
  return gets;
}

describe('PromptDialog', () => {
  test('its arguments, required ones marked and checked before anything is sent', async () => {
    const user = userEvent.setup();
    const gets = renderDialog();
    expect(screen.getByRole('heading').textContent).toBe('Summarize summarize');
    expect(screen.getByText('Summarize a topic.')).toBeTruthy();
    const topic = screen.getByRole('textbox', { name: /^topic/ });
    expect(topic.getAttribute('aria-required')).toBe('true');
    expect(screen.getByRole('textbox', { name: 'style' }).getAttribute('aria-required')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    expect(topic.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(topic.getAttribute('aria-describedby')!.split(' ').at(-1)!)!.textContent).toBe('Required.');
    expect(gets).toEqual([]);
    await user.type(topic, 'tides');
    expect(topic.getAttribute('aria-invalid')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    await screen.findByText('Summarize tides.');
    // an argument left empty is not sent
    expect(gets).toEqual([{ registrationId: SERVER_ID, name: 'summarize', arguments: { topic: 'tides' } }]);
  });

  test('the messages by role, each block as it is', async () => {
    const user = userEvent.setup();
    const opened: string[] = [];
    renderDialog({ openLink: (uri) => opened.push(uri) });
    await user.type(screen.getByRole('textbox', { name: /^topic/ }), 'tides');
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    const region = await screen.findByRole('region', { name: 'The prompt’s messages' });
    const items = within(region).getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('.tt-mcp-role')!.textContent)).toEqual(['User', 'Assistant', 'User', 'User', 'User']);
    expect(within(items[2]!).getByRole('img', { name: 'Image (image/png)' })).toBeTruthy();
    expect(within(items[3]!).getByText('Notes on tides.')).toBeTruthy();
    expect(items[4]!.textContent).toBe('Usermore.mdfile:///more.mdMore notestext/markdown2.0 KiBOpen');
    await user.click(within(items[4]!).getByRole('button', { name: 'Open linked resource more.md' }));
    expect(opened).toEqual(['file:///more.md']);
    expect(within(region).getByText('A summary prompt')).toBeTruthy();
  });

  test('Put in the input box: the user text, after what was typed; what was left out is said', async () => {
    const user = userEvent.setup();
    const box = document.createElement('textarea');
    box.id = 'send_textarea';
    box.value = 'Please: ';
    document.body.append(box);
    let inputs = 0;
    box.addEventListener('input', () => inputs++);
    renderDialog({ putInInputBox: (t) => putInInputBox(t) });
    await user.type(screen.getByRole('textbox', { name: /^topic/ }), 'tides');
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    const put = await screen.findByRole('region', { name: 'Put in the input box' });
    expect([...within(put).getAllByRole('listitem')].map((li) => li.textContent)).toEqual([
      'An assistant message: “Which length?”',
      'An image (image/png).',
      'A link to the resource more.md (file:///more.md); open it in the Manager to attach it.',
    ]);
    expect(within(put).getByText('Only the prompt’s user text becomes text; 3 parts are left out:')).toBeTruthy();
    await user.click(within(put).getByRole('button', { name: 'Put in the input box' }));
    expect(box.value).toBe('Please:\n\nSummarize tides.\n\nNotes on tides.');
    expect(inputs).toBe(1);
    expect(document.activeElement).toBe(box);
    expect(within(put).getByRole('status').textContent).toBe('Put 33 characters in the input box.');
  });

  test('a page without the input box says so', async () => {
    const user = userEvent.setup();
    renderDialog({ putInInputBox: (t) => putInInputBox(t) });
    await user.type(screen.getByRole('textbox', { name: /^topic/ }), 'x');
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    await user.click(await screen.findByRole('button', { name: 'Put in the input box' }));
    expect(screen.getByRole('alert').textContent).toBe('This page has no chat input box.');
  });

  test('completion suggestions for an argument, with the other arguments as context', async () => {
    const user = userEvent.setup();
    const asked: Array<[string, string, string, Record<string, string>]> = [];
    renderDialog(
      {
        complete: (prompt, name, value, context) => {
          asked.push([prompt, name, value, context]);
          return Promise.resolve(name === 'style' ? ['brief', 'bullet points'].filter((v) => v.startsWith(value)) : []);
        },
      },
    );
    await user.type(screen.getByRole('combobox', { name: /^topic/ }), 'tides');
    await user.type(screen.getByRole('combobox', { name: 'style' }), 'b');
    await waitFor(() => expect(asked.at(-1)).toEqual(['summarize', 'style', 'b', { topic: 'tides' }]));
    const list = document.getElementById(screen.getByRole('combobox', { name: 'style' }).getAttribute('list')!)!;
    await waitFor(() => expect([...list.querySelectorAll('option')].map((o) => o.value)).toEqual(['brief', 'bullet points']));
    expect(list.getAttribute('aria-label')).toBe('Suggestions for style');
  });

  test('a server error is shown as one; a prompt without arguments says so', async () => {
    const user = userEvent.setup();
    renderDialog({ get: () => Promise.resolve({ outcome: 'known_response', response: { kind: 'server_error', code: -32602, message: 'Unknown prompt' } }) }, summarize({ arguments: [] }));
    expect(screen.getByText('This prompt takes no arguments.')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Get prompt' }));
    expect(await screen.findByText('Server error')).toBeTruthy();
    expect(screen.getByText('Unknown prompt')).toBeTruthy();
    expect(screen.getByText('Code -32602')).toBeTruthy();
  });
});
