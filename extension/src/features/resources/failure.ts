// A read's or a get's outcome that is not the answer asked for, in one
// sentence for a toast or an inline error (the dialogs show it in full:
// dialogs/call-outcome.tsx RequestProblem).

import type { McpRequestOutcome } from '../../../../jsapi/tauritavern-mcp';
import type { Tr } from '../../base/texts';

/** Why a read or a get gave no answer, in words; undefined when it answered. */
export function requestFailure(o: McpRequestOutcome<{ kind: string }>, tr: Tr): string | undefined {
  if (o.outcome !== 'known_response') {
    return tr(o.outcome === 'not_sent' ? 'read_not_sent' : 'read_unknown', { code: o.code, message: o.message });
  }
  const r = o.response;
  if (r.kind === 'server_error' && 'code' in r) return tr('read_server_error', { code: r.code, message: r.message });
  if (r.kind === 'unsupported_response' && 'responseType' in r) return tr('read_unsupported', { type: r.responseType, message: r.message });
  return undefined;
}
