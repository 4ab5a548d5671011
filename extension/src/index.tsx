// The mcp-manager extension's entry (dist/index.bundle.js). SillyTavern
// injects it as <script type="module"> once the page is built; it mounts
// the "MCP" drawer in the Extensions panel and connects to the ttmcp
// backend from there.

import { startManager } from './boot/start';

const STARTED = Symbol.for('ttmcp.mcp-manager.started');

function start() {
  const g = globalThis as { [STARTED]?: boolean };
  if (g[STARTED]) return;
  g[STARTED] = true;
  startManager({
    configUrl: new URL('../ttmcp.json', import.meta.url).href,
    importModule: (url) => import(/* @vite-ignore */ url),
    fetch: (input, init) => fetch(input, init),
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true });
else start();
