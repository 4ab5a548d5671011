// A consumer of tauritavern-mcp.d.ts that must type-check (`make typecheck`,
// part of `make test`): it keeps the declarations honest about the surface
// pages and the mcp-manager extension rely on. It is never run.
import type {
  McpCompletion,
  McpDiscoveryResult,
  McpPromptGetOutcome,
  McpResourceReadOutcome,
  McpServerCapabilities,
  McpTestCallOutcome,
  TauriTavernExtensionStoreApi,
  TauriTavernMcpApi,
  TauriTavernMcpError,
  ToolDescriptionOverride,
  TtmcpBackendEvent,
  TtmcpMcpApi,
} from './tauritavern-mcp.js';

export async function consumer(): Promise<string[]> {
  await (window.__TAURITAVERN__?.ready ?? window.__TAURITAVERN_MAIN_READY__);
  const mcp: TtmcpMcpApi | undefined = window.__TAURITAVERN__?.api?.mcp;
  const upstream: TauriTavernMcpApi | undefined = mcp; // code that knows only upstream's surface
  if (!mcp || !upstream) return [];

  const server = await mcp.servers.create({ displayName: 'Search', endpoint: 'http://127.0.0.1:3000/mcp' });
  await mcp.servers.update({
    registrationId: server.id, displayName: 'Search', endpoint: server.endpoint,
    headers: { 'X-Api-Key': 'k' }, protocolVersion: '2025-06-18',
  });
  await mcp.servers.setState({ registrationId: server.id, state: 'active' });
  await mcp.tools.setPermission({ registrationId: server.id, nativeName: 'search', permission: 'ask' });
  await mcp.tools.setDescriptionOverride({ registrationId: server.id, nativeName: 'search', override: null });
  const found: McpDiscoveryResult = await mcp.servers.discover(server.id);
  await mcp.servers.refresh({ registrationId: server.id });

  // @ts-expect-error: there is no connect, as upstream.
  mcp.servers.connect?.(server.id);
  // @ts-expect-error: permissions are off, ask or allow.
  await mcp.tools.setPermission({ registrationId: server.id, nativeName: 'search', permission: 'deny' });

  // ttmcp's sign-in: in a click handler; the state, never a token.
  const signedIn = await mcp.servers.signIn(server.id, { signal: new AbortController().signal });
  await mcp.servers.signIn({ registrationId: server.id, clientId: 'c', clientSecret: 's' });
  const state: 'none' | 'required' | 'signed_in' | undefined = signedIn.auth?.state;
  const scopes: string[] = (await mcp.servers.signOut(server.id)).auth?.scopes ?? [];
  // @ts-expect-error: the page never gets a token.
  signedIn.auth?.accessToken;
  // @ts-expect-error: upstream's surface has no sign-in.
  upstream.servers.signIn(server.id);

  const controller = new AbortController();
  const outcome: McpTestCallOutcome = await mcp.tools.testCall(
    { registrationId: server.id, nativeName: 'search', argumentsJson: '{"q":"x"}' },
    { signal: controller.signal },
  );
  const lines: string[] = found.tools.map((t) => `${t.id} ${t.permission}`);
  // ttmcp's: a test call's progress while it runs.
  await mcp.tools.testCall(
    { registrationId: server.id, nativeName: 'search', argumentsJson: '{}' },
    { signal: controller.signal, onProgress: (p) => lines.push(`${p.progress}/${p.total ?? '?'} ${p.message ?? ''} (${p.updates})`) },
  );
  // @ts-expect-error: upstream's testCall takes no onProgress.
  await upstream.tools.testCall({ registrationId: server.id, nativeName: 'search', argumentsJson: '{}' }, { onProgress: () => {} });
  lines.push(state ?? 'none', ...scopes);
  // ttmcp's: a call whose server asked the user says how (any outcome kind).
  lines.push(String(outcome.rounds ?? 1), ...(outcome.elicitations ?? []).map((q) => `${q.mode} ${q.action}`));
  switch (outcome.outcome) {
    case 'known_response':
      if (outcome.response.kind === 'tool_result') {
        lines.push(...outcome.response.textBlocks.map((b) => b.text), outcome.response.structuredJson ?? '');
        for (const r of outcome.response.resources ?? []) {
          lines.push(r.type === 'resource_link' ? `${r.index}: ${r.name} <${r.uri}>` : `${r.index}: ${r.resource.uri} (${r.resource.size} bytes)`);
        }
      } else if (outcome.response.kind === 'server_error') {
        lines.push(String(outcome.response.code));
      }
      break;
    case 'not_sent':
    case 'outcome_unknown':
      lines.push(outcome.code);
      // @ts-expect-error: only a known response has one.
      lines.push(outcome.response);
  }

  const invoke = window.__TAURITAVERN__?.invoke?.safeInvoke;
  if (invoke) {
    const list = await invoke('list_mcp_servers');
    lines.push(...list.servers.map((s) => s.displayName), ...list.storageIssues.map((i) => i.fileName));
    await invoke('start_mcp_test_call', { dto: { callId: crypto.randomUUID() } });
  }
  addEventListener('tauritavern-mcp:state', (e) => lines.push(e.detail.state));
  const bridge = window.__TAURITAVERN__?.mcpBridge;
  if (bridge && bridge.state === 'refused') {
    lines.push(bridge.error?.code ?? '', bridge.error?.message ?? '', bridge.error?.command ?? '', bridge.backend);
    await bridge.reconnect();
  }
  // @ts-expect-error: not a bridge state.
  if (bridge?.state === 'failed') lines.push('never');

  // ttmcp's audit log (SPEC §10).
  const recent = await mcp.audit.list({ registrationId: server.id, limit: 20 });
  for (const e of recent.entries) {
    lines.push(`${e.time} ${e.source} ${e.serverDisplayName} ${e.nativeName} ${e.approval} ${e.outcome} ${e.code} ${e.durationMs}`);
    for (const q of e.elicitations ?? []) lines.push(`${e.rounds ?? 1} ${q.mode} ${q.action}`);
  }
  const older = await mcp.audit.list({ before: recent.entries.at(-1)?.time });
  lines.push(String(older.skippedLines + (await mcp.audit.list()).entries.length));
  // ttmcp's stdio servers (SPEC §10): shown, never configured from a page.
  for (const s of (await mcp.servers.list()).servers) {
    if (s.transport === 'stdio' && s.stdio) {
      lines.push(`${s.stdio.commandLine} ${s.stdio.envNames.join(',')} ${s.stdio.cwd ?? ''}`);
      const st = await mcp.stdio.status(s.id);
      lines.push(st.state, ...(st.lastExit ? [st.lastExit.code, ...st.lastExit.stderr] : []));
    }
  }
  // @ts-expect-error: there is no way to create a stdio server from a page.
  mcp.stdio.create?.({ command: 'sh' });
  // ttmcp's elicitation (SPEC §10): this page answers what servers ask during its own calls.
  mcp.elicitation.setHandler(async (req, { signal }) => {
    lines.push(req.callId, req.registrationId, req.serverDisplayName, req.nativeName, req.source, req.mode, req.message, req.url ?? '', req.error ?? '');
    if (signal.aborted) return { action: 'cancel' };
    if (req.mode === 'url') return { action: 'decline' };
    return { action: 'accept', content: { name: 'octocat', ...(req.requestedSchema ? {} : {}) } };
  });
  mcp.elicitation.setHandler(null);
  // @ts-expect-error: an action the protocol does not have.
  mcp.elicitation.setHandler(() => ({ action: 'maybe' }));
  // ttmcp's live connections (SPEC §10): read only, and an event when a server's lists changed.
  const conn = await mcp.connections.status(server.id);
  lines.push(conn.state, conn.sessions, String(conn.following), conn.protocolVersion ?? '', conn.note ?? '');
  window.addEventListener('tauritavern-mcp:event', (e) => {
    const detail = (e as CustomEvent<TtmcpBackendEvent>).detail;
    if (detail.event === 'servers_changed') lines.push(detail.data.registrationId, ...detail.data.lists);
  });
  // ttmcp's tool search (issue 31).
  const searched = await mcp.toolSearch.search({ query: 'search the code', registrationId: server.id, limit: 5 });
  lines.push(...searched.hits.map((h) => `${h.serverDisplayName} ${h.nativeName} ${h.title ?? ''} ${h.description} ${h.score.toFixed(2)} ${h.toolId} ${h.registrationId}`));
  // ttmcp's MCP Apps (issue 30).
  mcp.apps.setRenderer(true);
  const discovered = await mcp.servers.discover(server.id);
  lines.push(...discovered.tools.map((t) => `${t.nativeName} ${t.ui?.resourceUri ?? ''} ${(t.ui?.visibility ?? ['model', 'app']).join(',')}`));
  const view = await mcp.apps.readInterface({ registrationId: server.id, appToolName: 'board' });
  lines.push(view.viewId, view.csp, view.sha256, ...view.declared.connectDomains, ...view.dropped, String(view.permissions.camera), String(view.prefersBorder ?? false));
  await mcp.apps.startCall({ executionCallId: 'app-1' });
  const moved = await mcp.apps.call({ executionCallId: 'app-1', registrationId: server.id, appToolName: 'board', nativeName: 'move', argumentsJson: '{}', approval: 'once' });
  lines.push(moved.outcome);
  await mcp.apps.cancelCall({ executionCallId: 'app-1' });
  // @ts-expect-error an App call names its App
  await mcp.apps.call({ executionCallId: 'app-2', registrationId: server.id, nativeName: 'move', argumentsJson: '{}' });
  // ttmcp's tool sets (SPEC §10).
  const coding = await mcp.toolSets.save({
    name: 'Coding',
    tools: [`mcp/${server.id}:*`, `mcp/${server.id}:search`],
    descriptionOverrides: { [`mcp/${server.id}:search`]: { description: 'Search the code' } },
    resultInlineCharLimit: 20000,
  });
  const sets = await mcp.toolSets.list();
  lines.push(coding.id, String(coding.readerTool), ...sets.toolSets.map((s) => `${s.name} ${s.tools.length}`), ...sets.storageIssues.map((i) => i.fileName));
  await mcp.toolSets.save({ ...coding, readerTool: false });
  // @ts-expect-error: a selection entry is a ToolId.
  await mcp.toolSets.save({ name: 'x', tools: ['github:*'] });
  const invokeSet = window.__TAURITAVERN__?.invoke?.safeInvoke;
  if (invokeSet) {
    const applied = await invokeSet('list_legacy_mcp_tools', { dto: { toolSetId: coding.id } });
    lines.push(...applied.tools.map((t) => t.toolId), ...applied.diagnostics.map((d) => d.toolId ?? ''));
  }
  // readable results and what was kept of a long one
  for (const e of recent.entries) {
    if (e.resultId) {
      const page = await mcp.results.read({ resultId: e.resultId, startLine: 1, lineCount: 50 });
      lines.push(page.text, String(page.nextStartLine ?? page.totalLines));
    }
  }
  if (invokeSet) {
    const o = await invokeSet('call_legacy_mcp_tool', {
      dto: { executionCallId: 'x', toolId: `mcp/${server.id}:search`, readable: { inlineCharLimit: 20000, readerTool: true } },
    });
    lines.push(o.readable?.text ?? '', o.readable?.stored?.resultId ?? '');
  }
  await mcp.toolSets.remove(coding.id);
  await mcp.toolSets.remove({ id: coding.id });
  // @ts-expect-error: an entry's source is test or model.
  if (recent.entries[0]?.source === 'agent') lines.push('never');
  try {
    await mcp.servers.remove(server.id);
  } catch (err) {
    const e = err as TauriTavernMcpError;
    lines.push(`${e.kind} ${e.code ?? ''} ${e.message} ${e.command ?? ''}`);
  }
  return lines;
}

