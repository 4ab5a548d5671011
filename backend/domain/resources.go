package domain

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Resources and prompts (SPEC §10 "Resources and prompts"): what a server
// lists and answers, validated before anything reaches a page. A bad entry
// is isolated with a diagnostic, as a bad tool is (ValidateTools); a list
// over its limits fails as a whole, as a catalog does.

// Limits of the lists: the tool catalog's (MaxCatalogTools, MaxCatalogBytes,
// MaxCatalogPages, MaxToolBytes), and of what a read or get returns.
const (
	MaxListEntries = MaxCatalogTools
	MaxListBytes   = MaxCatalogBytes
	MaxListPages   = MaxCatalogPages
	MaxEntryBytes  = MaxToolBytes
	// MaxContentBytes bounds one content of a read (a text's UTF-8 bytes, a
	// blob's decoded bytes) and one image or audio block of a prompt: a
	// larger one is refused with a code, never cut.
	MaxContentBytes = 8 << 20
	// MaxURIBytes bounds a resource URI and a URI template.
	MaxURIBytes = 16 << 10
	// MaxEntryNameBytes bounds a resource's, template's, prompt's or
	// argument's name.
	MaxEntryNameBytes = 1024
	// MaxCompletionValues is how many values a completion returns at most
	// (the specification's own bound); more are cut with HasMore set.
	MaxCompletionValues = 100
)

// Codes of entries left out of a list.
const (
	CodeResourceURIInvalid      = "mcp.resource_uri_invalid"
	CodeResourceNameInvalid     = "mcp.resource_name_invalid"
	CodeResourceMimeTypeInvalid = "mcp.resource_mime_type_invalid"
	CodeResourceDuplicateURI    = "mcp.resource_duplicate_uri"
	CodeTemplateInvalid         = "mcp.resource_template_invalid"
	CodeTemplateDuplicate       = "mcp.resource_template_duplicate"
	CodePromptNameInvalid       = "mcp.prompt_name_invalid"
	CodePromptDuplicateName     = "mcp.prompt_duplicate_name"
	CodePromptArgumentInvalid   = "mcp.prompt_argument_invalid"
	CodeListEntrySizeLimit      = "mcp.list_entry_size_limit"
)

// Codes of a server that does not offer a primitive: its list is empty
// with this diagnostic; a read or get is not sent.
const (
	CodeResourcesUnsupported = "mcp.resources_unsupported"
	CodePromptsUnsupported   = "mcp.prompts_unsupported"
)

// Codes of a read's or get's parts left out, and of arguments refused
// before anything is sent.
const (
	CodeResourceContentTooLarge = "mcp.resource_content_too_large"
	CodeResourceContentInvalid  = "mcp.resource_content_invalid"
	CodePromptMessageInvalid    = "mcp.prompt_message_invalid"
	CodePromptContentTooLarge   = "mcp.prompt_content_too_large"
	CodePromptArgumentMissing   = "mcp.prompt_argument_missing"
	CodePromptArgumentUnknown   = "mcp.prompt_argument_unknown"
	CodePromptArgumentsTooLarge = "mcp.prompt_arguments_too_large"
)

// Annotations are a resource's or content's hints (untrusted).
type Annotations struct {
	Audience     []string
	Priority     *float64
	LastModified *string
}

// Resource is one listed resource.
type Resource struct {
	URI         string
	Name        string
	Title       *string
	Description *string
	MimeType    *string
	Size        *int64
	Annotations *Annotations
	// UI is the entry's _meta.ui (MCP Apps: an interface's policy, used
	// when the read's content carries none; ParseAppInterface), when it
	// is a JSON object; nil otherwise.
	UI json.RawMessage
}

// ResourceTemplate is one listed RFC 6570 template, with its variables.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       *string
	Description *string
	MimeType    *string
	Annotations *Annotations
	Variables   []string // set by validation
}

// Prompt is one listed prompt.
type Prompt struct {
	Name        string
	Title       *string
	Description *string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Title       *string
	Description *string
	Required    bool
}

// Described is an entry as received with the size in bytes of its JSON,
// which the limits apply to.
type Described[T any] struct {
	Entry T
	Size  int
}

