package domain

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func appContent(mime, text string, meta string) []ResourceContent {
	c := ResourceContent{URI: "ui://a/app.html", Text: &text}
	if mime != "" {
		c.MimeType = &mime
	}
	if meta != "" {
		c.Meta = json.RawMessage(meta)
	}
	return []ResourceContent{c}
}

func TestParseAppInterface(t *testing.T) {
	const doc = "<!doctype html><p>hi</p>"
	blob := base64.StdEncoding.EncodeToString([]byte(doc))
	blobContent := []ResourceContent{{URI: "ui://a/app.html", MimeType: new(AppMIMEType), Blob: &blob}}
	tests := []struct {
		name     string
		contents []ResourceContent
		listed   string
		err      string
		csp      AppCSP
		perms    AppPermissions
		dropped  int
	}{
		{name: "text, no meta", contents: appContent(AppMIMEType, doc, "")},
		{name: "mime type spelt otherwise", contents: appContent("Text/HTML; profile=mcp-app", doc, "")},
		{name: "blob", contents: blobContent},
		{name: "plain text/html refused", contents: appContent("text/html", doc, ""), err: "MIME type is text/html"},
		{name: "no mime type refused", contents: appContent("", doc, ""), err: "MIME type is none"},
		{name: "two contents refused", contents: append(appContent(AppMIMEType, doc, ""), appContent(AppMIMEType, doc, "")...), err: "2 contents"},
		{name: "empty refused", contents: appContent(AppMIMEType, "  ", ""), err: "empty"},
		{name: "too large refused", contents: appContent(AppMIMEType, strings.Repeat("x", MaxAppHTMLBytes+1), ""), err: "over the limit"},
		{name: "not UTF-8 refused", contents: appContent(AppMIMEType, "\xff\xfe", ""), err: "not UTF-8"},
		{name: "declared origins kept", contents: appContent(AppMIMEType, doc,
			`{"ui":{"csp":{"connectDomains":["https://api.example.com","wss://live.example.com:8443"],"resourceDomains":["https://*.cdn.example.com"]},"permissions":{"camera":{},"clipboardWrite":{}}}}`),
			csp:   AppCSP{ConnectDomains: []string{"https://api.example.com", "wss://live.example.com:8443"}, ResourceDomains: []string{"https://*.cdn.example.com"}},
			perms: AppPermissions{Camera: true, ClipboardWrite: true}},
		{name: "hostile sources dropped", contents: appContent(AppMIMEType, doc,
			`{"ui":{"csp":{"connectDomains":["*","'unsafe-eval'","https://a.example; script-src *","data:","https://ok.example","https://x.example/path","javascript:alert(1)"],"frameDomains":"https://f.example"}}}`),
			csp: AppCSP{ConnectDomains: []string{"https://ok.example"}}, dropped: 7},
		{name: "the content's _meta.ui wins over the listing's", contents: appContent(AppMIMEType, doc, `{"ui":{"csp":{"connectDomains":["https://content.example"]}}}`),
			listed: `{"csp":{"connectDomains":["https://listed.example"]}}`, csp: AppCSP{ConnectDomains: []string{"https://content.example"}}},
		{name: "the content's empty _meta.ui wins too (nothing declared: the default)", contents: appContent(AppMIMEType, doc, `{"ui":{}}`),
			listed: `{"csp":{"connectDomains":["https://listed.example"]}}`},
		{name: "the listing's _meta.ui without the content's", contents: appContent(AppMIMEType, doc, ""),
			listed: `{"csp":{"connectDomains":["https://listed.example"]},"permissions":{"camera":{}}}`,
			csp:    AppCSP{ConnectDomains: []string{"https://listed.example"}}, perms: AppPermissions{Camera: true}},
		{name: "the listing's when the content's _meta has no ui object", contents: appContent(AppMIMEType, doc, `{"ui":"csp","other":1}`),
			listed: `{"csp":{"connectDomains":["https://listed.example"]}}`, csp: AppCSP{ConnectDomains: []string{"https://listed.example"}}},
		{name: "the listing's sources are narrowed as the content's", contents: appContent(AppMIMEType, doc, ""),
			listed: `{"csp":{"connectDomains":["*","https://ok.example"]}}`, csp: AppCSP{ConnectDomains: []string{"https://ok.example"}}, dropped: 1},
		{name: "a listing's _meta.ui that is not an object: the default", contents: appContent(AppMIMEType, doc, ""), listed: `["csp"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			listed := func() json.RawMessage {
				asked = true
				if tt.listed == "" {
					return nil
				}
				return json.RawMessage(tt.listed)
			}
			app, err := ParseAppInterface("ui://a/app.html", tt.contents, listed)
			if hasUI := metaUI(tt.contents[0].Meta) != nil; asked && hasUI {
				t.Errorf("the listing was asked for although the content has _meta.ui")
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || CodeOf(err) != CodeAppResourceInvalid {
					t.Fatalf("err = %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if app.HTML != doc || len(app.SHA256) != 64 {
				t.Errorf("html %q sha %q", app.HTML, app.SHA256)
			}
			if !reflect.DeepEqual(app.CSP, tt.csp) || app.Permissions != tt.perms || len(app.Dropped) != tt.dropped {
				t.Errorf("csp %+v perms %+v dropped %q", app.CSP, app.Permissions, app.Dropped)
			}
		})
	}
}

// ListedUI finds a resource's entry by URI; an unlisted resource (servers
// may leave their ui:// resources out) has none.
func TestListedUI(t *testing.T) {
	items := []Resource{{URI: "test://other", UI: json.RawMessage(`{"x":1}`)}, {URI: "ui://a/app.html", UI: json.RawMessage(`{"prefersBorder":true}`)}, {URI: "ui://a/bare.html"}}
	if got := string(ListedUI(items, "ui://a/app.html")); got != `{"prefersBorder":true}` {
		t.Errorf("listed %s", got)
	}
	if ListedUI(items, "ui://a/bare.html") != nil || ListedUI(items, "ui://a/none.html") != nil || ListedUI(nil, "ui://a/app.html") != nil {
		t.Errorf("an entry without _meta.ui, or no entry, has none")
	}
}

func TestAppCSPHeader(t *testing.T) {
	def := AppCSPHeader(AppCSP{})
	want := "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; " +
		"media-src data:; connect-src 'none'; frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'"
	if def != want {
		t.Errorf("default\n%s\nwant\n%s", def, want)
	}
	got := AppCSPHeader(AppCSP{ConnectDomains: []string{"https://api.example"}, ResourceDomains: []string{"https://cdn.example"},
		FrameDomains: []string{"https://f.example"}, BaseURIDomains: []string{"https://b.example"}})
	for _, part := range []string{"script-src 'unsafe-inline' https://cdn.example", "img-src data: https://cdn.example",
		"connect-src https://api.example", "frame-src https://f.example", "base-uri https://b.example", "object-src 'none'"} {
		if !strings.Contains(got, part) {
			t.Errorf("%s lacks %q", got, part)
		}
	}
	if strings.Contains(got, "'unsafe-eval'") || strings.Contains(got, "'self'") || strings.Count(got, ";") != 10 {
		t.Errorf("policy %s", got)
	}
}
