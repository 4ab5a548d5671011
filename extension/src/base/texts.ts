// Every text the Manager shows, by key. The key is looked up as
// `mcp_manager.<key>` through SillyTavern's translate(fallback, key); the
// English text here is the fallback. i18n/zh-cn.json and i18n/zh-tw.json
// carry exactly these keys (test/i18n.test.ts checks both ways), and
// `{name}` placeholders are substituted after translation.

export const TEXTS = {
  // drawer and connection states
  title: 'MCP',
  connecting: 'Connecting to the MCP backend…',
  backend_down_title: 'The ttmcp backend is not running',
  backend_down_body: 'Could not reach the ttmcp backend at {url}.',
  backend_down_hint: 'Start it on this computer; this panel connects by itself once it runs:',
  backend_down_plugin_hint: 'Or let SillyTavern start it: with ttmcp’s SillyTavern plugin installed and SillyTavern’s server plugins on (enableServerPlugins: true in its config.yaml; in Docker, SILLYTAVERN_ENABLESERVERPLUGINS=true), SillyTavern starts ttmcp itself, and every device that opens SillyTavern reaches it.',
  backend_down_remote: 'This page was opened from another device, so it cannot reach a ttmcp backend on the computer that runs SillyTavern directly. SillyTavern’s ttmcp plugin can: install it on that computer, turn SillyTavern’s server plugins on (enableServerPlugins: true in its config.yaml; in Docker, SILLYTAVERN_ENABLESERVERPLUGINS=true), and restart SillyTavern:',
  plugin_backend_down_title: 'ttmcp is not running yet',
  plugin_backend_down_body: 'SillyTavern’s ttmcp plugin answers, but the ttmcp backend behind it does not yet. This panel connects by itself once it runs.',
  plugin_backend_down_hint: 'The plugin starts ttmcp when SillyTavern starts, and again whenever it stops, unless autostart is off in SillyTavern’s plugins/ttmcp/config.json. SillyTavern’s console shows what ttmcp says, each line beginning with [ttmcp].',
  plugin_untrusted_title: 'ttmcp does not trust SillyTavern’s plugin',
  plugin_untrusted_body: 'The ttmcp backend that answers was started with another data root than the plugin’s, so it does not know the plugin’s secret. Stop it and let SillyTavern start ttmcp, or start it with the data root named in SillyTavern’s plugins/ttmcp/config.json.',
  route_plugin: 'Through SillyTavern (its ttmcp plugin): this works from any device that opens SillyTavern.',
  route_plugin_user: 'Through SillyTavern (its ttmcp plugin), as {user}: this works from any device that opens SillyTavern.',
  route_direct: 'Directly to ttmcp at {url}: this works only in a browser on the computer that runs ttmcp.',
  error_details: 'Details: {message}',
  backend_url: 'Backend URL',
  backend_url_hint: 'Where ttmcp serve listens. Saved in the SillyTavern settings.',
  backend_url_save: 'Save and retry',
  backend_url_reload: 'The MCP host API was already loaded from {url}. Reload the page to use {next}.',
  retry: 'Retry',
  retrying: 'Retrying…',
  origin_refused_title: 'This page’s origin is not allowed',
  origin_refused_body: 'The ttmcp backend at {url} refused this page’s origin, {origin}.',
  origin_refused_hint: 'Restart the backend with this command, then press Retry:',
  api_missing_title: 'TauriTavern MCP Host API is unavailable',
  api_missing_body: 'The host API loaded in this page does not provide api.mcp. Update ttmcp and reload the page.',
  load_failed: 'The MCP servers could not be loaded.',
  connection_lost: 'The connection to the ttmcp backend at {url} was lost. Reconnecting…',
  reconnect: 'Reconnect now',
  store_unavailable: 'TauriTavern extension store is unavailable',
  settings_column_unavailable: 'SillyTavern extension settings column is unavailable',
  popup_unavailable: 'SillyTavern Popup API is unavailable',

  // main panel
  storage_issues: 'Registration files needing attention',
  empty_title: 'No MCP servers yet',
  empty_body: 'Add a Streamable HTTP endpoint to see the tools it offers.',
  add_server: 'Add server',
  adding: 'Adding…',
  servers_count: 'Servers · {count}',
  test_call: 'Test call',

  // server row
  state_active: 'Active',
  state_paused: 'Paused',
  state_toggle_hint_activate: 'Paused. Click to activate.',
  state_toggle_hint_pause: 'Active. Click to pause.',
  edit: 'Edit',
  remove: 'Remove',
  toggle_tools: 'Show or hide tools',
  paused_note: 'Paused — activate to discover and test this server’s tools.',
  discovering: 'Discovering tools…',
  discover_tools: 'Discover tools',
  implementation_protocol: '{implementation} · MCP {protocol}',
  protocol_only: 'MCP {protocol}',
  tool_count_one: '{count} tool',
  tool_count_other: '{count} tools',
  no_tools: 'This server offers no tools.',
  refresh_tools: 'Refresh tools',
  discovery_notes: 'Discovery notes · {count}',
  stale_tools: 'Not offered by this discovery',
  set_off: 'Set Off',

  // tool item
  custom: 'Custom',
  edit_description: 'Edit description',
  permission_for: 'Permission for {name}',
  permission_off: 'Off',
  permission_ask: 'Ask',
  permission_allow: 'Allow',
  schema_hints: 'Schema & hints',
  required_marker: 'required',

  // add / edit server dialog
  add_title: 'Add MCP server',
  edit_title: 'Edit MCP server',
  save: 'Save',
  saving: 'Saving…',
  cancel: 'Cancel',
  input_mode: 'Input mode',
  mode_manual: 'Manual',
  mode_json: 'JSON',
  name: 'Name',
  name_placeholder: 'Local tools',
  endpoint: 'Endpoint',
  endpoint_hint: 'Streamable HTTP endpoint.',
  new_server_note: 'New servers start paused, and every discovered tool starts Off.',
  advanced: 'Advanced',
  protocol_version: 'Protocol version',
  protocol_auto: 'Auto (recommended)',
  protocol_hint: 'Auto negotiates the newest mutually supported version.',
  custom_headers: 'Custom headers',
  header_name: 'Header name',
  header_value: 'Header value',
  remove_header: 'Remove header',
  add_header: 'Add header',
  headers_note: 'Endpoint credentials and header values are stored in plaintext and included in data backups.',
  name_required: 'Enter a name.',
  endpoint_invalid: 'Enter a valid http:// or https:// URL.',
  json_label: 'MCP JSON',
  json_hint: 'Paste one Streamable HTTP server, as a direct object or under mcpServers.',
  json_invalid: 'Invalid MCP JSON: {message}',
  json_not_object: '{label} must be an object',
  json_one_server: 'configuration must contain exactly one server',
  json_name_required: 'server name is required',
  json_url: 'server url must be an HTTP(S) URL',
  json_type_string: 'transport type must be a string',
  json_type_unsupported: 'unsupported transport type: {type}',
  json_headers_object: 'headers must be an object',
  json_header_string: 'header {name} must be a string',
  json_protocol: 'unsupported protocol version',

  // confirmations
  activate_title: 'Activate this MCP server?',
  activate_http_note:
    'This endpoint uses unencrypted HTTP. Other devices on the network may observe or modify MCP traffic, including custom headers. Activation allows manual discovery and test calls, but does not grant tool permission.',
  activate_note:
    'Activation allows manual discovery and test calls to this exact endpoint and sends its configured custom headers. It does not grant tool permission.',
  activate: 'Activate',
  remove_title: 'Remove this MCP server?',
  remove_note: 'The registration and all saved tool settings will be removed.',

  // stdio servers (ttmcp's addition)
  stdio: 'stdio',
  stdio_hint: 'A local server: a command the backend runs on its own machine, configured there with ttmcp stdio.',
  stdio_command: 'Command',
  stdio_env: 'Environment',
  stdio_env_hidden: '(values are kept by the backend and never shown)',
  stdio_cwd: 'Working directory',
  stdio_edit_note: 'The command, its arguments, environment and working directory are configured on the backend’s machine with ttmcp stdio add, import and remove; here only the name can be changed.',
  connection_open: 'Connected',
  connection_open_protocol: 'Connected (MCP {protocol})',
  connection_opening: 'Connecting…',
  connection_closed: 'Not connected: the next use connects',
  connection_following: 'follows its server’s changes',
  connection_not_following: 'its changes show after Refresh',
  connection_short_lived:
    'This server ends its sessions between uses, so ttmcp opens a fresh session for each one (slower, but nothing is lost).',
  stdio_process: 'Process',
  stdio_state_stopped: 'stopped (it starts when its tools are discovered or called)',
  stdio_state_starting: 'starting…',
  stdio_state_running: 'running',
  stdio_refresh_status: 'Check the process again',
  stdio_status_failed: 'The process status could not be read: {message}',
  stdio_last_exit: 'Last failure ({time}):',
  stdio_stderr: 'Its last lines on stderr · {count}',
  stdio_stderr_empty: 'It wrote nothing to stderr.',
  activate_stdio_note: 'Activation lets the backend run this command on its own machine whenever this server’s tools are discovered or called; the process keeps running while it is used. It does not grant tool permission.',
  remove_stdio_note: 'The command, its environment and all saved tool settings will be removed; a running process is stopped.',
  json_stdio: 'this is a local (stdio) server with a command; add it on the backend’s machine with ttmcp stdio import <file> or ttmcp stdio add',

  // tool description dialog
  server_description: 'Server description',
  custom_description: 'Custom description',
  custom_description_hint:
    'Replaces the server description in what the model sees. Leave empty to use the server description.',
  property_overrides_kept: 'Custom parameter descriptions are kept: {names}.',
  reset_all: 'Reset all customizations',

  // test-call console
  test_title: 'Test MCP tool',
  close: 'Close',
  no_active_servers: 'No active servers. Activate a server in the list first.',
  server: 'Server',
  select_server: 'Select a server…',
  tool: 'Tool',
  loading_tools: 'Loading tools…',
  select_tool: 'Select a tool…',
  no_arguments: 'This tool takes no arguments.',
  not_set: 'Not set',
  one_per_line: 'One value per line.',
  field_required: 'Required',
  field_number: 'Enter a valid number.',
  field_integer: 'Enter a whole number.',
  field_json: 'Enter valid JSON.',
  side_effects_note: 'This is a real call and may have side effects. ttmcp sends it again only where the server says it has not run it.',
  permission_note: 'Current permission: {permission}. This explicit test call does not change it.',
  run_test: 'Run test',
  waiting: 'Waiting for server…',
  stop_note: 'Stopping only ends the local wait; it cannot undo a call the server already received.',
  stop_waiting: 'Stop waiting',
  stopping: 'Stopping local wait…',
  outcome_not_sent: 'Not sent',
  outcome_unknown: 'Outcome unknown',
  outcome_unknown_note: 'The call may have executed. ttmcp will not retry it automatically.',
  outcome_server_error: 'Server error',
  outcome_unsupported: 'Unsupported server response',
  outcome_responded: 'Server responded',
  outcome_tool_error: 'Tool returned an error',
  structured_result: 'Structured result',
  no_content: 'The server responded, but there is no displayable content.',
  error_code: 'Code {code}',
  response_type: 'Response type: {type}',
  error_data: 'Data',

  // the model's tools (src/tools/)
  tools_title: 'Tools for the model',
  reach_ready: 'MCP tools reach the model: the next generation offers {tools} from {servers}.',
  server_count_one: '{count} server',
  server_count_other: '{count} servers',
  reach_diagnostics: '{count} left out (the next generation says why in the console).',
  reach_host_offers_tools: 'This host offers the MCP tools to the model itself.',
  reach_too_old: 'This SillyTavern is too old to offer tools to the model: it has no registerFunctionTool. Update SillyTavern to a version newer than 1.12.6 to use MCP tools in chats.',
  reach_not_chat_completion: 'No MCP tool reaches the model: tools need the Chat Completion API (the current API is {api}).',
  reach_function_calling_off: 'No MCP tool reaches the model: function calling is off. Turn on “Enable function calling” in AI Response Configuration.',
  reach_source_without_tools: 'No MCP tool reaches the model: the chat completion source {source} does not support tool calling in this SillyTavern.',
  reach_post_processing_without_tools:
    'No MCP tool reaches the model: Prompt Post-Processing ({mode}) removes tools. In API Connections, choose None or a mode “with tools”.',
  reach_tool_calling_unsupported: 'No MCP tool reaches the model: turn on “Enable function calling” and use a chat completion source that supports tools.',
  reach_backend_down: 'No MCP tool reaches the model: the ttmcp backend is not connected.',
  reach_nothing_allowed: 'No MCP tool reaches the model: set a tool to Ask or Allow on an active server whose tools were discovered.',
  check_again: 'Check again',
  recent_calls: 'Recent calls',
  recent_calls_empty: 'No calls yet.',
  recent_calls_failed: 'The recent calls could not be read: {message}',
  refresh_calls: 'Refresh',
  source_test: 'Test',
  source_model: 'Model',
  source_page: 'Page',
  audit_kind_read: 'Read',
  audit_kind_prompt: 'Prompt',
  approval_none: 'No prompt',
  approval_manual: 'Test console',
  approval_once: 'Allowed once',
  approval_always: 'Always allowed',
  approval_denied: 'Denied',
  call_answered: 'Answered',
  call_failed: 'Error result',
  call_server_error: 'Server error',
  call_unsupported: 'Unusable answer',
  call_not_sent: 'Not sent',
  call_outcome_unknown: 'Outcome unknown',
  call_rejected: 'Rejected',
  duration_ms: '{ms} ms',
  ask_title: 'Allow this MCP tool call?',
  ask_arguments: 'Arguments',
  ask_folded_one: '({count} more character)',
  ask_folded_other: '({count} more characters)',
  ask_show_all: 'Show all arguments',
  ask_note: 'The model asked to run this tool. Deny answers the model with an error; nothing is sent to the server.',
  ask_allow_once: 'Allow once',
  ask_always_allow: 'Always allow',
  ask_deny: 'Deny',
  invoking_tool: 'Invoking MCP tool: {name}',
  tools_unavailable_title: 'MCP tools unavailable',
  tools_unavailable_body: 'MCP tools are unavailable for this generation. Local tools and normal generation are unaffected.',
  tools_partly_unavailable_body: 'Some MCP tools are unavailable for this generation. Check MCP Manager and the console for details.',
  outcome_unknown_title: 'MCP tool result unknown',
  outcome_unknown_warning: '{name} may have run, but its result is unknown. ttmcp did not retry it, and the tool loop ended. Check the MCP server and affected systems before trying again.',
  outcome_stopped_title: 'MCP tool stopped',
  outcome_stopped_warning: 'You stopped {name} after ttmcp had sent it, so it may have run, in part or in full; its result is unknown. ttmcp did not retry it, and the tool loop ended.',
  outcome_stopped_asking_warning: 'You stopped {name} while its server was asking you a question. The server may have done part of its work before it asked; ttmcp did not retry the call, and the tool loop ended.',
  always_allow_failed: 'The permission could not be set to Allow: {message}',

  // sign-in (ttmcp's OAuth addition)
  auth_signed_in: 'Signed in',
  auth_required: 'Needs sign-in',
  auth_more_access: 'Needs more access',
  auth_scopes: 'Scopes: {scopes}',
  auth_expires: 'Access token expires {time}',
  auth_refreshable: 'Renewed automatically when it expires',
  auth_server: 'Signed in at {server}',
  sign_in: 'Sign in',
  signing_in: 'Signing in…',
  sign_out: 'Sign out',
  auth_required_explained: 'This server asks you to sign in before it can be used.',
  auth_sign_in_hint: 'Sign in opens the server’s sign-in page in a new window. The access it grants stays with the ttmcp backend; this page never sees it.',
  call_auth_note: 'The server refused the request because it needs sign-in, so the tool did not run. Sign in on the server’s row, then try again.',
  client_title: 'Sign in with your own client ID',
  client_body: 'This server’s sign-in does not let ttmcp register itself. Register an application with it using the redirect URI below, then enter its client ID (and secret, if it has one).',
  client_id: 'Client ID',
  client_secret: 'Client secret (optional)',
  redirect_uri: 'Redirect URI',
  client_id_required: 'Enter the client ID.',

  // tool sets and readable results (ttmcp's addition, issue 19)
  toolsets_count: 'Tool sets · {count}',
  toolsets_empty: 'No tool sets yet. Without one, every chat is offered every tool you allow. A set picks the tools a chat or a character gets.',
  toolsets_failed: 'The tool sets could not be listed: {message}',
  toolsets_unavailable: 'This ttmcp backend has no tool sets: update it.',
  toolset_new: 'New tool set',
  toolset_choose: 'Choose for this chat',
  toolset_edit_named: 'Edit tool set {name}',
  toolset_remove_named: 'Remove tool set {name}',
  toolset_servers: 'whole servers: {count}',
  toolset_tools: 'single tools: {count}',
  toolset_nothing: 'no tools',
  toolset_limit: 'results inline up to {limit} characters',
  toolset_no_reader: 'no reader tool',
  toolset_bound_chat: 'This chat',
  toolset_bound_character: 'This character',
  toolset_bound_group: 'This group',
  toolset_bound_default: 'Default',
  toolset_in_use_none: 'This chat uses every tool you allow (no tool set applies).',
  toolset_in_use_chat: 'This chat uses the tool set “{name}” (chosen for this chat).',
  toolset_in_use_character: 'This chat uses the tool set “{name}” (chosen for {character}).',
  toolset_in_use_group: 'This chat uses the tool set “{name}” (chosen for the group {group}).',
  toolset_in_use_default: 'This chat uses the tool set “{name}” (the default).',
  toolset_new_title: 'New tool set',
  toolset_edit_title: 'Edit tool set',
  toolset_name: 'Name',
  toolset_name_required: 'Enter a name.',
  toolset_choose_tools: 'Tools',
  toolset_choose_hint: 'A set never grants a tool: only tools set to Ask or Allow on an active server are offered. A whole server takes the tools you allow now and later.',
  toolset_no_servers: 'No MCP servers yet.',
  toolset_all_of: 'All tools of {server} that you allow',
  toolset_entry_server: 'All tools of {server}',
  toolset_order: 'Selected, in order',
  toolset_order_hint: 'When a model takes fewer tools than the set offers (128 for OpenAI-compatible sources), the first ones are kept.',
  toolset_nothing_selected: 'Nothing selected: the set offers no MCP tools.',
  toolset_not_offered: 'not offered now',
  toolset_move_up: 'Move {name} up',
  toolset_move_down: 'Move {name} down',
  toolset_drop: 'Take {name} out of the set',
  toolset_description: 'Description for this set',
  toolset_description_for: 'Description of {name} for this set',
  toolset_description_hint: 'What the model reads instead of the server’s (and the server’s custom) description. Blank: theirs.',
  toolset_limit_label: 'Inline limit of a result (characters)',
  toolset_limit_hint: 'A longer result reaches the model as a note with a 3,000-character preview; ttmcp keeps the rest.',
  toolset_limit_invalid: 'The inline limit is a whole number of characters, at least 1.',
  toolset_reader: 'Let the model read long results (the ttmcp_read_result tool)',
  toolset_remove_title: 'Remove the tool set “{name}”?',
  toolset_remove_note: 'Chats and characters that use it fall back to the next choice (the character’s, then the default, then every tool you allow).',
  toolset_choose_title: 'Tool set for this chat',
  toolset_choose_body: 'The chat’s choice comes first, then the character’s (or the group’s), then the default.',
  toolset_for_chat: 'This chat',
  toolset_for_character: 'The character {name}',
  toolset_for_group: 'The group {name}',
  toolset_for_default: 'Default (every other chat)',
  toolset_inherit: 'The character’s or default choice',
  toolset_inherit_default: 'The default choice',
  toolset_all_permitted: 'Every tool you allow',
  toolset_gone: 'A removed tool set',
  toolset_gone_note: 'The tool set chosen here no longer exists: it is skipped, and the next choice applies. Keep it, or choose another.',
  toolset_bind_failed: 'This choice cannot be kept here (no chat or character is open).',
  chat_menu_title: 'MCP tools in this chat',
  chat_menu_set: 'MCP: {name} · {tools}',
  chat_menu_all: 'MCP: every allowed tool · {tools}',
  chat_menu_unavailable: 'MCP tools: not connected',
  reach_set_chat: 'Tool set “{name}” (this chat).',
  reach_set_character: 'Tool set “{name}” (this character).',
  reach_set_group: 'Tool set “{name}” (this group).',
  reach_set_default: 'Tool set “{name}” (the default).',
  reach_no_set: 'No tool set: every tool you allow.',
  reach_set_missing: 'A tool set chosen here was removed; the next choice applies.',
  reach_set_offers_nothing: 'No MCP tool reaches the model: the tool set of this chat offers none of its tools now (they are Off, their servers paused or removed).',
  reach_limit: 'This source takes at most {limit} tools and SillyTavern has {local} of its own, so {leftOut} of the {total} MCP tools are left out (the set’s order decides).',
  tools_left_out_title: 'MCP tools left out',
  tools_left_out_body: 'This source takes at most {limit} tools, {local} of them SillyTavern’s own: {offered} of {total} MCP tools are offered. Left out (the last in order): {names}.',
  and_more: ' and {count} more',
  reader_tool_name: 'Read a long MCP result',
  open_full_result: 'Full result',
  result_title: 'Full tool result',
  result_summary: '{chars} characters, {lines} lines, kept {time}. It was too long for the chat: the model was given the start of it, and could read on only through ttmcp_read_result.',
  result_failed: 'The result could not be read: {message}',
  result_loading: 'Loading…',
  result_more: 'Load more (from line {line} of {total})',
  // resources and prompts (ttmcp's addition, issue 18)
  tab_tools: 'Tools',
  tab_resources: 'Resources',
  tab_prompts: 'Prompts',
  tabs_checking: 'Asking the server whether it also offers resources and prompts…',
  console_tabs: 'What {name} offers',
  use_resources: 'Resources from this server',
  use_prompts: 'Prompts from this server',
  switch_on: 'On',
  switch_off: 'Off',
  resources_off: 'Resources are off for this server: ttmcp refuses to list or read them until you turn them on.',
  prompts_off: 'Prompts are off for this server: ttmcp refuses to list or get them until you turn them on.',
  resources_paused: 'Paused — activate to browse this server’s resources.',
  prompts_paused: 'Paused — activate to use this server’s prompts.',
  capabilities_issue: 'The resources and prompts settings of this server cannot be read, so both are refused: {message} Turning one on or off writes them again.',
  refresh_resources: 'Refresh resources',
  refresh_prompts: 'Refresh prompts',
  listed_at: 'Listed {time}',
  listed_at_cached: 'Listed {time}, kept since',
  listing_resources: 'Listing resources…',
  listing_prompts: 'Listing prompts…',
  list_notes_one: 'List note · {count}',
  list_notes_other: 'List notes · {count}',
  resource_count_one: '{count} resource',
  resource_count_other: '{count} resources',
  template_count_one: '{count} template',
  template_count_other: '{count} templates',
  prompt_count_one: '{count} prompt',
  prompt_count_other: '{count} prompts',
  variable_count_one: '{count} variable',
  variable_count_other: '{count} variables',
  no_resources: 'This server lists no resources.',
  no_prompts: 'This server lists no prompts.',
  resources_title: 'Resources',
  templates_title: 'Resource templates',
  prompts_title: 'Prompts',
  open: 'Open',
  result_resources_one: '{count} resource in the result',
  result_resources_other: '{count} resources in the result',
  resource_link: 'link',
  embedded_resource: 'embedded',
  open_resource_named: 'Open {name}',
  embedded_resource_note: 'as the tool returned it',
  open_resource: 'Open {name}',
  open_template: 'Open template {name}',
  use: 'Use',
  use_prompt: 'Use prompt {name}',
  arguments: 'Arguments:',
  from_server: 'From {server}',
  template: 'Template',
  template_variables: 'Template variables',
  no_variables: 'This template has no variables.',
  uri_to_read: 'Reads',
  read: 'Read',
  read_again: 'Read again',
  reading: 'Reading…',
  read_result: 'What the server returned',
  read_unknown_note: 'The request may have reached the server. ttmcp will not retry it automatically.',
  read_not_sent: 'The request was not sent ({code}): {message}',
  read_unknown: 'The outcome is unknown ({code}): {message}',
  read_server_error: 'The server answered with an error ({code}): {message}',
  read_unsupported: 'The server answered with a response ttmcp does not support ({type}): {message}',
  content_count_one: '{count} content',
  content_count_other: '{count} contents',
  no_contents: 'The server returned no contents.',
  content_not_kept: 'Not kept: see the notes.',
  content_notes_one: 'Note · {count}',
  content_notes_other: 'Notes · {count}',
  download_file: 'Download {name}',
  blob_not_base64: 'This content is not valid base64 and cannot be downloaded.',
  image_content: 'Image ({mime})',
  audio_content: 'Audio ({mime})',
  open_link: 'Open linked resource {name}',
  prompt_messages: 'The prompt’s messages',
  no_messages: 'The prompt has no messages.',
  role_user: 'User',
  role_assistant: 'Assistant',
  prompt_arguments: 'Prompt arguments',
  prompt_no_arguments: 'This prompt takes no arguments.',
  argument_required: 'Required.',
  required_note: 'Arguments marked * are required.',
  get_prompt: 'Get prompt',
  suggestions_for: 'Suggestions for {name}',
  put_in_input: 'Put in the input box',
  put_in_input_done_one: 'Put {chars} character in the input box.',
  put_in_input_done_other: 'Put {chars} characters in the input box.',
  put_in_input_missing: 'This page has no chat input box.',
  prompt_no_user_text: 'The prompt has no user text to put in the input box.',
  left_out_intro_one: 'Only the prompt’s user text becomes text; {count} part is left out:',
  left_out_intro_other: 'Only the prompt’s user text becomes text; {count} parts are left out:',
  left_out_assistant: 'An assistant message.',
  left_out_assistant_text: 'An assistant message: “{excerpt}”',
  left_out_image: 'An image ({mime}).',
  left_out_audio: 'Audio ({mime}).',
  left_out_binary: 'A binary resource, {uri}.',
  left_out_link: 'A link to the resource {name} ({uri}); open it in the Manager to attach it.',
  left_out_not_shown: 'A message ttmcp could not show ({code}): {detail}',
  primitives_unavailable: 'The MCP host API with resources and prompts is not loaded yet.',

  // attaching resources to a chat
  attach: 'Attach',
  attach_named: 'Attach {name}',
  attach_title: 'Attach to this chat',
  attach_to_chat: 'Attach to the chat with {chat}',
  attach_no_chat: 'Open a chat to attach resources to it.',
  attach_nothing_textual: 'This resource has no text to attach (only binary contents): a chat takes only text.',
  attach_adds: 'Adds {chars} characters.',
  chars_of_cap: 'The chat’s attachments: {used} of {cap} characters.',
  attach_skipped_one: '{count} content is not text and is not attached.',
  attach_skipped_other: '{count} contents are not text and are not attached.',
  attached: 'Attached to the chat with {chat}: {place}.',
  attach_chat_changed: 'Another chat is open now; the chat with {chat} was not changed. Open this again from the chat you mean.',
  attach_no_text: '{name} has no text to attach (only binary contents): a chat takes only text.',
  attach_too_long: '{name} has {chars} characters, more than a chat’s attachments can hold ({cap} together). It cannot be attached.',
  attach_no_room: '{name} has {chars} characters; the chat’s attachments can take only {free} more. Remove an attachment to make room.',
  attach_over_cap: '{name} has {chars} characters, but the chat’s attachments can take only {free} more (at most {cap} together). Nothing was attached; remove an attachment first.',
  attachment_gone: 'This attachment was removed meanwhile.',
  refresh_failed: '{name} could not be read again, so its text stays as it was: {message}',
  refreshed: 'Read again: the text is the server’s now.',
  placement_legend: 'Where it goes in the prompt',
  placement_new: 'New attachments go',
  placement_position: 'Position',
  placement_depth: 'Depth',
  placement_depth_hint: 'Messages from the end of the chat: 0 after the last one.',
  placement_role: 'As',
  placement_role_system: 'system',
  placement_role_user: 'user',
  placement_role_assistant: 'assistant',
  position_in_chat: 'In the chat, at a depth',
  position_before_main: 'Before the main prompt',
  position_after_main: 'After the main prompt',
  placement_in_chat: 'in the chat at depth {depth}, as {role}',
  placement_before_main: 'before the main prompt, as {role}',
  placement_after_main: 'after the main prompt, as {role}',
  attachments_title: 'MCP resources in this chat',
  attachments_title_chat: 'MCP resources in the chat with {chat}',
  attachments_rule: 'An attachment is the text as it was read: it is sent with every message of this chat until you remove it, and read again only when you press its Refresh.',
  attachment_count_one: '{count} attachment',
  attachment_count_other: '{count} attachments',
  char_count_one: '{chars} character',
  char_count_other: '{chars} characters',
  snapshot_of: 'Read {time}',
  change_placement: 'Change where it goes',
  refresh_attachment: 'Read {name} again',
  remove_attachment: 'Remove {name}',
  attach_a_resource: 'Attach a resource',
  finding_resource_servers: 'Looking for servers with resources…',
  no_resource_servers: 'No active server offers resources. Activate one in the MCP drawer.',
  resources_of: 'Resources of {server}',
  resources_menu_title: 'MCP resources attached to this chat',
  resources_menu_none: 'MCP resources',
  resources_menu_one: 'MCP resources · {count} ({chars} characters)',
  resources_menu_other: 'MCP resources · {count} ({chars} characters)',

  // /mcp-prompt
  cmd_help: 'Gets an MCP prompt and returns its user text for the next command: | /setinput puts it in the input box, | /send posts it (on its own, the text goes nowhere). The prompt’s arguments are named arguments; args takes a JSON object for names that cannot be written as one.',
  cmd_returns: 'the prompt’s user text',
  cmd_arg_server: 'the MCP server, by its name in the Manager',
  cmd_arg_name: 'the prompt’s name',
  cmd_arg_args: 'the prompt’s arguments as a JSON object of strings',
  cmd_prompt_args: 'arguments: {args}',
  cmd_usage: 'Name a server and a prompt: /mcp-prompt server=<server> name=<prompt> [argument=value …]',
  cmd_server_unknown: 'No MCP server is named “{server}”. Servers: {servers}.',
  cmd_server_ambiguous: 'Several MCP servers are named “{server}”; use its id instead: {ids}.',
  cmd_args_invalid: 'args must be a JSON object of strings: {message}',
  cmd_failed: 'The prompt {name} of {server} could not be got: {message}',
  cmd_no_user_text: 'The prompt {name} of {server} has no user text to return.',
  cmd_left_out_title: 'Parts of {name} left out',

  // a server asks the user (elicitation): the popup (dialogs/elicitation-dialog.tsx), its form's bounds, and what the call's outcome and Recent calls say
  field_below: 'Enter {limit} or more.',
  field_above: 'Enter {limit} or less.',
  field_too_short_one: 'Enter at least {count} character.',
  field_too_short_other: 'Enter at least {count} characters.',
  field_too_long_one: 'Enter at most {count} character.',
  field_too_long_other: 'Enter at most {count} characters.',
  field_too_few_one: 'Choose at least {count} option.',
  field_too_few_other: 'Choose at least {count} options.',
  field_too_many_one: 'Choose at most {count} option.',
  field_too_many_other: 'Choose at most {count} options.',
  yes: 'Yes',
  no: 'No',
  elicit_title_form: '{server} asks you',
  elicit_title_url: '{server} asks you to open a page',
  elicit_during: 'Asked during',
  elicit_during_test: 'your test call',
  elicit_during_model: 'the model’s tool call',
  elicit_retry: 'Your answer was not accepted: {error}. Correct it and accept again.',
  elicit_no_fields: 'The server asks only whether you accept.',
  elicit_form_warning: 'What you enter goes to {server}. Give it only what you would give this server.',
  elicit_site: 'Site',
  elicit_address: 'Full address',
  elicit_url_warning: 'Open page opens it in a new tab. Go there only if you trust {host}.',
  elicit_url_not_web: 'This is not a web address ({scheme}): it cannot be opened from here. Decline or cancel.',
  elicit_url_invalid: 'This is not a valid address: it cannot be opened from here. Decline or cancel.',
  elicit_url_answer: 'Your answer goes to {server}.',
  elicit_buttons_note: 'Decline tells the server no. Cancel, Escape or closing this window leaves the question unanswered.',
  elicit_stop: 'Stop generation',
  elicit_stop_note: 'Stop generation stops the reply and this tool call, as SillyTavern’s Stop does.',
  elicit_accept: 'Accept',
  elicit_decline: 'Decline',
  elicit_open: 'Open page',
  elicit_opened_title: 'Continue on the page',
  elicit_opened: 'The page on {host} opened in a new tab. {server} continues once you are done there.',
  elicit_resend_note: '{server} did not run the tool: it needs you to finish on this page first. Once you are done there, the call is sent again.',
  elicit_resend_buttons_note: 'Decline, Cancel, Escape or closing this window: the call is not sent again, and {server}’s refusal is its answer.',
  elicit_done_ask: 'The page on {host} opened in a new tab. When you are done there, press Done: the call goes to {server} again. Some servers say when you are done; then this closes by itself.',
  elicit_done: 'Done',
  asked_title: 'The server asked you',
  asked_rounds_one: '{count} request',
  asked_rounds_other: '{count} requests',
  asked_item: '{what}: {action}',
  asked_form: 'A form',
  asked_url: 'A page to open',
  asked_accept: 'answered',
  asked_decline: 'declined',
  asked_cancel: 'not answered',
  asked_timeout: 'not answered in time',
  asked_limited: 'not asked: the server asked too many questions in this call or this minute, so ttmcp answered the rest for you (cancel)',
  asked_invalid: 'not answered (the question or the answers did not fit the form rules)',
  asked_chip: 'Asked · {answers}',

  // found walking issues 18 and 19 in SillyTavern 1.18.0
  result_notes: 'Notes · {count}',
  reach_limit_no_set: 'This source takes at most {limit} tools and SillyTavern has {local} of its own, so {leftOut} of the {total} MCP tools are left out (by server name, then tool).',

  // a long call's progress (issue 29)
  progress_of: '{progress} of {total}',
  progress_step: 'Step {step}',
  progress_elapsed: '{time}',
  progress_bar: 'Progress',
  progress_chip_one: 'Progress · {count} update',
  progress_chip_other: 'Progress · {count} updates',
  chat_call_running: 'Running {name}',
} as const;