// ListDiagnostic reports an entry left out of a list (Item names it as the
// server did: a URI, a template, a name) or the list itself (Item nil).
type ListDiagnostic struct {
	Code    string
	Item    *string
	Message string
}

// Listing is a validated list: the healthy entries in the server's order,
// a diagnostic for each entry left out, and how long the server said it
// stays fresh.
type Listing[T any] struct {
	Items       []T
	Diagnostics []ListDiagnostic
	// TTL is the 2026 server's ttlMs (0: stale at once); nil when the
	// server gave none (2025): fresh until refreshed.
	TTL *time.Duration
}

// ValidateResources keeps the resources whose URI is absolute, name valid,
// mime type well formed and JSON within MaxEntryBytes. A URI listed more
// than once keeps its first entry: reading it is the same request
// whichever entry the user picked.
func ValidateResources(described []Described[Resource]) ([]Resource, []ListDiagnostic) {
	return validateEntries(described, func(r Resource) string { return r.URI }, false, CodeResourceDuplicateURI,
		func(r Resource) (Resource, *ListDiagnostic) {
			if err := ValidateURI(r.URI); err != nil {
				return r, listDiag(CodeResourceURIInvalid, r.URI, "Resource `%s` was left out: %v", shown(r.URI), err)
			}
			if err := validateEntryName(r.Name); err != nil {
				return r, listDiag(CodeResourceNameInvalid, r.URI, "Resource `%s` was left out: its name %v", shown(r.URI), err)
			}
			if r.MimeType != nil && !ValidMimeType(*r.MimeType) {
				return r, listDiag(CodeResourceMimeTypeInvalid, r.URI, "Resource `%s` was left out: `%s` is not a mime type", shown(r.URI), shown(*r.MimeType))
			}
			return r, nil
		})
}

// ValidateResourceTemplates keeps the templates that parse (RFC 6570,
// starting with their scheme), with a valid name and mime type; each gets
// its variables. A template listed more than once keeps its first entry.
func ValidateResourceTemplates(described []Described[ResourceTemplate]) ([]ResourceTemplate, []ListDiagnostic) {
	return validateEntries(described, func(t ResourceTemplate) string { return t.URITemplate }, false, CodeTemplateDuplicate,
		func(t ResourceTemplate) (ResourceTemplate, *ListDiagnostic) {
			vars, err := ParseURITemplate(t.URITemplate)
			if err != nil {
				return t, listDiag(CodeTemplateInvalid, t.URITemplate, "Resource template `%s` was left out: %v", shown(t.URITemplate), err)
			}
			if err := validateEntryName(t.Name); err != nil {
				return t, listDiag(CodeResourceNameInvalid, t.URITemplate, "Resource template `%s` was left out: its name %v", shown(t.URITemplate), err)
			}
			if t.MimeType != nil && !ValidMimeType(*t.MimeType) {
				return t, listDiag(CodeResourceMimeTypeInvalid, t.URITemplate, "Resource template `%s` was left out: `%s` is not a mime type", shown(t.URITemplate), shown(*t.MimeType))
			}
			t.Variables = vars
			return t, nil
		})
}

// ValidatePrompts keeps the prompts with a valid name and valid, unique
// argument names. A name given to several prompts isolates the whole
// group: a get names the prompt, and no one of them can be told apart
// (which arguments it takes, which one the user meant).
func ValidatePrompts(described []Described[Prompt]) ([]Prompt, []ListDiagnostic) {
	return validateEntries(described, func(p Prompt) string { return p.Name }, true, CodePromptDuplicateName,
		func(p Prompt) (Prompt, *ListDiagnostic) {
			if err := validateEntryName(p.Name); err != nil {
				return p, listDiag(CodePromptNameInvalid, p.Name, "A prompt was left out: its name %v", err)
			}
			seen := map[string]bool{}
			for _, a := range p.Arguments {
				if err := validateEntryName(a.Name); err != nil {
					return p, listDiag(CodePromptArgumentInvalid, p.Name, "Prompt `%s` was left out: an argument's name %v", p.Name, err)
				}
				if seen[a.Name] {
					return p, listDiag(CodePromptArgumentInvalid, p.Name, "Prompt `%s` was left out: it declares argument `%s` twice", p.Name, a.Name)
				}
				seen[a.Name] = true
			}
			return p, nil
		})
}

