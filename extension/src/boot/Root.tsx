// The drawer's content: connects, then shows the Manager or the state that
// stops it; Retry connects again without a page reload.

import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import type { TauriTavernMcpApi } from '../../../jsapi/tauritavern-mcp';
import type { BridgeStatus } from '../host/tauritavern';
import { McpManagerApp, type McpManagerActions } from '../manager/McpManagerApp';
import { ToolsContext, type ToolsPanelDeps } from '../tools/ToolsPanel';
import { ApiMissing, BackendDown, Connecting, ConnectionLost, LoadFailed, OriginRefused } from '../status/StatusPanels';
import type { Connection } from './connect';

export interface RootDeps {
  /** The backend URL to start with (settings → ttmcp.json → default). */
  backendUrl(): Promise<string>;
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
  /** When registrations may have changed outside the Manager (absent: never re-listed). */
  watchChanges?(fn: () => void): () => void;
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
  const [backendUrl, setBackendUrl] = useState<string>();
  const [bridgeState, setBridgeState] = useState(() => deps.bridge()?.state);
  const [reconnecting, setReconnecting] = useState(false);
  const attempt = useRef(0);
  const running = useRef(false);

  const run = useCallback(
    async (url: string) => {
      if (running.current) return;
      running.current = true;
      setBusy(true);
      try {
        const next = await deps.connect(url, attempt.current++);
        setPhase(next);
        setBridgeState(deps.bridge()?.state);
      } finally {
        running.current = false;
        setBusy(false);
      }
    },
    [deps],
  );

  useEffect(() => {
    let live = true;
    void deps.backendUrl().then((url) => {
      if (!live) return;
      setBackendUrl(url);
      void run(url);
    });
    return () => {
      live = false;
    };
  }, [deps, run]);

  // A refusal while working replaces the Manager with the explanation;
  // a lost connection shows above it.
  useEffect(
    () =>
      deps.onBridgeChange(() => {
        const b = deps.bridge();
        setBridgeState(b?.state);
        if (b?.state === 'refused') {
          setPhase((p) =>
            p.kind === 'ready'
              ? { kind: 'origin_refused', backend: b.backend ?? backendUrl ?? '', origin: deps.origin, message: b.error?.message ?? '' }
              : p,
          );
        }
      }),
    [deps, backendUrl],
  );

  const retry = () => {
    if (backendUrl !== undefined) void run(backendUrl);
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
      return (
        <BackendDown
          key={url}
          backend={url}
          message={phase.message}
          busy={busy}
          {...(elsewhere !== undefined ? { loadedFrom: elsewhere } : {})}
          onRetry={retry}
          onSaveUrl={(next) => {
            deps.saveBackendUrl(next);
            setBackendUrl(next);
            void run(next);
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
      return <ManagerFor api={phase.api} phase={phase} deps={deps} notice={notice} />;
    }
  }
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
  return (
    <ToolsContext.Provider value={deps.tools}>
      <McpManagerApp
        initial={phase.initial}
        actions={actions.current}
        notice={notice}
        {...(deps.watchChanges ? { watchChanges: deps.watchChanges } : {})}
      />
    </ToolsContext.Provider>
  );
}
