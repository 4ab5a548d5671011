// A running call's progress as its server reports it (issue 29): a bar
// when the server says how much there is (total), a step and a spinner
// otherwise, the server's last message, and the time elapsed since the
// call started. The backend sends at most a few updates a second per call
// (coalesced), so rendering each one is cheap; the elapsed time ticks once
// a second on its own. Used by the chat's status of a model's call and by
// the test console.

import { useEffect, useState } from 'react';
import type { McpCallProgress } from '../../../jsapi/tauritavern-mcp';
import { useTr } from '../base/tr';

export interface CallProgressProps {
  /** The latest progress; undefined until the server sent any. */
  progress: McpCallProgress | undefined;
  /** When the call started (Date.now()). */
  startedAt: number;
  /** What runs ("Search (Docs)"); absent in the test console, which names the tool already. */
  label?: string | undefined;
  /** The call is being stopped. */
  stopping?: boolean | undefined;
}

/** A number as a person reads it: at most two fraction digits. */
function figure(n: number): string {
  return n.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

/** The share of total done, 0..100 (a server may overshoot or send nonsense). */
export function percentOf(p: McpCallProgress): number | undefined {
  if (p.total === undefined || !(p.total > 0) || !Number.isFinite(p.progress)) return undefined;
  return Math.min(100, Math.max(0, (p.progress / p.total) * 100));
}

/** Seconds since startedAt, ticking once a second while mounted. */
function useElapsed(startedAt: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return Math.max(0, Math.floor((now - startedAt) / 1000));
}

export function CallProgress(props: CallProgressProps) {
  const tr = useTr();
  const { progress, label, stopping } = props;
  const elapsed = useElapsed(props.startedAt);
  const pct = progress && percentOf(progress);
  const message = progress?.message;
  return (
    <div className="tt-mcp-progress" role="status" aria-live="polite" data-updates={progress?.updates ?? 0}>
      <div className="tt-mcp-progress-line">
        {pct === undefined && <i className="fa-solid fa-spinner fa-spin" aria-hidden="true" />}
        {label !== undefined && <span className="tt-mcp-progress-label">{label}</span>}
        <span className="tt-mcp-progress-state">
          {stopping
            ? tr('stopping')
            : progress === undefined
              ? tr('waiting')
              : progress.total !== undefined && progress.total > 0
                ? tr('progress_of', { progress: figure(progress.progress), total: figure(progress.total) })
                : tr('progress_step', { step: figure(progress.progress) })}
        </span>
        <span className="tt-mcp-progress-elapsed">{tr('progress_elapsed', { time: elapsedText(elapsed) })}</span>
      </div>
      {pct !== undefined && (
        <div
          className="tt-mcp-progress-bar"
          role="progressbar"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(pct)}
          aria-label={label ?? tr('progress_bar')}
        >
          <div className="tt-mcp-progress-fill" style={{ width: `${pct}%` }} />
        </div>
      )}
      {message !== undefined && message !== '' && <p className="tt-mcp-progress-message">{message}</p>}
    </div>
  );
}

/** 7 s, 1:05, 1:02:03. */
export function elapsedText(s: number): string {
  if (s < 60) return `${s} s`;
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/** After the call: how many updates came and the server's last message (the console, Recent calls). */
export function ProgressSummary(props: { updates: number | undefined; message?: string | undefined }) {
  const tr = useTr();
  if (props.updates === undefined || props.updates < 1) return null;
  return (
    <span className="tt-mcp-chip tt-mcp-chip-progress">
      {tr('progress_chip', { count: props.updates })}
      {props.message !== undefined && props.message !== '' && <> · {props.message}</>}
    </span>
  );
}
