// Type declarations of the MCP host API published by ttmcp
// (jsapi/tauritavern-mcp.js + the wasm shim), with TauriTavern's type
// names: window.__TAURITAVERN__.api.mcp, window.__TAURITAVERN__.api
// .extension.store, window.__TAURITAVERN__.invoke.safeInvoke, the ready
// promises and the bridge status.
//
//   await (window.__TAURITAVERN__?.ready ?? window.__TAURITAVERN_MAIN_READY__);
//   const mcp = window.__TAURITAVERN__!.api!.mcp!;

// ---------------------------------------------------------------- basics

export type McpProtocolVersion = 'auto' | '2026-07-28' | '2025-11-25' | '2025-06-18' | '2025-03-26';
export type McpServerState = 'active' | 'paused';
/** Off is never stored: it is the absence of an entry in toolPermissions. */
export type McpToolPermission = 'off' | 'ask' | 'allow';
export type McpStoredToolPermission = Exclude<McpToolPermission, 'off'>;

/** Any JSON value, as received from the backend. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------- registrations

export interface ToolDescriptionOverride {
  /** Replaces the tool description the model sees; absent when only properties are overridden. */
  description?: string;
  /** Input-schema property name → description the model sees. The backend always returns it (possibly
   * empty); an input may leave it out, as upstream's type allows. */
  properties?: Record<string, string>;
}

export interface TauriTavernMcpServer {
  /** Canonical lowercase hyphenated UUID. */
  id: string;
  displayName: string;
  /** Normalised (WHATWG-serialised) http(s) URL. */
  endpoint: string;
  /** Header name → value, sorted by name; {} when none. */
  headers: Record<string, string>;
  protocolVersion: McpProtocolVersion;
  state: McpServerState;
  /** Native tool name → 'ask' | 'allow'. */
  toolPermissions: Record<string, McpStoredToolPermission>;
  /** Native tool name → override. */
  toolDescriptionOverrides: Record<string, ToolDescriptionOverride>;
  /** ttmcp's addition (SPEC §10): where the server stands with its authorization. Absent on TauriTavern. */
  auth?: McpServerAuth;
  /**
   * ttmcp's addition (SPEC §10): 'stdio' for a local server started as a process on the
   * backend's machine; absent for a Streamable HTTP server. A stdio server's endpoint is
   * "stdio:" followed by its command line, and its headers are {}.
   */
  transport?: 'stdio';
  /** ttmcp's addition: how a stdio server is started (present exactly when transport is 'stdio'). */
  stdio?: McpStdioConfig;
  /**
   * ttmcp's addition (SPEC §10 "Resources and prompts"): what the server advertised (once known) and which
   * of resources and prompts the user allows. Absent on TauriTavern.
   */
  capabilities?: McpServerCapabilities;
}

/**
 * ttmcp's addition: a server's sign-in state. Never a token or a secret:
 * tokens stay in the ttmcp backend.
 *   none      — the server never asked for authorization (or was signed out since)
 *   required  — it refused a request for want of authorization: sign in
 *   signed_in — a sign-in is kept (challenge, when present, names scopes it still asks for)
 */
export interface McpServerAuth {
  state: 'none' | 'required' | 'signed_in';
  /** Granted scopes (signed_in); [] otherwise. */
  scopes: string[];
  /** When the access token expires (RFC 3339), if the server said. */
  expiresAt?: string;
  /** A refresh token is kept: an expired access token is renewed without signing in again. */
  refreshable: boolean;
  /** Host of the authorization server's token endpoint. */
  authorizationServer?: string;
  /** 'dynamic': ttmcp registered itself; 'manual': a client id the user entered. */
  clientRegistration?: 'dynamic' | 'manual';
  signedInAt?: string;
  /** What the server said when it last refused a request. */
  challenge?: McpAuthChallenge;
  /** The backend's callback, to register with an authorization server that offers no dynamic registration. */
  redirectUri?: string;
  /** Why the sign-in state cannot be read (a damaged auth file); signOut deletes it. */
  issue?: string;
}

export interface McpAuthChallenge {
  status: 401 | 403;
  /** The challenge's error, e.g. 'invalid_token', 'insufficient_scope'. */
  error?: string;
  description?: string;
  /** Scopes the server named. */
  scopes: string[];
  at: string;
}

/** A registration file that could not be loaded. */
export interface McpStorageIssue {
  fileName: string;
  message: string;
}

export interface McpServerList {
  servers: TauriTavernMcpServer[];
  storageIssues: McpStorageIssue[];
}

export interface CreateMcpServerInput {
  displayName: string;
  endpoint: string;
  /** Default {}. */
  headers?: Record<string, string>;
  /** Default 'auto'. */
  protocolVersion?: McpProtocolVersion;
}

export interface UpdateMcpServerInput {
  registrationId: string;
  displayName: string;
  endpoint: string;
  headers: Record<string, string>;
  protocolVersion: McpProtocolVersion;
}

export interface SetMcpServerStateInput {
  registrationId: string;
  state: McpServerState;
}

/** remove / discover / refresh take a registration id or an object carrying one. */
export type McpRegistrationIdInput = string | { registrationId: string };

export interface SetMcpToolPermissionInput {
  registrationId: string;
  nativeName: string;
  permission: McpToolPermission;
}

export interface SetMcpToolDescriptionOverrideInput {
  registrationId: string;
  nativeName: string;
  /** null (or absent) deletes the override. */
  override?: ToolDescriptionOverride | null;
}

// ---------------------------------------------------------------- discovery

export interface McpDiscoveredTool {
  /** `mcp/<registration-uuid>:<nativeName>` */
  id: string;
  nativeName: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  /** Raw server annotations ({} when none); untrusted hints. */
  annotations: JsonObject;
  permission: McpToolPermission;
  /** ttmcp (MCP Apps): the tool's `_meta.ui`; absent when it has none. */
  ui?: McpToolUi;
}

/** A tool's MCP Apps metadata (`_meta.ui`, or the deprecated `_meta["ui/resourceUri"]`). */
export interface McpToolUi {
  /** The `ui://` resource of the tool's interface; absent when it has none. */
  resourceUri?: string;
  /** Who may see the tool; absent: `["model","app"]`. Without `"model"` it is never offered to a model. */
  visibility?: Array<'model' | 'app'>;
}

export interface McpDiscoveryDiagnostic {
  code: string;
  nativeName?: string;
  message: string;
}

/** A stored permission whose tool is not in the current catalog. */
export interface McpStaleTool {
  nativeName: string;
  permission: McpStoredToolPermission;
}

export interface McpDiscoveryResult {
  registrationId: string;
  /** The negotiated protocol version. */
  protocolVersion: string;
  serverName?: string;
  serverVersion?: string;
  tools: McpDiscoveredTool[];
  diagnostics: McpDiscoveryDiagnostic[];
  staleTools: McpStaleTool[];
}

// ---------------------------------------------------------------- test calls

export interface TestMcpToolCallInput {
  registrationId: string;
  nativeName: string;
  /** A JSON object as text; it stays a string end to end (integers beyond 2^53 survive). */
  argumentsJson: string;
}

export interface McpTestCallOptions {
  signal?: AbortSignal;
}

export interface McpTextBlock {
  index: number;
  text: string;
}

