// The Exa Search recommended entry (reference §8.1): created once per data
// root, paused like every new registration. A marker in the extension store
// records that the recommendation was handled, so deleting the entry is
// final.

import type { CreateMcpServerInput, McpServerList, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';
import type { ExtensionStore } from '../../host/tauritavern';
import { errorMessage } from '../../base/errors';

export const EXA_SERVER = { displayName: 'Exa Search', endpoint: 'https://mcp.exa.ai/mcp' } as const;

export const EXA_MARKER = { namespace: 'tauritavern.mcp-manager', key: 'exa-search-recommendation-handled' } as const;

export interface RecommendationOutcome {
  initial: McpServerList;
  /** Why the recommendation could not be handled; the servers created so far are kept. */
  error?: string;
}

/**
 * ensureExaRecommendation creates the Exa entry unless the marker says the
 * recommendation was handled or a server already has its endpoint, then
 * sets the marker.
 */
export async function ensureExaRecommendation(
  initial: McpServerList,
  create: (input: CreateMcpServerInput) => Promise<TauriTavernMcpServer>,
  store: ExtensionStore,
): Promise<RecommendationOutcome> {
  let servers = initial.servers;
  try {
    const marker = await store.tryGetJson({ ...EXA_MARKER });
    if (marker.found) return { initial };
    if (!servers.some((s) => s.endpoint === EXA_SERVER.endpoint)) {
      const created = await create({ ...EXA_SERVER });
      servers = [...servers, created];
    }
    await store.setJson({ ...EXA_MARKER, value: true });
    return { initial: { ...initial, servers } };
  } catch (err) {
    return { initial: { ...initial, servers }, error: errorMessage(err) };
  }
}
