package domain

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"read_file", []string{"read", "file"}},
		{"browser-navigate.back", []string{"browser", "navigate", "back"}},
		{"getHTTPResponse", []string{"get", "HTTP", "Response"}},
		{"listIssues2", []string{"list", "Issues", "2"}},
		{"  ", nil},
	} {
		if got := splitWords(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	for _, tc := range [][]string{
		{"files", "file"}, {"file", "file"}, {"entities", "entity"}, {"entity", "entity"},
		{"create", "creating"}, {"created", "create"}, {"running", "run"}, {"stopped", "stop"},
		{"searches", "search"}, {"boxes", "box"}, {"directories", "directory"},
		{"installed", "install"}, {"quickly", "quick"},
	} {
		if a, b := Stem(tc[0]), Stem(tc[1]); a != b {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q: want them equal", tc[0], a, tc[1], b)
		}
	}
	for _, tc := range [][]string{{"status", "statu"}, {"class", "clas"}, {"this", "thi"}} {
		if Stem(tc[0]) == tc[1] {
			t.Errorf("Stem(%q) = %q: folded too far", tc[0], tc[1])
		}
	}
}

func TestSearchTermsStopWords(t *testing.T) {
	got := SearchTerms("Please list all of the Files in my directory")
	want := []string{"list", "fil", "directory"}
	if !slices.Equal(got, want) {
		t.Errorf("SearchTerms = %q, want %q", got, want)
	}
}

func TestSplitLead(t *testing.T) {
	lead, rest := splitLead("Read a file. Use it for text.\n\nMore.")
	if lead != "Read a file." || rest != " Use it for text.\n\nMore." {
		t.Errorf("splitLead = %q, %q", lead, rest)
	}
	if lead, rest := splitLead("v1.2 of a tool"); lead != "v1.2 of a tool" || rest != "" {
		t.Errorf("a dot inside a word ends no sentence: %q, %q", lead, rest)
	}
}

func TestSearchParamsOf(t *testing.T) {
	got := SearchParamsOf(json.RawMessage(`{"type":"object","properties":{"path":{"description":"Where"},"depth":{}}}`))
	want := []SearchParam{{"depth", ""}, {"path", "Where"}}
	if !slices.Equal(got, want) {
		t.Errorf("SearchParamsOf = %v, want %v", got, want)
	}
	if SearchParamsOf(json.RawMessage(`true`)) != nil || SearchParamsOf(nil) != nil {
		t.Error("a schema without properties has no parameters")
	}
}

func TestToolIndexRanks(t *testing.T) {
	docs := []SearchDoc{
		{Name: "read_file", Description: "Read the complete contents of a file from the file system.", Params: []SearchParam{{"path", "Path of the file"}}},
		{Name: "write_file", Description: "Create a new file or overwrite an existing file.", Params: []SearchParam{{"path", ""}, {"content", ""}}},
		{Name: "list_directory", Description: "List files and directories in a path."},
		{Name: "browser_navigate", Title: "Navigate to a URL", Description: "Open a page in the browser. It can read pages too.", Params: []SearchParam{{"url", "The URL"}}},
		{Name: "create_issue", Description: "Create a new issue in a GitHub repository."},
	}
	ix := BuildToolIndex(docs)
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"read the contents of a file", 0},
		{"overwrite my notes file", 1},
		{"what files are in this directory", 2},
		{"open https://example.com in the browser", 3},
		{"file a bug on github", 4},
	} {
		hits := ix.Search(tc.q, 3, nil)
		if len(hits) == 0 || hits[0].Doc != tc.want {
			t.Errorf("Search(%q) = %v, want doc %d first", tc.q, hits, tc.want)
		}
	}
	// The filter keeps a tool out entirely.
	for _, h := range ix.Search("read file", 10, func(d int) bool { return d != 0 }) {
		if h.Doc == 0 {
			t.Error("a filtered-out tool was found")
		}
	}
	if hits := ix.Search("the of and", 10, nil); len(hits) != 0 {
		t.Errorf("stop words alone found %v", hits)
	}
	if hits := ix.Search("file", 1, nil); len(hits) != 1 {
		t.Errorf("limit 1 gave %d hits", len(hits))
	}
}

func TestSearchTermsCamelWhole(t *testing.T) {
	got := SearchTerms("GitHub")
	if !slices.Contains(got, "github") || !slices.Contains(got, "git") {
		t.Errorf("SearchTerms(GitHub) = %q: want the parts and the whole word", got)
	}
}
