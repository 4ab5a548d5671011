package domain

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestValidateURI(t *testing.T) {
	tests := []struct {
		uri string
		ok  bool
	}{
		{"test://static/resource/1", true},
		{"file:///home/me/My Documents/a.txt", true}, // spaces as servers send them
		{"https://example.com/a?b=c#d", true},
		{"urn:isbn:0451450523", true},
		{"a+b-c.d:x", true},
		{"demo://resource/static/document/architecture.md", true}, // server-everything's
		{"memory://k?q=1#f", true},
		{"ui://widget/x", true},
		{"file:///etc/passwd", true}, // a name the server reads; shown, never opened (LinkableURI)
		{"mailto:a@b.c", true},
		// Issue 27: what does not parse, and schemes a browser runs or
		// renders, are left out.
		{"http://[::1", false},
		{"http://x/%zz", false},
		{"javascript:alert(1)", false},
		{"JavaScript:alert(1)", false},
		{"vbscript:msgbox", false},
		{"data:text/plain;base64,SGk=", false},
		{"data:text/html,<script>alert(1)</script>", false},
		{"blob:https://a.example/0f", false},
		{"about:blank", false},
		{"view-source:https://a.example", false},
		{"", false},
		{"relative/path", false},
		{"/absolute/path", false},
		{"1http://x", false}, // a scheme starts with a letter
		{"http:", false},     // nothing after the scheme
		{":x", false},
		{"ht tp://x", false},
		{"test://a\nb", false},
		{"test://a\x00", false},
		{"test://a\u0085", false}, // a C1 control
		{"test://" + strings.Repeat("a", MaxURIBytes), false},
		{"test://\xff", false},
	}
	for _, tt := range tests {
		if err := ValidateURI(tt.uri); (err == nil) != tt.ok {
			t.Errorf("ValidateURI(%q) = %v, want ok %v", tt.uri, err, tt.ok)
		}
	}
}

