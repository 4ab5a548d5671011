//go:build !js

package jsapi

import (
	"embed"
	"io/fs"
)

// files holds the page side of the contract. dist/ is filled by `make`
// (the wasm shim and the wasm_exec.js of the same toolchain); a build
// without it still serves the loader, whose fallback then reports that the
// shim is missing. The wasm build excludes this file: the shim must not
// embed itself.
//
//go:embed tauritavern-mcp.js tauritavern-mcp.d.ts bridge-transport.js extension-store.js legacy-mcp-tools.js legacy-mcp-tools.d.ts all:dist
var files embed.FS

// Assets returns the files served under /jsapi/: the loader and the
// modules it imports (the bridge's data plane, the extension store), the legacy generation adapter, their
// declarations, and the built shim (tauritavern-mcp.wasm, wasm_exec.js).
func Assets() fs.FS { return assetFS{} }

// assetFS flattens dist/ into the root, so /jsapi/tauritavern-mcp.wasm
// and /jsapi/tauritavern-mcp.js sit side by side as the loader expects.
type assetFS struct{}

func (assetFS) Open(name string) (fs.File, error) {
	switch name {
	case ".", "tauritavern-mcp.js", "tauritavern-mcp.d.ts", "bridge-transport.js", "extension-store.js", "legacy-mcp-tools.js", "legacy-mcp-tools.d.ts":
		return files.Open(name)
	}
	if name == "dist" || fs.ValidPath(name) && len(name) > 5 && name[:5] == "dist/" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return files.Open("dist/" + name)
}
