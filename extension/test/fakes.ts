// Test doubles for the host: SillyTavern's context (with the Popup double),
// an in-memory api.mcp with the upstream semantics the Manager relies on,
// the extension store and ttmcp's bridge status.

import type {
  CompleteMcpArgumentInput,
  CreateMcpServerInput,
  GetMcpPromptInput,
  McpCompletion,
  McpListInput,
  McpListResult,
  McpPrompt,
  McpPromptGetOutcome,
  McpResource,
  McpResourceReadOutcome,
  McpResourceTemplate,
  McpServerCapabilities,
  ReadMcpResourceInput,
  SetMcpServerCapabilitiesInput,
  ExtensionStoreEntryOptions,
  ExtensionStoreJsonLookup,
  ExtensionStoreSetJsonOptions,
  JsonValue,
  McpDiscoveredTool,
  McpDiscoveryResult,
  McpRegistrationIdInput,
  McpServerList,
  McpTestCallOptions,
  McpTestCallOutcome,
  SetMcpServerStateInput,
  SetMcpToolDescriptionOverrideInput,
  SetMcpToolPermissionInput,
  TauriTavernMcpApi,
  TauriTavernMcpServer,
  TestMcpToolCallInput,
  UpdateMcpServerInput,
} from '../../jsapi/tauritavern-mcp';
import type { RetryClock } from '../src/boot/retry';
import type { BridgeStatus, ExtensionStore } from '../src/host/tauritavern';
import type { McpManagerActions } from '../src/features/manager/McpManagerApp';
import type { Translate } from '../src/base/texts';
import { POPUP_RESULT, POPUP_TYPE, TestPopup } from './popup-double';

export const SERVER_ID = '11111111-1111-4111-8111-111111111111';
export const SERVER_B = '22222222-2222-4222-8222-222222222222';

export function server(state: 'active' | 'paused' = 'paused', patch: Partial<TauriTavernMcpServer> = {}): TauriTavernMcpServer {
  return {
    id: SERVER_ID,
    displayName: 'Local tools',
    endpoint: 'http://127.0.0.1:3000/mcp',
    headers: {},
    protocolVersion: 'auto',
    state,
    toolPermissions: {},
    toolDescriptionOverrides: {},
    ...patch,
  };
}

export function searchTool(patch: Partial<McpDiscoveredTool> = {}, registrationId = SERVER_ID): McpDiscoveredTool {
  return {
    id: `mcp/${registrationId}:search`,
    nativeName: 'search',
    title: 'Search files',
    description: 'Search local files by name.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    annotations: {},
    permission: 'off',
    ...patch,
  };
}

export function discovery(patch: Partial<McpDiscoveryResult> = {}, registrationId = SERVER_ID): McpDiscoveryResult {
  return {
    registrationId,
    protocolVersion: '2026-07-28',
    serverName: 'Local MCP',
    tools: [searchTool({}, registrationId)],
    diagnostics: [],
    staleTools: [],
    ...patch,
  };
}

/** An API rejection as the shim makes them: message starting with the code, plus code and kind. */
/** A promise the test settles. */
export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function apiError(code: string, message: string, kind = 'BadRequest'): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code, kind });
}

// ---------------------------------------------------------------- SillyTavern

export interface StDouble {
  extensionSettings: Record<string, unknown>;
  saves: number;
}

export interface StOptions {
  translate?: Translate;
  extensionSettings?: Record<string, unknown>;
  /** false: a SillyTavern without Popup. */
  popup?: boolean;
  /** More members of getContext() (e.g. tool calling). */
  context?: Record<string, unknown>;
}

/** Installs globalThis.SillyTavern with a getContext() that builds a fresh object per call, as SillyTavern does. */
export function installSillyTavern(opts: StOptions = {}): StDouble {
  const st: StDouble = { extensionSettings: opts.extensionSettings ?? {}, saves: 0 };
  (globalThis as { SillyTavern?: unknown }).SillyTavern = {
    getContext: () => ({
      ...(opts.popup === false ? {} : { Popup: TestPopup, POPUP_TYPE, POPUP_RESULT }),
      ...(opts.translate ? { translate: opts.translate } : {}),
      extensionSettings: st.extensionSettings,
      saveSettingsDebounced: () => {
        st.saves++;
      },
      ...opts.context,
    }),
  };
  return st;
}

// ---------------------------------------------------------------- api.mcp

type Method =
  | 'list'
  | 'create'
  | 'update'
  | 'setState'
  | 'remove'
  | 'discover'
  | 'refresh'
  | 'setPermission'
  | 'setDescriptionOverride'
  | 'testCall'
  | 'capabilities'
  | 'setCapabilities'
  | 'listResources'
  | 'listTemplates'
  | 'read'
  | 'listPrompts'
  | 'getPrompt'
  | 'complete';

