// A kept result opened from Recent calls: what it says of what the model read.

import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import type { McpResultsApi } from '../../../../jsapi/tauritavern-mcp';
import { installSillyTavern } from '../../../test/fakes';
import { currentPopup } from '../../../test/popup-double';
import { englishTr } from '../../base/texts';
import { openResultDialog } from './result-dialog';

test('the summary claims no more than the page knows: the model was given the start, and could read on only through the reader (walked in SillyTavern 1.18.0)', async () => {
  installSillyTavern();
  const results = {
    read: async () => ({ resultId: 'r-1', registrationId: 'x', storedAt: '2026-12-01T00:00:00Z', charCount: 120_000, totalLines: 3, startLine: 1, endLine: 3, text: 'a\nb\nc' }),
  } as unknown as McpResultsApi;
  const closed = openResultDialog(results, 'r-1', englishTr);
  const summary = await screen.findByText(/120,000 characters, 3 lines/);
  expect(summary.textContent).toContain('the model was given the start of it, and could read on only through ttmcp_read_result');
  expect(summary.textContent).not.toContain('read a preview');
  await currentPopup().close(1);
  await closed;
});
