// Wires resources and prompts to the real page: the chat's attachments
// (SillyTavern's extension prompts and chat metadata), the wand-menu item
// that lists them, `/mcp-prompt`, and the Manager's Resources and Prompts
// tabs with their dialogs — all through ttmcp's api.mcp.resources, prompts
// and completions, read when used (the Manager loads the API after this
// starts).

import type { McpCompletionRef, McpPrompt, TauriTavernMcpServer } from '../../../jsapi/tauritavern-mcp';
import { openAttachmentsDialog, type AttachmentsDialogDeps } from '../features/resources/attachments-dialog';
import { openPromptDialog } from '../features/resources/prompt-dialog';
import { openResourceDialog, type ResourceDialogDeps, type ResourceTarget } from '../features/resources/resource-dialog';
import { BACKEND_EVENT, REGISTRATIONS_CHANGED_EVENT, serverChange } from '../host/changes';
import { savedPlacement, savePlacement } from '../features/resources/placement';
import { primitivesApi, type PrimitivesApi } from '../host/tauritavern';
import type { PrimitivesDeps } from '../features/manager/Primitives';
import type { Tr } from '../base/texts';
import { mountChatMenu } from '../host/chat-menu';
import type { AttachDeps } from '../features/resources/AttachPanel';
import { ChatAttachments, totalChars } from '../features/resources/attachments';
import { INPUT_BOX_ID, putInInputBox } from '../host/input-box';
import { escapeHtml, PromptCatalog, registerPromptCommand, typingCommand, type PromptCommandHost } from '../features/resources/prompt-command';
import { stChatContext } from '../host/sillytavern-chat';

export const RESOURCES_MENU_ID = 'mcp_manager_resources_menu';

interface Toastr {
  warning?(text: string, title?: string, options?: { escapeHtml?: boolean }): unknown;
  error?(text: string, title?: string, options?: { escapeHtml?: boolean }): unknown;
}

/** A toast of lines: SillyTavern's toastr escapes HTML and so runs lines together; each is escaped here and they are joined by <br>. */
function toast(level: 'warning' | 'error', lines: readonly string[], title: string): void {
  (globalThis as { toastr?: Toastr }).toastr?.[level]?.(lines.map(escapeHtml).join('<br>'), title, { escapeHtml: false });
}

export interface ChatFeatures {
  /** The Manager's Resources and Prompts tabs, once the API is loaded (undefined without ttmcp's). */
  primitives(): PrimitivesDeps | undefined;
  unmount(): void;
}

/** The API, or an error saying it is not loaded yet (the drawer loads it). */
function need(tr: Tr): PrimitivesApi {
  const api = primitivesApi();
  if (!api) throw new Error(tr('primitives_unavailable'));
  return api;
}

async function completionValues(api: PrimitivesApi, registrationId: string, ref: McpCompletionRef, name: string, value: string, context: Record<string, string>): Promise<string[]> {
  const r = await api.completions.complete({
    registrationId,
    ref,
    argument: { name, value },
    ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {}),
  });
  return r.values;
}

/**
 * The Manager's Resources and Prompts tabs on api: the lists, the switches,
 * and the dialogs (with completion when the server offers it, attaching
 * when the page can, the chat's input box).
 */
export function primitivesDeps(api: PrimitivesApi, tr: Tr, attach: AttachDeps | undefined): PrimitivesDeps {
  const resourceDeps = (server: Pick<TauriTavernMcpServer, 'id' | 'displayName'>, completions: boolean): ResourceDialogDeps => ({
    server: { id: server.id, displayName: server.displayName },
    read: (uri) => api.resources.read({ registrationId: server.id, uri }),
    ...(completions
      ? { complete: (uriTemplate, name, value, context) => completionValues(api, server.id, { type: 'ref/resource', uri: uriTemplate }, name, value, context) }
      : {}),
    ...(attach ? { attach } : {}),
  });
  const openResource = (server: TauriTavernMcpServer, target: ResourceTarget, completions: boolean) =>
    openResourceDialog(resourceDeps(server, completions), target, tr);
  const openPrompt = (server: TauriTavernMcpServer, prompt: McpPrompt, completions: boolean) =>
    openPromptDialog(
      {
        server: { id: server.id, displayName: server.displayName },
        get: (name, args) => api.prompts.get({ registrationId: server.id, name, arguments: args }),
        ...(completions
          ? { complete: (promptName, name, value, context) => completionValues(api, server.id, { type: 'ref/prompt', name: promptName }, name, value, context) }
          : {}),
        putInInputBox: (text) => putInInputBox(text),
        openLink: (uri, name) => void openResource(server, { kind: 'resource', uri, name }, completions),
      },
      prompt,
      tr,
    );
  return {
    capabilities: (id) => api.servers.capabilities(id),
    setCapabilities: (input) => api.servers.setCapabilities(input),
    resources: (id, refresh) => api.resources.list({ registrationId: id, refresh }),
    templates: (id, refresh) => api.resources.templates({ registrationId: id, refresh }),
    prompts: (id, refresh) => api.prompts.list({ registrationId: id, refresh }),
    openResource,
    openPrompt,
  };
}