function idOf(input: McpRegistrationIdInput): string {
  return typeof input === 'string' ? input : input.registrationId;
}

/** What a server advertises when a test does not say: tools, resources, prompts and completions. */
export function advertised(patch: Partial<NonNullable<McpServerCapabilities['advertised']>> = {}): NonNullable<McpServerCapabilities['advertised']> {
  return {
    protocolVersion: '2025-11-25',
    tools: true,
    toolsListChanged: false,
    resources: true,
    resourcesSubscribe: false,
    resourcesListChanged: true,
    prompts: true,
    promptsListChanged: true,
    completions: true,
    logging: false,
    observedAt: '2026-12-01T10:00:00.000000000Z',
    ...patch,
  };
}

export function capabilities(patch: Partial<McpServerCapabilities> = {}): McpServerCapabilities {
  return { allowed: { resources: true, prompts: true }, advertised: advertised(), ...patch };
}

export function readme(patch: Partial<McpResource> = {}): McpResource {
  return { uri: 'file:///docs/README.md', name: 'README.md', title: 'Read me', mimeType: 'text/markdown', size: 11, ...patch };
}

export function fileTemplate(patch: Partial<McpResourceTemplate> = {}): McpResourceTemplate {
  return { uriTemplate: 'file:///docs/{name}', name: 'Docs file', mimeType: 'text/plain', variables: ['name'], ...patch };
}

export function summarize(patch: Partial<McpPrompt> = {}): McpPrompt {
  return {
    name: 'summarize',
    title: 'Summarize',
    description: 'Summarize a topic.',
    arguments: [
      { name: 'topic', description: 'What to summarize', required: true },
      { name: 'style', required: false },
    ],
    ...patch,
  };
}

/** A read answering text contents. */
export function textRead(uri: string, text: string, mimeType = 'text/plain'): McpResourceReadOutcome {
  return {
    outcome: 'known_response',
    response: { kind: 'resource_contents', uri, contents: [{ type: 'text', uri, mimeType, text, size: new TextEncoder().encode(text).length }], totalBytes: new TextEncoder().encode(text).length, diagnostics: [] },
  };
}

function listOf<T>(registrationId: string, items: T[], fromCache: boolean): McpListResult<T> {
  return { registrationId, items: structuredClone(items), diagnostics: [], listedAt: '2026-12-01T10:00:00Z', fromCache };
}

/**
 * FakeMcp is api.mcp over an in-memory registry. Each call is recorded;
 * `failNext` makes the next call of a method reject; `testCallImpl` and
 * `discoveryFor` decide what calls and discoveries return.
 */
export class FakeMcp implements TauriTavernMcpApi {
  registrations: TauriTavernMcpServer[] = [];
  storageIssues: McpServerList['storageIssues'] = [];
  calls: Array<{ method: Method; input?: unknown }> = [];
  private failures = new Map<Method, unknown[]>();
  private nextId = 1;
  discoveryFor: (id: string) => McpDiscoveryResult = (id) => discovery({}, id);
  testCallImpl: (input: TestMcpToolCallInput, options?: McpTestCallOptions) => Promise<McpTestCallOutcome> = () =>
    Promise.resolve({
      outcome: 'known_response',
      response: { kind: 'tool_result', isError: false, textBlocks: [{ index: 0, text: 'ok' }], diagnostics: [] },
    });

  /** Resources, templates and prompts by registration (every server has the same unless set). */
  resourcesFor: (id: string) => McpResource[] = () => [readme()];
  templatesFor: (id: string) => McpResourceTemplate[] = () => [fileTemplate()];
  promptsFor: (id: string) => McpPrompt[] = () => [summarize()];
  /** What servers.capabilities answers when the registration has none. */
  capabilitiesFor: (id: string) => McpServerCapabilities = () => capabilities();
  readImpl: (input: ReadMcpResourceInput) => Promise<McpResourceReadOutcome> = (input) => Promise.resolve(textRead(input.uri, `text of ${input.uri}`));
  getImpl: (input: GetMcpPromptInput) => Promise<McpPromptGetOutcome> = (input) =>
    Promise.resolve({
      outcome: 'known_response',
      response: { kind: 'prompt_messages', name: input.name, messages: [{ role: 'user', content: { type: 'text', text: `Prompt ${input.name} ${JSON.stringify(input.arguments ?? {})}` } }], diagnostics: [] },
    });
  completeImpl: (input: CompleteMcpArgumentInput) => Promise<McpCompletion> = (input) =>
    Promise.resolve({ values: ['alpha', 'beta', 'gamma'].filter((v) => v.startsWith(input.argument.value)), hasMore: false });