// Only http and https URIs with a host are ever opened by the page.
func TestLinkableURI(t *testing.T) {
	for uri, want := range map[string]bool{
		"https://example.com/a": true, "http://127.0.0.1:8080/x": true, "HTTPS://Example.com": true,
		"file:///etc/passwd": false, "demo://resource/1": false, "javascript:alert(1)": false,
		"http://[::1": false, "https:relative": false, "mailto:a@b.c": false, "ui://widget": false,
	} {
		if got := LinkableURI(uri); got != want {
			t.Errorf("LinkableURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestValidMimeType(t *testing.T) {
	for s, ok := range map[string]bool{
		"text/plain": true, "application/json": true, "text/plain; charset=utf-8": true, "image/svg+xml": true,
		"": false, "text": false, "text/": false, "/plain": false, "text/plain/x": false, "text/plain; charset": false,
		"te xt/plain": false, "text/plain\n": false, strings.Repeat("a", 250) + "/plain": false,
	} {
		if got := ValidMimeType(s); got != ok {
			t.Errorf("ValidMimeType(%q) = %v, want %v", s, got, ok)
		}
	}
}

func TestParseURITemplate(t *testing.T) {
	tests := []struct {
		template string
		vars     []string // nil: invalid
	}{
		{"test://static/resource/{id}", []string{"id"}},
		{"file:///{+path}", []string{"path"}},
		{"https://x/{a}/{b}{?c,d*}{#e:3}", []string{"a", "b", "c", "d", "e"}},
		{"x:{a}{a}{;b.c}{&d%20e}", []string{"a", "b.c", "d%20e"}},
		{"x:no-variables", []string{}},
		{"x:{/list*}", []string{"list"}},
		{"{scheme}://x", nil},      // expansions would not be absolute
		{"javascript:{code}", nil}, // a scheme a browser runs (issue 27)
		{"test://{}", nil},         // empty expression
		{"test://{a", nil},         // not closed
		{"test://a}", nil},         // stray close
		{"test://{a{b}}", nil},     // nested
		{"test://{=a}", nil},       // reserved operator
		{"test://{a b}", nil},      // bad name
		{"test://{a..b}", nil},     // double dot
		{"test://{.a.}", nil},      // a trailing dot after the operator
		{"test://{a:0}", nil},      // prefix 0
		{"test://{a:10000}", nil},  // prefix too long
		{"test://{a:3*}", nil},     // both modifiers
		{"test://{a*b}", nil},      // explode in the middle
		{"test://{a,}", nil},       // empty spec
		{"test://{%zz}", nil},      // bad percent-encoding
		{"test://x\n{a}", nil},     // control character
		{"", nil},
	}
	for _, tt := range tests {
		vars, err := ParseURITemplate(tt.template)
		if tt.vars == nil {
			if err == nil {
				t.Errorf("ParseURITemplate(%q) = %v, want an error", tt.template, vars)
			}
			continue
		}
		if err != nil || !slices.Equal(vars, tt.vars) {
			t.Errorf("ParseURITemplate(%q) = %v, %v; want %v", tt.template, vars, err, tt.vars)
		}
	}
}

func entries[T any](items ...T) []Described[T] {
	out := make([]Described[T], len(items))
	for i, it := range items {
		out[i] = Described[T]{Entry: it, Size: 100}
	}
	return out
}

func codes(diags []ListDiagnostic) []string {
	var out []string
	for _, d := range diags {
		item := ""
		if d.Item != nil {
			item = *d.Item
		}
		out = append(out, d.Code+" "+item)
	}
	return out
}

// A bad resource is left out with a diagnostic naming it; the healthy ones
// stay in the server's order; a URI listed twice keeps its first entry.
func TestValidateResources(t *testing.T) {
	in := entries(
		Resource{URI: "test://b", Name: "b"},
		Resource{URI: "relative", Name: "r"},
		Resource{URI: "test://a", Name: " "},
		Resource{URI: "test://c", Name: "c", MimeType: ptr("not a type")},
		Resource{URI: "test://a", Name: "a", MimeType: ptr("text/plain")},
		Resource{URI: "test://b", Name: "b again"},
		Resource{URI: "test://n", Name: "line\nbreak"},
		// Issue 27: what does not parse and schemes a browser runs are one
		// entry's diagnostic each; server-everything's demo: and file: stay.
		Resource{URI: "http://[::1", Name: "unparsed"},
		Resource{URI: "javascript:alert(1)", Name: "script"},
		Resource{URI: "demo://resource/static/document/architecture.md", Name: "architecture"},
		Resource{URI: "file:///etc/passwd", Name: "passwd"},
	)
	in = append(in, Described[Resource]{Entry: Resource{URI: "test://big", Name: "big"}, Size: MaxEntryBytes + 1})
	items, diags := ValidateResources(in)
	var uris []string
	for _, r := range items {
		uris = append(uris, r.URI+" "+r.Name)
	}
	if !slices.Equal(uris, []string{"test://b b", "test://a a", "demo://resource/static/document/architecture.md architecture", "file:///etc/passwd passwd"}) {
		t.Errorf("kept %v", uris)
	}
	want := []string{CodeResourceURIInvalid + " relative", CodeResourceNameInvalid + " test://a", CodeResourceMimeTypeInvalid + " test://c",
		CodeResourceDuplicateURI + " test://b", CodeResourceNameInvalid + " test://n",
		CodeResourceURIInvalid + " http://[::1", CodeResourceURIInvalid + " javascript:alert(1)", CodeListEntrySizeLimit + " test://big"}
	if got := codes(diags); !slices.Equal(got, want) {
		t.Errorf("diagnostics %v\nwant %v", got, want)
	}
}

func TestValidateResourceTemplates(t *testing.T) {
	items, diags := ValidateResourceTemplates(entries(
		ResourceTemplate{URITemplate: "test://r/{id}", Name: "r"},
		ResourceTemplate{URITemplate: "test://{", Name: "bad"},
		ResourceTemplate{URITemplate: "{s}://x", Name: "relative"},
		ResourceTemplate{URITemplate: "test://r/{id}", Name: "again"},
		ResourceTemplate{URITemplate: "test://q{?a,b}", Name: ""},
	))
	if len(items) != 1 || items[0].Name != "r" || !slices.Equal(items[0].Variables, []string{"id"}) {
		t.Errorf("kept %+v", items)
	}
	want := []string{CodeTemplateInvalid + " test://{", CodeTemplateInvalid + " {s}://x", CodeTemplateDuplicate + " test://r/{id}", CodeResourceNameInvalid + " test://q{?a,b}"}
	if got := codes(diags); !slices.Equal(got, want) {
		t.Errorf("diagnostics %v\nwant %v", got, want)
	}
}

// Prompts sharing a name are isolated as a group; one with an argument
// named twice, or not at all, is left out.
func TestValidatePrompts(t *testing.T) {
	items, diags := ValidatePrompts(entries(
		Prompt{Name: "ok", Arguments: []PromptArgument{{Name: "a", Required: true}, {Name: "b"}}},
		Prompt{Name: "twin"},
		Prompt{Name: ""},
		Prompt{Name: "twin", Description: ptr("other")},
		Prompt{Name: "dup-arg", Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}}},
		Prompt{Name: "blank-arg", Arguments: []PromptArgument{{Name: ""}}},
		Prompt{Name: "simple"},
	))
	var names []string
	for _, p := range items {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"ok", "simple"}) {
		t.Errorf("kept %v", names)
	}
	want := []string{CodePromptDuplicateName + " twin", CodePromptNameInvalid + " ", CodePromptArgumentInvalid + " dup-arg", CodePromptArgumentInvalid + " blank-arg"}
	if got := codes(diags); !slices.Equal(got, want) {
		t.Errorf("diagnostics %v\nwant %v", got, want)
	}
}