export interface McpCallDiagnostic {
  code: string;
  message: string;
  contentIndex?: number;
}

export interface McpToolResultResponse {
  kind: 'tool_result';
  isError: boolean;
  textBlocks: McpTextBlock[];
  /** structuredContent, pretty-printed JSON. */
  structuredJson?: string;
  diagnostics: McpCallDiagnostic[];
  /**
   * ttmcp's addition: the result's resource links and embedded resources (index: their place in
   * the result's content), for the user to see and attach to a chat — a link is read with
   * resources.read, an embedded resource carries its content. The diagnostics still report these
   * blocks as upstream does.
   */
  resources?: McpResultResource[];
}

/** A resource_link or embedded resource block of a tool result. */
export type McpResultResource = { index: number } & Extract<McpContentBlock, { type: 'resource' | 'resource_link' }>;

export interface McpServerErrorResponse {
  kind: 'server_error';
  /** JSON-RPC error code (int32). */
  code: number;
  message: string;
  /** The error's data as compact JSON. */
  dataJson?: string;
}

export interface McpUnsupportedResponse {
  kind: 'unsupported_response';
  responseType: string;
  message: string;
}

export type McpKnownResponse = McpToolResultResponse | McpServerErrorResponse | McpUnsupportedResponse;

export type McpTestCallOutcome = (
  | { outcome: 'known_response'; response: McpKnownResponse }
  /** The request never reached the server (e.g. mcp.call_cancelled_before_send, mcp.host_connection_lost). */
  | { outcome: 'not_sent'; code: string; message: string }
  /** The request was sent; whether the tool ran is unknown (e.g. mcp.call_timeout, mcp.host_connection_lost). */
  | { outcome: 'outcome_unknown'; code: string; message: string }
) &
  McpCallElicitations;

/** Same shape, as returned by call_legacy_mcp_tool; readable only when the call asked for it (ttmcp). */
export type McpCallOutcome = McpTestCallOutcome & { readable?: McpReadableResult };

// ---------------------------------------------------------------- errors

export type McpErrorKind = 'BadRequest' | 'NotFound' | 'Conflict' | 'Unavailable' | 'Internal';

/**
 * Every rejection of the API: message is the backend's message (starting
 * with the code where one applies, e.g. "mcp.endpoint_invalid: ..."). Host
 * codes: mcp.host_unavailable, mcp.origin_not_allowed, mcp.host_connection_lost,
 * mcp.request_too_large, mcp.dto_invalid, mcp.command_unknown,
 * mcp.host_internal.
 */
export type TauriTavernMcpError = Error & {
  code?: string;
  kind: McpErrorKind;
  /**
   * ttmcp's: with mcp.origin_not_allowed, the backend's own command line with `--allow-origin
   * <this page's origin>` added (its other flags kept; none is a secret), when the backend
   * sends it.
   */
  command?: string;
};

// ---------------------------------------------------------------- the API

export interface TauriTavernMcpServersApi {
  list(): Promise<McpServerList>;
  create(input: CreateMcpServerInput): Promise<TauriTavernMcpServer>;
  update(input: UpdateMcpServerInput): Promise<TauriTavernMcpServer>;
  setState(input: SetMcpServerStateInput): Promise<TauriTavernMcpServer>;
  remove(input: McpRegistrationIdInput): Promise<void>;
  discover(input: McpRegistrationIdInput): Promise<McpDiscoveryResult>;
  refresh(input: McpRegistrationIdInput): Promise<McpDiscoveryResult>;
}

export interface TauriTavernMcpToolsApi {
  setPermission(input: SetMcpToolPermissionInput): Promise<TauriTavernMcpServer>;
  setDescriptionOverride(input: SetMcpToolDescriptionOverrideInput): Promise<TauriTavernMcpServer>;
  /**
   * Runs one explicit test call. Aborting before it is sent resolves
   * { outcome: 'not_sent', code: 'mcp.call_cancelled_before_send' };
   * aborting after asks the backend to stop and still returns its outcome.
   */
  testCall(input: TestMcpToolCallInput, options?: McpTestCallOptions): Promise<McpTestCallOutcome>;
}

export interface TauriTavernMcpApi {
  servers: TauriTavernMcpServersApi;
  tools: TauriTavernMcpToolsApi;
}

// ---------------------------------------------------------------- ttmcp's additions (SPEC §10)

/** What let a call through besides its permission. */
export type McpAuditApproval =
  | 'none' // nobody was asked: an Allow tool, or a caller that asks no one (upstream's Generate hooks)
  | 'manual' // a test call: the user's click in the Manager
  | 'once' // the Ask prompt's "Allow once"
  | 'always' // the Ask prompt's "Always allow"
  | 'denied'; // the Ask prompt's "Deny", closed, or Stop: the tool was not called

/** One tools/call ttmcp sent or refused. Never the arguments (only their size and SHA-256) nor the result. */
export interface McpAuditEntry {
  /** When the outcome was known: RFC 3339 UTC with nine fraction digits; strictly increasing. */
  time: string;
  /** The page's callId (test) or executionCallId (model). */
  callId: string;
  /** 'page': a resource read or prompt get through api.mcp (the Manager, a chat attachment, /mcp-prompt). */
  source: 'test' | 'model' | 'page' | 'app';
  /** '' when the request named no valid registration. */
  registrationId: string;
  /** '' when the registration could not be read. */
  serverDisplayName: string;
  nativeName: string;
  /** The tool's permission when the call was decided; '' when unknown. */
  permission: McpToolPermission | '';
  approval: McpAuditApproval;
  /** 'rejected': the command failed with an error (e.g. a malformed toolId); nothing was sent. */
  outcome: McpCallOutcome['outcome'] | 'rejected';
  /** The not_sent, outcome_unknown or rejection code; '' for a known response. */
  code: string;
  /** For known_response (a read's resource_contents, a get's prompt_messages). */
  responseKind: McpKnownResponse['kind'] | 'resource_contents' | 'prompt_messages' | '';
  /** A tool_result's isError. */
  isError: boolean;
  durationMs: number;
  argumentsBytes: number;
  argumentsSha256: string;
  /** A model call whose result was too long for the prompt: the kept result (api.mcp.results.read). */
  resultId?: string;
  /** What was sent: a tools/call, a resources/read or a prompts/get. The backend always sends it; absent reads as 'tool_call'. */
  kind?: McpAuditKind;
  /** resource_read: the URI read. */
  uri?: string;
  /** prompt_get: the prompt's name (argumentsBytes/argumentsSha256 describe its arguments' JSON). */
  promptName?: string;
  /** resource_read, prompt_get with a known response: the decoded bytes of the contents (or messages) returned. */
  contentBytes?: number;
  /** resource_read, prompt_get with a known response: how many contents (or messages). */
  contentCount?: number;
  /**
   * A tools/call whose server asked the user (elicitation): how many requests the call took — 2026-07-28
   * input_required rounds count each, a 2025 call is one —, and each question's answer, in order
   * (never what the user entered).
   */
  rounds?: number;
  elicitations?: McpElicitationRecord[];
  /** A tools/call whose server reported progress (ttmcp, issue 29): how many updates came, and the last message one carried. */
  progressUpdates?: number;
  progressMessage?: string;
  /** Source 'app' (MCP Apps): the tool of the same server whose interface made the request. */
  appTool?: string;
}

