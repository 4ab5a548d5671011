package domain

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The ranking on real catalogs (issue 31): the tools of public MCP servers
// as their npm packages list them (testdata/toolsearch, README there), and
// requests written for them, as a user would say them, before the ranking
// was tuned. The intended tool must be in the top 5 for ≥ 90 % of them.
func TestToolSearchRealCatalogs(t *testing.T) {
	dir := filepath.Join("testdata", "toolsearch")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	type fixtureTool struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var docs []SearchDoc
	var keys []string // server/name
	for _, f := range files {
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		if server == "requests" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tools []fixtureTool
		if err := json.Unmarshal(data, &tools); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range tools {
			docs = append(docs, SearchDoc{Name: tl.Name, Title: tl.Title, Description: tl.Description, Params: SearchParamsOf(tl.InputSchema)})
			keys = append(keys, server+"/"+tl.Name)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []struct{ Request, Server, Tool string }
	if err := json.Unmarshal(data, &reqs); err != nil {
		t.Fatal(err)
	}
	// issue 31: at least 300 tools of at least five public servers
	if servers := len(files) - 1; len(docs) < 300 || servers < 5 {
		t.Fatalf("%d tools of %d servers, want at least 300 of at least 5", len(docs), servers)
	}
	if len(reqs) < 60 {
		t.Fatalf("%d requests, want at least 60", len(reqs))
	}
	ix := BuildToolIndex(docs)
	top1, top5 := 0, 0
	misses := map[string][]string{}
	for _, r := range reqs {
		want := r.Server + "/" + r.Tool
		if !slices.Contains(keys, want) {
			t.Fatalf("request %q names %s, which no fixture has", r.Request, want)
		}
		hits := ix.Search(r.Request, 5, nil)
		for i, h := range hits {
			if keys[h.Doc] == want {
				top5++
				if i == 0 {
					top1++
				}
				break
			}
			if i == len(hits)-1 {
				misses[r.Server] = append(misses[r.Server], r.Request)
			}
		}
		if len(hits) == 0 {
			misses[r.Server] = append(misses[r.Server], r.Request)
		}
	}
	t.Logf("%d tools, %d requests: top-1 %d (%.0f %%), top-5 %d (%.0f %%)", len(docs), len(reqs),
		top1, 100*float64(top1)/float64(len(reqs)), top5, 100*float64(top5)/float64(len(reqs)))
	for s, m := range misses {
		t.Logf("misses on %s: %q", s, m)
	}
	if float64(top5) < 0.9*float64(len(reqs)) {
		t.Errorf("top-5 for %d of %d requests, want ≥ 90 %%", top5, len(reqs))
	}
}