// Plural forms: a text that depends on a number is written once per plural
// category of English, as `<base>_one` and `<base>_other` (CLDR's names),
// and used as tr('<base>', { count }). The category comes from
// Intl.PluralRules for the page's language; a locale file has the forms
// its language uses (Chinese has no plural forms: only `<base>_other`).

/** CLDR's plural categories (Intl.PluralRules.select's answers). */
export const PLURAL_CATEGORIES = ['zero', 'one', 'two', 'few', 'many', 'other'] as const;
export type PluralCategory = (typeof PLURAL_CATEGORIES)[number];

type Key = keyof typeof TEXTS;
/** The bases of the plural texts: every `<base>_other`. */
export type PluralKey = Key extends infer K ? (K extends `${infer B}_other` ? B : never) : never;
/** A form of a plural text (not used by itself). */
type FormKey = Extract<Key, `${PluralKey}_${PluralCategory}`>;

/** A text's key: a plain text, or the base of a plural one (with params.count). */
export type TextKey = Exclude<Key, FormKey> | PluralKey;

/** The prefix of every key in SillyTavern's locale data. */
export const KEY_PREFIX = 'mcp_manager.';

export type TextParams = Record<string, string | number>;

/** Translates one text; see createTr. */
export type Tr = (key: TextKey, params?: TextParams) => string;

