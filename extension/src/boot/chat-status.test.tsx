// The chat's status of a model's call (issue 29), as the page host makes
// it: a block just before the input form, the server's progress in it, and
// the last step kept a moment after the call so it is seen.

import { act } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { englishTr } from '../base/texts';
import { CHAT_STATUS_LINGER_MS, pageToolHost } from './model-tools';

beforeEach(() => {
  document.body.innerHTML = '<div id="sheld"><div id="chat"></div><div id="form_sheld"><div id="send_form"><div id="mes_stop"></div></div></div></div>';
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  document.body.innerHTML = '';
});

const statuses = () => [...document.querySelectorAll('.tt-mcp-chat-status')];

describe('the chat status of a model call', () => {
  test('before the input form, with the progress; the last step stays a moment, then it goes', () => {
    const host = pageToolHost(englishTr);
    const status = host.callStatus!('Crawl (Web)');
    const [el] = statuses();
    expect(el?.nextElementSibling?.id).toBe('form_sheld');
    expect(el?.textContent).toContain('Running Crawl (Web)');
    expect(el?.textContent).toContain('Waiting for server…');
    act(() => status.progress({ progress: 2, total: 2, message: 'done crawling', updates: 2 }));
    expect(el?.textContent).toContain('2 of 2');
    expect(el?.textContent).toContain('done crawling');
    status.end();
    expect(statuses()).toHaveLength(1);
    act(() => vi.advanceTimersByTime(CHAT_STATUS_LINGER_MS));
    expect(statuses()).toHaveLength(0);
    expect(document.getElementById('mes_stop')).toBeTruthy();
  });

  test('a call that reported nothing goes at once; the next call replaces one that lingers', () => {
    const host = pageToolHost(englishTr);
    host.callStatus!('Quiet').end();
    expect(statuses()).toHaveLength(0);
    const first = host.callStatus!('First');
    act(() => first.progress({ progress: 1, updates: 1 }));
    first.end();
    host.callStatus!('Second');
    expect(statuses().map((s) => s.textContent?.includes('Running Second'))).toEqual([true]);
  });
});
