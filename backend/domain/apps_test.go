package domain

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseToolMeta(t *testing.T) {
	tests := []struct {
		name    string
		meta    string // "" : no _meta
		want    *ToolUI
		diag    string // the diagnostic's message, "" for none
		isolate bool
	}{
		{name: "no meta", meta: ""},
		{name: "meta without ui", meta: `{"io.modelcontextprotocol/related":{"x":1}}`},
		{name: "ui null", meta: `{"ui":null}`},
		{name: "resourceUri", meta: `{"ui":{"resourceUri":"ui://dice/tray.html"}}`,
			want: &ToolUI{ResourceURI: "ui://dice/tray.html"}},
		{name: "flat deprecated key", meta: `{"ui/resourceUri":"ui://old/app"}`,
			want: &ToolUI{ResourceURI: "ui://old/app"}},
		{name: "nested key wins over flat", meta: `{"ui/resourceUri":"ui://old/app","ui":{"resourceUri":"ui://new/app"}}`,
			want: &ToolUI{ResourceURI: "ui://new/app"}},
		{name: "app only", meta: `{"ui":{"resourceUri":"ui://a/b","visibility":["app"]}}`,
			want: &ToolUI{ResourceURI: "ui://a/b", Visibility: []string{"app"}}},
		{name: "visibility without interface", meta: `{"ui":{"visibility":["app"]}}`,
			want: &ToolUI{Visibility: []string{"app"}}},
		{name: "visibility ordered, deduplicated", meta: `{"ui":{"visibility":["app","model","app"]}}`,
			want: &ToolUI{Visibility: []string{"model", "app"}}},
		{name: "unknown name hides from the model", meta: `{"ui":{"visibility":["modle","app"]}}`,
			want: &ToolUI{Visibility: []string{"app"}}},
		{name: "empty visibility: nobody", meta: `{"ui":{"visibility":[]}}`,
			want: &ToolUI{Visibility: []string{}}},
		{name: "visibility not a list isolates", meta: `{"ui":{"resourceUri":"ui://a/b","visibility":"app"}}`,
			diag: "Tool `t` was isolated: its _meta.ui.visibility is not a list of strings", isolate: true},
		{name: "visibility of numbers isolates", meta: `{"ui":{"visibility":[1]}}`,
			diag: "Tool `t` was isolated: its _meta.ui.visibility is not a list of strings", isolate: true},
		{name: "https resourceUri dropped", meta: `{"ui":{"resourceUri":"https://evil.example/app.html","visibility":["app"]}}`,
			want: &ToolUI{Visibility: []string{"app"}}, diag: "Tool `t` is kept without its interface: resourceUri must be a ui:// URI"},
		{name: "bare scheme dropped", meta: `{"ui":{"resourceUri":"ui://"}}`,
			diag: "Tool `t` is kept without its interface: resourceUri must be a ui:// URI"},
		{name: "resourceUri not a string", meta: `{"ui":{"resourceUri":5}}`,
			diag: "Tool `t` is kept without its interface: resourceUri is not a string"},
		{name: "ui not an object", meta: `{"ui":true}`,
			diag: "Tool `t` is kept without its interface: _meta.ui is not a JSON object"},
		{name: "resourceUri with a newline", meta: `{"ui":{"resourceUri":"ui://a/b\nc"}}`,
			diag: "Tool `t` is kept without its interface: resourceUri holds white space or a control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw json.RawMessage
			if tt.meta != "" {
				raw = json.RawMessage(tt.meta)
			}
			ui, diag, isolate := ParseToolMeta("t", raw)
			if !reflect.DeepEqual(ui, tt.want) {
				t.Errorf("ui = %+v, want %+v", ui, tt.want)
			}
			if isolate != tt.isolate {
				t.Errorf("isolate = %v, want %v", isolate, tt.isolate)
			}
			switch {
			case tt.diag == "" && diag != nil:
				t.Errorf("unexpected diagnostic %+v", diag)
			case tt.diag != "" && (diag == nil || diag.Message != tt.diag || diag.Code != CodeToolUIInvalid):
				t.Errorf("diagnostic = %+v, want %q", diag, tt.diag)
			}
			if ui != nil {
				if err := ui.Check("t"); err != nil {
					t.Errorf("a parsed ui fails its own check: %v", err)
				}
			}
		})
	}
}

func TestToolUIVisibility(t *testing.T) {
	tests := []struct {
		name              string
		ui                *ToolUI
		model, app, iface bool
	}{
		{"no ui", nil, true, true, false},
		{"interface, default visibility", &ToolUI{ResourceURI: "ui://a/b"}, true, true, true},
		{"app only", &ToolUI{ResourceURI: "ui://a/b", Visibility: []string{"app"}}, false, true, true},
		{"model only", &ToolUI{Visibility: []string{"model"}}, true, false, false},
		{"nobody", &ToolUI{Visibility: []string{}}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ui.VisibleTo(VisibleToModel); got != tt.model {
				t.Errorf("model = %v", got)
			}
			if got := tt.ui.ModelHidden(); got == tt.model {
				t.Errorf("ModelHidden = %v", got)
			}
			if got := tt.ui.VisibleTo(VisibleToApp); got != tt.app {
				t.Errorf("app = %v", got)
			}
			if got := tt.ui.HasInterface(); got != tt.iface {
				t.Errorf("interface = %v", got)
			}
		})
	}
}

func TestValidateToolsReadsUI(t *testing.T) {
	app := described("app_only", `{"type":"object"}`)
	app.Meta = json.RawMessage(`{"ui":{"resourceUri":"ui://x/y","visibility":["app"]}}`)
	badVis := described("bad_visibility", `{"type":"object"}`)
	badVis.Meta = json.RawMessage(`{"ui":{"visibility":{"model":true}}}`)
	plain := described("plain", `{"type":"object"}`)
	tools, diags := ValidateTools([]DescribedTool{app, badVis, plain}, nil)
	if len(tools) != 2 || tools[0].NativeName != "app_only" || tools[1].NativeName != "plain" {
		t.Fatalf("tools = %+v", tools)
	}
	if want := (&ToolUI{ResourceURI: "ui://x/y", Visibility: []string{"app"}}); !reflect.DeepEqual(tools[0].UI, want) {
		t.Errorf("UI = %+v", tools[0].UI)
	}
	if tools[1].UI != nil {
		t.Errorf("a tool without _meta has UI %+v", tools[1].UI)
	}
	if len(diags) != 1 || diags[0].Code != CodeToolUIInvalid || *diags[0].NativeName != "bad_visibility" {
		t.Errorf("diags = %+v", diags)
	}
	cat := Catalog{Tools: tools}
	id := RegistrationID("0b0e7c4e-6f7c-4d6a-9a39-2b8d1f0c5e11")
	if err := cat.Check(id); err != nil {
		t.Errorf("Check: %v", err)
	}
	cat.Tools[0].UI = &ToolUI{ResourceURI: "javascript:alert(1)"}
	if err := cat.Check(id); err == nil {
		t.Error("a catalog whose ui names a javascript: URI passes its check")
	}
	cat.Tools[0].UI = &ToolUI{Visibility: []string{"app", "model"}}
	if err := cat.Check(id); err == nil {
		t.Error("a catalog with an unordered visibility passes its check")
	}
}