  constructor(servers: TauriTavernMcpServer[] = []) {
    this.registrations = servers.map((s) => structuredClone(s));
  }

  private caps(id: string): McpServerCapabilities {
    return this.find(id).capabilities ?? this.capabilitiesFor(id);
  }

  /** Refuses what the user turned off, as the backend does. */
  private allowed(id: string, primitive: 'resources' | 'prompts'): void {
    if (!this.caps(id).allowed[primitive]) {
      throw apiError(`mcp.${primitive}_disabled`, `${primitive} are turned off for this server`, 'Conflict');
    }
  }

  failNext(method: Method, err: unknown): void {
    const list = this.failures.get(method) ?? [];
    list.push(err);
    this.failures.set(method, list);
  }

  count(method: Method): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  inputs(method: Method): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.input);
  }

  private async enter(method: Method, input?: unknown): Promise<void> {
    this.calls.push(input === undefined ? { method } : { method, input: structuredClone(input) });
    await Promise.resolve();
    const queued = this.failures.get(method);
    if (queued && queued.length > 0) throw queued.shift();
  }

  private find(id: string): TauriTavernMcpServer {
    const s = this.registrations.find((r) => r.id === id);
    if (!s) throw apiError('mcp.registration_not_found', `MCP registration not found: ${id}`, 'NotFound');
    return s;
  }

  private put(s: TauriTavernMcpServer): TauriTavernMcpServer {
    this.registrations = this.registrations.map((r) => (r.id === s.id ? s : r));
    return structuredClone(s);
  }

  servers = {
    list: async (): Promise<McpServerList> => {
      await this.enter('list');
      return { servers: structuredClone(this.registrations), storageIssues: structuredClone(this.storageIssues) };
    },
    create: async (input: CreateMcpServerInput): Promise<TauriTavernMcpServer> => {
      await this.enter('create', input);
      const id = `00000000-0000-4000-8000-${String(this.nextId++).padStart(12, '0')}`;
      const s: TauriTavernMcpServer = {
        id,
        displayName: input.displayName,
        endpoint: input.endpoint,
        headers: input.headers ?? {},
        protocolVersion: input.protocolVersion ?? 'auto',
        state: 'paused',
        toolPermissions: {},
        toolDescriptionOverrides: {},
      };
      this.registrations.push(s);
      return structuredClone(s);
    },
    update: async (input: UpdateMcpServerInput): Promise<TauriTavernMcpServer> => {
      await this.enter('update', input);
      const s = this.find(input.registrationId);
      return this.put({
        ...s,
        displayName: input.displayName,
        endpoint: input.endpoint,
        headers: input.headers,
        protocolVersion: input.protocolVersion,
      });
    },
    setState: async (input: SetMcpServerStateInput): Promise<TauriTavernMcpServer> => {
      await this.enter('setState', input);
      return this.put({ ...this.find(input.registrationId), state: input.state });
    },
    remove: async (input: McpRegistrationIdInput): Promise<void> => {
      await this.enter('remove', input);
      this.find(idOf(input));
      this.registrations = this.registrations.filter((r) => r.id !== idOf(input));
    },
    discover: async (input: McpRegistrationIdInput): Promise<McpDiscoveryResult> => {
      await this.enter('discover', input);
      return structuredClone(this.discoveryFor(idOf(input)));
    },
    refresh: async (input: McpRegistrationIdInput): Promise<McpDiscoveryResult> => {
      await this.enter('refresh', input);
      return structuredClone(this.discoveryFor(idOf(input)));
    },
    capabilities: async (input: McpRegistrationIdInput): Promise<McpServerCapabilities> => {
      await this.enter('capabilities', input);
      return structuredClone(this.caps(idOf(input)));
    },
    setCapabilities: async (input: SetMcpServerCapabilitiesInput): Promise<TauriTavernMcpServer> => {
      await this.enter('setCapabilities', input);
      const s = this.find(input.registrationId);
      const before = this.caps(s.id);
      const allowed = { resources: input.resources ?? before.allowed.resources, prompts: input.prompts ?? before.allowed.prompts };
      const { issue: _fixed, ...kept } = before;
      return this.put({ ...s, capabilities: { ...kept, allowed } });
    },
  };

  resources = {
    list: async (input: McpListInput) => {
      await this.enter('listResources', input);
      this.allowed(idOf(input), 'resources');
      return listOf(idOf(input), this.resourcesFor(idOf(input)), typeof input === 'string' || !input.refresh);
    },
    templates: async (input: McpListInput) => {
      await this.enter('listTemplates', input);
      this.allowed(idOf(input), 'resources');
      return listOf(idOf(input), this.templatesFor(idOf(input)), typeof input === 'string' || !input.refresh);
    },
    read: async (input: ReadMcpResourceInput): Promise<McpResourceReadOutcome> => {
      await this.enter('read', input);
      this.allowed(input.registrationId, 'resources');
      return this.readImpl(input);
    },
  };

  prompts = {
    list: async (input: McpListInput) => {
      await this.enter('listPrompts', input);
      this.allowed(idOf(input), 'prompts');
      return listOf(idOf(input), this.promptsFor(idOf(input)), typeof input === 'string' || !input.refresh);
    },
    get: async (input: GetMcpPromptInput): Promise<McpPromptGetOutcome> => {
      await this.enter('getPrompt', input);
      this.allowed(input.registrationId, 'prompts');
      return this.getImpl(input);
    },
  };

  completions = {
    complete: async (input: CompleteMcpArgumentInput): Promise<McpCompletion> => {
      await this.enter('complete', input);
      return this.completeImpl(input);
    },
  };

  tools = {
    setPermission: async (input: SetMcpToolPermissionInput): Promise<TauriTavernMcpServer> => {
      await this.enter('setPermission', input);
      const s = this.find(input.registrationId);
      const toolPermissions = { ...s.toolPermissions };
      if (input.permission === 'off') delete toolPermissions[input.nativeName];
      else toolPermissions[input.nativeName] = input.permission;
      return this.put({ ...s, toolPermissions });
    },
    setDescriptionOverride: async (input: SetMcpToolDescriptionOverrideInput): Promise<TauriTavernMcpServer> => {
      await this.enter('setDescriptionOverride', input);
      const s = this.find(input.registrationId);
      const toolDescriptionOverrides = { ...s.toolDescriptionOverrides };
      if (input.override) toolDescriptionOverrides[input.nativeName] = input.override;
      else delete toolDescriptionOverrides[input.nativeName];
      return this.put({ ...s, toolDescriptionOverrides });
    },
    testCall: async (input: TestMcpToolCallInput, options?: McpTestCallOptions): Promise<McpTestCallOutcome> => {
      await this.enter('testCall', input);
      return this.testCallImpl(input, options);
    },
  };
}

