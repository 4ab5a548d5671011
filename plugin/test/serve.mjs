// Runs the stand-in of SillyTavern 1.18.0 (sillytavern.mjs) with the real
// plugin as a server of its own, for tests in other languages: the Chromium
// tests in webtest/ open it at the machine's own non-loopback address, over
// http and https, as a phone or another computer would.
//
//   node serve.mjs '<options JSON>'
//
// Options: {host, port, pluginsDir, tls?: {cert, key} (PEM file paths),
// basicAuth?, whitelist?, accounts?} (sillytavern.mjs's Options). It prints
// one line, "listening <origin>", once it accepts connections, and on
// SIGTERM or SIGINT runs the plugins' exit() (which stops the ttmcp the
// plugin started) before it exits, as SillyTavern does.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

import { createSillyTavern } from './sillytavern.mjs';

const o = JSON.parse(process.argv[2] ?? '{}');
const st = await createSillyTavern(o);
const server = o.tls
    ? https.createServer({ cert: fs.readFileSync(o.tls.cert), key: fs.readFileSync(o.tls.key) }, st.app)
    : http.createServer(st.app);
await new Promise((resolve) => server.listen(o.port ?? 0, o.host, () => resolve(undefined)));
const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
const host = o.host.includes(':') ? `[${o.host}]` : o.host;
process.stdout.write(`listening ${o.tls ? 'https' : 'http'}://${host}:${port}\n`);

let exiting = false;
async function shutdown() {
    if (exiting) return;
    exiting = true;
    server.closeAllConnections();
    server.close();
    await st.exit();
    process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
