// Package domain holds the identities and rules of the MCP platform: the
// registration of a server (id, display name, endpoint, headers, protocol
// preference, state, tool permissions and description overrides), tool
// ids, and the validation of each. It does no I/O.
//
// Every rule is upstream's (TauriTavern's tt-domain): the same checks in
// the same order, failing with the same codes and messages, so a message
// such as "mcp.endpoint_invalid: relative URL without a base" reads the
// same whichever implementation produced it. Validation failures are
// *Error values of KindBadRequest.
package domain
