package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

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
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	switch {
	case origin != "":
		if !s.allowedOrigin(r, origin) {
			http.Error(w, "ttmcp: origin not allowed", http.StatusForbidden)
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
