import type { McpDiscoveryDiagnostic } from '../../../jsapi/tauritavern-mcp';
import { useTr } from '../base/tr';

/**
 * "Discovery notes · N": the diagnostics of a discovery (a tool's name, or
 * the code, and the message); open shows them unfolded.
 */
export function DiscoveryNotes(props: { diagnostics: McpDiscoveryDiagnostic[]; open?: boolean }) {
  const tr = useTr();
  if (props.diagnostics.length === 0) return null;
  return (
    <details className="tt-mcp-notes" open={props.open}>
      <summary>
        <i className="fa-solid fa-circle-info" aria-hidden="true" /> {tr('discovery_notes', { count: props.diagnostics.length })}
      </summary>
      <ul>
        {props.diagnostics.map((d, i) => (
          <li key={i}>
            <code>{d.nativeName ?? d.code}</code> <span>{d.message}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