// ---------------------------------------------------------------- store

/** The store's JSON entries in memory (the two methods the Manager uses). */
export class FakeStore implements ExtensionStore {
  data = new Map<string, unknown>();
  calls: Array<{ method: string; input: unknown }> = [];
  failNextSet: unknown = undefined;

  private key(i: ExtensionStoreEntryOptions) {
    return `${i.namespace}/${i.table ?? 'main'}/${i.key}`;
  }

  tryGetJson = async <T = JsonValue>(input: ExtensionStoreEntryOptions): Promise<ExtensionStoreJsonLookup<T>> => {
    this.calls.push({ method: 'tryGetJson', input });
    const k = this.key(input);
    return this.data.has(k) ? { found: true, value: this.data.get(k) as T } : { found: false };
  };

  setJson = async (input: ExtensionStoreSetJsonOptions): Promise<null> => {
    this.calls.push({ method: 'setJson', input });
    if (this.failNextSet !== undefined) {
      const err = this.failNextSet;
      this.failNextSet = undefined;
      throw err;
    }
    this.data.set(this.key(input), input.value);
    return null;
  };
}

// ---------------------------------------------------------------- __TAURITAVERN__

/** The bridge status as a loader publishes it (reconnect absent: an older loader). */
export type BridgeDouble = BridgeStatus;

export interface HostDouble {
  mcp?: unknown;
  store?: FakeStore;
  bridge?: BridgeDouble;
  ready?: Promise<void>;
}

/** Publishes window.__TAURITAVERN__ as a loader (or TauriTavern) would. */
export function publishHost(h: HostDouble): void {
  const api: Record<string, unknown> = {};
  if (h.mcp !== undefined) api.mcp = h.mcp;
  if (h.store) api.extension = { store: h.store };
  (window as { __TAURITAVERN__?: unknown }).__TAURITAVERN__ = {
    ready: h.ready ?? Promise.resolve(),
    api,
    ...(h.bridge ? { mcpBridge: h.bridge } : {}),
  };
}

/** Changes the bridge state and dispatches the event, as the shim does (C2). */
export function setBridgeState(bridge: BridgeDouble, state: BridgeDouble['state'], error?: BridgeDouble['error']): void {
  bridge.state = state;
  if (error) bridge.error = error;
  else delete bridge.error;
  window.dispatchEvent(new CustomEvent('tauritavern-mcp:state', { detail: { state } }));
}