export type McpAuditKind = 'tool_call' | 'resource_read' | 'prompt_get';

export interface McpAuditListInput {
  /** Only this registration's calls. */
  registrationId?: string;
  /** 1–1000, default 50. */
  limit?: number;
  /** Only calls older than this time (an entry's time: the next page). */
  before?: string;
}

export interface McpAuditList {
  /** Newest first. */
  entries: McpAuditEntry[];
  /** Lines read that were not records (a torn last line, damage). */
  skippedLines: number;
}

export interface McpAuditApi {
  list(input?: McpAuditListInput): Promise<McpAuditList>;
}

export interface McpSignInInput {
  registrationId: string;
  /** A client registered by hand with the authorization server (for the backend's redirectUri); without it ttmcp registers one dynamically. */
  clientId?: string;
  clientSecret?: string;
}

export interface McpSignInOptions {
  /** Aborting cancels the sign-in; the promise then rejects with mcp.auth_cancelled. */
  signal?: AbortSignal;
}

/** servers as ttmcp publishes it: upstream's methods plus sign-in. */
export interface TtmcpMcpServersApi extends TauriTavernMcpServersApi {
  /**
   * Signs in to a server that asks for authorization (OAuth 2.1 authorization code flow with PKCE, run by the
   * backend). Call it while handling the user's click: it opens the sign-in window at once (else popup
   * blockers stop it; then it rejects with mcp.auth_popup_blocked), sends it to the authorization server, and
   * resolves with the server (auth.state 'signed_in') once the authorization server has sent the window back
   * to the backend's callback. Rejects with e.g. mcp.auth_denied (the user refused), mcp.auth_expired (not
   * finished within 10 minutes), mcp.auth_cancelled, mcp.auth_client_required (no dynamic registration:
   * pass a clientId), mcp.auth_redirect_refused (the authorization server refused the redirect URI, e.g. plain
   * http on a LAN address; the message says what works instead), mcp.auth_failed. No token ever reaches the page.
   */
  signIn(input: string | McpSignInInput, options?: McpSignInOptions): Promise<TauriTavernMcpServer>;
  /** Forgets the server's sign-in (tokens, client, last challenge); resolves with the server (auth.state 'none'). */
  signOut(input: McpRegistrationIdInput): Promise<TauriTavernMcpServer>;
  /**
   * What the server advertises and what the user allows. Connects to an Active server whose capabilities are
   * not known yet (this backend has not talked to it since it started, or its connection changed), and then
   * rejects as a discovery would when it cannot (e.g. mcp.discovery_initialize_failed, mcp.auth_required); a
   * paused one answers without advertised until then.
   */
  capabilities(input: McpRegistrationIdInput): Promise<McpServerCapabilities>;
  /** Turns resources or prompts on or off for a server (an absent member keeps its value); resolves with the server. */
  setCapabilities(input: SetMcpServerCapabilitiesInput): Promise<TauriTavernMcpServer>;
}

/**
 * How a stdio server is started, as a page may see it. It is configured only on the backend's
 * machine (`ttmcp stdio add|import|remove`): no method takes it, and create/update refuse a
 * "stdio:" endpoint and command-like members with 'mcp.stdio_config_readonly'. A stdio
 * server may be renamed (update with the endpoint, headers {} and protocol the list shows),
 * activated, paused, removed, discovered and test-called like any other.
 */
export interface McpStdioConfig {
  /** The program: a path, or a name looked up in the backend's PATH. */
  command: string;
  /** Passed as they are; no shell. */
  args: string[];
  /** Absent: the backend's working directory. */
  cwd?: string;
  /** The names of the environment variables it gets, sorted; their values are never sent. */
  envNames: string[];
  /** command and args as one line, each word quoted as a POSIX shell would need (display only). */
  commandLine: string;
}

export type McpStdioProcessState = 'stopped' | 'starting' | 'running';

/** A stdio server's process that failed to start or died. */
export interface McpStdioExit {
  /** RFC 3339 UTC. */
  time: string;
  /** e.g. 'mcp.stdio_exited_at_start', 'mcp.stdio_process_exited', 'mcp.stdio_stdout_invalid'. */
  code: string;
  message: string;
  /** Its last lines on stderr, oldest first. */
  stderr: string[];
}

export interface McpStdioStatus {
  registrationId: string;
  state: McpStdioProcessState;
  /** How the last process ended when it failed; absent once one started again or after a stop on purpose. */
  lastExit?: McpStdioExit;
}

export interface McpStdioApi {
  /** What the backend knows of a stdio server's process; BadRequest 'mcp.not_stdio' for a remote server. */
  status(registrationId: string | { registrationId: string }): Promise<McpStdioStatus>;
}

// ---------------------------------------------------------------- elicitation (ttmcp, SPEC §10)

export type McpElicitationAction = 'accept' | 'decline' | 'cancel';

/**
 * One question of a call and how it was answered: an action, or, when the backend answered cancel
 * itself, 'timeout' (the user did not answer within 10 minutes), 'invalid' (the question or the
 * answers did not fit the specification's schema subset, or the question was larger than 64 KiB or
 * nested more than 16 levels) and 'limited' (the call had asked 16 questions, or its server 30 in
 * the last minute: this record stands for that question and every later one of the call, none of
 * them put to the user). Never what the user entered.
 */
export interface McpElicitationRecord {
  mode: 'form' | 'url';
  action: McpElicitationAction | 'timeout' | 'invalid' | 'limited';
}

/**
 * ttmcp's addition to a call's outcome (SPEC §10), present only when its server asked the user:
 * how many requests the call took (2026-07-28 input_required rounds count each; a 2025 call is
 * one) and each question's answer, in order. Upstream's callers set no handler and never see them.
 */
export interface McpCallElicitations {
  rounds?: number;
  elicitations?: McpElicitationRecord[];
}

/**
 * A server asks the user something during a call this page made (its test calls and its model's
 * tool calls; never another page's). Form mode: fill `requestedSchema` (a flat object of strings —
 * with `format` email, uri, date or date-time, `minLength`/`maxLength` —, numbers and integers
 * with `minimum`/`maximum`, booleans, single-select enums (`enum`, or `oneOf` of `{const, title}`),
 * multi-select arrays (`items` with `enum` or `anyOf` of `{const, title}`, `minItems`/`maxItems`),
 * each maybe with a `default` and a `title`/`description`; `required` names the required ones).
 * URL mode: show `url` and open it only on the user's click; accept means the user agreed to go
 * there, and the server goes on when it is done. The answer goes to the named server.
 */
export interface McpElicitationRequest {
  /** The call's id: the test call's callId or the model call's executionCallId. */
  callId: string;
  registrationId: string;
  serverDisplayName: string;
  /** The tool being called. */
  nativeName: string;
  source: 'test' | 'model';
  mode: 'form' | 'url';
  message: string;
  /** Form mode. */
  requestedSchema?: Record<string, unknown>;
  /** URL mode. */
  url?: string;
  /** Why the previous answer to this same question was refused (it did not fit requestedSchema): ask again. */
  error?: string;
  /**
   * URL mode: the server refused the call until the user is done on this page (URL elicitation
   * required, -32042) and ran nothing. Answer accept once the user is done there: the call is
   * then sent once more. The question is withdrawn when the server announces the page done.
   */
  resend?: true;
}

