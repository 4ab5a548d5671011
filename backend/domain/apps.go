package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MCP Apps (io.modelcontextprotocol/ui, issue 30): a tool names a ui://
// resource holding an HTML interface, and who may see the tool. What a
// server says here is untrusted like the rest of its tool: it can only
// narrow who sees the tool (visibility), never widen what ttmcp lets
// anything do.

// The extension's identifiers (stable spec 2026-01-26 §Capability
// Negotiation).
const (
	AppsExtension = "io.modelcontextprotocol/ui"
	AppMIMEType   = "text/html;profile=mcp-app"
)

// Who a tool's visibility names.
const (
	VisibleToModel = "model"
	VisibleToApp   = "app"
)

// CodeToolUIInvalid: a tool's _meta.ui could not be read. A visibility
// that cannot be read isolates the tool (nobody can tell who may see it);
// a bad resourceUri is dropped and the tool stays, without interface.
const CodeToolUIInvalid = "mcp.tool_ui_invalid"

// ToolUI is what a tool's _meta.ui says: the ui:// resource of its
// interface ("" when none) and who may see it (nil: the spec's default,
// both the model and the App; an empty list: neither).
type ToolUI struct {
	ResourceURI string
	Visibility  []string
}

// VisibleTo reports whether who (VisibleToModel, VisibleToApp) may see
// the tool. A tool without _meta.ui (u nil) is visible to both.
func (u *ToolUI) VisibleTo(who string) bool {
	if u == nil || u.Visibility == nil {
		return true
	}
	return slices.Contains(u.Visibility, who)
}

// ModelHidden reports whether a model must never be offered the tool:
// its visibility leaves the model out (["app"], or []).
func (u *ToolUI) ModelHidden() bool { return !u.VisibleTo(VisibleToModel) }

// HasInterface reports whether the tool names an interface.
func (u *ToolUI) HasInterface() bool { return u != nil && u.ResourceURI != "" }

// Check verifies a ToolUI read back from a catalog file: the rules
// ParseToolMeta applied when it was discovered.
func (u *ToolUI) Check(name string) error {
	if u == nil {
		return nil
	}
	if u.ResourceURI != "" {
		if err := checkUIResourceURI(u.ResourceURI); err != nil {
			return invalid(CodeToolUIInvalid, "Tool `%s` interface: %v", name, err)
		}
	}
	if u.Visibility != nil && !slices.Equal(u.Visibility, cleanVisibility(u.Visibility)) {
		return invalid(CodeToolUIInvalid, "Tool `%s` visibility must name model and app at most once each", name)
	}
	if u.ResourceURI == "" && u.Visibility == nil {
		return invalid(CodeToolUIInvalid, "Tool `%s` has an empty ui member", name)
	}
	return nil
}

// MaxUIResourceURI bounds a tool's resourceUri.
const MaxUIResourceURI = 2048

func checkUIResourceURI(uri string) error {
	switch {
	case !strings.HasPrefix(uri, "ui://") || len(uri) == len("ui://"):
		return fmt.Errorf("resourceUri must be a ui:// URI")
	case len(uri) > MaxUIResourceURI:
		return fmt.Errorf("resourceUri exceeds %d bytes", MaxUIResourceURI)
	case strings.ContainsAny(uri, " \t\r\n\x00"):
		return fmt.Errorf("resourceUri holds white space or a control character")
	}
	return nil
}

// cleanVisibility keeps the names ttmcp knows, once each, in the order
// model, app. An unknown name is dropped rather than guessed at: a
// misspelt "modle" hides the tool from the model, which is the safe side.
func cleanVisibility(v []string) []string {
	out := []string{}
	for _, who := range []string{VisibleToModel, VisibleToApp} {
		if slices.Contains(v, who) {
			out = append(out, who)
		}
	}
	return out
}

// ParseToolMeta reads a tool's _meta (raw JSON, nil when absent) for MCP
// Apps: _meta.ui.resourceUri, else the deprecated flat key
// _meta["ui/resourceUri"], and _meta.ui.visibility. It returns nil when
// the tool says nothing of Apps. A diagnostic reports what was dropped;
// isolate says the tool must not be kept at all (its visibility cannot be
// read, so nobody can tell whether a model may see it).
func ParseToolMeta(name string, meta json.RawMessage) (ui *ToolUI, diag *Diagnostic, isolate bool) {
	if len(meta) == 0 {
		return nil, nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil, nil, false // not an object: go-sdk would not have decoded the tool
	}
	var out ToolUI
	var problem string
	var body struct {
		ResourceURI json.RawMessage `json:"resourceUri"`
		Visibility  json.RawMessage `json:"visibility"`
	}
	uriRaw := m["ui/resourceUri"] // the deprecated flat key, if nothing newer
	if raw, ok := m["ui"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &body) != nil || !isObject(raw) {
			problem = "_meta.ui is not a JSON object"
		} else {
			if body.ResourceURI != nil {
				uriRaw = body.ResourceURI
			}
			if body.Visibility != nil && string(body.Visibility) != "null" {
				var v []string
				if json.Unmarshal(body.Visibility, &v) != nil {
					d := toolDiag(CodeToolUIInvalid, name, "Tool `%s` was isolated: its _meta.ui.visibility is not a list of strings", name)
					return nil, &d, true
				}
				out.Visibility = cleanVisibility(v)
			}
		}
	}
	if uriRaw != nil && string(uriRaw) != "null" {
		var uri string
		if json.Unmarshal(uriRaw, &uri) != nil {
			problem = "resourceUri is not a string"
		} else if err := checkUIResourceURI(uri); err != nil {
			problem = err.Error()
		} else {
			out.ResourceURI = uri
		}
	}
	if problem != "" {
		d := toolDiag(CodeToolUIInvalid, name, "Tool `%s` is kept without its interface: %s", name, problem)
		diag = &d
	}
	if out.ResourceURI == "" && out.Visibility == nil {
		return nil, diag, false
	}
	return &out, diag, false
}

type appsKey struct{}

// WithAppsRenderer returns ctx carrying rendersApps, which says whether
// the page an operation is for renders MCP Apps now (a page may say so
// after its socket opened, so it is asked when a request goes out).
func WithAppsRenderer(ctx context.Context, rendersApps func() bool) context.Context {
	return context.WithValue(ctx, appsKey{}, rendersApps)
}

// RendersApps reports whether ctx's page renders MCP Apps: only then do
// its requests declare the extension (AppsExtension) to a server.
func RendersApps(ctx context.Context) bool {
	f, _ := ctx.Value(appsKey{}).(func() bool)
	return f != nil && f()
}