// Arguments are checked before anything is sent: every unknown one and
// every missing required one is named.
func TestPromptCheckArguments(t *testing.T) {
	p := Prompt{Name: "summarize", Arguments: []PromptArgument{{Name: "topic", Required: true}, {Name: "style", Required: true}, {Name: "length"}}}
	tests := []struct {
		args map[string]string
		code string
		says string
	}{
		{map[string]string{"topic": "x", "style": ""}, "", ""}, // an empty value is given
		{map[string]string{"topic": "x", "style": "y", "length": "3"}, "", ""},
		{map[string]string{"topic": "x"}, CodePromptArgumentMissing, "`style`"},
		{nil, CodePromptArgumentMissing, "`topic`, `style`"},
		{map[string]string{"topic": "x", "style": "y", "tone": "z"}, CodePromptArgumentUnknown, "`tone`"},
		{map[string]string{"topic": strings.Repeat("x", MaxArgumentsBytes), "style": ""}, CodePromptArgumentsTooLarge, ""},
	}
	for _, tt := range tests {
		err := p.CheckArguments(tt.args)
		if CodeOf(err) != tt.code || err != nil && (KindOf(err) != KindBadRequest || !strings.Contains(err.Error(), tt.says)) {
			t.Errorf("CheckArguments(%v) = %v, want %s naming %s", tt.args, err, tt.code, tt.says)
		}
	}
}

// Every content of a read is kept in order; one over the limit keeps its
// place and size without its data, with a diagnostic: nothing is cut.
func TestProjectContents(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxContentBytes+1))
	exact := base64.StdEncoding.EncodeToString(make([]byte, 5))
	out := ProjectContents("test://r", []ResourceContent{
		{URI: "test://r", MimeType: ptr("text/plain"), Text: ptr("héllo")},
		{URI: "test://r#1", MimeType: ptr("application/octet-stream"), Blob: &big},
		{URI: "test://r#2", Blob: &exact},
		{URI: "test://r#3", Blob: ptr("not base64!")},
		{URI: "test://r#4", Text: ptr(""), MimeType: ptr("bad type")},
		{URI: "test://r#5"},
		{URI: "test://r#6", Text: ptr(strings.Repeat("x", MaxContentBytes+1))},
	})
	type got struct {
		text, blob bool
		size       int64
		isText     bool
	}
	want := []got{{true, false, 6, true}, {false, false, MaxContentBytes + 1, false}, {false, true, 5, false}, {false, false, 0, false},
		{true, false, 0, true}, {false, false, 0, false}, {false, false, MaxContentBytes + 1, true}}
	for i, c := range out.Contents {
		if g := (got{c.Text != nil, c.Blob != nil, c.Size, c.IsText}); g != want[i] {
			t.Errorf("content %d: %+v, want %+v", i, g, want[i])
		}
	}
	if out.Contents[4].MimeType != nil {
		t.Error("a malformed mime type was kept")
	}
	if out.TotalBytes != 6+2*(MaxContentBytes+1)+5 {
		t.Errorf("total %d", out.TotalBytes)
	}
	var diags []string
	for _, d := range out.Diagnostics {
		diags = append(diags, d.Code+" "+string(rune('0'+*d.ContentIndex)))
	}
	wantDiags := []string{CodeResourceContentTooLarge + " 1", CodeResourceContentInvalid + " 3", CodeResourceContentInvalid + " 4",
		CodeResourceContentInvalid + " 5", CodeResourceContentTooLarge + " 6"}
	if !slices.Equal(diags, wantDiags) {
		t.Errorf("diagnostics %v\nwant %v", diags, wantDiags)
	}
}

