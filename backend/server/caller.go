package server

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

// Who is asking (issue 28). A request reaches the backend either directly
// from a page on this machine (the direct path: judged by its Origin, its
// Host and the per-launch token, as always) or through SillyTavern's server
// plugin, which forwards what passed SillyTavern's own gate (basic auth,
// whitelist, session, CSRF, login) and names the user. The backend trusts
// the plugin, not the network: a request carrying any X-Ttmcp-* header is
// a plugin request, and it is served only if it carries the plugin secret
// (which only a process that can read the data root knows), a valid
// SillyTavern user handle and a valid origin. Anything less is refused
// with 401 mcp.plugin_untrusted before any route sees it, so a page that
// adds such headers itself gains nothing.

// Caller is who a request is for; every request's context carries one
// (CallerOf), for the layers that serve a user's data.
type Caller struct {
	// Plugin: the request came through SillyTavern's plugin.
	Plugin bool
	// User is the SillyTavern user handle: jsapi.DefaultUser on the direct
	// path.
	User string
	// Admin: SillyTavern says the user is an administrator. It grants
	// nothing over MCP (DECISIONS); it is carried for the log.
	Admin bool
	// Origin is the origin the page was opened at, as SillyTavern saw it
	// (plugin requests only): URLs the backend writes into pages start
	// with Origin + Prefix.
	Origin string
	// Prefix is the path under which SillyTavern routes to the backend
	// ("/api/plugins/ttmcp"; plugin requests only).
	Prefix string
}

// Base is where the page reaches the backend: Origin + Prefix for a
// plugin request, "" (the backend's own address) for a direct one.
func (c Caller) Base() string {
	if !c.Plugin {
		return ""
	}
	return c.Origin + c.Prefix
}

type callerKey struct{}

// withCaller returns ctx carrying c.
func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller a request's context carries (the direct
// path's default user when none).
func CallerOf(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{User: jsapi.DefaultUser}
}

// userHandle is SillyTavern's rule for a user handle (1.18.0,
// src/endpoints/users-admin.js slugify: lower case, deburred, every run of
// other characters one hyphen, none leading or trailing): what it makes is
// exactly this. SillyTavern sets no length; the handle names a folder
// (data/<handle>/), so a file name's 255 bytes bound it here.
var userHandle = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

const maxUserHandle = 255

// validPrefix is the shape of X-Ttmcp-Prefix: an absolute path of plain
// segments, no trailing slash ("/api/plugins/ttmcp").
var validPrefix = regexp.MustCompile(`^(?:/[A-Za-z0-9._~-]+)+$`)

// isPluginRequest reports whether r carries any X-Ttmcp-* header.
func isPluginRequest(r *http.Request) bool {
	for name := range r.Header {
		if len(name) >= len(jsapi.PluginHeaderPrefix) && strings.EqualFold(name[:len(jsapi.PluginHeaderPrefix)], jsapi.PluginHeaderPrefix) {
			return true
		}
	}
	return false
}

