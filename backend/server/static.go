package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/ttmcp/ttmcp/jsapi"
)

//go:embed playground
var playground embed.FS

func (s *Server) routes() {
	s.mux.HandleFunc(jsapi.PathSession, s.handleSession)
	s.mux.HandleFunc(jsapi.PathWS, s.handleWS)
	if s.cfg.Assets != nil {
		s.mux.Handle("/jsapi/", publicFiles(http.StripPrefix("/jsapi/", http.FileServerFS(s.cfg.Assets))))
	}
	for prefix, files := range s.cfg.Pages {
		s.mux.Handle(prefix, publicFiles(http.StripPrefix(strings.TrimSuffix(prefix, "/")+"/", http.FileServerFS(files))))
	}
	page, _ := fs.Sub(playground, "playground")
	s.mux.Handle("/", http.FileServerFS(page))
}

// publicFiles marks static files as loadable from any origin: they hold no
// secret (the token is only in /jsapi/session), and a SillyTavern page on
// another origin imports the loader, the wasm and wasm_exec.js with CORS.
func publicFiles(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}
