// The progress of a running call: the bar where total is known (clamped),
// a step where not, the message, and the elapsed time.

import { act, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CallProgress, elapsedText, percentOf, ProgressSummary } from './CallProgress';

afterEach(() => vi.useRealTimers());

describe('call progress', () => {
  test.each([
    [{ progress: 1, total: 4, updates: 1 }, 25],
    [{ progress: 9, total: 4, updates: 1 }, 100],
    [{ progress: -1, total: 4, updates: 1 }, 0],
    [{ progress: 1, updates: 1 }, undefined],
    [{ progress: 1, total: 0, updates: 1 }, undefined],
    [{ progress: Number.NaN, total: 3, updates: 1 }, undefined],
  ])('percentOf(%j) = %j', (p, want) => {
    expect(percentOf(p)).toBe(want);
  });

  test.each([
    [0, '0 s'],
    [59, '59 s'],
    [65, '1:05'],
    [3723, '1:02:03'],
  ])('elapsedText(%d) = %s', (s, want) => {
    expect(elapsedText(s)).toBe(want);
  });

  test('the label, the bar, the message, and the time ticking each second', () => {
    vi.useFakeTimers();
    const startedAt = Date.now();
    const { rerender } = render(<CallProgress progress={undefined} startedAt={startedAt} label="Running Crawl (Web)" />);
    expect(screen.getByText('Running Crawl (Web)')).toBeTruthy();
    expect(screen.getByText('Waiting for server…')).toBeTruthy();
    act(() => vi.advanceTimersByTime(3000));
    expect(screen.getByText('3 s')).toBeTruthy();
    rerender(<CallProgress progress={{ progress: 3, total: 5, message: 'page 3', updates: 3 }} startedAt={startedAt} label="Running Crawl (Web)" />);
    expect(screen.getByText('3 of 5')).toBeTruthy();
    expect(screen.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('60');
    expect(screen.getByText('page 3')).toBeTruthy();
    rerender(<CallProgress progress={{ progress: 3, total: 5, updates: 3 }} startedAt={startedAt} stopping />);
    expect(screen.getByText('Stopping local wait…')).toBeTruthy();
  });

  test('the summary: nothing without updates', () => {
    const { container, rerender } = render(<ProgressSummary updates={undefined} />);
    expect(container.textContent).toBe('');
    rerender(<ProgressSummary updates={1} />);
    expect(container.textContent).toBe('Progress · 1 update');
  });
});
