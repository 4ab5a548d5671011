package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"unicode/utf8"
)

// An MCP App's interface (stable spec 2026-01-26 §UI Resource): one
// resources/read content of MIME type text/html;profile=mcp-app whose text
// (or base64 blob) is an HTML document, and whose _meta.ui says which
// origins it needs (csp) and which browser permissions it asks for. What
// it declares is the most it gets: ttmcp builds the policy itself, drops
// every declared source it cannot read as an origin, and uses the spec's
// restrictive default when nothing is declared.

// MaxAppHTMLBytes bounds an App's document. Real Apps are single-file
// bundles of a few hundred KiB (server-basic-vanillajs: 300 KiB); a
// document beyond this is refused, never cut.
const MaxAppHTMLBytes = 4 << 20

// MaxAppSources bounds the origins one CSP list may name.
const MaxAppSources = 32

// AppCSP is what an App's resource declared in _meta.ui.csp, only the
// sources that are origins ttmcp can write into a policy.
type AppCSP struct {
	ConnectDomains  []string
	ResourceDomains []string
	FrameDomains    []string
	BaseURIDomains  []string
}

// AppPermissions is what an App's resource asked for in
// _meta.ui.permissions.
type AppPermissions struct {
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

// AppInterface is an App's interface as ttmcp will render it.
type AppInterface struct {
	URI           string
	HTML          string
	CSP           AppCSP
	Permissions   AppPermissions
	PrefersBorder *bool
	// SHA256 is the hex digest of HTML, for the audit log and caches.
	SHA256 string
	// Dropped says what of the declaration was left out (never loosened).
	Dropped []string
}

// CodeAppResourceInvalid: the App's resource cannot be rendered.
const CodeAppResourceInvalid = "mcp.app_resource_invalid"

// appMIME reports whether mt is text/html;profile=mcp-app (type,
// subtype and parameter names case-insensitive, spaces allowed).
func appMIME(mt *string) bool {
	if mt == nil {
		return false
	}
	t, params, err := mime.ParseMediaType(*mt)
	return err == nil && t == "text/html" && params["profile"] == "mcp-app"
}

// ParseAppInterface reads the App at uri from a read's contents: exactly
// one content, of the App MIME type, text or base64 blob of valid UTF-8 at
// most MaxAppHTMLBytes, with its _meta.ui. listed returns the _meta.ui of
// uri's resources/list entry (nil: none); it is asked only when the
// content carries no _meta.ui object — the content wins, as the draft
// says — and may be nil itself.
func ParseAppInterface(uri string, contents []ResourceContent, listed func() json.RawMessage) (AppInterface, error) {
	bad := func(format string, args ...any) (AppInterface, error) {
		return AppInterface{}, Errorf(KindUnavailable, CodeAppResourceInvalid, "the App's interface `%s` cannot be rendered: %s", uri, fmt.Sprintf(format, args...))
	}
	if len(contents) != 1 {
		return bad("the read returned %d contents, not one", len(contents))
	}
	c := contents[0]
	if !appMIME(c.MimeType) {
		got := "none"
		if c.MimeType != nil {
			got = *c.MimeType
		}
		return bad("its MIME type is %s, not %s", got, AppMIMEType)
	}
	var html string
	switch {
	case c.Text != nil:
		html = *c.Text
	case c.Blob != nil:
		if len(*c.Blob) > MaxAppHTMLBytes/3*4+4 {
			return bad("it exceeds %d bytes", MaxAppHTMLBytes)
		}
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return bad("its blob is not base64")
		}
		html = string(b)
	default:
		return bad("it has neither text nor a blob (or it was over the content limit)")
	}
	switch {
	case len(html) > MaxAppHTMLBytes:
		return bad("it is %d bytes, over the limit of %d", len(html), MaxAppHTMLBytes)
	case !utf8.ValidString(html):
		return bad("it is not UTF-8 text")
	case strings.TrimSpace(html) == "":
		return bad("it is empty")
	}
	sum := sha256.Sum256([]byte(html))
	app := AppInterface{URI: uri, HTML: html, SHA256: hex.EncodeToString(sum[:])}
	ui := metaUI(c.Meta)
	if ui == nil && listed != nil {
		if l := listed(); isObject(l) {
			ui = l
		}
	}
	if ui != nil {
		app.readUI(ui)
	}
	return app, nil
}

// ListedUI returns the _meta.ui of uri's entry in a resources/list
// (nil when the entry has none or uri is not listed: servers may leave
// their ui:// resources out).
func ListedUI(items []Resource, uri string) json.RawMessage {
	for _, r := range items {
		if r.URI == uri {
			return r.UI
		}
	}
	return nil
}

