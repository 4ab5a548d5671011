// The Manager's actions over the host's api.mcp: the data from the API, the
// dialogs and confirmations as SillyTavern popups (host/popup.tsx).

import type { TauriTavernMcpApi, TauriTavernMcpServer, TtmcpMcpApi, TtmcpMcpServersApi } from '../../../../jsapi/tauritavern-mcp';
import { confirmActivate, confirmRemove } from './confirm';
import { askSignInClient } from './sign-in-client-dialog';
import { openAddServerDialog, openEditServerDialog } from './server-dialog';
import { openTestCallDialog, type TestCallDialogDeps } from './test-call-dialog';
import type { ResourceTarget } from '../../ui/resource-target';
import { openToolDialog } from './tool-dialog';
import type { McpManagerActions } from './McpManagerApp';
import type { PrimitivesDeps } from './Primitives';
import type { Tr } from '../../base/texts';
import { errorCode, errorMessage } from '../../base/errors';

/**
 * ttmcp's sign-in, when the host API has it (TauriTavern's has not): the
 * window opens in the caller's click; an authorization server without
 * dynamic registration gets the client the user registered by hand.
 */
function signInActions(api: TauriTavernMcpApi, tr: Tr): Pick<McpManagerActions, 'signIn' | 'signOut'> {
  const servers = api.servers as Partial<TtmcpMcpServersApi>;
  const signIn = servers.signIn?.bind(servers);
  const signOut = servers.signOut?.bind(servers);
  if (typeof signIn !== 'function' || typeof signOut !== 'function') return {};
  return {
    signIn: async (server: TauriTavernMcpServer) => {
      try {
        return await signIn(server.id);
      } catch (err) {
        if (errorCode(err) !== 'mcp.auth_client_required') throw err;
        const client = await askSignInClient(server, errorMessage(err), tr);
        if (!client) return null;
        return await signIn({ registrationId: server.id, ...client }); // in the dialog's click
      }
    },
    signOut: (registrationId: string) => signOut({ registrationId }),
  };
}

/**
 * primitives: the Resources and Prompts dialogs where the page has ttmcp's API (the test console
 * opens a result's resources there); renderApp: the test console's MCP App renderer (boot's), absent
 * where the page renders no Apps.
 */
export function createManagerActions(
  api: TauriTavernMcpApi,
  tr: Tr,
  primitives?: () => PrimitivesDeps | undefined,
  renderApp?: TestCallDialogDeps['renderApp'],
): McpManagerActions {
  // ttmcp's api.mcp.stdio; a host with only upstream's surface has none.
  const stdio = (api as Partial<TtmcpMcpApi>).stdio;
  return {
    ...signInActions(api, tr),
    list: () => api.servers.list(),
    ...(stdio ? { stdioStatus: (registrationId: string) => stdio.status(registrationId) } : {}),
    addServer: () => openAddServerDialog((input) => api.servers.create(input), tr),
    editServer: (server) => openEditServerDialog(server, (input) => api.servers.update(input), tr),
    confirmActivate: (server) => confirmActivate(server, tr),
    confirmRemove: (server) => confirmRemove(server, tr),
    setState: (input) => api.servers.setState(input),
    remove: (registrationId) => api.servers.remove({ registrationId }),
    discover: (registrationId) => api.servers.discover({ registrationId }),
    refresh: (registrationId) => api.servers.refresh({ registrationId }),
    setPermission: (input) => api.tools.setPermission(input),
    setDescriptionOverride: (input) => api.tools.setDescriptionOverride(input),
    openToolDialog: (input) => openToolDialog(input, tr),
    openTestCall: (servers) =>
      openTestCallDialog(
        {
          servers,
          discover: (registrationId) => api.servers.discover({ registrationId }),
          refresh: (registrationId) => api.servers.refresh({ registrationId }),
          testCall: (input, options) => api.tools.testCall(input, options),
          ...(renderApp && (api as Partial<TtmcpMcpApi>).apps ? { renderApp } : {}),
          ...(primitives?.()
            ? {
                openResource: (server: TauriTavernMcpServer, target: ResourceTarget) =>
                  void primitives()?.openResource(server, target, server.capabilities?.advertised?.completions === true),
              }
            : {}),
        },
        tr,
      ),
  };
}
