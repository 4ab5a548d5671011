package domain

import (
	"fmt"
	"strings"
	"testing"
)

// syntheticTools makes n tools of a realistic shape: verb_noun names, a
// two-sentence description and three parameters, from small vocabularies
// so that terms repeat across tools as they do in real catalogs.
func syntheticTools(n int) []SearchDoc {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "read", "write", "move", "run", "open", "close"}
	nouns := []string{"file", "issue", "page", "entity", "branch", "pod", "table", "user", "comment", "image", "node", "project", "repository", "secret", "job"}
	docs := make([]SearchDoc, n)
	for i := range docs {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		docs[i] = SearchDoc{
			Name:        fmt.Sprintf("%s_%s_%d", v, o, i),
			Title:       v + " " + o,
			Description: fmt.Sprintf("%s a %s in the workspace. Returns the %s as JSON with its id, name and timestamps; fails when the %s does not exist.", v, o, o, o),
			Params:      []SearchParam{{"id", "The " + o + " id"}, {"path", "Where the " + o + " lives"}, {"limit", "How many results"}},
		}
	}
	return docs
}

// substringScan is the baseline: what a host without an index does, a
// lower-cased substring test of every query word against every tool's
// text, counting matches.
func substringScan(docs []SearchDoc, query string) int {
	words := strings.Fields(strings.ToLower(query))
	best := 0
	for _, d := range docs {
		var sb strings.Builder
		sb.WriteString(d.Name)
		sb.WriteString(" ")
		sb.WriteString(d.Title)
		sb.WriteString(" ")
		sb.WriteString(d.Description)
		for _, p := range d.Params {
			sb.WriteString(" ")
			sb.WriteString(p.Name)
			sb.WriteString(" ")
			sb.WriteString(p.Description)
		}
		text := strings.ToLower(sb.String())
		n := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// BenchmarkToolSearch: index build and one query over 300 and 5,000 tools,
// against the substring scan in the same run.
func BenchmarkToolSearch(b *testing.B) {
	const query = "delete the comment on an issue"
	for _, n := range []int{300, 5000} {
		docs := syntheticTools(n)
		b.Run(fmt.Sprintf("build/%d", n), func(b *testing.B) {
			for b.Loop() {
				BuildToolIndex(docs)
			}
		})
		ix := BuildToolIndex(docs)
		b.Run(fmt.Sprintf("query/%d", n), func(b *testing.B) {
			for b.Loop() {
				ix.Search(query, 10, nil)
			}
		})
		b.Run(fmt.Sprintf("substring-scan/%d", n), func(b *testing.B) {
			for b.Loop() {
				substringScan(docs, query)
			}
		})
	}
}