export interface McpElicitationResponse {
  action: McpElicitationAction;
  /** accept in form mode: the values, an object matching requestedSchema. */
  content?: Record<string, unknown>;
}

/**
 * signal aborts when the question is withdrawn: the call was stopped, the server went away, or the
 * backend's wait for the user (10 minutes) ran out. The answer is dropped then; close the popup.
 */
export type McpElicitationHandler = (
  request: McpElicitationRequest,
  options: { signal: AbortSignal },
) => Promise<McpElicitationResponse> | McpElicitationResponse;

export interface McpElicitationApi {
  /**
   * Sets this page's handler (null: none). A call advertises the elicitation capability to its
   * server only while its page has a handler; without one a server cannot ask. A handler that
   * throws, or a page that closes, answers 'cancel'. The backend waits for the answer 10 minutes
   * at most ('cancel' then). Stopping the call (testCall's signal, the generation's Stop) withdraws
   * the question (options.signal aborts).
   */
  setHandler(handler: McpElicitationHandler | null): void;
}

// ---------------------------------------------------------------- live connections (ttmcp, SPEC §10)

/**
 * How a server is connected now. The backend keeps one connection per server in use (closed
 * after 5 minutes unused, on pause, removal or a change of how it is reached), so a warm call
 * is one round trip; an open connection follows the server's list changes, and the backend
 * then sends the event `servers_changed` (window event 'tauritavern-mcp:event').
 */
export interface McpConnectionStatus {
  registrationId: string;
  /** 'closed': the next use opens it. A stdio server's connection is its process. */
  state: 'closed' | 'opening' | 'open';
  /** 'short_lived' once the server ended kept sessions twice in a row: each use opens a fresh one. */
  sessions: 'kept' | 'short_lived';
  protocolVersion?: string;
  /** The open connection hears the server's list changes: its catalog follows them without a refresh. */
  following: boolean;
  /** Why an open connection does not follow (the server's notification stream was refused, ended or cut). */
  note?: string;
}

export interface McpConnectionsApi {
  /** Never connects. */
  status(registrationId: string | { registrationId: string }): Promise<McpConnectionStatus>;
}

/** detail of the window event 'tauritavern-mcp:event' (the backend's event frames). */
export interface TtmcpBackendEvent {
  event: 'servers_changed';
  /**
   * What changed of a server, whoever changed it: 'tools' after every published discovery (any
   * page's, or the backend following the server's announcement); 'resources', 'prompts' after the
   * backend followed an announced change; 'registration': the registration was created, changed
   * (settings, permissions, overrides, switches) or removed, by any page or a script calling
   * api.mcp.
   */
  data: { registrationId: string; lists: Array<'tools' | 'resources' | 'prompts' | 'registration'> };
}

// ---------------------------------------------------------------- tool sets (ttmcp, SPEC §10)

/**
 * A selection entry: a ToolId `mcp/<registration-uuid>:<nativeName>`, or a whole server
 * `mcp/<registration-uuid>:*` (its tools set to Ask or Allow, new ones included once allowed).
 */
export type McpToolSelector = `mcp/${string}:${string}`;

/**
 * A named selection of tools for the model (the MCP part of the seeds' Agent Profile). Selecting
 * never grants: a selected tool that is Off, or on a paused server, is not offered.
 */
export interface McpToolSet {
  /** Canonical lowercase hyphenated UUID. */
  id: string;
  /** Trimmed, 1–100 characters, unique (case-insensitive). */
  name: string;
  /** In the user's order: it decides what is left out when a provider's tool limit is reached. */
  tools: McpToolSelector[];
  /** ToolId → override, applied after the registration's (the set's text wins, field by field). {} when none. */
  descriptionOverrides: Record<string, ToolDescriptionOverride>;
  /** Results longer than this (Unicode characters) reach the model as a note with a preview. */
  resultInlineCharLimit: number;
  /** Whether the model gets the built-in reader tool ttmcp_read_result beside the set's tools. */
  readerTool: boolean;
  /**
   * How the set's tools reach the model (issue 31): every schema ("all"), a small constant set
   * that searches them ("search"), or every schema until they pass the budget ("automatic").
   */
  toolMode: McpToolMode;
  /** Automatic mode searches once more tools than this would be offered. Default 40. */
  searchMaxTools: number;
  /** … or once their schemas' estimated tokens pass this share (1–100 %) of the model's context. Default 10. */
  searchContextPercent: number;
  /** ToolIds offered beside the search tools in search mode, in this order; each selected by the set (at most 32). */
  pinnedTools: string[];
}

export type McpToolMode = 'all' | 'search' | 'automatic';

export interface McpToolSetList {
  /** By name (case-insensitive), then id. */
  toolSets: McpToolSet[];
  /** Set files that could not be loaded (fileName "tool-sets/<file>"). */
  storageIssues: McpStorageIssue[];
}

export interface SaveMcpToolSetInput {
  /** Absent: a new set. Present: replaces that set (NotFound mcp.tool_set_not_found if there is none). */
  id?: string;
  name: string;
  tools: McpToolSelector[];
  /** Default {}. Keys must be selected ToolIds (mcp.tool_set_override_unselected). */
  descriptionOverrides?: Record<string, ToolDescriptionOverride>;
  /** Default 50,000; > 0 (mcp.tool_set_result_inline_char_limit_invalid). */
  resultInlineCharLimit?: number;
  /** Default true. */
  readerTool?: boolean;
  /** Default "all" (mcp.tool_set_mode_invalid). */
  toolMode?: McpToolMode;
  /** Default 40, 1–2048; searchContextPercent default 10, 1–100 (mcp.tool_set_search_budget_invalid). */
  searchMaxTools?: number;
  searchContextPercent?: number;
  /** Default []; selected ToolIds, each once, at most 32 (mcp.tool_set_pinned_invalid). */
  pinnedTools?: string[];
}

// ---------------------------------------------------------------- readable results (ttmcp, SPEC §10)

/** call_legacy_mcp_tool's ttmcp option: ask for what the model reads of the outcome. */
export interface McpReadableOptions {
  /** Results longer than this (Unicode characters) are kept by the backend; the text is then a note and a preview. Default 50,000. */
  inlineCharLimit?: number;
  /** Whether the model has ttmcp_read_result (the note says how to use it, else where the user finds the result). Default true. */
  readerTool?: boolean;
}

/**
 * What the model reads of a call (reference §7's projection): text blocks as text, structured content as a
 * "## Details" section (left out of the text when the text only serialises it), diagnostics as "## Notes", a
 * server error's data as "## Error details"; errors and not_sent as a sentence naming the tool by its title
 * and the code to act on.
 */
export interface McpReadableResult {
  text: string;
  isError: boolean;
  /** Present when the result was too long to include: text is the note with a 3,000-character preview. */
  stored?: {
    /** Absent when the backend could not keep it (the note says why). */
    resultId?: string;
    charCount: number;
    charLimit: number;
  };
}

export interface ReadMcpToolResultInput {
  resultId: string;
  /** 1-based, default 1. */
  startLine?: number;
  /** Default 200, at most 5,000. */
  lineCount?: number;
  /** Default 20,000; 3,000–1,000,000. A read always holds at least one line. */
  maxChars?: number;
}

