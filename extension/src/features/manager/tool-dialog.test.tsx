import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test } from 'vitest';
import type { ToolDescriptionOverride } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern, searchTool } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { nextOverride, openToolDialog } from './tool-dialog';

describe('tool description dialog', () => {
  test('keeps property overrides and whitespace; whitespace-only removes the description; nothing left saves null', async () => {
    installSillyTavern();
    const user = userEvent.setup();
    const properties = { query: 'Search terms.' };
    const cases: Array<{ override: ToolDescriptionOverride | undefined; typed: string; expected: ToolDescriptionOverride | null }> = [
      { override: { properties }, typed: '  Only search local files.  ', expected: { description: '  Only search local files.  ', properties } },
      { override: { description: 'Saved text', properties }, typed: '   ', expected: { properties } },
      { override: { description: 'Saved text' } as ToolDescriptionOverride, typed: '', expected: null },
      { override: undefined, typed: 'New', expected: { description: 'New', properties: {} } },
    ];
    for (const { override, typed, expected } of cases) {
      const saved: Array<ToolDescriptionOverride | null> = [];
      const opened = openToolDialog(
        {
          tool: searchTool(),
          override,
          save: (value) => {
            saved.push(value);
            return Promise.resolve();
          },
        },
        englishTr,
      );
      const draft = await screen.findByLabelText<HTMLTextAreaElement>('Custom description');
      expect(draft.value).toBe(override?.description ?? '');
      expect(draft.getAttribute('rows')).toBe('5');
      await waitFor(() => expect(document.activeElement).toBe(draft));
      await user.clear(draft);
      if (typed) await user.type(draft, typed);
      expect(await currentPopup().close(1)).toBe(true);
      await opened;
      expect(saved).toEqual([expected]);
    }
  });

  test('"Reset all customizations" (result 2) saves null; it is offered only when an override exists', async () => {
    installSillyTavern();
    const saved: Array<ToolDescriptionOverride | null> = [];
    const opened = openToolDialog(
      {
        tool: searchTool(),
        override: { description: 'Custom text.', properties: { query: 'Search terms.' } },
        save: (o) => {
          saved.push(o);
          return Promise.resolve();
        },
      },
      englishTr,
    );
    const popup = currentPopup();
    const reset = popup.buttonNamed('Reset all customizations');
    expect(reset.dataset.result).toBe('2');
    // custom buttons come before OK, as SillyTavern places them
    expect([...popup.dlg.querySelectorAll('.popup-controls [role=button]')].map((b) => b.textContent)).toEqual([
      'Reset all customizations',
      'Save',
      'Cancel',
    ]);
    await userEvent.setup().click(reset);
    await opened;
    expect(saved).toEqual([null]);

    void openToolDialog({ tool: searchTool(), override: undefined, save: () => Promise.resolve() }, englishTr);
    expect(() => currentPopup().buttonNamed('Reset all customizations')).toThrow();
  });

  test('a failed save keeps the dialog open with the error; Cancel then closes without saving again', async () => {
    installSillyTavern();
    let attempts = 0;
    const opened = openToolDialog(
      {
        tool: searchTool(),
        override: undefined,
        save: () => {
          attempts++;
          return Promise.reject(new Error('storage is read-only'));
        },
      },
      englishTr,
    );
    const popup = currentPopup();
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Custom description'), 'Custom text');
    expect(await popup.close(1)).toBe(false);
    expect((await within(popup.dlg).findByRole('alert')).textContent).toBe('storage is read-only');
    expect(attempts).toBe(1);
    expect(await popup.close(0)).toBe(true);
    await opened;
    expect(attempts).toBe(1);
  });

  test('shows the title with the native name and the server description', async () => {
    installSillyTavern();
    void openToolDialog({ tool: searchTool(), override: undefined, save: () => Promise.resolve() }, englishTr);
    const dialog = within(currentPopup().dlg);
    expect(dialog.getByRole('heading').textContent).toBe('Search files search');
    expect(dialog.getByText('Server description')).toBeTruthy();
    expect(dialog.getByText('Search local files by name.')).toBeTruthy();
    expect(
      dialog.getByText('Replaces the server description in what the model sees. Leave empty to use the server description.'),
    ).toBeTruthy();
  });

  test('nextOverride', () => {
    expect(nextOverride(undefined, '')).toBeNull();
    expect(nextOverride(undefined, ' x ')).toEqual({ description: ' x ', properties: {} });
    expect(nextOverride({ description: 'a', properties: { p: 'q' } }, '\n')).toEqual({ properties: { p: 'q' } });
  });
});
