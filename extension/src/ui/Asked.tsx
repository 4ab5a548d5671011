// What a call's server asked the user (elicitation) and how each question
// was answered, from an outcome's or an audit entry's rounds and
// elicitations (never what the user entered): the test console's section
// and Recent calls' chip.

import type { McpElicitationRecord } from '../../../jsapi/tauritavern-mcp';
import type { Tr } from '../base/texts';
import { useTr } from '../base/tr';

/** One question in words: "A form: you answered". */
export function askedItem(q: McpElicitationRecord, tr: Tr): string {
  return tr('asked_item', { what: tr(q.mode === 'url' ? 'asked_url' : 'asked_form'), action: tr(`asked_${q.action}`) });
}

/** Whether there is anything to say: a question, or more than one request. */
export function wasAsked(rounds: number | undefined, elicitations: McpElicitationRecord[] | undefined): boolean {
  return (elicitations?.length ?? 0) > 0 || (rounds ?? 1) > 1;
}

/** The test console's section: the requests the call took and each question's answer, in order. */
export function AskedSummary(props: { rounds?: number | undefined; elicitations?: McpElicitationRecord[] | undefined }) {
  const tr = useTr();
  const { rounds, elicitations = [] } = props;
  if (!wasAsked(rounds, elicitations)) return null;
  return (
    <section className="tt-mcp-asked" aria-label={tr('asked_title')}>
      <h5>
        <i className="fa-solid fa-circle-question" aria-hidden="true" /> {tr('asked_title')}
        {rounds !== undefined && <span className="tt-mcp-chip">{tr('asked_rounds', { count: rounds })}</span>}
      </h5>
      <ol>
        {elicitations.map((q, i) => (
          <li key={i} className={`tt-mcp-asked-${q.action}`}>
            {askedItem(q, tr)}
          </li>
        ))}
      </ol>
    </section>
  );
}