/** One read of a kept result. Lines are the result's, wrapped every 3,000 characters. */
export interface McpToolResultPage {
  resultId: string;
  registrationId: string;
  /** RFC 3339 UTC. */
  storedAt: string;
  charCount: number;
  totalLines: number;
  startLine: number;
  /** The last line read (inclusive). */
  endLine: number;
  /** The lines read, joined by newlines. */
  text: string;
  /** Where to continue; absent at the end. */
  nextStartLine?: number;
}

export interface McpResultsApi {
  /**
   * Reads a result kept because it was too long for the model's prompt (an audit entry's resultId). NotFound
   * mcp.result_not_found once it expired (7 days) or its server was removed.
   */
  read(input: ReadMcpToolResultInput): Promise<McpToolResultPage>;
}

export interface McpToolSetsApi {
  list(): Promise<McpToolSetList>;
  /** Resolves the stored set with its id. A name taken by another set is Conflict mcp.tool_set_name_taken. */
  save(input: SaveMcpToolSetInput): Promise<McpToolSet>;
  /** Chats and characters bound to a removed set fall back to the next binding. */
  remove(input: string | { id: string }): Promise<void>;
}

// ---------------------------------------------------------------- resources and prompts (ttmcp, SPEC §10)

/**
 * A server's capabilities as ttmcp knows them. Resources and prompts are allowed by default; a primitive the
 * user turned off is refused by the backend (Conflict mcp.resources_disabled / mcp.prompts_disabled), for the
 * lists, reads, gets and completions alike.
 */
export interface McpServerCapabilities {
  allowed: { resources: boolean; prompts: boolean };
  /** What the server said at its last startup on this backend, for the registration's current connection. */
  advertised?: McpAdvertisedCapabilities;
  /** Why the allowlist file cannot be read: resources and prompts are refused until setCapabilities writes it again. */
  issue?: string;
}

export interface McpAdvertisedCapabilities {
  protocolVersion: string;
  tools: boolean;
  toolsListChanged: boolean;
  resources: boolean;
  resourcesSubscribe: boolean;
  resourcesListChanged: boolean;
  prompts: boolean;
  promptsListChanged: boolean;
  /** completion/complete is offered (prompt arguments, template variables). */
  completions: boolean;
  logging: boolean;
  /** RFC 3339 UTC. */
  observedAt: string;
}

export interface SetMcpServerCapabilitiesInput {
  registrationId: string;
  resources?: boolean;
  prompts?: boolean;
}

/** A list's input: a registration id, or the id with refresh (ask the server, whatever memory holds). */
export type McpListInput = string | { registrationId: string; refresh?: boolean };

/**
 * Every list answers with its entries, in the server's order, and a diagnostic per entry left out (an empty
 * name, a URI that is not absolute, a malformed mime type or template, duplicates: the whole group). A list
 * fails (rejects) as a whole when the server breaks its limits: more than 512 entries
 * (mcp.list_entry_limit), 8 MiB (mcp.list_size_limit), 32 pages (mcp.list_page_limit), a repeated cursor
 * (mcp.list_cursor_cycle), or in time (mcp.list_timeout); mcp.list_failed otherwise. A server that does not
 * advertise the primitive answers an empty list with one diagnostic (mcp.resources_unsupported,
 * mcp.prompts_unsupported). Lists are kept in memory: for a 2026-07-28 server's ttlMs, otherwise until a
 * refresh; nothing is fetched in the background.
 */
export interface McpListResult<T> {
  registrationId: string;
  items: T[];
  diagnostics: McpListDiagnostic[];
  /** When the server was asked (RFC 3339 UTC). */
  listedAt: string;
  /** When the list stops being fresh (a 2026 server's ttlMs); absent: until refreshed. */
  expiresAt?: string;
  /** Served from memory, not asked of the server now. */
  fromCache: boolean;
}

export interface McpListDiagnostic {
  code: string;
  /** The entry as the server named it: a resource's uri, a template's uriTemplate, a prompt's name. */
  item?: string;
  message: string;
}

/** Hints of the server's (untrusted). */
export interface McpAnnotations {
  audience?: ('user' | 'assistant')[];
  /** 0 (optional) to 1 (required). */
  priority?: number;
  lastModified?: string;
}

export interface McpResource {
  /** Absolute. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Bytes, as the server says. */
  size?: number;
  annotations?: McpAnnotations;
}

export interface McpResourceTemplate {
  /** An RFC 6570 URI template starting with its scheme (e.g. "file:///{path}"). */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: McpAnnotations;
  /** Its variable names, in order of first appearance (parsed by ttmcp). */
  variables: string[];
}

export interface McpPromptArgument {
  name: string;
  title?: string;
  description?: string;
  required: boolean;
}

export interface McpPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments: McpPromptArgument[];
}

export type McpResourceList = McpListResult<McpResource>;
export type McpResourceTemplateList = McpListResult<McpResourceTemplate>;
export type McpPromptList = McpListResult<McpPrompt>;

export interface ReadMcpResourceInput {
  registrationId: string;
  /** Absolute; a listed resource's uri, or a template expanded by the page. */
  uri: string;
}

/** One content of a resource. Neither text nor blob when it was refused: a diagnostic names its index. */
export interface McpResourceContent {
  type: 'text' | 'blob';
  uri: string;
  mimeType?: string;
  text?: string;
  /** Base64, as the server sent it. */
  blob?: string;
  /** Bytes: the text's UTF-8 bytes, the blob's decoded bytes. */
  size: number;
}

/**
 * A resources/read result: every content, in order. A content over 8 MiB is kept without its text or blob
 * (diagnostic mcp.resource_content_too_large); nothing is truncated.
 */
export interface McpResourceContentsResponse {
  kind: 'resource_contents';
  uri: string;
  contents: McpResourceContent[];
  totalBytes: number;
  diagnostics: McpCallDiagnostic[];
}

export type McpContentBlock =
  | { type: 'text'; text: string; annotations?: McpAnnotations }
  | { type: 'image' | 'audio'; data: string; mimeType: string; annotations?: McpAnnotations }
  | { type: 'resource'; resource: McpResourceContent; annotations?: McpAnnotations }
  | {
      type: 'resource_link';
      uri: string;
      name: string;
      title?: string;
      description?: string;
      mimeType?: string;
      size?: number;
      annotations?: McpAnnotations;
    };

export interface McpPromptMessage {
  role: 'user' | 'assistant';
  content: McpContentBlock;
}

/** A prompts/get result: its messages in order; one ttmcp cannot show is left out with a diagnostic naming its index. */
export interface McpPromptMessagesResponse {
  kind: 'prompt_messages';
  name: string;
  description?: string;
  messages: McpPromptMessage[];
  diagnostics: McpCallDiagnostic[];
}

/**
 * What a read or a get did, in the call's vocabulary: not_sent while the request provably never left (e.g.
 * mcp.call_cancelled_before_send, a failed startup), outcome_unknown once it may have reached the server
 * and no whole answer came (e.g. mcp.call_timeout, mcp.resource_too_large: the answer went over 12 MiB and
 * was not kept). A 2026 input_required answer is an unsupported_response for now.
 */
export type McpRequestOutcome<R> =
  | { outcome: 'known_response'; response: R | McpServerErrorResponse | McpUnsupportedResponse }
  | { outcome: 'not_sent'; code: string; message: string }
  | { outcome: 'outcome_unknown'; code: string; message: string };

