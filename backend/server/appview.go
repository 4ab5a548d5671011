package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The sandbox route of MCP Apps (issue 30; docs/DECISIONS.md "MCP Apps:
// the sandbox"): GET /apps/view/<id> serves the App document a
// read_mcp_app_resource of the same user read, once, with ttmcp's policy
// as HTTP headers. Its Content-Security-Policy carries the sandbox
// directive (allow-scripts only), so the document runs in an opaque origin
// however it is loaded — in the page's iframe (sandbox="allow-scripts"
// too), on its own in a tab, through SillyTavern's plugin on SillyTavern's
// own origin: it can read no cookie, no storage, no DOM of SillyTavern or
// ttmcp. The same route serves both paths: the plugin forwards every path
// under its prefix.

func (s *Server) appViewRoutes() {
	s.mux.HandleFunc("GET "+jsapi.PathAppView+"{id}", s.handleAppView)
}

func (s *Server) handleAppView(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	cmds, ok := s.userCommands(w, r)
	if !ok {
		return
	}
	v, found := cmds.appView(r.PathValue("id"))
	if !found {
		h.Set("Content-Security-Policy", noFraming)
		http.Error(w, "ttmcp: no such App view (each is served once, for two minutes)", http.StatusNotFound)
		return
	}
	h.Set("Content-Security-Policy", v.CSP+"; sandbox allow-scripts; frame-ancestors "+s.frameAncestors(r))
	h.Set("Permissions-Policy", permissionsPolicy(v.Permissions))
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(v.HTML))
}

// frameAncestors are the pages that may frame an App: through the
// plugin, SillyTavern's own origin ('self': the response is SillyTavern's
// to the browser); on the direct path, the backend's own origin and the
// origins allowed to open the API.
func (s *Server) frameAncestors(r *http.Request) string {
	if CallerOf(r.Context()).Plugin {
		return "'self'"
	}
	out := []string{"'self'"}
	for o := range s.origins {
		out = append(out, o)
	}
	slices.Sort(out[1:])
	return strings.Join(out, " ")
}

// permissionsPolicy allows an App's document the browser features its
// resource declared, and none else; the page's iframe delegates each only
// after the user agreed (its allow attribute).
func permissionsPolicy(declared []string) string {
	var parts []string
	for _, f := range []string{"camera", "microphone", "geolocation", "clipboard-write", "display-capture", "usb", "payment"} {
		if slices.Contains(declared, f) {
			parts = append(parts, f+"=*")
		} else {
			parts = append(parts, f+"=()")
		}
	}
	return strings.Join(parts, ", ")
}
