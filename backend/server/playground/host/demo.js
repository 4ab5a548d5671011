// "Add the demo server": the playground's one-click registration of the
// demo MCP server that `ttmcp serve --demo` runs beside the backend. It is
// the page's, not the extension's (which stays host-neutral): it registers
// the server through api.mcp like any page would, then reloads so the
// Manager lists it. The server starts paused, as every new registration.

import { translate } from './i18n.js';
import { extensionSettings, PLAYGROUND_BASE } from './settings.js';

const NOTICE_KEY = 'ttmcp.playground.demo-added';

/**
 * @param {HTMLElement} button
 * @param {{displayName: string, endpoint: string}|null} demo
 */
export function initDemoButton(button, demo) {
    if (!demo) {
        button.hidden = true;
        return;
    }
    button.hidden = false;
    button.title = demo.endpoint;
    let busy = false;
    const run = async () => {
        if (busy) return;
        busy = true;
        button.classList.add('disabled');
        button.setAttribute('aria-disabled', 'true');
        try {
            const mcp = await hostApi();
            const { servers } = await mcp.servers.list();
            if (servers.some((s) => s.endpoint === demo.endpoint)) {
                toastr.info(translate('The demo server is already in the list.'));
                return;
            }
            await mcp.servers.create({ displayName: demo.displayName, endpoint: demo.endpoint });
            sessionStorage.setItem(NOTICE_KEY, demo.displayName);
            location.reload();
        } catch (err) {
            toastr.error(String(err?.message ?? err), translate('Could not add the demo server'));
        } finally {
            busy = false;
            button.classList.remove('disabled');
            button.removeAttribute('aria-disabled');
        }
    };
    button.addEventListener('click', run);
    button.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            run();
        }
    });

    const added = sessionStorage.getItem(NOTICE_KEY);
    if (added) {
        sessionStorage.removeItem(NOTICE_KEY);
        toastr.success(translate('It starts paused: turn it Active in the MCP panel to discover its tools.'),
            translate('Demo server added'));
    }
}

/** The host API, loaded from the backend the Manager uses if not yet published. */
async function hostApi() {
    if (!globalThis.__TAURITAVERN__?.api?.mcp) {
        const backend = extensionSettings.mcp_manager?.backendUrl || PLAYGROUND_BASE;
        await import(`${backend.replace(/\/+$/, '')}/jsapi/tauritavern-mcp.js`);
    }
    const tt = globalThis.__TAURITAVERN__;
    await (tt?.ready ?? globalThis.__TAURITAVERN_MAIN_READY__);
    if (!tt?.api?.mcp) throw new Error('The MCP host API is unavailable.');
    return tt.api.mcp;
}
