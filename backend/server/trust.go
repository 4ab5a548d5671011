package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// loopbackHost reports whether a Host header names this machine by a
// loopback address or "localhost". Any other name may be an attacker's
// domain rebound to 127.0.0.1 (DNS rebinding), so it is refused.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// normalizeOrigin returns an origin in its serialised form
// (lower-case "scheme://host[:port]", default port dropped), or false when
// o is not an http(s) origin.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// CheckOrigin reports whether o can be allowed: an http(s) origin,
// "scheme://host[:port]" without path, query or credentials.
func CheckOrigin(o string) error {
	if _, ok := normalizeOrigin(o); !ok {
		return fmt.Errorf("%q is not an origin (want scheme://host[:port], e.g. http://localhost:8000)", o)
	}
	return nil
}

// allowedOrigin reports whether a browser Origin may use the backend: the
// server's own origin (any loopback name on the port the request came in
// on) or one of the configured origins. "null" and absent origins are not
// allowed here; callers decide about requests without an Origin.
func (s *Server) allowedOrigin(r *http.Request, origin string) bool {
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if s.origins[n] {
		return true
	}
	u, _ := url.Parse(n)
	return u.Scheme == "http" && loopbackHost(u.Host) && u.Port() == requestPort(r)
}

// requestPort is the port the request was addressed to.
func requestPort(r *http.Request) string {
	if _, p, err := net.SplitHostPort(r.Host); err == nil {
		return p
	}
	return "80"
}

// handleSession hands out the token and the socket URL. A browser reads
// the answer only when CORS allows it, so a foreign page's fetch learns
// nothing; the body is JSON served with nosniff, so a foreign <script> tag
// cannot execute it either. Requests without an Origin are accepted only
// when the browser says they are same-origin or user-initiated, or when no
// browser is involved (no Sec-Fetch-Site at all: a local tool, which the
// Host check already confined to this machine).
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	if CallerOf(r.Context()).Plugin {
		s.pluginSession(w, r)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	switch {
	case origin != "":
		if !s.allowedOrigin(r, origin) {
			s.refuseOrigin(w, r, origin)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
	default:
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
		default:
			http.Error(w, "ttmcp: cross-site request refused", http.StatusForbidden)
			return
		}
	}
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "ttmcp: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, jsapi.Session{Token: s.token, WS: "ws://" + r.Host + jsapi.PathWS})
}

// pluginSession is the session of a plugin request: the user's own token
// and the HTTP transport, and where the page reads SillyTavern's CSRF
// token (its POSTs go through SillyTavern). SillyTavern's gate has judged
// the page; there is no Origin to check (the page's origin is
// SillyTavern's own).
func (s *Server) pluginSession(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method != http.MethodGet {
		http.Error(w, "ttmcp: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if _, ok := s.userCommands(w, r); !ok {
		return
	}
	writeJSON(w, jsapi.Session{Token: s.userTokens.of(CallerOf(r.Context()).User),
		Transport: jsapi.TransportHTTP, CSRF: jsapi.SillyTavernCSRF})
}

// refuseOrigin answers a page whose Origin is not allowed with a 403 it can
// read (contract C3): CORS headers for that origin, and a JSON body with
// the code, the origin and what to do — never the token. Without them the
// page would only see "Failed to fetch". Each refused origin is logged
// once, so the person running ttmcp learns which origin to allow.
func (s *Server) refuseOrigin(w http.ResponseWriter, r *http.Request, origin string) {
	switch s.refused.note(origin) {
	case refusalFirst:
		s.log.Info("refused a page: its origin is not allowed (restart with --allow-origin to allow it)",
			"origin", origin, "path", r.URL.Path, "restart", s.serveCommand+" --allow-origin "+origin)
	case refusalFull:
		s.log.Info("refused a page: its origin is not allowed; further refused origins are not logged",
			"origin", origin, "path", r.URL.Path, "originsLogged", maxRefusalsLogged)
	}
	refusal := jsapi.OriginRefusal{Code: jsapi.CodeOriginNotAllowed, Origin: origin,
		Message: jsapi.CodeOriginNotAllowed + ": the ttmcp backend does not allow requests from " + origin}
	switch _, ok := normalizeOrigin(origin); {
	case origin == "":
		refusal.Message = jsapi.CodeOriginNotAllowed + ": the ttmcp backend refuses requests without an Origin header"
	case !ok:
		refusal.Message += "; only http(s) origins can be allowed (--allow-origin scheme://host[:port])"
	default:
		refusal.Message += "; restart it with --allow-origin " + origin
		refusal.Command = s.serveCommand + " --allow-origin " + origin
	}
	body, _ := json.Marshal(refusal)
	h := w.Header()
	if origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	if !slices.Contains(h.Values("Vary"), "Origin") {
		h.Add("Vary", "Origin")
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	w.Write(body)
}

// maxRefusalsLogged bounds the origins remembered for logging: beyond it,
// further new origins are refused without a log line (one says so), so a
// flood of made-up origins costs no memory.
const maxRefusalsLogged = 1024

// refusals remembers the origins refused so far.
type refusals struct {
	mu   sync.Mutex
	seen map[string]bool
	full bool
}

// What note found.
const (
	refusalSeen  = iota // refused before (or not to be logged): say nothing
	refusalFirst        // the first refusal of this origin: log it
	refusalFull         // the first origin beyond the bound: say logging stops
)

// note records a refusal of origin.
func (f *refusals) note(origin string) int {
	if origin == "" {
		return refusalSeen // a non-browser client, not a page to allow
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen[origin] || f.full {
		return refusalSeen
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if len(f.seen) == maxRefusalsLogged {
		f.full = true
		return refusalFull
	}
	f.seen[origin] = true
	return refusalFirst
}
