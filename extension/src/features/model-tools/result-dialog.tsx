// A model call's full result, kept by the backend because it was too long
// for the prompt (the model was given a note and the start of it): opened
// from Recent calls, read in pages of up to 200,000 characters, "Load
// more" for the rest.

import { useCallback, useEffect, useState } from 'react';
import type { McpResultsApi, McpToolResultPage } from '../../../../jsapi/tauritavern-mcp';
import { showDialog } from '../../host/popup';
import type { Tr } from '../../base/texts';
import { errorMessage } from '../../base/errors';
import { useTr } from '../../base/tr';

const PAGE_CHARS = 200_000;
const PAGE_LINES = 5_000;

function ResultView(props: { results: McpResultsApi; resultId: string }) {
  const tr = useTr();
  const [pages, setPages] = useState<McpToolResultPage[]>([]);
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(false);
  const last = pages.at(-1);

  const load = useCallback(
    async (startLine: number) => {
      setLoading(true);
      try {
        const page = await props.results.read({ resultId: props.resultId, startLine, lineCount: PAGE_LINES, maxChars: PAGE_CHARS });
        setPages((all) => [...all, page]);
        setError(undefined);
      } catch (err) {
        setError(errorMessage(err));
      } finally {
        setLoading(false);
      }
    },
    [props.results, props.resultId],
  );
  useEffect(() => {
    void load(1);
  }, [load]);

  return (
    <div className="tt-mcp-result-view">
      <h3 className="tt-mcp-dialog-title">{tr('result_title')}</h3>
      {last && (
        <p className="tt-mcp-note">
          {tr('result_summary', { chars: last.charCount.toLocaleString('en-US'), lines: last.totalLines, time: new Date(last.storedAt).toLocaleString() })}
        </p>
      )}
      {error !== undefined && (
        <p className="tt-mcp-error" role="alert">
          {tr('result_failed', { message: error })}
        </p>
      )}
      {pages.length > 0 && (
        <pre className="tt-mcp-result-text" tabIndex={0} aria-label={tr('result_title')}>
          {pages.map((p) => p.text).join('\n')}
        </pre>
      )}
      {loading && (
        <p className="tt-mcp-note" role="status">
          {tr('result_loading')}
        </p>
      )}
      {last?.nextStartLine !== undefined && !loading && (
        <button type="button" className="menu_button" onClick={() => void load(last.nextStartLine!)}>
          {tr('result_more', { line: last.nextStartLine, total: last.totalLines })}
        </button>
      )}
    </div>
  );
}

/** Shows the kept result; resolves when the dialog closes. */
export async function openResultDialog(results: McpResultsApi, resultId: string, tr: Tr): Promise<void> {
  await showDialog(<ResultView results={results} resultId={resultId} />, { kind: 'text', okButton: tr('close'), wide: true, scroll: true, leftAlign: true }, tr);
}
