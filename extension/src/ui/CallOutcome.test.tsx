// A test call's result with resource links and embedded resources: listed
// with their kind, type and size, each opened in the resource dialog (a
// link by its URI, an embedded one as it came) where the page can.

import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { McpTestCallOutcome } from '../../../jsapi/tauritavern-mcp';
import { englishTr } from '../base/texts';
import { TrContext } from '../base/tr';
import { CallOutcome } from './CallOutcome';
import type { ResourceTarget } from './resource-target';

const outcome: McpTestCallOutcome = {
  outcome: 'known_response',
  response: {
    kind: 'tool_result',
    isError: false,
    textBlocks: [{ index: 0, text: 'Two files.' }],
    diagnostics: [
      { code: 'mcp.call_content_unsupported', message: 'Resource link (12 bytes) is not supported', contentIndex: 1 },
      { code: 'mcp.call_content_unsupported', message: 'Embedded resource content (3 encoded bytes) is not supported', contentIndex: 2 },
    ],
    resources: [
      { index: 1, type: 'resource_link', uri: 'file:///a.md', name: 'a.md', title: 'Notes A', mimeType: 'text/markdown', size: 12 },
      { index: 2, type: 'resource', resource: { type: 'text', uri: 'file:///b.txt', text: 'bee', size: 3 } },
    ],
  },
};

function renderOutcome(open?: (t: ResourceTarget) => void) {
  render(
    <TrContext.Provider value={englishTr}>
      <CallOutcome outcome={outcome} openResource={open} />
    </TrContext.Provider>,
  );
}

describe('a result’s resources', () => {
  test('listed, and opened as a link by URI or as embedded content', async () => {
    const user = userEvent.setup();
    const opened: ResourceTarget[] = [];
    renderOutcome((t) => opened.push(t));
    expect(screen.getByText('2 resources in the result')).toBeTruthy();
    const items = within(screen.getByText('2 resources in the result').nextElementSibling as HTMLElement).getAllByRole('listitem');
    expect(items[0]!.textContent).toContain('Notes A');
    expect(items[0]!.textContent).toContain('file:///a.md');
    expect(items[0]!.textContent).toContain('link');
    expect(items[1]!.textContent).toContain('embedded');
    await user.click(screen.getByRole('button', { name: 'Open Notes A' }));
    await user.click(screen.getByRole('button', { name: 'Open file:///b.txt' }));
    expect(opened).toEqual([
      { kind: 'resource', uri: 'file:///a.md', name: 'a.md', title: 'Notes A', mimeType: 'text/markdown', size: 12 },
      { kind: 'embedded', name: 'file:///b.txt', content: { type: 'text', uri: 'file:///b.txt', text: 'bee', size: 3 } },
    ]);
  });

  test('the "not supported" notes of the listed blocks are not shown beside them; other notes are, as the result\'s notes (walked in SillyTavern 1.18.0)', () => {
    const other = { code: 'mcp.call_content_unsupported', message: 'Audio content is not supported', contentIndex: 3 };
    const response = outcome.outcome === 'known_response' && outcome.response.kind === 'tool_result' ? outcome.response : undefined;
    const withOther: McpTestCallOutcome = { outcome: 'known_response', response: { ...response!, diagnostics: [...response!.diagnostics, other] } };
    render(
      <TrContext.Provider value={englishTr}>
        <CallOutcome outcome={withOther} />
      </TrContext.Provider>,
    );
    expect(screen.getByText('Notes · 1')).toBeTruthy();
    expect(screen.getByText('Audio content is not supported')).toBeTruthy();
    expect(screen.queryByText(/Resource link .* is not supported/)).toBeNull();
    expect(screen.queryByText(/Embedded resource content .* is not supported/)).toBeNull();
    expect(screen.queryByText(/Discovery notes/)).toBeNull();
  });

  test('only notes of listed blocks: no notes section', () => {
    renderOutcome();
    expect(screen.queryByText(/^Notes · /)).toBeNull();
  });

  test('without a way to open them they are only listed', () => {
    renderOutcome();
    expect(screen.getByText('2 resources in the result')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^Open / })).toBeNull();
  });
});
