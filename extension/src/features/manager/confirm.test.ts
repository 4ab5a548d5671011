// Which endpoints get the unencrypted-HTTP warning: plain http: to a host
// that is not this machine.

import { describe, expect, test } from 'vitest';
import { isExposedHttp, isLoopbackHost } from './confirm';

describe('isExposedHttp', () => {
  test.each([
    // loopback: the traffic never leaves the machine
    ['http://127.0.0.1:7879/mcp', false],
    ['http://127.1.2.3/mcp', false],
    ['http://127.1/mcp', false], // URL writes it 127.0.0.1
    ['http://2130706433/mcp', false], // 127.0.0.1 as a number
    ['http://localhost:3000/mcp', false],
    ['http://LOCALHOST./mcp', false],
    ['http://mcp.localhost:3000/mcp', false],
    ['http://[::1]:3000/mcp', false],
    ['http://[::ffff:127.0.0.1]/mcp', false],
    ['https://mcp.example.com/mcp', false],
    ['https://192.168.1.20/mcp', false],
    // another machine over plain HTTP
    ['http://192.168.1.20:3000/mcp', true],
    ['http://10.0.0.2/mcp', true],
    ['http://128.0.0.1/mcp', true],
    ['http://mcp.example.com/mcp', true],
    ['http://localhost.example.com/mcp', true],
    ['http://[::2]/mcp', true],
    ['http://[::ffff:10.0.0.1]/mcp', true],
    ['http://0.0.0.0:3000/mcp', true],
    ['HTTP://example.com/mcp', true],
  ])('%s → %s', (endpoint, exposed) => {
    expect(isExposedHttp(endpoint)).toBe(exposed);
  });

  test('a hostname as URL writes it', () => {
    expect(isLoopbackHost(new URL('http://[0:0:0:0:0:0:0:1]/').hostname)).toBe(true);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);
    expect(isLoopbackHost('')).toBe(false);
  });
});