// ttmcp's resources and prompts (SPEC §10), as the Manager and a chat attachment use them.
export async function resourcesConsumer(id: string): Promise<string[]> {
  const mcp = window.__TAURITAVERN__?.api?.mcp;
  if (!mcp) return [];
  const out: string[] = [];
  const caps: McpServerCapabilities = await mcp.servers.capabilities(id);
  if (caps.advertised?.resources && caps.allowed.resources) {
    const list = await mcp.resources.list(id);
    const again = await mcp.resources.list({ registrationId: id, refresh: true });
    out.push(again.listedAt, again.expiresAt ?? '', String(again.fromCache), ...list.diagnostics.map((d) => `${d.code} ${d.item ?? ''}`));
    for (const r of list.items) out.push(`${r.name} ${r.uri} ${r.mimeType ?? ''} ${r.size ?? ''} ${r.annotations?.priority ?? ''}`);
    const templates = await mcp.resources.templates(id);
    for (const t of templates.items) {
      out.push(t.uriTemplate, ...t.variables);
      const c: McpCompletion = await mcp.completions.complete({
        registrationId: id, ref: { type: 'ref/resource', uri: t.uriTemplate },
        argument: { name: t.variables[0] ?? '', value: 'a' }, context: { arguments: {} },
      });
      out.push(...c.values, String(c.total ?? c.hasMore));
    }
    const read: McpResourceReadOutcome = await mcp.resources.read({ registrationId: id, uri: list.items[0]?.uri ?? 'test://x' });
    if (read.outcome === 'known_response') {
      if (read.response.kind === 'resource_contents') {
        for (const c of read.response.contents) out.push(c.type === 'text' ? c.text ?? '' : `${c.mimeType ?? ''} ${c.size} ${c.blob?.length ?? 0}`);
      } else if (read.response.kind === 'server_error') {
        out.push(String(read.response.code));
      }
    } else {
      out.push(read.code, read.message);
    }
  }
  const prompts = await mcp.prompts.list(id);
  for (const p of prompts.items) {
    const args: Record<string, string> = {};
    for (const a of p.arguments) if (a.required) args[a.name] = 'x';
    const got: McpPromptGetOutcome = await mcp.prompts.get({ registrationId: id, name: p.name, arguments: args });
    if (got.outcome !== 'known_response' || got.response.kind !== 'prompt_messages') continue;
    for (const m of got.response.messages) {
      const c = m.content;
      switch (c.type) {
        case 'text':
          out.push(`${m.role}: ${c.text}`);
          break;
        case 'image':
        case 'audio':
          out.push(`${c.mimeType} ${c.data.length}`);
          break;
        case 'resource':
          out.push(c.resource.uri, c.resource.text ?? '');
          break;
        case 'resource_link':
          out.push(c.uri, c.name);
          break;
      }
    }
  }
  await mcp.completions.complete({ registrationId: id, ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } });
  const server = await mcp.servers.setCapabilities({ registrationId: id, prompts: false });
  out.push(String(server.capabilities?.allowed.prompts), server.capabilities?.issue ?? '');
  const audit = await mcp.audit.list({ registrationId: id });
  for (const e of audit.entries) out.push(`${e.kind} ${e.uri ?? e.promptName ?? e.nativeName} ${e.contentBytes ?? ''} ${e.contentCount ?? ''}`);
  // @ts-expect-error: a completion's ref is a prompt or a resource.
  await mcp.completions.complete({ registrationId: id, ref: { type: 'ref/tool', name: 'x' }, argument: { name: 'a', value: '' } });
  // @ts-expect-error: prompt arguments are strings.
  await mcp.prompts.get({ registrationId: id, name: 'p', arguments: { n: 1 } });
  const invoke = window.__TAURITAVERN__?.invoke?.safeInvoke;
  if (invoke) {
    const r = await invoke('list_mcp_resources', { dto: { registrationId: id, refresh: true } });
    out.push(...r.items.map((i) => i.uri));
    const c = await invoke('get_mcp_server_capabilities', { dto: { registrationId: id } });
    out.push(String(c.advertised?.completions));
  }
  return out;
}

