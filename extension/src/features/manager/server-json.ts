// The JSON mode of the Add dialog (reference §8.5): one Streamable HTTP
// server, as a direct object ({"name": {...}}) or under mcpServers, in the
// shape MCP clients use for their configuration files. Nothing is imported
// unless the whole entry is valid.

import type { CreateMcpServerInput } from '../../../../jsapi/tauritavern-mcp';
import { isHttpUrl, isProtocolVersion } from '../../base/protocol';
import type { TextKey, TextParams } from '../../base/texts';
import { isRecord } from '../../base/values';

export type ServerJsonError = { key: TextKey; params?: TextParams } | { syntax: string };

export type ServerJsonResult = { ok: true; input: CreateMcpServerInput } | { ok: false; error: ServerJsonError };

const TRANSPORTS = new Set(['http', 'streamable-http', 'streamable_http']);

function fail(key: TextKey, params?: TextParams): ServerJsonResult {
  return { ok: false, error: params ? { key, params } : { key } };
}

export function parseServerJson(text: string): ServerJsonResult {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: { syntax: err instanceof Error ? err.message : String(err) } };
  }
  if (!isRecord(root)) return fail('json_not_object', { label: 'configuration' });
  let servers: unknown = root;
  if (Object.prototype.hasOwnProperty.call(root, 'mcpServers')) {
    servers = root.mcpServers;
    if (!isRecord(servers)) return fail('json_not_object', { label: 'mcpServers' });
  }
  const entries = Object.entries(servers as Record<string, unknown>);
  const only = entries.length === 1 ? entries[0] : undefined;
  if (!only) return fail('json_one_server');
  const [key, entry] = only;
  const displayName = key.trim();
  if (displayName === '') return fail('json_name_required');
  if (!isRecord(entry)) return fail('json_not_object', { label: displayName });
  if (entry.url === undefined && entry.command !== undefined) return fail('json_stdio');
  const url = entry.url;
  if (typeof url !== 'string' || !isHttpUrl(url.trim())) return fail('json_url');
  if (entry.type !== undefined) {
    if (typeof entry.type !== 'string') return fail('json_type_string');
    if (!TRANSPORTS.has(entry.type.toLowerCase())) return fail('json_type_unsupported', { type: entry.type });
  }
  const headers: Record<string, string> = {};
  if (entry.headers !== undefined) {
    if (!isRecord(entry.headers)) return fail('json_headers_object');
    for (const [name, value] of Object.entries(entry.headers)) {
      if (typeof value !== 'string') return fail('json_header_string', { name });
      headers[name] = value;
    }
  }
  const protocolVersion = entry.protocolVersion ?? 'auto';
  if (!isProtocolVersion(protocolVersion)) return fail('json_protocol');
  return { ok: true, input: { displayName, endpoint: url.trim(), headers, protocolVersion } };
}
