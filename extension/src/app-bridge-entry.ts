// The second bundle (dist/app-bridge.bundle.js), loaded on the first MCP
// App only: AppBridge and PostMessageTransport of @modelcontextprotocol/
// ext-apps (with its MCP SDK and zod: 650 KB minified, more than the rest of
// the extension, so it is not in index.bundle.js).
export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
