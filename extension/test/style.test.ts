// The stylesheet is plain CSS that SillyTavern links as it is: every style
// rule is closed before the next begins. An unclosed rule is no syntax
// error to a browser that knows CSS nesting — every rule after it silently
// becomes a descendant rule and stops matching (the stdio and sign-in
// styles once did) — so the structure is checked here.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = join(fileURLToPath(import.meta.url), '..', '..');

/** The problems of css's block structure: unbalanced braces, and style rules nested in style rules. */
function structureProblems(css: string): string[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  const problems: string[] = [];
  const open: Array<{ at: boolean; line: number }> = [];
  let line = 1;
  let prelude = '';
  for (const ch of text) {
    if (ch === '\n') line++;
    if (ch === '{') {
      const at = prelude.trim().startsWith('@');
      const parent = open[open.length - 1];
      if (parent && !parent.at) problems.push(`line ${line}: a rule inside the rule opened on line ${parent.line}`);
      open.push({ at, line });
      prelude = '';
    } else if (ch === '}') {
      if (!open.pop()) problems.push(`line ${line}: a } that closes nothing`);
      prelude = '';
    } else if (ch === ';') {
      prelude = '';
    } else {
      prelude += ch;
    }
  }
  for (const b of open) problems.push(`line ${b.line}: a block never closed`);
  return problems;
}

test('the checker finds an unclosed rule and a nested one', () => {
  expect(structureProblems('.a { color: red; }\n@media (x) { .b { color: red; } }')).toEqual([]);
  expect(structureProblems('.a {\n color: red;\n.b { color: red; }\n}')).toEqual(['line 3: a rule inside the rule opened on line 1']);
  expect(structureProblems('.a { color: red;')).toEqual(['line 1: a block never closed']);
  expect(structureProblems('.a { } }')).toEqual(['line 1: a } that closes nothing']);
});

test('style.css closes every rule and nests none', () => {
  expect(structureProblems(readFileSync(join(root, 'style.css'), 'utf8'))).toEqual([]);
});
