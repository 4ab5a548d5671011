// The Manager's actions on a real host: api.mcp for the data, SillyTavern
// popups for the dialogs and confirmations.

import type { TauriTavernMcpApi } from '../../../jsapi/tauritavern-mcp';
import { confirmActivate, confirmRemove } from '../dialogs/confirm';
import { openAddServerDialog, openEditServerDialog } from '../dialogs/server-dialog';
import { openTestCallDialog } from '../dialogs/test-call-dialog';
import { openToolDialog } from '../dialogs/tool-dialog';
import type { McpManagerActions } from '../manager/McpManagerApp';
import type { Tr } from '../texts';

export function createManagerActions(api: TauriTavernMcpApi, tr: Tr): McpManagerActions {
  return {
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
        },
        tr,
      ),
  };
}