func TestBase64Size(t *testing.T) {
	for n := range 10 {
		s := base64.StdEncoding.EncodeToString(make([]byte, n))
		if got, ok := base64Size(s); !ok || got != int64(n) {
			t.Errorf("%d bytes: %d %v", n, got, ok)
		}
	}
	for _, bad := range []string{"abc", "ab=c", "a===", "ab c", "ab-_"} {
		if _, ok := base64Size(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Messages keep their roles and content; one ttmcp cannot show is left out
// with a diagnostic naming its index.
func TestProjectMessages(t *testing.T) {
	img := base64.StdEncoding.EncodeToString([]byte{1, 2, 3})
	out := ProjectMessages("p", ptr("d"), []PromptMessage{
		{Role: RoleUser, Content: ContentBlock{Type: BlockText, Text: ptr("hi")}},
		{Role: RoleAssistant, Content: ContentBlock{Type: BlockImage, Data: &img, MimeType: ptr("image/png")}},
		{Role: "system", Content: ContentBlock{Type: BlockText, Text: ptr("x")}},
		{Role: RoleUser, Content: ContentBlock{Type: BlockResource, Resource: &ResourceContent{URI: "test://r", Text: ptr("doc")}}},
		{Role: RoleUser, Content: ContentBlock{Type: BlockResourceLink, URI: ptr("test://l"), Name: ptr("l")}},
		{Role: RoleUser, Content: ContentBlock{Type: "tool_use"}},
		{Role: RoleUser, Content: ContentBlock{Type: BlockAudio, Data: ptr("%%%%"), MimeType: ptr("audio/wav")}},
		{Role: RoleUser, Content: ContentBlock{Type: BlockResourceLink, URI: ptr("relative"), Name: ptr("l")}},
		{Role: RoleUser, Content: ContentBlock{Type: BlockResource, Resource: &ResourceContent{URI: "test://r"}}},
	})
	var kept []string
	for _, m := range out.Messages {
		kept = append(kept, m.Role+":"+m.Content.Type)
	}
	if !slices.Equal(kept, []string{"user:text", "assistant:image", "user:resource", "user:resource_link"}) {
		t.Errorf("kept %v", kept)
	}
	var left []int
	for _, d := range out.Diagnostics {
		left = append(left, *d.ContentIndex)
	}
	if !slices.Equal(left, []int{2, 5, 6, 7, 8}) {
		t.Errorf("left out %v (%+v)", left, out.Diagnostics)
	}
	if out.Bytes != 2+3+3 {
		t.Errorf("bytes %d", out.Bytes)
	}
	if !out.Messages[2].Content.Resource.IsText {
		t.Error("the embedded resource lost its type")
	}
}

func TestProjectCompletion(t *testing.T) {
	vals := make([]string, 150)
	c := ProjectCompletion(Completion{Values: vals})
	if len(c.Values) != MaxCompletionValues || !c.HasMore {
		t.Errorf("%d values, hasMore %v", len(c.Values), c.HasMore)
	}
	if c := ProjectCompletion(Completion{}); c.Values == nil || c.HasMore {
		t.Errorf("%+v", c)
	}
}

// No template makes the parser panic, and what it accepts starts with a
// scheme and names only valid variables.
func FuzzParseURITemplate(f *testing.F) {
	for _, s := range []string{"test://{id}", "x:{+a,b*}{?c:3}", "{a}", "x:{", "x:{%4", "x:{a.}", "x:}{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars, err := ParseURITemplate(s)
		if err != nil {
			return
		}
		if schemeLength(s) == 0 {
			t.Fatalf("%q accepted without a scheme", s)
		}
		for _, v := range vars {
			if !validVarName(v) {
				t.Fatalf("%q: variable %q", s, v)
			}
		}
	})
}
