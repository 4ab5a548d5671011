package server

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/ttmcp/ttmcp/jsapi"
)

// playground is the host page at / (index.html, host/) and the libraries
// it borrows from npm (vendor/, copied there by `make`; without them the
// page loads unstyled and without jQuery/toastr).
//
//go:embed playground
var playground embed.FS

// ThirdPartyPrefix is where SillyTavern serves third-party extensions,
// and where the playground loads them from.
const ThirdPartyPrefix = "/scripts/extensions/third-party/"

// playgroundCSP lets the playground run its own scripts, the wasm shim and
// the WebSocket (and load the API from another loopback backend, should
// the user point the Manager at one), and nothing else; no page may frame
// it.
const playgroundCSP = "default-src 'self'; " +
	"script-src 'self' 'wasm-unsafe-eval' http://127.0.0.1:* http://localhost:*; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; " +
	"font-src 'self' data:; " +
	"connect-src 'self' http://127.0.0.1:* http://localhost:* ws://127.0.0.1:* ws://localhost:*; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// noFraming is the policy of every other file the backend serves: no
// other page may frame it (the playground is a full management UI, and the
// other pages are test hosts of the same API).
const noFraming = "frame-ancestors 'none'"

// PlaygroundConfig is GET /playground.json: what the playground loads.
type PlaygroundConfig struct {
	// Extensions are SillyTavern extension names ("third-party/<folder>").
	Extensions []string `json:"extensions"`
	// Demo is the demo MCP server the page offers to add, if one runs.
	Demo *DemoServer `json:"demo"`
	// DemoAuth is the demo that requires sign-in, if one runs.
	DemoAuth *DemoServer `json:"demoAuth,omitempty"`
}

// DemoServer is the demo MCP server `ttmcp serve --demo` runs.
type DemoServer struct {
	DisplayName string `json:"displayName"`
	Endpoint    string `json:"endpoint"`
}

func (s *Server) routes() {
	s.mux.HandleFunc(jsapi.PathSession, s.handleSession)
	s.mux.HandleFunc(jsapi.PathWS, s.handleWS)
	s.transportRoutes()                                                     // transport.go
	s.appViewRoutes()                                                       // appview.go
	s.mux.HandleFunc("GET "+jsapi.PathOAuthCallback, s.handleOAuthCallback) // oauth.go
	if s.cfg.Assets != nil {
		s.mux.Handle("/jsapi/", publicFiles("/jsapi/", s.cfg.Assets))
	}
	for prefix, files := range s.cfg.Pages {
		s.mux.Handle(prefix, publicFiles(strings.TrimSuffix(prefix, "/")+"/", files))
	}
	config := PlaygroundConfig{Extensions: []string{}, Demo: s.cfg.Demo, DemoAuth: s.cfg.DemoAuth}
	for name, files := range s.cfg.Extensions {
		prefix := ThirdPartyPrefix + name + "/"
		s.mux.Handle(prefix, publicFiles(prefix, files))
		config.Extensions = append(config.Extensions, "third-party/"+name)
	}
	slices.Sort(config.Extensions) // the page orders them by their manifests
	s.mux.HandleFunc("GET /playground.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		writeJSON(w, config)
	})
	page, _ := fs.Sub(playground, "playground")
	s.mux.Handle("/", playgroundFiles(page))
}

// playgroundFiles serves the playground (same-origin only: no CORS) under
// its strict policy.
func playgroundFiles(files fs.FS) http.Handler {
	tags := &etags{files: files}
	serve := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", playgroundCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if tag := tags.of(pageFile(r.URL.Path)); tag != "" {
			h.Set("ETag", tag)
		}
		serve.ServeHTTP(w, r)
	})
}

// pageFile is the file a playground URL path names (index.html for a
// directory).
func pageFile(urlPath string) string {
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name == "" || strings.HasSuffix(urlPath, "/") {
		name = path.Join(name, "index.html")
	}
	return name
}

// publicFiles serves files under prefix, loadable from any origin: they
// hold no secret (the token is only in /jsapi/session), and a SillyTavern
// page on another origin imports the loader, the wasm and wasm_exec.js with
// CORS. Each file carries an ETag of its content (jsapi.ContentVersion), so
// a reload revalidates instead of downloading. A request whose ?v= is that
// version (the URLs the loader names, jsapi.Assets) is answered immutable
// for a year: the URL can only ever mean this content, so a reload takes it
// from the HTTP cache without a round trip. Any other ?v= (a page holding
// an older loader, after a rebuild) gets the current file, revalidated as
// usual. No page may frame what is served here.
func publicFiles(prefix string, files fs.FS) http.Handler {
	tags := &etags{files: files}
	serve := http.StripPrefix(prefix, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", noFraming)
		if tag := tags.of(strings.TrimPrefix(r.URL.Path, prefix)); tag != "" {
			h.Set("ETag", tag) // http.FileServer answers If-None-Match with it
			if v := r.URL.Query().Get("v"); v != "" && `"`+v+`"` == tag {
				h.Set("Cache-Control", immutable)
			}
		}
		serve.ServeHTTP(w, r)
	})
}

// immutable is the Cache-Control of a content-versioned URL.
const immutable = "public, max-age=31536000, immutable"

// etags computes (once per file) a strong ETag from a file's content: its
// jsapi.ContentVersion, quoted.
type etags struct {
	files  fs.FS
	mu     sync.Mutex
	byPath map[string]string
}

func (e *etags) of(name string) string {
	if !fs.ValidPath(name) || name == "." {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if tag, ok := e.byPath[name]; ok {
		return tag
	}
	data, err := fs.ReadFile(e.files, name)
	if err != nil {
		return ""
	}
	tag := `"` + jsapi.ContentVersion(data) + `"`
	if e.byPath == nil {
		e.byPath = map[string]string{}
	}
	e.byPath[name] = tag
	return tag
}
