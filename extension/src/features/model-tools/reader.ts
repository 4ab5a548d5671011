// The built-in reader tool (issue 19 item 4): a result too long for the
// prompt is kept by the backend, and the model reads it back by lines with
// ttmcp_read_result (upstream's workspace.read_file guidance: a start line,
// and the next start line to continue from). Offered beside a root's MCP
// tools when its tool set (or the default) has the reader on.

import { definitionTokens } from './search';
import type { McpResultsApi } from '../../../../jsapi/tauritavern-mcp';
import { readerErrorText, readerPageText } from './readable';
import type { StFunctionTool } from '../../host/sillytavern-tools';

export const READER_TOOL = 'ttmcp_read_result';

/** Lines per read the model may ask for; each read is also capped by characters. */
export const READER_MAX_LINES = 500;
export const READER_DEFAULT_LINES = 200;

/** Characters per read: the set's inline limit, between 3,000 (one wrapped line) and 20,000. */
export function readerChars(inlineCharLimit: number): number {
  return Math.min(20_000, Math.max(3_000, inlineCharLimit));
}

function errorParts(err: unknown): { code: string; message: string } {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : 'mcp.result_read_failed';
  let message = typeof e?.message === 'string' ? e.message : String(err);
  if (message.startsWith(`${code}: `)) message = message.slice(code.length + 2);
  return { code, message };
}

function integer(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/**
 * The tool's definition for registerFunctionTool. results() is
 * api.mcp.results (absent: not loaded); shouldRegister decides the rounds
 * that offer it.
 */
export function readerDefinition(opts: {
  results: () => McpResultsApi | undefined;
  inlineCharLimit: () => number;
  shouldRegister: () => boolean;
  displayName: string;
  formatMessage: () => string;
}): StFunctionTool {
  return {
    name: READER_TOOL,
    displayName: opts.displayName,
    description:
      'Reads a long MCP tool result that ttmcp kept aside because it was too large to include (its note names the resultId). ' +
      'Reads by lines: start at startLine 1; each answer gives the startLine to continue from. Read only what you need.',
    parameters: {
      type: 'object',
      properties: {
        resultId: { type: 'string', description: 'The resultId the note of the long result named.' },
        startLine: { type: 'integer', minimum: 1, description: 'The first line to read (1 for the start).' },
        lineCount: { type: 'integer', minimum: 1, maximum: READER_MAX_LINES, description: `How many lines at most (default ${READER_DEFAULT_LINES}).` },
      },
      required: ['resultId'],
    },
    action: async (args: unknown) => {
      const a = (args ?? {}) as { resultId?: unknown; startLine?: unknown; lineCount?: unknown };
      const resultId = typeof a.resultId === 'string' ? a.resultId : '';
      const results = opts.results();
      if (!results) return readerErrorText(READER_TOOL, resultId, 'mcp.host_unavailable', 'The ttmcp backend is not connected');
      const startLine = integer(a.startLine);
      const lineCount = integer(a.lineCount);
      try {
        const page = await results.read({
          resultId,
          ...(startLine !== undefined ? { startLine } : {}),
          lineCount: Math.min(READER_MAX_LINES, Math.max(1, lineCount ?? READER_DEFAULT_LINES)),
          maxChars: readerChars(opts.inlineCharLimit()),
        });
        return readerPageText(page, READER_TOOL);
      } catch (err) {
        const { code, message } = errorParts(err);
        return readerErrorText(READER_TOOL, resultId, code, message);
      }
    },
    formatMessage: opts.formatMessage,
    shouldRegister: opts.shouldRegister,
  };
}

/** The reader's definition's estimated tokens (search.ts's estimate), for the Manager's sizes. */
export function readerTokens(): number {
  const d = readerDefinition({ results: () => undefined, inlineCharLimit: () => 0, shouldRegister: () => false, displayName: '', formatMessage: () => '' });
  return definitionTokens(d.name, d.description, d.parameters);
}
