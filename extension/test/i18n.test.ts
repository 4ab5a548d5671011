// The locale files cover exactly the texts the code uses: every key of
// TEXTS is used by the code, each locale has each key (and no other), with
// the same {placeholders} as the English text.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import manifest from '../manifest.json';
import { KEY_PREFIX, TEXTS } from '../src/texts';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const keys = Object.keys(TEXTS);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && name !== 'texts.ts' ? [path] : [];
  });
}

const code = sources(join(root, 'src'))
  .map((p) => readFileSync(p, 'utf8'))
  .join('\n');

/** Keys written literally ('key' / "key") or reached through a template prefix (`permission_${p}`). */
function usedInCode(key: string): boolean {
  if (code.includes(`'${key}'`) || code.includes(`"${key}"`)) return true;
  for (const m of code.matchAll(/`([a-z_]+)\$\{/g)) {
    if (m[1] && key.startsWith(m[1])) return true;
  }
  return false;
}

function placeholders(text: string): string[] {
  return [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();
}

describe('texts', () => {
  test('every text is used by the code', () => {
    expect(keys.filter((k) => !usedInCode(k))).toEqual([]);
  });

  test('the manifest names both locale files', () => {
    expect(manifest.i18n).toEqual({ 'zh-cn': 'i18n/zh-cn.json', 'zh-tw': 'i18n/zh-tw.json' });
  });

  for (const locale of ['zh-cn', 'zh-tw'] as const) {
    describe(locale, () => {
      const data = JSON.parse(readFileSync(join(root, 'i18n', `${locale}.json`), 'utf8')) as Record<string, unknown>;

      test('has every key the code uses and no other', () => {
        const expected = keys.map((k) => KEY_PREFIX + k).sort();
        const present = Object.keys(data).sort();
        expect({ missing: expected.filter((k) => !(k in data)), unused: present.filter((k) => !expected.includes(k)) }).toEqual({
          missing: [],
          unused: [],
        });
      });

      test('translates each text with the same placeholders', () => {
        const problems: string[] = [];
        for (const key of keys) {
          const text = data[KEY_PREFIX + key];
          const english = TEXTS[key as keyof typeof TEXTS];
          if (typeof text !== 'string' || text.trim() === '') problems.push(`${key}: empty`);
          else if (placeholders(text).join() !== placeholders(english).join()) problems.push(`${key}: placeholders differ`);
          else if (text === english && /[a-z]{3}/.test(english.replace(/\{\w+\}|MCP|JSON|ttmcp|stdio/g, ''))) {
            problems.push(`${key}: not translated`);
          }
        }
        expect(problems).toEqual([]);
      });
    });
  }

  test('zh-cn is Simplified and zh-tw Traditional', () => {
    const cn = readFileSync(join(root, 'i18n', 'zh-cn.json'), 'utf8');
    const tw = readFileSync(join(root, 'i18n', 'zh-tw.json'), 'utf8');
    // characters whose Simplified and Traditional forms differ
    const simplified = '务设连载删试调数据择认视启种类网';
    const traditional = '務設連載刪試調數據擇認視啟種類網';
    for (let i = 0; i < simplified.length; i++) {
      const s = simplified[i]!;
      const t = traditional[i]!;
      if (s === t) continue;
      expect(tw.includes(s), `zh-tw contains Simplified ${s}`).toBe(false);
      expect(cn.includes(t), `zh-cn contains Traditional ${t}`).toBe(false);
    }
  });
});