// The extension store, as the MCP Manager's Exa recommendation uses it.
export async function storeConsumer(): Promise<string[]> {
  const store: TauriTavernExtensionStoreApi | undefined = window.__TAURITAVERN__?.api?.extension?.store;
  if (!store) return [];
  const marker = { namespace: 'tauritavern.mcp-manager', key: 'exa-search-recommendation-handled' };
  const found = await store.tryGetJson<boolean>(marker);
  const out: string[] = [];
  if (found.found) {
    const handled: boolean = found.value;
    out.push(String(handled));
  } else {
    // @ts-expect-error: no value when not found.
    out.push(found.value.toString());
    await store.setJson({ ...marker, value: true });
  }
  await store.updateJson({ namespace: 'my-ext', key: 'settings', value: { theme: 'dark' }, table: 'state' });
  await store.updateJSON({ namespace: 'my-ext', key: 'settings', value: null });
  await store.renameKey({ namespace: 'my-ext', key: 'settings', newKey: 'prefs' });
  await store.updateKey({ namespace: 'my-ext', key: 'prefs', newKey: 'settings' });
  const settings = await store.getJson<{ theme: string }>({ namespace: 'my-ext', key: 'settings' });
  out.push(settings.theme, ...(await store.listKeys({ namespace: 'my-ext' })), ...(await store.listTables({ namespace: 'my-ext' })));
  await store.setBlob({ namespace: 'my-ext', key: 'icon.png', data: new Uint8Array([137, 80]) });
  await store.setBlob({ namespace: 'my-ext', key: 'a.bin', data: 'AAEC' });
  await store.setBlob({ namespace: 'my-ext', key: 'b.bin', data: [1, 2, 3] });
  const blob: Blob = await store.getBlob({ namespace: 'my-ext', key: 'icon.png' });
  out.push(blob.type, ...(await store.listBlobKeys({ namespace: 'my-ext', table: 'main' })));
  await store.deleteBlob({ namespace: 'my-ext', key: 'icon.png' });
  await store.deleteJson({ namespace: 'my-ext', key: 'settings' });
  await store.deleteTable({ namespace: 'my-ext', table: 'state' });
  // @ts-expect-error: deleteTable needs its table.
  await store.deleteTable({ namespace: 'my-ext' });
  // @ts-expect-error: a key is required.
  await store.getJson({ namespace: 'my-ext' });
  const invoke = window.__TAURITAVERN__?.invoke?.safeInvoke;
  if (invoke) {
    const r = await invoke('try_get_extension_store_json', { namespace: 'my-ext', key: 'k' });
    out.push(String(r.found));
    const b = await invoke('get_extension_store_blob', { namespace: 'my-ext', key: 'k', table: null });
    out.push(b.mime_type);
  }
  // upstream's override type: properties may be left out of an input
  const override: ToolDescriptionOverride = { description: 'Search the web' };
  out.push(override.description ?? '');
  return out;
}

