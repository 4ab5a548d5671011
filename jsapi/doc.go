// Package jsapi is the contract between the page and the backend: the JSON
// shapes of every DTO (field names exactly as TauriTavern's), the command
// names, the WebSocket envelope and the error kinds and host error codes.
//
// Both the native backend and the GOOS=js wasm shim import it, so it must
// stay free of I/O and of encoding/json (the wasm binary never links a JSON
// decoder for payloads; see SPEC §4.1). The struct tags are the contract;
// decoding rules (unknown fields rejected, numbers kept exact) live in the
// backend's presentation layer.
//
// Beside the Go files live the JavaScript side of the contract: the ES
// module loader (tauritavern-mcp.js) and its TypeScript declarations
// (tauritavern-mcp.d.ts).
package jsapi