export type McpResourceReadOutcome = McpRequestOutcome<McpResourceContentsResponse>;
export type McpPromptGetOutcome = McpRequestOutcome<McpPromptMessagesResponse>;

export interface GetMcpPromptInput {
  registrationId: string;
  name: string;
  /** Argument name → value. Required ones missing, or names the prompt does not declare, are refused before anything is sent (BadRequest mcp.prompt_argument_missing / mcp.prompt_argument_unknown). */
  arguments?: Record<string, string>;
}

export type McpCompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface CompleteMcpArgumentInput {
  registrationId: string;
  /** A prompt, or a resource template (uri: its uriTemplate). */
  ref: McpCompletionRef;
  /** The argument (or template variable) and what the user typed so far. */
  argument: { name: string; value: string };
  /** The arguments already filled in. */
  context?: { arguments?: Record<string, string> };
}

export interface McpCompletion {
  /** At most 100, best first. */
  values: string[];
  /** How many there are, when the server said. */
  total?: number;
  hasMore: boolean;
}

/**
 * Every method of resources, prompts and completions first rejects what it refuses before anything is sent:
 * a paused server (Conflict mcp.server_paused), a primitive turned off (Conflict mcp.resources_disabled /
 * mcp.prompts_disabled), an unreadable allowlist (Unavailable mcp.server_capabilities_unreadable), an unknown
 * server (NotFound), a malformed input (BadRequest mcp.dto_invalid, mcp.resource_uri_invalid,
 * mcp.completion_ref_invalid). A read or a get then resolves with its outcome, whatever the server did.
 */
export interface McpResourcesApi {
  list(input: McpListInput): Promise<McpResourceList>;
  templates(input: McpListInput): Promise<McpResourceTemplateList>;
  /** Recorded in the audit log (the URI, sizes, the outcome; never the content). */
  read(input: ReadMcpResourceInput): Promise<McpResourceReadOutcome>;
}

export interface McpPromptsApi {
  list(input: McpListInput): Promise<McpPromptList>;
  /**
   * Recorded in the audit log (the name, the arguments' size and SHA-256, sizes, the outcome; never the content).
   * A name the server does not list is NotFound mcp.prompt_not_found.
   */
  get(input: GetMcpPromptInput): Promise<McpPromptGetOutcome>;
}

export interface McpCompletionsApi {
  /** BadRequest mcp.completions_unsupported when the server does not advertise completions; Unavailable mcp.completion_failed when it fails. */
  complete(input: CompleteMcpArgumentInput): Promise<McpCompletion>;
}

/** api.mcp as ttmcp publishes it: upstream's surface plus ttmcp's additions. */
export interface TtmcpMcpApi extends TauriTavernMcpApi {
  servers: TtmcpMcpServersApi;
  tools: TtmcpMcpToolsApi;
  audit: McpAuditApi;
  stdio: McpStdioApi;
  connections: McpConnectionsApi;
  elicitation: McpElicitationApi;
  toolSets: McpToolSetsApi;
  results: McpResultsApi;
  resources: McpResourcesApi;
  prompts: McpPromptsApi;
  completions: McpCompletionsApi;
  toolSearch: McpToolSearchApi;
  apps: McpAppsApi;
}

// ---------------------------------------------------------------- MCP Apps (ttmcp, issue 30)

/** An App's tools/call: the App (its server and the tool whose interface it is) and the tool it calls, of the same server. */
export interface CallMcpAppToolInput {
  executionCallId: string;
  registrationId: string;
  appToolName: string;
  nativeName: string;
  argumentsJson: string;
  /** The user's answer to the Ask prompt; an Ask tool without one is not sent (mcp.call_approval_required). */
  approval?: 'once' | 'always' | 'denied';
}

/** The CSP sources an App's resource declared (only origins kept). */
export interface McpAppCsp {
  connectDomains: string[];
  resourceDomains: string[];
  frameDomains: string[];
  baseUriDomains: string[];
}

/** An App's interface, ready for the sandbox. */
export interface McpAppResource {
  registrationId: string;
  appToolName: string;
  uri: string;
  html: string;
  /** The Content-Security-Policy ttmcp serves the document with (never looser than declared). */
  csp: string;
  /** The document for the sandbox: GET `/apps/view/<viewId>` on the backend (or under the plugin's prefix); served once, within two minutes. */
  viewId: string;
  declared: McpAppCsp;
  permissions: { camera: boolean; microphone: boolean; geolocation: boolean; clipboardWrite: boolean };
  prefersBorder?: boolean;
  sha256: string;
  /** What of the declaration was left out. */
  dropped: string[];
}

/** api.mcp.apps: the calls and interface of MCP Apps; setRenderer(true) declares the extension on this page's requests. */
export interface McpAppsApi {
  setRenderer(on: boolean): void;
  startCall(input: { executionCallId: string }): Promise<null>;
  call(input: CallMcpAppToolInput): Promise<McpCallOutcome>;
  cancelCall(input: { executionCallId: string }): Promise<null>;
  readInterface(input: { registrationId: string; appToolName: string }): Promise<McpAppResource>;
}

// ---------------------------------------------------------------- tool search (ttmcp, issue 31)

/** search_mcp_tools: query 1..1000 bytes (mcp.tool_search_query_invalid), limit 1..50, default 10 (mcp.tool_search_limit_invalid). */
export interface SearchMcpToolsInput {
  query: string;
  /** Search the set's selection, with its description overrides; NotFound mcp.tool_set_not_found when unknown. */
  toolSetId?: string;
  /** Only this server's tools; NotFound mcp.registration_not_found when unknown. */
  registrationId?: string;
  limit?: number;
}

/** One found tool: every hit names its server, so a consumer groups by server as it is. */
export interface McpToolSearchHit {
  toolId: string;
  registrationId: string;
  serverDisplayName: string;
  nativeName: string;
  title?: string;
  /** The description's first line, at most 200 characters. */
  description: string;
  /** BM25F score; higher is better, comparable only within one answer. */
  score: number;
}

export interface McpToolSearchResult {
  hits: McpToolSearchHit[];
}

/** api.mcp.toolSearch: ranks only tools the user allows (Ask and Allow, never Off) of active servers with a cached catalog. */
export interface McpToolSearchApi {
  search(input: SearchMcpToolsInput): Promise<McpToolSearchResult>;
}

// ---------------------------------------------------------------- extension store

/**
 * Names (namespace, table, key, newKey) are trimmed; the backend accepts
 * ASCII letters, digits, '_', '-' and '.', not starting with '.', at most
 * 250 characters (else mcp.extension_store_name_invalid). A blank or absent
 * table is "main".
 */
export interface ExtensionStoreTableOptions {
  namespace: string;
  table?: string;
}

export interface ExtensionStoreEntryOptions extends ExtensionStoreTableOptions {
  key: string;
}

export interface ExtensionStoreSetJsonOptions extends ExtensionStoreEntryOptions {
  /** Any JSON value (null included), serialised with JSON.stringify. */
  value: unknown;
}

export interface ExtensionStoreRenameKeyOptions extends ExtensionStoreEntryOptions {
  newKey: string;
}