/** A rejection that names an action the test did not expect. */
export function unexpected(name: string): Promise<never> {
  return Promise.reject(new Error(`unexpected action: ${name}`));
}

/** Manager actions that fail the test unless overridden. */
export function strictActions(overrides: Partial<McpManagerActions> = {}): McpManagerActions {
  return {
    list: () => unexpected('list'),
    addServer: () => unexpected('addServer'),
    editServer: () => unexpected('editServer'),
    confirmActivate: () => unexpected('confirmActivate'),
    confirmRemove: () => unexpected('confirmRemove'),
    setState: () => unexpected('setState'),
    remove: () => unexpected('remove'),
    discover: () => unexpected('discover'),
    refresh: () => unexpected('refresh'),
    setPermission: () => unexpected('setPermission'),
    setDescriptionOverride: () => unexpected('setDescriptionOverride'),
    openToolDialog: () => unexpected('openToolDialog'),
    openTestCall: () => unexpected('openTestCall'),
    ...overrides,
  };
}

// ---------------------------------------------------------------- timers

/**
 * ManualClock is the retry loop's clock under the test's hand: timers run
 * only when the test fires them, now() moves only when they fire or the
 * test advances it, random() is 0.5 (no jitter).
 */
export class ManualClock implements RetryClock {
  t = 0;
  #next = 1;
  #timers = new Map<number, { fn: () => void; at: number; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { fn, at: this.t + ms, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  now(): number {
    return this.t;
  }
  random(): number {
    return 0.5;
  }
  /** The delays (ms) of the timers waiting, in the order set. */
  get pending(): number[] {
    return [...this.#timers.values()].map((t) => t.ms);
  }
  advance(ms: number): void {
    this.t += ms;
  }
  /** Moves to the earliest timer and runs it; returns its delay. */
  fire(): number {
    const first = [...this.#timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
    if (!first) throw new Error('no timer is waiting');
    const [id, timer] = first;
    this.#timers.delete(id);
    this.t = Math.max(this.t, timer.at);
    timer.fn();
    return timer.ms;
  }
}

// ---------------------------------------------------------------- SillyTavern's chat

/**
 * SillyTavern 1.18's chat members of getContext(): the open chat's id and
 * metadata (saveMetadata), extension prompts (setExtensionPrompt as
 * script.js writes them; openChat replaces the object, as clearChat does),
 * the event bus with awaited listeners, characters.
 */
export class StChatDouble {
  chatId: string | undefined = 'Seraphina - 2026-12-01';
  metadata: Record<string, Record<string, unknown>> = { 'Seraphina - 2026-12-01': {} };
  extensionPrompts: Record<string, { value: string; position: number; depth: number; scan: boolean; role: number }> = {};
  saves = 0;
  characters = [{ name: 'Seraphina', avatar: 'Seraphina.png' }];
  characterId: string | undefined = '0';
  #listeners = new Map<string, Set<(...args: never[]) => unknown>>();

  /** The members getContext() spreads afresh on every call. */
  get members(): Record<string, unknown> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    return {
      get chatMetadata() {
        return self.chatId === undefined ? {} : (self.metadata[self.chatId] ??= {});
      },
      get extensionPrompts() {
        return self.extensionPrompts;
      },
      get characterId() {
        return self.characterId;
      },
      characters: this.characters,
      groupId: null,
      getCurrentChatId: () => this.chatId,
      saveMetadata: async () => {
        this.saves++;
      },
      setExtensionPrompt: (key: string, value: string, position: number, depth: number, scan = false, role = 0) => {
        this.extensionPrompts[key] = { value: String(value), position: Number(position), depth: Number(depth), scan: !!scan, role: Number(role ?? 0) };
      },
      eventSource: {
        on: (event: string, fn: (...args: never[]) => unknown) => {
          if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
          this.#listeners.get(event)!.add(fn);
        },
        removeListener: (event: string, fn: (...args: never[]) => unknown) => this.#listeners.get(event)?.delete(fn),
      },
    };
  }

  async emit(event: string, ...args: unknown[]): Promise<void> {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) await (fn as (...a: unknown[]) => unknown)(...args);
  }

  /** Opens another chat as SillyTavern does: clearChat empties the extension prompts, then CHAT_CHANGED. */
  async openChat(chatId: string | undefined): Promise<void> {
    this.extensionPrompts = {};
    this.chatId = chatId;
    await this.emit('chat_id_changed', chatId);
  }
}