/** SillyTavern's translate(text, key): the locale's text for key, else text. */
export type Translate = (text: string, key?: string | null) => string;

/** Substitutes `{name}` placeholders; unknown names stay as written. */
export function format(text: string, params?: TextParams): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole,
  );
}

/** Whether key is the base of a plural text. */
export function isPluralKey(key: string): key is PluralKey {
  return !Object.prototype.hasOwnProperty.call(TEXTS, key) && Object.prototype.hasOwnProperty.call(TEXTS, `${key}_other`);
}

/** The plural category of count in language (a SillyTavern locale id such as zh-cn); English's for an unknown language. */
export function pluralCategory(language: string | undefined, count: number): PluralCategory {
  try {
    return new Intl.PluralRules(language || 'en').select(count);
  } catch {
    return new Intl.PluralRules('en').select(count);
  }
}

function text(key: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(TEXTS, key) ? (TEXTS as Record<string, string>)[key] : undefined;
}

/**
 * createTr returns the Manager's translator. translate is looked up on
 * every call (SillyTavern's context is rebuilt per getContext()), so a
 * locale merged late still applies; without it the English text is used.
 * language is the page's (SillyTavern's getCurrentLocale()), for plural
 * texts.
 */
export function createTr(translate: () => Translate | undefined, language: () => string | undefined = () => undefined): Tr {
  /** The locale's text for key, or undefined when it has none (translate gave the fallback back). */
  const lookup = (key: string, fallback: string): string | undefined => {
    const fn = translate();
    if (!fn) return undefined;
    try {
      const translated = fn(fallback, KEY_PREFIX + key);
      return typeof translated === 'string' && translated !== '' && translated !== fallback ? translated : undefined;
    } catch {
      // a broken host translator must not take the Manager down
      return undefined;
    }
  };
  return (key, params) => {
    if (isPluralKey(key)) {
      const count = Number(params?.count);
      const other = text(`${key}_other`) ?? key;
      const form = `${key}_${pluralCategory(language(), count)}`;
      // the locale's form; else English's, by English's rules
      const translated = lookup(form, text(form) ?? other);
      return format(translated ?? text(`${key}_${pluralCategory('en', count)}`) ?? other, params);
    }
    const fallback = TEXTS[key];
    return format(lookup(key, fallback) ?? fallback, params);
  };
}

/** English only: the default for components rendered outside a host. */
export const englishTr: Tr = createTr(() => undefined);
