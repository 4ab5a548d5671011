package domain

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Tool search (issue 31): a BM25F ranking over what a tool says of itself.
// No model and no network: the index is plain term statistics, built once
// per catalog change and read by every query.
//
// Fields and their weights. A tool's name is the strongest signal (it is
// what the server chose to call the action), its title next; the first
// sentence of a description usually says what the tool does, the rest
// tends to be usage notes, caveats and examples, which match many
// unrelated queries, so it weighs less. Parameter names say what the tool
// acts on ("path", "url", "issue_number"); their descriptions are the
// weakest text.
const (
	weightName      = 3.0
	weightTitle     = 2.0
	weightLead      = 1.5
	weightRest      = 0.5
	weightParamName = 1.0
	weightParamDesc = 0.4

	bm25K1 = 1.2
	bm25B  = 0.75
)

type searchField int

const (
	fieldName searchField = iota
	fieldTitle
	fieldLead
	fieldRest
	fieldParamName
	fieldParamDesc
	fieldCount
)

var fieldWeights = [fieldCount]float64{weightName, weightTitle, weightLead, weightRest, weightParamName, weightParamDesc}

// SearchParam is one input parameter of a tool, as the search sees it.
type SearchParam struct {
	Name        string
	Description string
}

// SearchDoc is the text of one tool that the index ranks.
type SearchDoc struct {
	Name        string
	Title       string
	Description string
	Params      []SearchParam
}

// SearchDocOf takes the searchable text of a catalog tool.
func SearchDocOf(t Tool) SearchDoc {
	d := SearchDoc{Name: t.NativeName, Params: SearchParamsOf(t.InputSchema)}
	if t.Title != nil {
		d.Title = *t.Title
	}
	if t.Description != nil {
		d.Description = *t.Description
	}
	return d
}

// SearchParamsOf lists the top-level properties of an input schema in name
// order; a schema that is not an object with properties has none.
func SearchParamsOf(schema json.RawMessage) []SearchParam {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]SearchParam, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, SearchParam{Name: name, Description: p.Description})
	}
	slices.SortFunc(out, func(a, b SearchParam) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ToolIndex is an immutable BM25F index over a list of tools; it is safe
// for concurrent queries. Build a new one when the list changes.
type ToolIndex struct {
	n        int
	lengths  [][fieldCount]float64 // per doc, per field token count
	avgLen   [fieldCount]float64
	postings map[string][]posting
}

type posting struct {
	doc int
	tf  [fieldCount]float32
}

// BuildToolIndex indexes docs; hits name docs by their position.
func BuildToolIndex(docs []SearchDoc) *ToolIndex {
	ix := &ToolIndex{n: len(docs), lengths: make([][fieldCount]float64, len(docs)), postings: map[string][]posting{}}
	var tf map[string]*[fieldCount]float32
	for i, d := range docs {
		tf = map[string]*[fieldCount]float32{}
		add := func(f searchField, text string) {
			for _, t := range SearchTerms(text) {
				c := tf[t]
				if c == nil {
					c = new([fieldCount]float32)
					tf[t] = c
				}
				c[f]++
				ix.lengths[i][f]++
			}
		}
		add(fieldName, d.Name)
		add(fieldTitle, d.Title)
		lead, rest := splitLead(d.Description)
		add(fieldLead, lead)
		add(fieldRest, rest)
		for _, p := range d.Params {
			add(fieldParamName, p.Name)
			add(fieldParamDesc, p.Description)
		}
		for t, c := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: i, tf: *c})
		}
	}
	if ix.n > 0 {
		for _, l := range ix.lengths {
			for f := range fieldCount {
				ix.avgLen[f] += l[f]
			}
		}
		for f := range fieldCount {
			ix.avgLen[f] /= float64(ix.n)
		}
	}
	return ix
}

// Len is the number of indexed tools.
func (ix *ToolIndex) Len() int { return ix.n }

// SearchHit is one ranked tool: its position in the indexed list and its score.
type SearchHit struct {
	Doc   int
	Score float64
}

