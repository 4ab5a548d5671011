// The plural rule: tr('<base>', { count }) takes the form the page's
// language selects (Intl.PluralRules), the locale's text for it, and
// English's form by English's rules where the locale has none.

import { describe, expect, test } from 'vitest';
import { createTr, englishTr, isPluralKey, pluralCategory, type Translate } from './texts';

/** SillyTavern's translate over one locale's data: the key's text, else the fallback. */
function translateWith(data: Record<string, string>): Translate {
  return (fallback, key) => (key && key in data ? data[key]! : fallback);
}

const zh = {
  'mcp_manager.tool_count_other': '{count} 个工具',
  'mcp_manager.server_count_other': '{count} 个服务器',
  'mcp_manager.reach_ready': 'MCP 工具可供模型使用：下一次生成将提供来自 {servers}的 {tools}。',
};

describe('plural texts', () => {
  test.each([
    [0, '0 tools'],
    [1, '1 tool'],
    [2, '2 tools'],
    [21, '21 tools'],
    [1.5, '1.5 tools'],
  ])('English: %s → %s', (count, want) => {
    expect(englishTr('tool_count', { count })).toBe(want);
  });

  test('the reach line reads right for 1 and n, in English and Chinese', () => {
    const line = (tr: typeof englishTr, tools: number, servers: number) =>
      tr('reach_ready', { tools: tr('tool_count', { count: tools }), servers: tr('server_count', { count: servers }) });
    expect(line(englishTr, 2, 1)).toBe('MCP tools reach the model: the next generation offers 2 tools from 1 server.');
    expect(line(englishTr, 1, 1)).toBe('MCP tools reach the model: the next generation offers 1 tool from 1 server.');
    expect(line(englishTr, 5, 3)).toBe('MCP tools reach the model: the next generation offers 5 tools from 3 servers.');
    const zhTr = createTr(() => translateWith(zh), () => 'zh-cn');
    expect(line(zhTr, 1, 1)).toBe('MCP 工具可供模型使用：下一次生成将提供来自 1 个服务器的 1 个工具。');
    expect(line(zhTr, 5, 3)).toBe('MCP 工具可供模型使用：下一次生成将提供来自 3 个服务器的 5 个工具。');
  });

  test('a locale without the text falls back to English, by English’s rules', () => {
    // zh selects "other" for 1; with no Chinese text the English "one" form is shown
    const bare = createTr(() => translateWith({}), () => 'zh-cn');
    expect(bare('tool_count', { count: 1 })).toBe('1 tool');
    // Russian selects "few" for 3: no such form anywhere, English's "other"
    expect(createTr(() => translateWith({}), () => 'ru-ru')('tool_count', { count: 3 })).toBe('3 tools');
    // a language Intl does not know, or none: English's rules
    expect(createTr(() => undefined, () => 'not a language!')('tool_count', { count: 1 })).toBe('1 tool');
    expect(pluralCategory(undefined, 1)).toBe('one');
    expect(pluralCategory('zh-tw', 1)).toBe('other');
    expect(pluralCategory('en', 2)).toBe('other');
  });

  test('a locale’s own forms: each category its language selects', () => {
    const pl = createTr(
      () =>
        translateWith({
          'mcp_manager.tool_count_one': '{count} narzędzie',
          'mcp_manager.tool_count_few': '{count} narzędzia',
          'mcp_manager.tool_count_many': '{count} narzędzi',
        }),
      () => 'pl',
    );
    expect([1, 2, 5, 22].map((count) => pl('tool_count', { count }))).toEqual(['1 narzędzie', '2 narzędzia', '5 narzędzi', '22 narzędzia']);
  });

  test('which keys are plural', () => {
    expect(isPluralKey('tool_count')).toBe(true);
    expect(isPluralKey('tool_count_one')).toBe(false);
    expect(isPluralKey('servers_count')).toBe(false);
  });
});
