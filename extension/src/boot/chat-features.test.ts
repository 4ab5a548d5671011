import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import { capabilities, FakeMcp, installSillyTavern, publishHost, server, StChatDouble } from '../../test/fakes';
import { englishTr } from '../base/texts';
import { RESOURCES_MENU_ID, startChatFeatures } from './chat-features';

function page() {
  const st = new StChatDouble();
  const commands: Record<string, { callback: (named: Record<string, unknown>) => Promise<string> }> = {};
  installSillyTavern({
    context: {
      ...st.members,
      SlashCommandParser: { addCommandObject: (c: { name: string }) => void (commands[c.name] = c as never) },
      SlashCommand: { fromProps: (p: object) => p },
      SlashCommandNamedArgument: { fromProps: (p: object) => p },
      SlashCommandEnumValue: class {},
      ARGUMENT_TYPE: { STRING: 'string' },
    },
  });
  const menu = document.createElement('div');
  menu.id = 'extensionsMenu';
  document.body.append(menu);
  const mcp = new FakeMcp([server('active', { displayName: 'Docs', capabilities: capabilities() })]);
  publishHost({ mcp });
  return { st, mcp, commands };
}

describe('startChatFeatures', () => {
  test('the wand menu names the chat’s attachments and opens them; the picker attaches one', async () => {
    const user = userEvent.setup();
    const { st, commands } = page();
    const features = startChatFeatures(englishTr);
    const item = document.getElementById(RESOURCES_MENU_ID)!;
    await waitFor(() => expect(item.textContent).toBe('MCP resources'));
    expect(item.getAttribute('role')).toBe('button');
    expect(item.title).toBe('MCP resources attached to this chat');
    expect(Object.keys(commands)).toEqual(['mcp-prompt']);

    await user.click(item);
    const dialog = await screen.findByRole('dialog');
    const resources = await within(dialog).findByRole('list', { name: 'Resources of Docs' });
    await user.click(within(resources).getByRole('button', { name: 'Attach Read me' }));
    await within(resources).findByRole('status');
    await waitFor(() => expect(item.textContent).toBe('MCP resources · 1 (30 characters)'));
    expect(Object.keys(st.extensionPrompts)).toEqual(['mcp_manager_resource_000']);

    // the Manager's tabs get their deps once the API is there
    expect(features.primitives()).toBeDefined();
    features.unmount();
    expect(document.getElementById(RESOURCES_MENU_ID)).toBeNull();
  });

  test('/mcp-prompt returns the prompt’s text through the published API', async () => {
    const { commands, mcp } = page();
    const features = startChatFeatures(englishTr);
    expect(await commands['mcp-prompt']!.callback({ server: 'Docs', name: 'summarize', topic: 'tides' })).toBe('Prompt summarize {"topic":"tides"}');
    expect(mcp.count('getPrompt')).toBe(1);
    features.unmount();
  });

  test('typing an /mcp command in the chat input reads the autocomplete’s lists ahead', async () => {
    const { mcp } = page();
    const box = document.createElement('textarea');
    box.id = 'send_textarea';
    document.body.append(box);
    const features = startChatFeatures(englishTr);
    const type = (text: string) => {
      box.value = text;
      box.dispatchEvent(new Event('input', { bubbles: true }));
    };
    type('Hello');
    await new Promise((r) => setTimeout(r, 20));
    expect(mcp.count('listPrompts')).toBe(0);
    type('/mcp');
    await waitFor(() => expect(mcp.count('listPrompts')).toBe(1));
    type('/mcp-prompt');
    await new Promise((r) => setTimeout(r, 20));
    expect(mcp.count('listPrompts')).toBe(1); // read within the last 10 s
    // a registration changed anywhere: read again
    window.dispatchEvent(new CustomEvent('tauritavern-mcp:event', { detail: { event: 'servers_changed', data: { registrationId: 'x', lists: ['registration'] } } }));
    type('/mcp-prompt ');
    await waitFor(() => expect(mcp.count('listPrompts')).toBe(2));
    features.unmount();
    box.remove();
  });

  test('without ttmcp’s API the tabs have no deps and the command says the API is not loaded', async () => {
    const { commands } = page();
    publishHost({});
    const features = startChatFeatures(englishTr);
    expect(features.primitives()).toBeUndefined();
    await expect(commands['mcp-prompt']!.callback({ server: 'Docs', name: 'x' })).rejects.toThrow(
      'The MCP host API with resources and prompts is not loaded yet.',
    );
    features.unmount();
  });
});
