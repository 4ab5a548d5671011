// Bundles src/index.tsx (React included) into dist/index.bundle.js: one
// self-contained ES module, as SillyTavern loads it with
// <script type="module">. `node build.mjs` (run by `make extension`).
import { build } from 'esbuild';
import { statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

const outfile = 'dist/index.bundle.js';
await build({
  entryPoints: ['src/index.tsx'],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  jsx: 'automatic',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
const size = statSync(outfile).size;
const gz = gzipSync(readFileSync(outfile)).length;
console.log(`${outfile}: ${(size / 1024).toFixed(1)} KiB (${(gz / 1024).toFixed(1)} KiB gzip)`);