// validateEntries applies check to each entry within MaxEntryBytes, in the
// server's order. Entries sharing a key are duplicates: with isolateGroup
// the whole group is left out, otherwise the first healthy one stays.
func validateEntries[T any](described []Described[T], key func(T) string, isolateGroup bool, dupCode string,
	check func(T) (T, *ListDiagnostic)) ([]T, []ListDiagnostic) {
	items := []T{}
	diags := []ListDiagnostic{}
	count := map[string]int{}
	for _, d := range described {
		count[key(d.Entry)]++
	}
	isolated := map[string]bool{}
	kept := map[string]bool{}
	for _, d := range described {
		k := key(d.Entry)
		if isolateGroup && count[k] > 1 {
			if !isolated[k] {
				isolated[k] = true
				diags = append(diags, *listDiag(dupCode, k, "The server listed %d entries named `%s`; the whole group was left out", count[k], shown(k)))
			}
			continue
		}
		if d.Size > MaxEntryBytes {
			diags = append(diags, *listDiag(CodeListEntrySizeLimit, k, "Entry `%s` was left out: it exceeds %d bytes", shown(k), MaxEntryBytes))
			continue
		}
		e, diag := check(d.Entry)
		if diag != nil {
			diags = append(diags, *diag)
			continue
		}
		if kept[k] {
			diags = append(diags, *listDiag(dupCode, k, "The server listed `%s` more than once; the first entry was kept", shown(k)))
			continue
		}
		kept[k] = true
		items = append(items, e)
	}
	return items, diags
}

func listDiag(code, item, format string, args ...any) *ListDiagnostic {
	return &ListDiagnostic{Code: code, Item: &item, Message: fmt.Sprintf(format, args...)}
}

// shown is s as a message quotes it: at most 200 bytes (a hostile URI may
// be 16 KiB), without control characters.
func shown(s string) string {
	const most = 200
	cut := len(s) > most
	if cut {
		s = s[:most]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return s
}

// validateEntryName: not empty or blank, at most MaxEntryNameBytes, no
// control characters (a name is shown, and goes into slash commands).
func validateEntryName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("is empty")
	case len(name) > MaxEntryNameBytes:
		return fmt.Errorf("exceeds %d bytes", MaxEntryNameBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("is not UTF-8")
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("contains control characters")
	}
	return nil
}

// ValidateURI checks that raw is an absolute URI a user can be shown: a
// scheme (RFC 3986 §3.1) and something after it, at most MaxURIBytes,
// UTF-8, no control characters (which would corrupt logs, headers and the
// page's display), that net/url parses ("http://[::1" does not), and whose
// scheme is not one a browser runs or renders (RefusedURIScheme:
// javascript:, data:, …). Any other scheme is kept, custom ones too
// (test://, memory://, demo://, repo://: MCP servers name their resources
// as they like), and file: (the MCP spec's scheme for files; the URI only
// names what the server reads). Kept is not openable: the page opens a
// server's URI only when LinkableURI says so (docs/DECISIONS.md).
// Spaces are let through in a path: servers put file paths in file: URIs
// as they are, and the URI is only ever sent back to the server that
// listed it.
func ValidateURI(raw string) error {
	switch {
	case raw == "":
		return fmt.Errorf("the URI is empty")
	case len(raw) > MaxURIBytes:
		return fmt.Errorf("the URI exceeds %d bytes", MaxURIBytes)
	case !utf8.ValidString(raw):
		return fmt.Errorf("the URI is not UTF-8")
	case strings.ContainsFunc(raw, unicode.IsControl):
		return fmt.Errorf("the URI contains control characters")
	}
	n := schemeLength(raw)
	if n == 0 {
		return fmt.Errorf("the URI is not absolute (it has no scheme)")
	}
	if n == len(raw) {
		return fmt.Errorf("the URI has nothing after its scheme")
	}
	if scheme := raw[:n-1]; RefusedURIScheme(scheme) {
		return fmt.Errorf("the URI's scheme `%s:` is one a browser runs or renders, not a resource's name", strings.ToLower(scheme))
	}
	if _, err := url.Parse(raw); err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // without the URI, which the message quotes already
		}
		return fmt.Errorf("the URI does not parse: %v", err)
	}
	return nil
}

