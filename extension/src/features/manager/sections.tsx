// What the Manager shows of other features: the line saying what the model
// gets, the tool sets, a server's recent calls. The Manager knows none of
// those features; boot/ gives it their components here (Root.tsx), and a
// host without them (TauriTavern's own page) shows none.

import { createContext, type ComponentType } from 'react';

export interface ManagerSections {
  /** Above the list: what the next generation offers the model; version changes when the servers do. */
  reach?: ComponentType<{ version?: unknown }>;
  /** Below the list: the tool sets. */
  toolSets?: ComponentType;
  /** In an expanded server's console: its recent calls. */
  recentCalls?: ComponentType<{ registrationId: string }>;
}

export const SectionsContext = createContext<ManagerSections>({});
