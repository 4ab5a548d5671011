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
// MCP Apps' host protocol (AppBridge of @modelcontextprotocol/ext-apps),
// loaded by boot/apps.ts on the first App only.
const bridgeOut = 'dist/app-bridge.bundle.js';
await build({
  entryPoints: ['src/app-bridge-entry.ts'],
  outfile: bridgeOut,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  logLevel: 'warning',
});
for (const f of [outfile, bridgeOut]) {
  const size = statSync(f).size;
  const gz = gzipSync(readFileSync(f)).length;
  console.log(`${f}: ${(size / 1024).toFixed(1)} KiB (${(gz / 1024).toFixed(1)} KiB gzip)`);
}