// Search ranks the tools that keep allows (nil: all) for query and returns
// at most limit hits with a positive score, best first; ties go to the
// earlier tool, so the order is stable.
func (ix *ToolIndex) Search(query string, limit int, keep func(doc int) bool) []SearchHit {
	terms := expandQuery(SearchTerms(query))
	slices.Sort(terms)
	terms = slices.Compact(terms)
	scores := map[int]float64{}
	for _, t := range terms {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (float64(ix.n)-df+0.5)/(df+0.5))
		for _, p := range ps {
			if keep != nil && !keep(p.doc) {
				continue
			}
			var w float64
			for f := range fieldCount {
				if p.tf[f] == 0 {
					continue
				}
				norm := 1.0
				if ix.avgLen[f] > 0 {
					norm = 1 - bm25B + bm25B*ix.lengths[p.doc][f]/ix.avgLen[f]
				}
				w += fieldWeights[f] * float64(p.tf[f]) / norm
			}
			scores[p.doc] += idf * w / (bm25K1 + w)
		}
	}
	hits := make([]SearchHit, 0, len(scores))
	for d, s := range scores {
		hits = append(hits, SearchHit{Doc: d, Score: s})
	}
	slices.SortFunc(hits, func(a, b SearchHit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return a.Doc - b.Doc
	})
	if limit >= 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// splitLead cuts a description after its first sentence: a period,
// question or exclamation mark followed by white space, or a blank line.
func splitLead(s string) (lead, rest string) {
	for i := 0; i < len(s)-1; i++ {
		c := s[i]
		if (c == '.' || c == '!' || c == '?') && unicode.IsSpace(rune(s[i+1])) || c == '\n' && s[i+1] == '\n' {
			return s[:i+1], s[i+1:]
		}
	}
	return s, ""
}

// SearchTerms normalises text into index terms: split on anything that is
// not a letter or digit and at camelCase boundaries, lower-cased, English
// stop words dropped, suffixes folded by Stem. A camelCase word is also
// kept whole ("GitHub" gives git, hub and github), so a query meets it
// written either way.
func SearchTerms(text string) []string {
	var out []string
	add := func(w string) {
		w = strings.ToLower(w)
		if !stopWords[w] {
			out = append(out, Stem(w))
		}
	}
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		parts := splitWords(run)
		for _, w := range parts {
			add(w)
		}
		if len(parts) > 1 {
			add(run)
		}
	}
	return out
}

// splitWords splits on non-alphanumerics ("_", "-", ".", spaces) and at
// camelCase boundaries: "getHTTPResponse" → get, HTTP, Response.
func splitWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
			start = i
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return words
}

// Stem folds common English suffixes so that "files", "listing", "listed"
// and "list" meet. It is deliberately small (a light s-stemmer plus -ing,
// -ed, -ly, -ies, and a final "e" dropped so "create", "created" and
// "creating" meet): aggressive stemming merges unrelated tool verbs.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	w = stripSuffix(w)
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func stripSuffix(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		return undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		return undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ly") && len(w) > 4:
		return w[:len(w)-2]
	case strings.HasSuffix(w, "es") && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes")):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant left by -ing/-ed ("running",
// "stopped"), but not l or s ("installed", "passed").
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or of to in on for with by from at as is are be been was were it its this that these those
		i me my we our you your he she they them their can could would should will shall may might do does did please want need
		some any all into onto about which what who how when where there here so if then than also just via using use`) {
		m[w] = true
	}
	return m
}()

// querySynonyms widen a query with the words tool authors use for what
// users say: general English computing vocabulary, not any one tool's
// name (a request's own words are kept too). Keys and values are terms
// (stemmed).
var querySynonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range []string{
		"folder directory", "dir directory", "remove delete", "forget delete", "erase delete", "drop delete",
		"make create", "new create", "go navigate", "visit navigate", "show get list read", "display get list read",
		"find search", "rename move", "modify edit update", "change edit update", "fetch get",
		"enter type", "picture image", "photo image",
	} {
		f := strings.Fields(line)
		k := Stem(f[0])
		for _, v := range f[1:] {
			m[k] = append(m[k], Stem(v))
		}
	}
	return m
}()

func expandQuery(terms []string) []string {
	out := terms
	for _, t := range terms {
		out = append(out, querySynonyms[t]...)
	}
	return out
}