// metaUI returns _meta.ui of meta when it is an object.
func metaUI(meta json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return nil
	}
	if ui, ok := m["ui"]; ok && isObject(ui) {
		return ui
	}
	return nil
}

func (a *AppInterface) readUI(raw json.RawMessage) {
	var ui struct {
		CSP           map[string]json.RawMessage `json:"csp"`
		Permissions   map[string]json.RawMessage `json:"permissions"`
		PrefersBorder json.RawMessage            `json:"prefersBorder"`
	}
	if json.Unmarshal(raw, &ui) != nil {
		a.Dropped = append(a.Dropped, "_meta.ui does not decode: nothing of it was used")
		return
	}
	for _, l := range []struct {
		name string
		dst  *[]string
	}{
		{"connectDomains", &a.CSP.ConnectDomains}, {"resourceDomains", &a.CSP.ResourceDomains},
		{"frameDomains", &a.CSP.FrameDomains}, {"baseUriDomains", &a.CSP.BaseURIDomains},
	} {
		raw, ok := ui.CSP[l.name]
		if !ok || string(raw) == "null" {
			continue
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			a.Dropped = append(a.Dropped, fmt.Sprintf("csp.%s is not a list of strings", l.name))
			continue
		}
		for _, src := range list {
			if len(*l.dst) == MaxAppSources {
				a.Dropped = append(a.Dropped, fmt.Sprintf("csp.%s: more than %d origins", l.name, MaxAppSources))
				break
			}
			if !cspOrigin.MatchString(src) {
				a.Dropped = append(a.Dropped, fmt.Sprintf("csp.%s: `%s` is not an origin", l.name, shown(src)))
				continue
			}
			*l.dst = append(*l.dst, src)
		}
	}
	asked := func(name string) bool {
		v, ok := ui.Permissions[name]
		return ok && string(v) != "null" && string(v) != "false"
	}
	a.Permissions = AppPermissions{Camera: asked("camera"), Microphone: asked("microphone"),
		Geolocation: asked("geolocation"), ClipboardWrite: asked("clipboardWrite")}
	var b bool
	if len(ui.PrefersBorder) > 0 && json.Unmarshal(ui.PrefersBorder, &b) == nil {
		a.PrefersBorder = &b
	}
}

// cspOrigin is a source ttmcp writes into a policy: a scheme of the web
// (http, https, ws, wss), a host name or IPv4 address, optionally a leading
// "*." for subdomains, an optional port (digits or *), no path, nothing
// else. A keyword ('unsafe-eval'), a bare *, data:, a directive separator
// or white space never matches, so a declaration cannot add a directive
// or a keyword.
var cspOrigin = regexp.MustCompile(`^(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*(?::(?:[0-9]{1,5}|\*))?$`)

// AppCSPHeader is the Content-Security-Policy of an App's document: the
// spec's template over what it declared, and for what it did not the
// spec's restrictive default made stricter in one respect: no 'self'
// anywhere. The spec's 'self' is a sandbox origin of the host's own; ttmcp
// serves the document from its backend's URL, which through SillyTavern's
// plugin is SillyTavern's origin, so 'self' would let an App load (and so
// send GET requests with the user's cookies to) SillyTavern itself. An App
// is one document: its own scripts and styles are inline ('unsafe-inline'),
// its images data: URIs or declared origins. No network, frames or plugins
// unless declared, base-uri and form-action 'none'. The document's origin
// is opaque (the sandbox directive, added by the route).
func AppCSPHeader(c AppCSP) string {
	list := func(fallback string, extra ...[]string) string {
		var parts []string
		if fallback != "" {
			parts = append(parts, fallback)
		}
		for _, e := range extra {
			parts = append(parts, e...)
		}
		if len(parts) == 0 {
			return "'none'"
		}
		return strings.Join(parts, " ")
	}
	r := c.ResourceDomains
	directives := []string{
		"default-src 'none'",
		"script-src " + list("'unsafe-inline'", r),
		"style-src " + list("'unsafe-inline'", r),
		"img-src " + list("data:", r),
		"font-src " + list("data:", r),
		"media-src " + list("data:", r),
		"connect-src " + list("", c.ConnectDomains),
		"frame-src " + list("", c.FrameDomains),
		"base-uri " + list("", c.BaseURIDomains),
		"object-src 'none'",
		"form-action 'none'",
	}
	return strings.Join(directives, "; ")
}