// The legacy adapter, as TauriTavern's Generate hooks use it.
import {
  createEmptyLegacyMcpGenerationContext,
  createLegacyMcpGenerationContext,
  invokeLegacyMcpTool,
  LegacyMcpOutcomeUnknownError,
  prepareLegacyMcpGenerationContext,
  type LegacyMcpGenerationContext,
  type LegacyToolData,
} from './legacy-mcp-tools.js';

export async function generateRound(signal: AbortSignal): Promise<string[]> {
  let context: LegacyMcpGenerationContext;
  try {
    context = await createLegacyMcpGenerationContext({ createExecutionCallId: () => crypto.randomUUID() });
  } catch {
    context = createEmptyLegacyMcpGenerationContext();
  }
  const out: string[] = context.diagnostics.map((d) => `${d.code}: ${d.message}`);
  out.push(...context.tools.map((t) => t.toolId));
  const round = context.createRound();
  const data: LegacyToolData = { tools: [] };
  round.mergeIntoToolData(data);
  round.finalizeAdvertisedTools(data);
  for (const t of data.tools ?? []) {
    const tool = round.resolveTool(t.function.name);
    if (!tool) continue;
    try {
      const { result, error } = await tool.invoke({ argumentsJson: '{}', signal });
      out.push(`${tool.displayName} ${error} ${result}`);
    } catch (e) {
      if (e instanceof LegacyMcpOutcomeUnknownError) out.push(e.code);
      throw e;
    }
  }
  const helped = await prepareLegacyMcpGenerationContext({ toastr: { warning: (text) => out.push(text) } });
  out.push(String(helped.tools.length));
  const denied = await invokeLegacyMcpTool({}, { toolId: 'mcp/x:echo', argumentsJson: '{}', approval: 'denied' });
  out.push(denied.result);
  const steps = await invokeLegacyMcpTool({}, { toolId: 'mcp/x:steps', onProgress: (p) => out.push(String(p.updates)) });
  out.push(steps.result);
  // @ts-expect-error: an approval is once, always or denied.
  await invokeLegacyMcpTool({}, { toolId: 'mcp/x:echo', approval: 'maybe' });
  return out;
}
