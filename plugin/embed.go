// Package plugin holds the ttmcp SillyTavern server plugin (issue 28) as
// the files SillyTavern loads from plugins/ttmcp/: package.json and
// index.mjs (plain JavaScript, Node's standard library only, so it needs
// no npm install in SillyTavern). `ttmcp install-extension` copies them and
// writes config.json beside them.
package plugin

import (
	"embed"
	"io/fs"
)

// Name is the plugin's folder in SillyTavern's plugins/ and its id: its
// routes are under /api/plugins/<Name>/.
const Name = "ttmcp"

//go:embed package.json index.mjs
var files embed.FS

// Files returns the plugin as SillyTavern loads it (package.json at the
// root; config.json is the installer's).
func Files() fs.FS { return files }
