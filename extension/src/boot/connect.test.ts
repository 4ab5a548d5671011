// What the not-running panel says of a loader that would not import.

import { describe, expect, test } from 'vitest';
import { importFailure } from './connect';

describe('importFailure', () => {
  test.each([
    ['Chromium', new TypeError('Failed to fetch dynamically imported module: http://127.0.0.1:7878/jsapi/tauritavern-mcp.js')],
    ['Firefox', new TypeError('error loading dynamically imported module: http://127.0.0.1:7878/jsapi/tauritavern-mcp.js')],
    ['Safari', new TypeError('Importing a module script failed.')],
  ])('%s’s words for an unreachable module add nothing to the panel’s own', (_, err) => {
    expect(importFailure(err)).toBe('');
  });

  test('any other failure is said as the browser said it', () => {
    expect(importFailure(new SyntaxError("Unexpected token '<'"))).toBe("Unexpected token '<'");
  });
});
