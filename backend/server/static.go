package server

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/ttmcp/ttmcp/jsapi"
)

//go:embed playground
var playground embed.FS

func (s *Server) routes() {
	s.mux.HandleFunc(jsapi.PathSession, s.handleSession)
	s.mux.HandleFunc(jsapi.PathWS, s.handleWS)
	if s.cfg.Assets != nil {
		s.mux.Handle("/jsapi/", publicFiles("/jsapi/", s.cfg.Assets))
	}
	for prefix, files := range s.cfg.Pages {
		s.mux.Handle(prefix, publicFiles(strings.TrimSuffix(prefix, "/")+"/", files))
	}
	page, _ := fs.Sub(playground, "playground")
	s.mux.Handle("/", http.FileServerFS(page))
}

// publicFiles serves files under prefix, loadable from any origin: they
// hold no secret (the token is only in /jsapi/session), and a SillyTavern
// page on another origin imports the loader, the wasm and wasm_exec.js with
// CORS. Each file carries an ETag of its content, so a reload revalidates
// instead of downloading, and the browser can reuse its compiled code of
// the wasm (it caches compiled modules only for responses it can validate).
func publicFiles(prefix string, files fs.FS) http.Handler {
	tags := &etags{files: files}
	serve := http.StripPrefix(prefix, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		if tag := tags.of(strings.TrimPrefix(r.URL.Path, prefix)); tag != "" {
			h.Set("ETag", tag) // http.FileServer answers If-None-Match with it
		}
		serve.ServeHTTP(w, r)
	})
}

// etags computes (once per file) a strong ETag from a file's content.
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
	sum := sha256.Sum256(data)
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	if e.byPath == nil {
		e.byPath = map[string]string{}
	}
	e.byPath[name] = tag
	return tag
}