// refusedSchemes are the schemes a browser runs (javascript:, vbscript:),
// renders from the URI itself (data:) or that reach into the browser
// (blob:, filesystem:, about:, view-source:, chrome:, …): a link made of
// one does harm when clicked, and no MCP resource is named so.
var refusedSchemes = map[string]bool{
	"javascript": true, "vbscript": true, "livescript": true, "data": true, "blob": true, "filesystem": true,
	"about": true, "view-source": true, "chrome": true, "chrome-extension": true, "moz-extension": true,
	"ms-browser-extension": true, "jar": true, "wyciwyg": true,
}

// RefusedURIScheme reports whether scheme (without its colon, any case)
// is refused in a server's URI (see ValidateURI).
func RefusedURIScheme(scheme string) bool {
	return refusedSchemes[strings.ToLower(scheme)]
}

// LinkableURI reports whether a page may open raw, a URI from a server,
// as a link or in a new window: a valid URI (ValidateURI) with scheme
// http or https and a host. Anything else (file:, custom schemes) is shown
// as text, never opened: a file: link opens the user's own files, a custom
// scheme may start an installed app.
func LinkableURI(raw string) bool {
	if ValidateURI(raw) != nil {
		return false
	}
	u, err := url.Parse(raw)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != ""
}

// schemeLength returns the length of raw's leading "scheme:", 0 when it has
// none: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
func schemeLength(raw string) int {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// ValidMimeType reports whether s is a media type: type "/" subtype, both
// tokens, with well-formed parameters (RFC 2045 as mime.ParseMediaType
// reads it).
func ValidMimeType(s string) bool {
	if len(s) > 255 || strings.ContainsFunc(s, unicode.IsControl) {
		return false
	}
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ != "" && sub != "" && !strings.Contains(sub, "/")
}

// ParseURITemplate checks an RFC 6570 URI template enough to be safe and
// useful, and returns its variable names in order of first appearance:
// the template starts with a literal scheme (so every expansion is an
// absolute URI), braces pair up, each expression is an optional operator
// of level 2–4 (+ # . / ; ? &) and a comma-separated list of variable
// specifications, each a name (ALPHA, DIGIT, "_", percent-encodings,
// single dots between) with an optional prefix (":" 1–9999) or explode
// ("*") modifier; literals hold no control characters or stray braces.
func ParseURITemplate(t string) ([]string, error) {
	switch {
	case t == "":
		return nil, fmt.Errorf("the template is empty")
	case len(t) > MaxURIBytes:
		return nil, fmt.Errorf("the template exceeds %d bytes", MaxURIBytes)
	case strings.ContainsFunc(t, unicode.IsControl):
		return nil, fmt.Errorf("the template contains control characters")
	}
	if n := schemeLength(t); n == 0 {
		return nil, fmt.Errorf("the template does not start with a URI scheme (its expansions would not be absolute URIs)")
	} else if RefusedURIScheme(t[:n-1]) {
		return nil, fmt.Errorf("the template's scheme `%s:` is one a browser runs or renders, not a resource's name", strings.ToLower(t[:n-1]))
	}
	vars := []string{}
	seen := map[string]bool{}
	for rest := t; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("a `}` closes no expression")
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] == '{' {
			return nil, fmt.Errorf("an expression is not closed")
		}
		expr := rest[open+1 : open+1+end]
		names, err := parseExpression(expr)
		if err != nil {
			return nil, fmt.Errorf("expression {%s}: %v", shown(expr), err)
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				vars = append(vars, n)
			}
		}
		rest = rest[open+1+end+1:]
	}
	return vars, nil
}

// parseExpression parses the inside of one template expression.
func parseExpression(expr string) ([]string, error) {
	if expr == "" {
		return nil, fmt.Errorf("it is empty")
	}
	switch expr[0] {
	case '+', '#', '.', '/', ';', '?', '&':
		expr = expr[1:]
	case '=', ',', '!', '@', '|':
		return nil, fmt.Errorf("operator %q is reserved", expr[0])
	}
	var names []string
	for _, spec := range strings.Split(expr, ",") {
		name := spec
		if i := strings.IndexAny(spec, ":*"); i >= 0 {
			name = spec[:i]
			mod := spec[i:]
			if mod != "*" && !validPrefix(mod[1:]) || mod[0] == '*' && mod != "*" {
				return nil, fmt.Errorf("modifier %q is not :1–:9999 or *", mod)
			}
		}
		if !validVarName(name) {
			return nil, fmt.Errorf("%q is not a variable name", name)
		}
		names = append(names, name)
	}
	return names, nil
}

