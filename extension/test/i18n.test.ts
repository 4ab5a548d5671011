// The locale files cover exactly the texts the code uses: every key of
// TEXTS is used by the code, each locale has each key (and no other), with
// the same {placeholders} as the English text. A plural text (`<base>_one`,
// `<base>_other`, …) is used through its base, and a locale has the forms
// its language's plural rules select (Chinese: `<base>_other` only).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import manifest from '../manifest.json';
import { KEY_PREFIX, PLURAL_CATEGORIES, TEXTS } from '../src/base/texts';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const keys = Object.keys(TEXTS);
const forms = new RegExp(`^(.+)_(${PLURAL_CATEGORIES.join('|')})$`);

/** The base of a plural form (`tool_count` of `tool_count_one`), or undefined. */
function pluralBase(key: string): string | undefined {
  const m = forms.exec(key);
  return m?.[1] !== undefined && `${m[1]}_other` in TEXTS ? m[1] : undefined;
}

/** The keys a locale must have: the plain texts, and each plural text's forms in its language. */
function localeKeys(locale: string): string[] {
  const categories = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
  const bases = new Set(keys.map(pluralBase).filter((b) => b !== undefined));
  return [
    ...keys.filter((k) => pluralBase(k) === undefined),
    ...[...bases].flatMap((b) => categories.map((c) => `${b}_${c}`)),
  ].sort();
}

/** The English text a locale's key translates (a form English lacks: its other form). */
function english(key: string): string {
  const base = pluralBase(key);
  const t = (TEXTS as Record<string, string>)[key];
  return t ?? (TEXTS as Record<string, string>)[`${base}_other`] ?? '';
}

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

/** Keys written literally ('key' / "key"; a plural form: its base) or reached through a template prefix (`permission_${p}`). */
function usedInCode(key: string): boolean {
  const base = pluralBase(key);
  if (base !== undefined) return code.includes(`'${base}'`) || code.includes(`"${base}"`);
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

  test('every plural text has the forms English selects, with the same placeholders', () => {
    const problems: string[] = [];
    for (const base of new Set(keys.map(pluralBase).filter((b) => b !== undefined))) {
      for (const c of new Intl.PluralRules('en').resolvedOptions().pluralCategories) {
        const t = (TEXTS as Record<string, string>)[`${base}_${c}`];
        if (t === undefined) problems.push(`${base}_${c}: missing`);
        else if (placeholders(t).join() !== placeholders(english(`${base}_other`)).join()) problems.push(`${base}_${c}: placeholders differ`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('the manifest names both locale files', () => {
    expect(manifest.i18n).toEqual({ 'zh-cn': 'i18n/zh-cn.json', 'zh-tw': 'i18n/zh-tw.json' });
  });

  for (const locale of ['zh-cn', 'zh-tw'] as const) {
    describe(locale, () => {
      const data = JSON.parse(readFileSync(join(root, 'i18n', `${locale}.json`), 'utf8')) as Record<string, unknown>;

      test('has every key the code uses and no other', () => {
        const expected = localeKeys(locale).map((k) => KEY_PREFIX + k);
        const present = Object.keys(data).sort();
        expect({ missing: expected.filter((k) => !(k in data)), unused: present.filter((k) => !expected.includes(k)) }).toEqual({
          missing: [],
          unused: [],
        });
      });

      test('translates each text with the same placeholders', () => {
        const problems: string[] = [];
        for (const key of localeKeys(locale)) {
          const text = data[KEY_PREFIX + key];
          const en = english(key);
          if (typeof text !== 'string' || text.trim() === '') problems.push(`${key}: empty`);
          else if (placeholders(text).join() !== placeholders(en).join()) problems.push(`${key}: placeholders differ`);
          else if (text === en && /[a-z]{3}/.test(en.replace(/\{\w+\}|MCP|JSON|ttmcp|stdio/g, ''))) {
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
