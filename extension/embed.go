//go:build !js

// Package extension holds the mcp-manager SillyTavern extension as the
// files SillyTavern loads: manifest.json, style.css, i18n/, ttmcp.json (the
// backend URL, read on every page load: it ships with the default so that
// no install asks for a file that is not there) and the esbuild bundle in
// dist/ (built by `make`; without it the bundle is missing and the
// extension cannot load). The backend serves them and
// `ttmcp install-extension` copies them into a SillyTavern checkout.
package extension

import (
	"embed"
	"io/fs"
)

// Name is the extension's folder name in SillyTavern: it is served at
// /scripts/extensions/third-party/<Name>/ and installed into
// data/<user>/extensions/<Name>/.
const Name = "mcp-manager"

//go:embed manifest.json style.css ttmcp.json all:i18n all:dist
var files embed.FS

// Files returns the extension as SillyTavern loads it (the folder's
// layout: manifest.json at the root).
func Files() fs.FS { return files }
