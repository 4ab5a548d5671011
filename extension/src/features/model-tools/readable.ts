// What the model reads when the page itself answers a call (the backend
// answers every call it receives with its own readable text, domain
// ProjectReadable): a call it refuses before sending anything, an unknown
// outcome (thrown by the legacy module), and the reader tool's pages. The
// sentences are the backend's: the tool by its title and server, and the
// code the model can act on.

import type { LegacyMcpTool, McpToolResultPage } from '../../../../jsapi/tauritavern-mcp';

/** The tool as the model's texts name it: `Title` (Server). */
export function toolLabel(tool: LegacyMcpTool): string {
  return `\`${tool.title || tool.nativeName}\` (${tool.serverDisplayName})`;
}

/** text as a sentence: with a full stop unless it already ends one (the backend's messages have none). */
export function sentence(text: string): string {
  const t = text.trimEnd();
  return t === '' || /[.!?…]$/.test(t) ? t : `${t}.`;
}

/** A call that was not sent. */
export function notCalledText(tool: LegacyMcpTool, code: string, message: string): string {
  return `The MCP tool ${toolLabel(tool)} was not called (${code}): ${sentence(message)}`;
}

/** A call whose outcome is unknown: it may have run; the tool loop ends. */
export function unknownText(tool: LegacyMcpTool, code: string, message: string): string {
  return `The MCP tool ${toolLabel(tool)} may have run, but its result is unknown (${code}): ${sentence(message)} It was not retried, and the tool loop ends here.`;
}

/** The reader tool's answer: the lines read, and where to go on. */
export function readerPageText(page: McpToolResultPage, readerName: string): string {
  const head = `Result ${page.resultId}, lines ${page.startLine}–${page.endLine} of ${page.totalLines}:`;
  const tail =
    page.nextStartLine !== undefined
      ? `More follows: call ${readerName} with {"resultId": "${page.resultId}", "startLine": ${page.nextStartLine}}.`
      : 'This is the end of the result.';
  return `${head}\n\n${page.text}\n\n${tail}`;
}

/** The reader tool's answer when it could not read. */
export function readerErrorText(readerName: string, resultId: string, code: string, message: string): string {
  return `${readerName} could not read result \`${resultId}\` (${code}): ${sentence(message)}`;
}
