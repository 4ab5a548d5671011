package service

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

func (w *world) search(dto jsapi.SearchMcpToolsDto) []string {
	w.t.Helper()
	res, err := w.svc.SearchTools(context.Background(), dto)
	if err != nil {
		w.t.Fatal(err)
	}
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.NativeName)
	}
	return out
}

// search_mcp_tools finds what the listing offers: Ask and Allow tools,
// never Off ones; a set's selection with its overrides; one server only
// with registrationId; a permission change is seen by the next search
// (the index is rebuilt when the listing changes).
func TestSearchTools(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	fs := w.named("Files", "read_file", "write_file", "delete_file")
	gh := w.named("GitHub", "create_issue", "read_issue")
	set := func(id, name, perm string) {
		if _, err := w.svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: name, Permission: perm}); err != nil {
			t.Fatal(err)
		}
	}
	set(fs, "read_file", jsapi.PermissionAllow)
	set(fs, "write_file", jsapi.PermissionAsk)
	set(gh, "read_issue", jsapi.PermissionAllow)
	set(gh, "create_issue", jsapi.PermissionAllow)
	if got := w.search(jsapi.SearchMcpToolsDto{Query: "file"}); !slices.Equal(got, []string{"read_file", "write_file"}) && !slices.Equal(got, []string{"write_file", "read_file"}) {
		t.Fatalf("file: %q (delete_file is Off and never found)", got)
	}
	if got := w.search(jsapi.SearchMcpToolsDto{Query: "read", RegistrationID: &gh}); !slices.Equal(got, []string{"read_issue"}) {
		t.Fatalf("read on GitHub only: %q", got)
	}
	set(fs, "read_file", jsapi.PermissionOff)
	if got := w.search(jsapi.SearchMcpToolsDto{Query: "read file"}); slices.Contains(got, "read_file") {
		t.Fatalf("read_file turned Off is still found: %q", got)
	}
	desc := "open a pull request"
	ts := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "code", Tools: []string{"mcp/" + gh + ":create_issue"},
		DescriptionOverrides: &map[string]jsapi.ToolDescriptionOverride{"mcp/" + gh + ":create_issue": {Description: &desc}}})
	if got := w.search(jsapi.SearchMcpToolsDto{Query: "pull request", ToolSetID: &ts.ID}); !slices.Equal(got, []string{"create_issue"}) {
		t.Fatalf("the set's override is searched: %q", got)
	}
	if got := w.search(jsapi.SearchMcpToolsDto{Query: "read issue", ToolSetID: &ts.ID}); slices.Contains(got, "read_issue") {
		t.Fatalf("a tool outside the set was found: %q", got)
	}
}

func TestSearchToolsBadInput(t *testing.T) {
	w := newWorld(t)
	zero, big := 0, jsapi.MaxToolSearchLimit+1
	missingSet, missingReg := string(domain.NewToolSetID()), string(domain.NewRegistrationID())
	for _, tc := range []struct {
		name string
		dto  jsapi.SearchMcpToolsDto
		kind domain.Kind
		code string
	}{
		{"empty query", jsapi.SearchMcpToolsDto{Query: "  "}, domain.KindBadRequest, CodeToolSearchQueryInvalid},
		{"limit 0", jsapi.SearchMcpToolsDto{Query: "x", Limit: &zero}, domain.KindBadRequest, CodeToolSearchLimitInvalid},
		{"limit too big", jsapi.SearchMcpToolsDto{Query: "x", Limit: &big}, domain.KindBadRequest, CodeToolSearchLimitInvalid},
		{"unknown set", jsapi.SearchMcpToolsDto{Query: "x", ToolSetID: &missingSet}, domain.KindNotFound, CodeToolSetNotFound},
		{"unknown registration", jsapi.SearchMcpToolsDto{Query: "x", RegistrationID: &missingReg}, domain.KindNotFound, CodeRegistrationNotFound},
	} {
		_, err := w.svc.SearchTools(context.Background(), tc.dto)
		if domain.KindOf(err) != tc.kind || domain.CodeOf(err) != tc.code {
			t.Errorf("%s: %v (%s), want %s", tc.name, err, domain.CodeOf(err), tc.code)
		}
	}
}

// digest_legacy_mcp_tools (issue 31): the same listing gives the same
// digest; anything that changes the listing's bytes changes it; a set's
// listing has its own.
func TestLegacyToolsDigest(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	gh := w.named("GitHub", "search", "create_issue")
	w.permit(gh, "search", "allow")
	w.permit(gh, "create_issue", "ask")
	encode := func(v any) ([]byte, error) { return json.Marshal(v) }
	digest := func(dto jsapi.ListLegacyMcpToolsDto) string {
		t.Helper()
		d, err := w.svc.LegacyToolsDigest(ctx, dto, encode)
		if err != nil {
			t.Fatal(err)
		}
		return d.Digest
	}
	first := digest(jsapi.ListLegacyMcpToolsDto{})
	if l := w.legacyTools(); len(l.Tools) != 2 {
		t.Fatalf("listed %d tools", len(l.Tools))
	}
	if again := digest(jsapi.ListLegacyMcpToolsDto{}); again != first || first == "" {
		t.Fatalf("digests %q, %q of one listing", first, again)
	}
	w.permit(gh, "create_issue", "off")
	changed := digest(jsapi.ListLegacyMcpToolsDto{})
	if changed == first {
		t.Error("a permission change left the digest as it was")
	}
	// a set listing the same bytes has the same digest; its own description makes its own
	set := w.saveSet(jsapi.SaveMcpToolSetDto{Name: "One", Tools: []string{"mcp/" + gh + ":search"}})
	if d := digest(jsapi.ListLegacyMcpToolsDto{ToolSetID: &set.ID}); d != changed {
		t.Error("the same listing through a set has another digest")
	}
	desc := "Find code"
	overrides := map[string]jsapi.ToolDescriptionOverride{"mcp/" + gh + ":search": {Description: &desc, Properties: map[string]string{}}}
	w.saveSet(jsapi.SaveMcpToolSetDto{ID: &set.ID, Name: "One", Tools: []string{"mcp/" + gh + ":search"}, DescriptionOverrides: &overrides})
	if d := digest(jsapi.ListLegacyMcpToolsDto{ToolSetID: &set.ID}); d == changed {
		t.Error("a set's own description left the digest as it was")
	}
	missing := string(domain.NewToolSetID())
	if _, err := w.svc.LegacyToolsDigest(ctx, jsapi.ListLegacyMcpToolsDto{ToolSetID: &missing}, encode); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("an unknown set: %v", err)
	}
}