export function startChatFeatures(tr: Tr): ChatFeatures {
  const attachments = new ChatAttachments({
    context: stChatContext,
    read: (registrationId, uri) => need(tr).resources.read({ registrationId, uri }),
    tr,
  });
  const supported = attachments.supported();
  const offs: Array<() => void> = [];
  const attach: AttachDeps | undefined = supported
    ? {
        chat: () => attachments.chat(),
        list: () => attachments.list(),
        attach: (chat, snapshot, placement) => attachments.attach(chat, snapshot, placement),
        lastPlacement: savedPlacement,
        rememberPlacement: savePlacement,
      }
    : undefined;

  // `/mcp-prompt`, with what its autocomplete offers forgotten when registrations or a server's prompts change
  const commandHost: PromptCommandHost = {
    context: stChatContext,
    servers: async () => (await need(tr).servers.list()).servers,
    prompts: (registrationId) => need(tr).prompts.list(registrationId),
    get: (input) => need(tr).prompts.get(input),
    toast,
    tr,
  };
  const catalog = new PromptCatalog(commandHost);
  if (registerPromptCommand(commandHost, catalog)) {
    const onRegistrations = () => catalog.invalidate();
    const onBackend = (e: Event) => {
      const change = serverChange((e as CustomEvent).detail);
      if (change?.lists.includes('registration')) catalog.invalidate();
      else if (change?.lists.includes('prompts')) catalog.invalidate(change.registrationId);
    };
    // the autocomplete's lists read while the command is typed, so its first ask has them
    const onInput = (e: Event) => {
      const box = e.target;
      if ((box instanceof HTMLTextAreaElement || box instanceof HTMLInputElement) && box.id === INPUT_BOX_ID && typingCommand(box.value)) {
        void catalog.prefetch();
      }
    };
    window.addEventListener(REGISTRATIONS_CHANGED_EVENT, onRegistrations);
    window.addEventListener(BACKEND_EVENT, onBackend);
    document.addEventListener('input', onInput);
    offs.push(() => window.removeEventListener(REGISTRATIONS_CHANGED_EVENT, onRegistrations));
    offs.push(() => window.removeEventListener(BACKEND_EVENT, onBackend));
    offs.push(() => document.removeEventListener('input', onInput));
  }

  if (attach) {
    attachments.install();
    offs.push(() => attachments.uninstall());
    const dialogDeps: AttachmentsDialogDeps = {
      attach,
      remove: (chat, id) => attachments.remove(chat, id),
      refresh: (chat, id) => attachments.refresh(chat, id),
      setPlacement: (chat, id, p) => attachments.setPlacement(chat, id, p),
      onChange: (fn) => attachments.onChange(fn),
      servers: async () => (await need(tr).servers.list()).servers,
      resources: (id) => need(tr).resources.list(id),
      templates: (id) => need(tr).resources.templates(id),
      read: (registrationId, uri) => need(tr).resources.read({ registrationId, uri }),
      openTemplate: (server, template) =>
        primitivesDeps(need(tr), tr, attach).openResource(server, { kind: 'template', template }, server.capabilities?.advertised?.completions === true),
    };
    offs.push(
      mountChatMenu({
        id: RESOURCES_MENU_ID,
        icon: 'fa-paperclip',
        title: tr('resources_menu_title'),
        label: async () => {
          const list = attachments.list();
          return list.length === 0
            ? tr('resources_menu_none')
            : tr('resources_menu', { count: list.length, chars: totalChars(list).toLocaleString() });
        },
        open: () => openAttachmentsDialog(dialogDeps, tr),
        onChange: (fn) => attachments.onChange(fn),
      }),
    );
  }

  return {
    primitives: () => {
      const api = primitivesApi();
      return api ? primitivesDeps(api, tr, attach) : undefined;
    },
    unmount() {
      for (const off of offs.splice(0)) off();
    },
  };
}
