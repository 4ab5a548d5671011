import { describe, expect, test } from 'vitest';
import { installSillyTavern } from '../../../test/fakes';
import { TestPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { askApproval, FOLD_AT, foldArguments, type ApprovalRequest } from './approval';

const req: ApprovalRequest = { serverDisplayName: 'Demo', toolTitle: 'Echo', nativeName: 'echo', argumentsJson: '{"text":"hi","n":9007199254740993}' };

async function shown(): Promise<TestPopup> {
  for (let i = 0; i < 50 && !TestPopup.current; i++) await new Promise((r) => setTimeout(r, 0));
  if (!TestPopup.current) throw new Error('no popup shown');
  return TestPopup.current;
}

describe('the Ask prompt', () => {
  test('shows the server, the tool and the pretty arguments; each button answers', async () => {
    installSillyTavern();
    for (const [button, answer] of [['Allow once', 'once'], ['Always allow', 'always'], ['Deny', 'denied']] as const) {
      const pending = askApproval(req, new AbortController().signal, englishTr);
      const popup = await shown();
      const text = popup.content.textContent ?? '';
      expect(text).toContain('Allow this MCP tool call?');
      expect(popup.content.querySelector('.tt-mcp-approval-server')?.textContent).toBe('Demo');
      expect(popup.content.querySelector('.tt-mcp-approval-tool')?.textContent).toBe('Echo echo');
      expect(popup.content.querySelector('.tt-mcp-approval-args')?.textContent).toBe('{\n  "text": "hi",\n  "n": 9007199254740993\n}');
      popup.buttonNamed(button).click();
      expect(await pending).toBe(answer);
    }
  });

  test('Escape, Stop and a page without Popup deny', async () => {
    installSillyTavern();
    const escaped = askApproval(req, new AbortController().signal, englishTr);
    await (await shown()).close(null);
    expect(await escaped).toBe('denied');

    const stop = new AbortController();
    const stopped = askApproval(req, stop.signal, englishTr);
    const popup = await shown();
    stop.abort();
    expect(await stopped).toBe('denied');
    expect(popup.closed).toBe(true);

    installSillyTavern({ popup: false });
    expect(await askApproval(req, new AbortController().signal, englishTr)).toBe('denied');
  });

  test('long values are folded, with the whole arguments one click away', async () => {
    const long = 'x'.repeat(FOLD_AT + 40);
    const folded = foldArguments(JSON.stringify({ a: long, b: [long], c: 1 }), (n) => `(+${n})`);
    expect(folded.folded).toBe(true);
    expect(folded.text).toBe(JSON.stringify({ a: `${'x'.repeat(FOLD_AT)}… (+40)`, b: [`${'x'.repeat(FOLD_AT)}… (+40)`], c: 1 }, null, 2));
    expect(foldArguments('not json', () => '')).toEqual({ text: 'not json', folded: false });
    // Re-indented, never re-encoded: escapes, numbers and empty containers stay as sent.
    const exact = '{"a":"q\\"uote","n":1.50,"e":[],"o":{},"big":-9007199254740993e0,"nested":[{"k":[1,2]}]}';
    expect(foldArguments(exact, () => '').text).toBe(
      '{\n  "a": "q\\"uote",\n  "n": 1.50,\n  "e": [],\n  "o": {},\n  "big": -9007199254740993e0,\n  "nested": [\n    {\n      "k": [\n        1,\n        2\n      ]\n    }\n  ]\n}',
    );

    installSillyTavern();
    const pending = askApproval({ ...req, argumentsJson: JSON.stringify({ a: long }) }, new AbortController().signal, englishTr);
    const popup = await shown();
    const all = popup.content.querySelectorAll('.tt-mcp-approval-args');
    expect(all).toHaveLength(2);
    expect(all[1]?.textContent).toBe(JSON.stringify({ a: long }, null, 2));
    expect(all[0]?.textContent).toBe(`{\n  "a": "${'x'.repeat(FOLD_AT)}… (40 more characters)"\n}`);
    expect(popup.content.querySelector('summary')?.textContent).toBe('Show all arguments');
    popup.buttonNamed('Deny').click();
    await pending;
  });
});
