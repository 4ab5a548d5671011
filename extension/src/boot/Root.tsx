// The drawer's content: connects, then shows the Manager or the state that
// stops it; Retry connects again without a page reload. While the backend
// is not running the drawer tries again by itself (retry.ts): on a timer
// while nothing else does (the API was never loaded), at once when the
// user may have just started it, and as soon as the page's bridge, once
// loaded, reconnects by itself.

import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { TauriTavernMcpApi, TtmcpMcpApi } from '../../../jsapi/tauritavern-mcp';
import { isLoopbackOrigin, type BackendRoute } from '../host/backend';
import type { BridgeStatus } from '../host/tauritavern';
import { McpManagerApp, type McpManagerActions } from '../features/manager/McpManagerApp';
import type { ServerChange } from '../host/changes';
import { ConnectionContext, type ConnectionDeps } from '../features/manager/Connection';
import { PrimitivesContext, type PrimitivesDeps } from '../features/manager/Primitives';
import { RecentCalls, ToolReachSection, ToolsContext, type ToolsPanelDeps } from '../features/model-tools/ToolsPanel';
import { ToolSetsContext, ToolSetsSection, type ToolSetsDeps } from '../features/toolsets/ToolSetsPanel';
import { SectionsContext, type ManagerSections } from '../features/manager/sections';
import { ApiMissing, BackendDown, Connecting, ConnectionLost, LoadFailed, OriginRefused, PluginBackendDown, RouteLine } from '../features/status/StatusPanels';
import { refusal, type Connection } from './connect';
import { RetryLoop, type AttemptOutcome, type RetryClock } from './retry';

export interface RootDeps {
  /** How to reach the backend: SillyTavern's plugin when it answers, else the URL (settings → ttmcp.json → default). */
  backend(): Promise<BackendRoute>;
  connect(backendUrl: string, attempt: number): Promise<Connection>;
  /** Persists a backend URL the user entered. */
  saveBackendUrl(url: string): void;
  createActions(api: TauriTavernMcpApi): McpManagerActions;
  /** The bridge status right now (absent: TauriTavern or an older backend). */
  bridge(): BridgeStatus | undefined;
  /** Subscribes to bridge state changes; returns the unsubscribe function. */
  onBridgeChange(fn: () => void): () => void;
  origin: string;
  /** What the Manager shows about the model's tools (absent: nothing). */
  tools?: ToolsPanelDeps;
  /** The tool sets' screen (absent: none, as in TauriTavern). */
  toolSets?: ToolSetsDeps;
  /** A server's Resources and Prompts tabs (undefined: the host API has none, as TauriTavern's). */
  primitives?(): PrimitivesDeps | undefined;
  /**
   * When registrations may have changed outside the Manager (absent: never
   * re-listed). The same moments (focus, visibility, the drawer in view)
   * are when the user may have just started the backend.
   */
  watchChanges?(fn: (change?: ServerChange) => void): () => void;
  /**
   * Subscribes fn to requests for an attempt to connect now (a generation
   * starts while not connected); fn resolves once the attempt settled.
   */
  onWake?(fn: () => Promise<void>): () => void;
  /** The retry loop's timers (tests). */
  clock?: RetryClock;
}

type Phase = { kind: 'connecting' } | Connection;

/** The bridge's backend when it differs from url (the API came from elsewhere; a reload is needed to switch). */
function loadedElsewhere(bridge: BridgeStatus | undefined, url: string): string | undefined {
  const from = bridge?.backend;
  return from !== undefined && from !== url ? from : undefined;
}