/**
 * A string is taken as base64 already; a Blob is read; typed arrays,
 * ArrayBuffer and DataView are their bytes; arrays (or {data: [...]}) of
 * numbers and numeric-keyed objects are clamped to bytes, as upstream.
 */
export type ExtensionStoreBlobData =
  | string
  | Blob
  | ArrayBuffer
  | ArrayBufferView
  | ArrayLike<number>
  | { data: ArrayLike<number> }
  | Record<number, number>;

export interface ExtensionStoreSetBlobOptions extends ExtensionStoreEntryOptions {
  data: ExtensionStoreBlobData;
}

/** try_get_extension_store_json: a stored null is { found: true, value: null }. */
export type ExtensionStoreJsonLookup<T = JsonValue> = { found: true; value: T } | { found: false; value?: undefined };

/**
 * __TAURITAVERN__.api.extension.store: TauriTavern's key–value store for
 * extensions, kept under <data-root>/_tauritavern/extension-store/. Methods
 * reject like the MCP API's (TauriTavernMcpError); a missing entry, blob or
 * table is NotFound with code mcp.extension_store_not_found.
 */
export interface TauriTavernExtensionStoreApi {
  getJson<T = JsonValue>(options: ExtensionStoreEntryOptions): Promise<T>;
  tryGetJson<T = JsonValue>(options: ExtensionStoreEntryOptions): Promise<ExtensionStoreJsonLookup<T>>;
  setJson(options: ExtensionStoreSetJsonOptions): Promise<null>;
  /** Merges value into the entry: objects member by member, recursively; anything else replaces. */
  updateJson(options: ExtensionStoreSetJsonOptions): Promise<null>;
  updateJSON(options: ExtensionStoreSetJsonOptions): Promise<null>;
  /** Conflict (mcp.extension_store_key_exists) when newKey exists. */
  renameKey(options: ExtensionStoreRenameKeyOptions): Promise<null>;
  updateKey(options: ExtensionStoreRenameKeyOptions): Promise<null>;
  deleteJson(options: ExtensionStoreEntryOptions): Promise<null>;
  listKeys(options: ExtensionStoreTableOptions): Promise<string[]>;
  listTables(options: { namespace: string }): Promise<string[]>;
  /** Removes the table's JSON entries and blobs; the table is required. */
  deleteTable(options: { namespace: string; table: string }): Promise<null>;
  /** A Blob typed from the key's extension (application/octet-stream when unknown). */
  getBlob(options: ExtensionStoreEntryOptions): Promise<Blob>;
  setBlob(options: ExtensionStoreSetBlobOptions): Promise<null>;
  deleteBlob(options: ExtensionStoreEntryOptions): Promise<null>;
  listBlobKeys(options: ExtensionStoreTableOptions): Promise<string[]>;
}

// ---------------------------------------------------------------- safeInvoke

export interface LegacyMcpTool {
  toolId: string;
  nativeName: string;
  serverDisplayName: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  /** ttmcp's (MCP Apps, issue 30): the tool's `_meta.ui`, as in the discovery result; absent when it has none. */
  ui?: McpToolUi;
}

export interface LegacyMcpDiagnostic {
  /** The tool concerned; with a tool set, the selection entry (which may be a whole server, `mcp/<uuid>:*`). */
  toolId?: string;
  code: string;
  message: string;
}

export interface LegacyMcpToolList {
  tools: LegacyMcpTool[];
  diagnostics: LegacyMcpDiagnostic[];
}

export interface McpCommandMap {
  list_mcp_servers: { args: undefined | Record<string, never>; result: McpServerList };
  create_mcp_server: { args: { dto: CreateMcpServerInput }; result: TauriTavernMcpServer };
  update_mcp_server: { args: { dto: UpdateMcpServerInput }; result: TauriTavernMcpServer };
  set_mcp_server_state: { args: { dto: SetMcpServerStateInput }; result: TauriTavernMcpServer };
  remove_mcp_server: { args: { dto: { registrationId: string } }; result: null };
  discover_mcp_tools: { args: { dto: { registrationId: string } }; result: McpDiscoveryResult };
  refresh_mcp_tools: { args: { dto: { registrationId: string } }; result: McpDiscoveryResult };
  set_mcp_tool_permission: { args: { dto: SetMcpToolPermissionInput }; result: TauriTavernMcpServer };
  set_mcp_tool_description_override: { args: { dto: SetMcpToolDescriptionOverrideInput }; result: TauriTavernMcpServer };
  start_mcp_test_call: { args: { dto: { callId: string } }; result: null };
  test_mcp_tool_call: { args: { dto: TestMcpToolCallInput & { callId: string } }; result: McpTestCallOutcome };
  cancel_mcp_test_call: { args: { dto: { callId: string } }; result: null };
  /** ttmcp's, the shim's tools.testCall: the start and the call in one command (cancel_mcp_test_call stops it). */
  run_mcp_test_call: { args: { dto: TestMcpToolCallInput & { callId: string } }; result: McpTestCallOutcome };
  /** ttmcp's addition: {dto: {toolSetId}} applies that set (NotFound mcp.tool_set_not_found when it does not exist). */
  list_legacy_mcp_tools: { args: undefined | Record<string, never> | { dto: { toolSetId?: string } }; result: LegacyMcpToolList };
  start_legacy_mcp_tool_call: { args: { dto: { executionCallId: string } }; result: null };
  call_legacy_mcp_tool: {
    /** approval is ttmcp's: what the user answered an Ask prompt (denied: recorded, never called). */
    args: {
      dto: {
        executionCallId: string;
        toolId: string;
        argumentsJson?: string;
        approval?: 'once' | 'always' | 'denied';
        /** ttmcp's: ask for the outcome's readable text. */
        readable?: McpReadableOptions;
      };
    };
    result: McpCallOutcome;
  };
  cancel_legacy_mcp_tool_call: { args: { dto: { executionCallId: string } }; result: null };
  list_mcp_audit_entries: { args: { dto: McpAuditListInput }; result: McpAuditList };
  /** servers.signIn's steps (call signIn: it opens the window the authorization URL needs). */
  start_mcp_server_sign_in: {
    args: { dto: McpSignInInput };
    result: { signInId: string; authorizationUrl: string; redirectUri: string; expiresAt: string };
  };
  finish_mcp_server_sign_in: { args: { dto: { signInId: string } }; result: TauriTavernMcpServer };
  cancel_mcp_server_sign_in: { args: { dto: { signInId: string } }; result: null };
  sign_out_mcp_server: { args: { dto: { registrationId: string } }; result: TauriTavernMcpServer };
  get_mcp_stdio_status: { args: { dto: { registrationId: string } }; result: McpStdioStatus };
  get_mcp_connection_status: { args: { dto: { registrationId: string } }; result: McpConnectionStatus };
  list_mcp_tool_sets: { args: undefined | Record<string, never>; result: McpToolSetList };
  save_mcp_tool_set: { args: { dto: SaveMcpToolSetInput }; result: McpToolSet };
  remove_mcp_tool_set: { args: { dto: { id: string } }; result: null };
  read_mcp_tool_result: { args: { dto: ReadMcpToolResultInput }; result: McpToolResultPage };
  list_mcp_resources: { args: { dto: { registrationId: string; refresh?: boolean } }; result: McpResourceList };
  list_mcp_resource_templates: { args: { dto: { registrationId: string; refresh?: boolean } }; result: McpResourceTemplateList };
  read_mcp_resource: { args: { dto: ReadMcpResourceInput }; result: McpResourceReadOutcome };
  list_mcp_prompts: { args: { dto: { registrationId: string; refresh?: boolean } }; result: McpPromptList };
  get_mcp_prompt: { args: { dto: GetMcpPromptInput }; result: McpPromptGetOutcome };
  complete_mcp_argument: { args: { dto: CompleteMcpArgumentInput }; result: McpCompletion };
  get_mcp_server_capabilities: { args: { dto: { registrationId: string } }; result: McpServerCapabilities };
  set_mcp_server_capabilities: { args: { dto: SetMcpServerCapabilitiesInput }; result: TauriTavernMcpServer };
}