// pluginCaller checks a plugin request and returns its caller, or why it
// is not trusted. Each header must appear once.
func (s *Server) pluginCaller(r *http.Request) (Caller, error) {
	one := func(name string) (string, error) {
		v := r.Header.Values(name)
		switch len(v) {
		case 0:
			return "", nil
		case 1:
			return v[0], nil
		}
		return "", fmt.Errorf("%s appears %d times", name, len(v))
	}
	secret, err := one(jsapi.HeaderPluginSecret)
	if err != nil {
		return Caller{}, err
	}
	switch {
	case s.pluginSecret == "":
		return Caller{}, fmt.Errorf("this backend has no plugin secret (see its log)")
	case secret == "":
		return Caller{}, fmt.Errorf("the request has no %s header", jsapi.HeaderPluginSecret)
	case subtle.ConstantTimeCompare([]byte(secret), []byte(s.pluginSecret)) != 1:
		return Caller{}, fmt.Errorf("%s is not this backend's plugin secret (read it again from the data root)", jsapi.HeaderPluginSecret)
	}
	c := Caller{Plugin: true}
	if c.User, err = one(jsapi.HeaderPluginUser); err != nil {
		return Caller{}, err
	}
	if len(c.User) > maxUserHandle || !userHandle.MatchString(c.User) {
		return Caller{}, fmt.Errorf("%s is not a SillyTavern user handle", jsapi.HeaderPluginUser)
	}
	admin, err := one(jsapi.HeaderPluginAdmin)
	if err != nil {
		return Caller{}, err
	}
	switch admin {
	case "", "0":
	case "1":
		c.Admin = true
	default:
		return Caller{}, fmt.Errorf("%s is neither 1 nor 0", jsapi.HeaderPluginAdmin)
	}
	origin, err := one(jsapi.HeaderPluginOrigin)
	if err != nil {
		return Caller{}, err
	}
	var ok bool
	if c.Origin, ok = normalizeOrigin(origin); !ok {
		return Caller{}, fmt.Errorf("%s is not an http(s) origin", jsapi.HeaderPluginOrigin)
	}
	if c.Prefix, err = one(jsapi.HeaderPluginPrefix); err != nil {
		return Caller{}, err
	}
	if c.Prefix != "" && (!validPrefix.MatchString(c.Prefix) || strings.Contains(c.Prefix, "/../") || strings.HasSuffix(c.Prefix, "/..") || strings.Contains(c.Prefix, "/./")) {
		return Caller{}, fmt.Errorf("%s is not a plain absolute path", jsapi.HeaderPluginPrefix)
	}
	return c, nil
}

// commandsFor returns the commands that serve caller's data: the direct
// path's for the direct path; for a plugin request those Config.ForUser
// gives (without it, the direct path's for the default user only).
func (s *Server) commandsFor(c Caller) (*Commands, error) {
	if !c.Plugin {
		return s.cfg.Commands, nil
	}
	if s.cfg.ForUser != nil {
		cmds, err := s.cfg.ForUser(c.User)
		if err == nil && cmds == nil {
			err = fmt.Errorf("no data for this user")
		}
		return cmds, err
	}
	if c.User == jsapi.DefaultUser {
		return s.cfg.Commands, nil
	}
	return nil, fmt.Errorf("this backend serves only SillyTavern's %s", jsapi.DefaultUser)
}

// userCommands is commandsFor for a route: it answers 403
// mcp.user_unavailable itself when there are none.
func (s *Server) userCommands(w http.ResponseWriter, r *http.Request) (*Commands, bool) {
	c := CallerOf(r.Context())
	cmds, err := s.commandsFor(c)
	if err != nil {
		writeError(w, http.StatusForbidden, jsapi.KindUnavailable, jsapi.CodeUserUnavailable,
			"the ttmcp backend serves no data for SillyTavern user %q: %v", c.User, err)
		return nil, false
	}
	return cmds, true
}

// writeError answers with status and {"error":{"kind","code","message"}},
// the plugin path's error body (PROTOCOL.md).
func writeError(w http.ResponseWriter, status int, kind, code, format string, args ...any) {
	body, _ := json.Marshal(struct {
		Error jsapi.ErrorBody `json:"error"`
	}{jsapi.ErrorBody{Kind: kind, Code: code, Message: code + ": " + strings.ToValidUTF8(fmt.Sprintf(format, args...), "\uFFFD")}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// userTokens are the session tokens of the plugin path, one per user,
// minted on the user's first session request and kept in memory for the
// backend's life (as the per-launch token): a hello on a plugin transport
// must present its own user's token, never the per-launch one.
type userTokens struct {
	mu     sync.Mutex
	byUser map[string]string
}

// of returns user's token, minting it first.
func (u *userTokens) of(user string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byUser == nil {
		u.byUser = map[string]string{}
	}
	t, ok := u.byUser[user]
	if !ok {
		t = NewToken()
		u.byUser[user] = t
	}
	return t
}

// valid reports in constant time whether token is user's (a user who has
// no token yet has no valid one).
func (u *userTokens) valid(user, token string) bool {
	u.mu.Lock()
	want, ok := u.byUser[user]
	u.mu.Unlock()
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1
}
