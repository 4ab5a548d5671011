// `make check`'s test of the layer checker itself (the rules in
// ../.dependency-cruiser.cjs): a tree that follows every rule passes, and
// each deliberate break — an upward import per layer, one feature importing
// another, a circle — fails with that rule's name. Run with Node 22 from
// extension/ (dependency-cruiser needs it): node test/layers.check.mjs
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import assert from 'node:assert/strict';

const config = (await import('../.dependency-cruiser.cjs')).default;
const fixture = new URL('./layers/', import.meta.url).pathname;

/** Each break: the file it adds or replaces, and the rule it must trip. */
const breaks = [
  ['base-imports-nothing', 'src/base/texts.ts', "import { host } from '../host/sillytavern';\nexport const base = host;\n"],
  ['host-imports-base-only', 'src/host/sillytavern.ts', "import { alpha } from '../features/alpha/screen';\nexport const host = alpha;\n"],
  ['ui-imports-base-only', 'src/ui/kit.ts', "import { host } from '../host/sillytavern';\nexport const kit = host;\n"],
  ['features-apart', 'src/features/beta/panel.ts', "import { alpha } from '../alpha/screen';\nexport const beta = alpha;\n"],
  ['features-below-boot', 'src/features/beta/panel.ts', "import { start } from '../../boot/start';\nexport const beta = start;\n"],
  ['boot-is-the-top', 'src/ui/kit.ts', "import start from '../index';\nexport const kit = start;\n"],
  ['no-circular', 'src/features/alpha/loop.ts', "import { alpha } from './screen';\nexport const loop = alpha;\n"],
  ['no-unresolvable', 'src/features/beta/panel.ts', "import { gone } from './nowhere';\nexport const beta = gone;\n"],
];

async function violations(tree) {
  const cwd = process.cwd();
  process.chdir(tree);
  try {
    const result = await cruise(['src'], { ruleSet: config, validate: true, ...config.options });
    return result.output.summary.violations.map((v) => v.rule.name);
  } finally {
    process.chdir(cwd);
  }
}

async function withTree(edit, fn) {
  const tree = await mkdtemp(join(tmpdir(), 'ttmcp-layers-'));
  try {
    await cp(fixture, tree, { recursive: true });
    await edit(tree);
    return await fn(tree);
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

let failed = 0;
const clean = await withTree(async () => {}, violations);
if (clean.length > 0) {
  console.error(`layers: the clean fixture breaks ${clean.join(', ')}`);
  failed++;
}
for (const [rule, file, text] of breaks) {
  const got = await withTree(async (tree) => {
    await writeFile(join(tree, file), text);
    if (rule === 'no-circular') await writeFile(join(tree, 'src/features/alpha/screen.ts'), "import { loop } from './loop';\nexport const alpha = loop;\n");
  }, violations);
  try {
    assert.ok(got.includes(rule), `breaking ${rule} in ${file} reported [${got.join(', ')}]`);
    console.log(`layers: ${rule} caught`);
  } catch (err) {
    console.error(`layers: ${err.message}`);
    failed++;
  }
}
if (failed > 0) process.exit(1);
console.log(`layers: ${breaks.length} passed, 0 failed`);