export type McpCommandName = keyof McpCommandMap;

/** The extension store's commands: flat args, as upstream's. */
export interface ExtensionStoreCommandMap {
  get_extension_store_json: { args: { namespace: string; key: string; table?: string | null }; result: JsonValue };
  try_get_extension_store_json: {
    args: { namespace: string; key: string; table?: string | null };
    result: ExtensionStoreJsonLookup;
  };
  set_extension_store_json: { args: { namespace: string; key: string; value: unknown; table?: string | null }; result: null };
  update_extension_store_json: { args: { namespace: string; key: string; value: unknown; table?: string | null }; result: null };
  rename_extension_store_key: { args: { namespace: string; key: string; newKey: string; table?: string | null }; result: null };
  delete_extension_store_json: { args: { namespace: string; key: string; table?: string | null }; result: null };
  list_extension_store_keys: { args: { namespace: string; table?: string | null }; result: string[] };
  list_extension_store_tables: { args: { namespace: string }; result: string[] };
  delete_extension_store_table: { args: { namespace: string; table: string }; result: null };
  get_extension_store_blob: {
    args: { namespace: string; key: string; table?: string | null };
    result: { content_base64: string; mime_type: string };
  };
  set_extension_store_blob: { args: { namespace: string; key: string; dataBase64: string; table?: string | null }; result: null };
  delete_extension_store_blob: { args: { namespace: string; key: string; table?: string | null }; result: null };
  list_extension_store_blob_keys: { args: { namespace: string; table?: string | null }; result: string[] };
}

/** Every command safeInvoke can send. */
export type TauriTavernCommandMap = McpCommandMap & ExtensionStoreCommandMap;
export type TauriTavernCommandName = keyof TauriTavernCommandMap;

/** Sends any command with an upstream-shaped args object; rejects like the API methods. */
export type SafeInvoke = <C extends TauriTavernCommandName>(
  command: C,
  ...args: undefined extends TauriTavernCommandMap[C]['args']
    ? [args?: TauriTavernCommandMap[C]['args']]
    : [args: TauriTavernCommandMap[C]['args']]
) => Promise<TauriTavernCommandMap[C]['result']>;

// ---------------------------------------------------------------- host object

/**
 * - connecting: an attempt is in progress; calls wait for it.
 * - open: calls are sent at once.
 * - closed: the last attempt failed (error.code mcp.host_unavailable, the message names the
 *   backend) or the shim could not start; calls reject at once; attempts continue with a
 *   jittered backoff, quick at first (0.1, 0.2, 0.4, 0.8 s), then thinning out to every 5 s.
 * - refused: the backend refused this page's origin (error.code mcp.origin_not_allowed, the
 *   message names the origin and --allow-origin); calls reject at once (a test call resolves
 *   not_sent) and the bridge makes no attempt of its own: only reconnect(), or a call made 30 s
 *   or more after the refusal, tries again.
 */
export type McpBridgeState = 'connecting' | 'open' | 'closed' | 'refused';

/**
 * __TAURITAVERN__.mcpBridge: ttmcp's own object beside the API (not in upstream's); every
 * change of state also dispatches McpBridgeStateEvent on window.
 */
export interface McpBridgeStatus {
  state: McpBridgeState;
  /**
   * Where the page reaches the backend: its origin, e.g. "http://127.0.0.1:7878", or, through
   * SillyTavern's server plugin, SillyTavern's origin + "/api/plugins/ttmcp".
   */
  backend: string;
  /**
   * Why the bridge is not open (the last attempt's failure, or a dropped connection); absent when
   * open. command: while refused, the backend's restart command with `--allow-origin` added, when
   * it sends one (as TauriTavernMcpError.command).
   */
  error?: { code: string; message: string; command?: string };
  /** One attempt now (none while open; the one in progress while connecting); resolves when it has settled. */
  reconnect(): Promise<void>;
}

export type McpBridgeStateEvent = CustomEvent<{ state: McpBridgeState }>;

export interface TauriTavernHostAbi {
  /** Resolves (never rejects) once api.mcp and invoke.safeInvoke are published and the first handshake settled. */
  ready?: Promise<void>;
  api?: {
    mcp?: TtmcpMcpApi;
    extension?: { store?: TauriTavernExtensionStoreApi; [key: string]: unknown };
    [key: string]: unknown;
  };
  invoke?: { safeInvoke?: SafeInvoke; [key: string]: unknown };
  mcpBridge?: McpBridgeStatus;
  [key: string]: unknown;
}

/** The loader module's exports. */
export declare const ready: Promise<void>;
export default ready;

declare global {
  interface Window {
    __TAURITAVERN__?: TauriTavernHostAbi;
    __TAURITAVERN_MAIN_READY__?: Promise<void>;
  }
  interface WindowEventMap {
    'tauritavern-mcp:state': McpBridgeStateEvent;
  }
}

// ---------------------------------------------------------------- progress (ttmcp, issue 29)

/**
 * A call's progress as its server reports it (notifications/progress), coalesced by the backend:
 * at most a few a second, the latest state, the last before the call's outcome and none after.
 * total: absent when the server did not say how much there is; message: the last one any update
 * carried; updates: how many notifications came so far, including those coalesced away.
 */
export interface McpCallProgress {
  progress: number;
  total?: number;
  message?: string;
  updates: number;
}

/** Takes a call's progress; what it throws is logged and ignored. */
export type McpProgressCallback = (progress: McpCallProgress) => void;

/** testCall's options as ttmcp takes them: upstream's, and onProgress. */
export interface TtmcpTestCallOptions extends McpTestCallOptions {
  onProgress?: McpProgressCallback;
}

export interface TtmcpMcpToolsApi extends TauriTavernMcpToolsApi {
  /** As upstream's; options.onProgress takes the test call's progress while it runs. */
  testCall(input: TestMcpToolCallInput, options?: TtmcpTestCallOptions): Promise<McpTestCallOutcome>;
}

/**
 * ttmcp's invoke.safeInvoke also takes a third argument: onProgress takes the progress of the
 * call the command makes (call_legacy_mcp_tool, test_mcp_tool_call); other commands have none.
 */
export interface TtmcpSafeInvokeOptions {
  onProgress?: McpProgressCallback;
}
export type TtmcpSafeInvoke = <C extends TauriTavernCommandName>(
  command: C,
  args: TauriTavernCommandMap[C]['args'],
  options?: TtmcpSafeInvokeOptions,
) => Promise<TauriTavernCommandMap[C]['result']>;
