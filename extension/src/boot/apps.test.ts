import { describe, expect, test } from 'vitest';
import { themeOf } from './apps';

describe('themeOf', () => {
  test.each([
    ['rgb(220, 220, 210)', 'dark'],
    ['rgba(20, 20, 20, 1)', 'light'],
    ['rgb(255 255 255)', 'dark'],
  ] as const)('%s is a %s theme', (color, theme) => {
    expect(themeOf(color)).toBe(theme);
  });
});
