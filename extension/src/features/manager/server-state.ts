// What the Manager knows of each row while it works (ServerRow renders it,
// ServerConsole reads it): apart from both, so neither imports the other
// for it.

import type { McpDiscoveredTool, McpToolPermission, TauriTavernMcpServer } from '../../../../jsapi/tauritavern-mcp';

/** What a row is doing: discovering (or refreshing) its tools, changing its registration, or signing in. */
export type ServerActivity = 'discover' | 'mutate' | 'sign-in';

export interface ServerStatus {
  activity?: ServerActivity;
  error?: string;
}

export interface ServerRowHandlers {
  toggleState(): void;
  edit(): void;
  remove(): void;
  toggleExpand(): void;
  discover(): void;
  refresh(): void;
  setPermission(nativeName: string, permission: McpToolPermission): void;
  editDescription(tool: McpDiscoveredTool): void;
  setStaleOff(nativeName: string): void;
  /** A change of the registration made from the console (a capability switch): the Manager shows it. */
  serverChanged?(server: TauriTavernMcpServer): void;
  /** ttmcp's sign-in; absent where the host API has none. */
  signIn?(): void;
  signOut?(): void;
}