func validPrefix(digits string) bool {
	if digits == "" || len(digits) > 4 || digits[0] == '0' {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// validVarName: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" /
// pct-encoded.
func validVarName(name string) bool {
	if name == "" || name[0] == '.' || name[len(name)-1] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '.':
			if name[i+1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(name) || !isHex(name[i+1]) || !isHex(name[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CheckArguments refuses, before anything is sent, arguments the prompt
// does not declare and required ones that are absent, naming them all;
// and arguments whose JSON would exceed MaxArgumentsBytes.
func (p Prompt) CheckArguments(args map[string]string) error {
	declared := map[string]bool{}
	var missing []string
	for _, a := range p.Arguments {
		declared[a.Name] = true
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	var unknown []string
	size := 2
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !declared[name] {
			unknown = append(unknown, name)
		}
		size += len(name) + len(args[name]) + 6 // quotes, colon, comma
	}
	switch {
	case len(unknown) > 0:
		return invalid(CodePromptArgumentUnknown, "prompt `%s` takes no argument %s (it takes: %s)", p.Name, quoteList(unknown), p.argumentNames())
	case len(missing) > 0:
		return invalid(CodePromptArgumentMissing, "prompt `%s` needs argument %s", p.Name, quoteList(missing))
	case size > MaxArgumentsBytes:
		return invalid(CodePromptArgumentsTooLarge, "the arguments exceed %d bytes", MaxArgumentsBytes)
	}
	return nil
}

func (p Prompt) argumentNames() string {
	if len(p.Arguments) == 0 {
		return "none"
	}
	names := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		names[i] = a.Name
	}
	return quoteList(names)
}

// ResourceContent is one content of a read (or an embedded resource): Text
// or Blob (base64, as received), or neither when it was refused.
type ResourceContent struct {
	URI      string
	MimeType *string
	Text     *string
	Blob     *string
	Size     int64 // the text's UTF-8 bytes, the blob's decoded bytes
	// IsText: a text content (set by projection, also for one whose text
	// was refused); else a blob.
	IsText bool
	// Meta is the content's _meta as received (nil when absent): an MCP
	// App's interface carries its _meta.ui there (apps_resource.go).
	Meta json.RawMessage
}

// ResourceContents is a read's answer: every content in order, their sizes
// together, and a diagnostic for each content refused or amended.
type ResourceContents struct {
	URI         string
	Contents    []ResourceContent
	TotalBytes  int64
	Diagnostics []CallDiagnostic
}

// ProjectContents checks each content of a read as received: exactly one
// of text and blob, a blob in base64, at most MaxContentBytes — a content
// over it is kept without its data, with a diagnostic, never cut — and a
// well-formed mime type (a malformed one is dropped, with a diagnostic).
func ProjectContents(uri string, contents []ResourceContent) ResourceContents {
	out := ResourceContents{URI: uri, Contents: make([]ResourceContent, 0, len(contents)), Diagnostics: []CallDiagnostic{}}
	for i, c := range contents {
		c, diags := projectContent(c, i, CodeResourceContentTooLarge, CodeResourceContentInvalid)
		out.Diagnostics = append(out.Diagnostics, diags...)
		out.Contents = append(out.Contents, c)
		out.TotalBytes += c.Size
	}
	return out
}

// projectContent checks one resource content (index i of its answer).
func projectContent(c ResourceContent, i int, tooLarge, invalidCode string) (ResourceContent, []CallDiagnostic) {
	var diags []CallDiagnostic
	c.IsText = c.Text != nil && c.Blob == nil
	at := func(code, format string, args ...any) {
		diags = append(diags, CallDiagnostic{Code: code, Message: fmt.Sprintf(format, args...), ContentIndex: new(i)})
	}
	if c.MimeType != nil && !ValidMimeType(*c.MimeType) {
		at(invalidCode, "Content %d: `%s` is not a mime type; it was left out", i, shown(*c.MimeType))
		c.MimeType = nil
	}
	switch {
	case c.Text != nil && c.Blob != nil:
		at(invalidCode, "Content %d has both text and a blob; neither was kept", i)
		c.Text, c.Blob, c.Size = nil, nil, 0
	case c.Text != nil:
		c.Size = int64(len(*c.Text))
		if c.Size > MaxContentBytes {
			at(tooLarge, "Content %d is %d bytes of text, over the limit of %d; it was not kept", i, c.Size, MaxContentBytes)
			c.Text = nil
		}
	case c.Blob != nil:
		n, ok := base64Size(*c.Blob)
		if !ok {
			at(invalidCode, "Content %d: the blob is not base64; it was not kept", i)
			c.Blob, c.Size = nil, 0
			break
		}
		c.Size = n
		if n > MaxContentBytes {
			at(tooLarge, "Content %d is a blob of %d bytes, over the limit of %d; it was not kept", i, n, MaxContentBytes)
			c.Blob = nil
		}
	default:
		at(invalidCode, "Content %d has neither text nor a blob", i)
		c.Size = 0
	}
	return c, diags
}

// base64Size returns the decoded size of standard base64 s, and whether it
// is base64 at all, without decoding it into memory.
func base64Size(s string) (int64, bool) {
	if len(s)%4 != 0 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		case c == '=' && (i == len(s)-1 || i == len(s)-2 && s[len(s)-1] == '='):
		default:
			return 0, false
		}
	}
	return int64(base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s[max(0, len(s)-2):], "=")), true
}

// Roles of a prompt message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Content block types of a prompt message.
const (
	BlockText         = "text"
	BlockImage        = "image"
	BlockAudio        = "audio"
	BlockResource     = "resource"
	BlockResourceLink = "resource_link"
)

// ContentBlock is one content block of a prompt message, as received.
type ContentBlock struct {
	Type        string
	Text        *string
	Data        *string // image, audio: base64
	MimeType    *string
	Resource    *ResourceContent
	URI         *string
	Name        *string
	Title       *string
	Description *string
	Size        *int64
	Annotations *Annotations
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string
	Content ContentBlock
}

// PromptMessages is a get's answer: the messages ttmcp can show, in order,
// and a diagnostic for each one left out (its index in the answer).
type PromptMessages struct {
	Name        string
	Description *string
	Messages    []PromptMessage
	Bytes       int64 // what the messages hold: text bytes, decoded data bytes
	Diagnostics []CallDiagnostic
}

// ProjectMessages checks each message of a get as received: a role of
// user or assistant, a known content type with its members (a text's
// text, an image's or audio's base64 data and mime type within
// MaxContentBytes, an embedded resource as a read's content, a link's
// absolute URI and name). A message that fails is left out with a
// diagnostic naming its index: nothing is dropped silently.
func ProjectMessages(name string, description *string, messages []PromptMessage) PromptMessages {
	out := PromptMessages{Name: name, Description: description, Messages: make([]PromptMessage, 0, len(messages)), Diagnostics: []CallDiagnostic{}}
	for i, m := range messages {
		m, size, diags := projectMessage(m, i)
		out.Diagnostics = append(out.Diagnostics, diags...)
		if m != nil {
			out.Messages = append(out.Messages, *m)
			out.Bytes += size
		}
	}
	return out
}

func projectMessage(m PromptMessage, i int) (*PromptMessage, int64, []CallDiagnostic) {
	fail := func(code, format string, args ...any) (*PromptMessage, int64, []CallDiagnostic) {
		return nil, 0, []CallDiagnostic{{Code: code, Message: fmt.Sprintf("Message %d was left out: ", i) + fmt.Sprintf(format, args...), ContentIndex: new(i)}}
	}
	if m.Role == "" && m.Content.Type == "" {
		return fail(CodePromptMessageInvalid, "it cannot be read as a message (a role and a content with a type)")
	}
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return fail(CodePromptMessageInvalid, "its role `%s` is neither user nor assistant", shown(m.Role))
	}
	c := m.Content
	switch c.Type {
	case BlockText:
		if c.Text == nil {
			return fail(CodePromptMessageInvalid, "a text block without text")
		}
		return &m, int64(len(*c.Text)), nil
	case BlockImage, BlockAudio:
		if c.Data == nil || c.MimeType == nil || !ValidMimeType(*c.MimeType) {
			return fail(CodePromptMessageInvalid, "an %s block needs base64 data and a mime type", c.Type)
		}
		n, ok := base64Size(*c.Data)
		switch {
		case !ok:
			return fail(CodePromptMessageInvalid, "its %s data is not base64", c.Type)
		case n > MaxContentBytes:
			return fail(CodePromptContentTooLarge, "its %s is %d bytes, over the limit of %d", c.Type, n, MaxContentBytes)
		}
		return &m, n, nil
	case BlockResource:
		if c.Resource == nil {
			return fail(CodePromptMessageInvalid, "a resource block without its resource")
		}
		if err := ValidateURI(c.Resource.URI); err != nil {
			return fail(CodePromptMessageInvalid, "its resource: %v", err)
		}
		r, diags := projectContent(*c.Resource, i, CodePromptContentTooLarge, CodePromptMessageInvalid)
		if len(diags) > 0 {
			return nil, 0, diags
		}
		m.Content.Resource = &r
		return &m, r.Size, nil
	case BlockResourceLink:
		if c.URI == nil || ValidateURI(*c.URI) != nil || c.Name == nil || validateEntryName(*c.Name) != nil {
			return fail(CodePromptMessageInvalid, "a resource link needs an absolute URI and a name")
		}
		if c.MimeType != nil && !ValidMimeType(*c.MimeType) {
			m.Content.MimeType = nil
		}
		return &m, 0, nil
	}
	return fail(CodePromptMessageInvalid, "its content type `%s` is not one ttmcp shows", shown(c.Type))
}

// ProjectResultResource checks a tool result's resource_link or embedded
// resource block (index i) as a prompt message's: a link's absolute URI
// and name, an embedded resource as a read's content (within
// MaxContentBytes). ok is false for a block that fails: it is then only
// reported, as before.
func ProjectResultResource(i int, b ContentBlock) (ResultResource, bool) {
	m, _, diags := projectMessage(PromptMessage{Role: RoleUser, Content: b}, i)
	if m == nil || len(diags) > 0 || b.Type != BlockResource && b.Type != BlockResourceLink {
		return ResultResource{}, false
	}
	return ResultResource{Index: i, Block: m.Content}, true
}

// Completion is a completion/complete answer.
type Completion struct {
	Values  []string
	Total   *int
	HasMore bool
}

// ProjectCompletion keeps at most MaxCompletionValues values (the
// specification's bound), saying there are more when it cut.
func ProjectCompletion(c Completion) Completion {
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > MaxCompletionValues {
		c.Values, c.HasMore = c.Values[:MaxCompletionValues], true
	}
	return c
}

// Completion reference types.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionRequest is one completion/complete to make.
type CompletionRequest struct {
	RefType  string // RefPrompt or RefResource
	RefName  string // the prompt, for RefPrompt
	RefURI   string // the template, for RefResource
	Argument string
	Value    string
	Context  map[string]string
}

// ServerCapabilities are what a server advertised at startup.
type ServerCapabilities struct {
	ProtocolVersion      string
	Tools                bool
	ToolsListChanged     bool
	Resources            bool
	ResourcesSubscribe   bool
	ResourcesListChanged bool
	Prompts              bool
	PromptsListChanged   bool
	Completions          bool
	Logging              bool
	ObservedAt           time.Time
}

// Same reports whether a and b advertise the same, whenever observed.
func (a ServerCapabilities) Same(b ServerCapabilities) bool {
	a.ObservedAt, b.ObservedAt = time.Time{}, time.Time{}
	return a == b
}

// Allowlist is what the user allows of a server besides its tools (which
// have their own permissions). The default allows both: a resource or a
// prompt never reaches a model unless the user puts it there.
type Allowlist struct {
	Resources bool
	Prompts   bool
}

// DefaultAllowlist is a server's allowlist before the user changed it.
var DefaultAllowlist = Allowlist{Resources: true, Prompts: true}

// Answer is what a read or a get did, in the call's vocabulary (Outcome):
// for a known response exactly one of Result, ServerError and Unsupported
// is set; Code and Message otherwise.
type Answer[T any] struct {
	Outcome     Outcome
	Code        string
	Message     string
	Result      *T
	ServerError *ServerError
	Unsupported *UnsupportedResponse
}
