//go:build !js

package jsapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// files holds the page side of the contract. dist/ is filled by `make`
// (the wasm shim and the wasm_exec.js of the same toolchain); a build
// without it still serves the loader, whose fallback then reports that the
// shim is missing. The wasm build excludes this file: the shim must not
// embed itself.
//
//go:embed tauritavern-mcp.js tauritavern-mcp.d.ts bridge-transport.js extension-store.js http-socket.js legacy-mcp-tools.js legacy-mcp-tools.d.ts all:dist
var files embed.FS

// Assets returns the files served under /jsapi/: the loader and the
// modules it imports (the bridge's data plane, the extension store), the legacy generation adapter, their
// declarations, and the built shim (tauritavern-mcp.wasm, wasm_exec.js).
//
// The loader it returns names the files it loads (Versioned) by
// content-versioned URLs, './<name>?v=<ContentVersion>', which the backend
// serves as immutable: a reload takes them from the HTTP cache without a
// revalidation round trip, and a rebuilt file gets a new URL because the
// loader itself is always revalidated.
func Assets() fs.FS { return assetFS{} }

// Versioned are the files the loader loads from beside itself; the loader
// source names each exactly once, as the literal './<name>'.
var Versioned = []string{"tauritavern-mcp.wasm", "wasm_exec.js", "bridge-transport.js", "extension-store.js", "http-socket.js"}

// LoaderName is the loader's file name under /jsapi/.
const LoaderName = "tauritavern-mcp.js"

// ContentVersion names a file's content: the hex of the first 16 bytes of
// its SHA-256. The backend's ETags and the loader's ?v= use it, so a
// versioned URL is immutable exactly when its ?v= is the file's version.
func ContentVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// VersionLoader rewrites the loader source src so that each Versioned
// file found in files is named './<name>?v=<its ContentVersion>'; a file
// that files lacks (an unbuilt shim) keeps its plain URL.
func VersionLoader(src []byte, files fs.FS) []byte {
	out := string(src)
	for _, name := range Versioned {
		data, err := fs.ReadFile(files, name)
		if err != nil {
			continue
		}
		out = strings.ReplaceAll(out, "'./"+name+"'", "'./"+name+"?v="+ContentVersion(data)+"'")
	}
	return []byte(out)
}

// servedLoader is the loader as Assets serves it (computed once: the
// embedded files do not change).
var servedLoader = sync.OnceValues(func() ([]byte, error) {
	src, err := files.ReadFile(LoaderName)
	if err != nil {
		return nil, err
	}
	return VersionLoader(src, assetFS{}), nil
})

// assetFS flattens dist/ into the root, so /jsapi/tauritavern-mcp.wasm
// and /jsapi/tauritavern-mcp.js sit side by side as the loader expects.
type assetFS struct{}

func (assetFS) Open(name string) (fs.File, error) {
	switch name {
	case LoaderName:
		data, err := servedLoader()
		if err != nil {
			return nil, err
		}
		return &memFile{Reader: bytes.NewReader(data), name: name, size: int64(len(data))}, nil
	case ".", "tauritavern-mcp.d.ts", "bridge-transport.js", "extension-store.js", "http-socket.js", "legacy-mcp-tools.js", "legacy-mcp-tools.d.ts":
		return files.Open(name)
	}
	if name == "dist" || fs.ValidPath(name) && len(name) > 5 && name[:5] == "dist/" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return files.Open("dist/" + name)
}

// memFile is a generated file (the served loader).
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f, nil }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Name() string               { return f.name }
func (f *memFile) Size() int64                { return f.size }
func (f *memFile) Mode() fs.FileMode          { return 0o444 }
func (f *memFile) ModTime() time.Time         { return time.Time{} }
func (f *memFile) IsDir() bool                { return false }
func (f *memFile) Sys() any                   { return nil }
