// This page's answer to servers that ask the user (elicitation, SPEC §10):
// the handler the extension sets with api.mcp.elicitation.setHandler once
// ttmcp's API is loaded (TauriTavern's has no such namespace: nothing is set
// there, and its servers are never told this page can answer). The backend
// asks this page only about its own calls — the test console's and the
// model's tool calls — and withdraws a question when the call is stopped.
//
// Questions are put to the user one at a time, in the order they came: a
// second one waits for the first popup to close (two popups at once would
// hide each other, and an answer must never go to the wrong question). A
// question withdrawn while it waits is dropped without a popup.

import type { McpElicitationHandler, McpElicitationRequest, McpElicitationResponse } from '../../../../jsapi/tauritavern-mcp';
import type { ElicitationAnswer } from './elicitation-dialog';
import { elicitationApi } from '../../host/tauritavern';

/** Puts one question to the user (the popup); the queue calls it for one question at a time. */
export type Ask = (
  request: McpElicitationRequest,
  opts: { signal: AbortSignal; values?: Record<string, string> },
) => Promise<ElicitationAnswer>;

/** How many questions' typed values are kept for a re-ask (the backend asks at most 3 times per question). */
const KEPT = 16;

/** What identifies a question across its re-asks: the call and the question itself. */
function questionKey(r: McpElicitationRequest): string {
  return JSON.stringify([r.callId, r.mode, r.message, r.requestedSchema ?? null, r.url ?? null]);
}

const CANCEL: McpElicitationResponse = { action: 'cancel' };

/**
 * The page's handler: each question waits for the ones before it, then is
 * asked (unless withdrawn meanwhile). When the backend refused an answer
 * (request.error), the form opens with what the user typed last time.
 */
export function createElicitationHandler(ask: Ask): McpElicitationHandler {
  let tail: Promise<unknown> = Promise.resolve();
  const typed = new Map<string, Record<string, string>>();

  return (request, { signal }) => {
    const key = questionKey(request);
    const turn = tail.then(async (): Promise<McpElicitationResponse> => {
      if (signal.aborted) return CANCEL;
      const values = request.error !== undefined ? typed.get(key) : undefined;
      const answer = await ask(request, { signal, ...(values ? { values } : {}) });
      typed.delete(key);
      if (answer.response.action === 'accept' && answer.values) {
        typed.set(key, answer.values);
        while (typed.size > KEPT) typed.delete(typed.keys().next().value as string);
      }
      return answer.response;
    });
    tail = turn.catch(() => {});
    // A withdrawn question's answer is not read; it need not wait its turn.
    const withdrawn = new Promise<McpElicitationResponse>((resolve) => {
      if (signal.aborted) resolve(CANCEL);
      else signal.addEventListener('abort', () => resolve(CANCEL), { once: true });
    });
    return Promise.race([turn, withdrawn]);
  };
}

/** The API objects a handler was set on (a loader imported again publishes a new one). */
const installed = new WeakSet<object>();

/**
 * Sets handler on ttmcp's api.mcp.elicitation, once per published API;
 * false where there is none (TauriTavern, an older backend, no API yet).
 */
export function installElicitationHandler(handler: McpElicitationHandler): boolean {
  const api = elicitationApi();
  if (!api) return false;
  if (!installed.has(api)) {
    api.setHandler(handler);
    installed.add(api);
  }
  return true;
}

/** Takes the handler away again (the extension is unmounted). */
export function uninstallElicitationHandler(): void {
  const api = elicitationApi();
  if (!api || !installed.has(api)) return;
  api.setHandler(null);
  installed.delete(api);
}