export function Root({ deps }: { deps: RootDeps }) {
  const [phase, setPhase] = useState<Phase>({ kind: 'connecting' });
  const [busy, setBusy] = useState(false);
  const [route, setRoute] = useState<BackendRoute>();
  const backendUrl = route?.url;
  const [bridgeState, setBridgeState] = useState(() => deps.bridge()?.state);
  const [reconnecting, setReconnecting] = useState(false);
  const attempt = useRef(0);
  // What the loop's attempts read (they outlive the render that started them).
  // tried: the URL of the last attempt's connect.
  const current = useRef<{ phase: Phase; url: string | undefined; tried?: string }>({ phase, url: undefined });

  const [loop] = useState(
    () =>
      new RetryLoop(async (asked): Promise<AttemptOutcome> => {
        const { phase: now, url } = current.current;
        if (url === undefined) return 'settled';
        if (now.kind === 'ready') {
          // A lost connection: the bridge retries by itself; this is one attempt now.
          const b = deps.bridge();
          if (!asked && b?.reconnect && (b.state === 'closed' || b.state === 'connecting')) {
            try {
              await b.reconnect();
            } catch {
              // the bridge state tells
            }
          }
          return 'settled';
        }
        // Only Retry (or the bridge opening) leaves a state that time does not fix.
        if (!asked && now.kind !== 'connecting' && now.kind !== 'backend_down') return 'settled';
        if (asked) setBusy(true);
        current.current.tried = url;
        try {
          const next = await deps.connect(url, attempt.current++);
          if (next.kind === 'backend_down' && now.kind !== 'backend_down') {
            console.info(`[mcp-manager] The ttmcp backend at ${url} is not running; the MCP drawer connects once it runs.`);
          } else if (next.kind === 'ready' && now.kind === 'backend_down') {
            console.info(`[mcp-manager] Connected to the ttmcp backend at ${url}.`);
          }
          current.current = { ...current.current, phase: next };
          setPhase(next);
          setBridgeState(deps.bridge()?.state);
          // Until the page's bridge is loaded, nothing else tries again.
          return next.kind === 'backend_down' && deps.bridge() === undefined ? 'retry' : 'settled';
        } finally {
          if (asked) setBusy(false);
        }
      }, deps.clock),
  );
  useEffect(() => () => loop.stop(), [loop]);

  /** Connects to url now; an attempt running for another URL is let finish first. */
  const connectTo = async (to: BackendRoute) => {
    const { url } = to;
    current.current = { ...current.current, url };
    setRoute(to);
    await loop.now();
    if (current.current.url === url && current.current.tried !== url) await loop.now();
  };

  useEffect(() => {
    let live = true;
    void deps.backend().then((to) => {
      if (live) void connectTo(to);
    });
    return () => {
      live = false;
    };
  }, [deps]);

  // The moments when the user may have just started the backend.
  useEffect(() => deps.watchChanges?.(() => void loop.poke()), [deps, loop]);
  useEffect(() => deps.onWake?.(() => loop.poke()), [deps, loop]);

  // A refusal while working replaces the Manager with the explanation; a
  // lost connection shows above it; the bridge opening by itself while the
  // backend was down brings the Manager.
  useEffect(
    () =>
      deps.onBridgeChange(() => {
        const b = deps.bridge();
        setBridgeState(b?.state);
        const p = current.current.phase;
        if (b?.state === 'refused' && p.kind === 'ready') {
          const refused = refusal(b.backend ?? current.current.url ?? '', deps.origin, b.error?.message ?? '', b.error?.command);
          current.current = { ...current.current, phase: refused };
          setPhase(refused);
        } else if (b?.state === 'open' && p.kind === 'backend_down') {
          void loop.now();
        }
      }),
    [deps, loop],
  );

  const retry = () => {
    void loop.now();
  };

  const reconnect = async () => {
    const b = deps.bridge();
    if (!b?.reconnect || reconnecting) return;
    setReconnecting(true);
    try {
      await b.reconnect();
    } catch {
      // the bridge state tells
    } finally {
      setReconnecting(false);
      setBridgeState(deps.bridge()?.state);
    }
  };

  switch (phase.kind) {
    case 'connecting':
      return <Connecting />;
    case 'backend_down': {
      const url = backendUrl ?? phase.backend;
      const elsewhere = loadedElsewhere(deps.bridge(), url);
      if (route?.via === 'plugin') {
        return <PluginBackendDown key={url} plugin={route.plugin} message={phase.message} busy={busy} onRetry={retry} />;
      }
      return (
        <BackendDown
          key={url}
          backend={url}
          message={phase.message}
          busy={busy}
          remotePage={!isLoopbackOrigin(deps.origin)}
          {...(elsewhere !== undefined ? { loadedFrom: elsewhere } : {})}
          onRetry={retry}
          onSaveUrl={(next) => {
            deps.saveBackendUrl(next);
            void connectTo({ via: 'direct', url: next });
          }}
        />
      );
    }
    case 'origin_refused':
      return (
        <OriginRefused
          backend={phase.backend}
          origin={phase.origin}
          message={phase.message}
          {...(phase.command !== undefined ? { command: phase.command } : {})}
          busy={busy}
          onRetry={retry}
        />
      );
    case 'api_missing':
      return <ApiMissing />;
    case 'load_failed':
      return <LoadFailed message={phase.message} busy={busy} onRetry={retry} />;
    case 'ready': {
      const b = deps.bridge();
      // connecting while working: the bridge is between two reconnect attempts
      const lost = bridgeState === 'closed' || bridgeState === 'connecting';
      const notice = lost ? (
        <ConnectionLost
          backend={b?.backend ?? backendUrl ?? ''}
          busy={reconnecting}
          {...(b?.reconnect ? { onReconnect: () => void reconnect() } : {})}
        />
      ) : undefined;
      return (
        <>
          <ManagerFor api={phase.api} phase={phase} deps={deps} notice={notice} />
          {route && <RouteLine route={route} />}
        </>
      );
    }
  }
}

/** What the Manager shows of the model's tools and the tool sets (each renders nothing without its deps). */
export const MANAGER_SECTIONS: ManagerSections = { reach: ToolReachSection, toolSets: ToolSetsSection, recentCalls: RecentCalls };

/** ttmcp's api.mcp.connections, when the host API has it (TauriTavern's has not). */
function connectionDeps(api: TauriTavernMcpApi): ConnectionDeps | undefined {
  const connections = (api as Partial<TtmcpMcpApi>).connections;
  return connections ? { status: (registrationId) => connections.status(registrationId) } : undefined;
}

function ManagerFor(props: {
  api: TauriTavernMcpApi;
  phase: Extract<Phase, { kind: 'ready' }>;
  deps: RootDeps;
  notice: ReactNode;
}) {
  const { api, phase, deps, notice } = props;
  const actions = useRef<McpManagerActions>(undefined);
  actions.current ??= deps.createActions(api);
  const connections = useRef<ConnectionDeps | undefined>(undefined);
  connections.current ??= connectionDeps(api);
  const primitives = useRef<PrimitivesDeps | undefined>(undefined);
  primitives.current ??= deps.primitives?.();
  return (
    <SectionsContext.Provider value={MANAGER_SECTIONS}>
      <ToolsContext.Provider value={deps.tools}>
        <ToolSetsContext.Provider value={api === undefined ? undefined : deps.toolSets}>
          <ConnectionContext.Provider value={connections.current}>
            <PrimitivesContext.Provider value={primitives.current}>
              <McpManagerApp
                initial={phase.initial}
                actions={actions.current}
                notice={notice}
                {...(deps.watchChanges ? { watchChanges: deps.watchChanges } : {})}
              />
            </PrimitivesContext.Provider>
          </ConnectionContext.Provider>
        </ToolSetsContext.Provider>
      </ToolsContext.Provider>
    </SectionsContext.Provider>
  );
}
