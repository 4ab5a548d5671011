package gateway

import (
	"encoding/json"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// FuzzProjectRaw: whatever a server answers, projection never panics, every
// known response says what it is, and text blocks and diagnostics point at
// real content indexes.
func FuzzProjectRaw(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA","mimeType":"image/png"}],"isError":true}`,
		`{"content":[],"structuredContent":{"b":1,"a":[1,2,{"c":null}]},"_meta":{"x":1}}`,
		`{"resultType":"input_required"}`, `{"task":{}}`, `[]`, `null`, `{"content":[5,"x",null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		o, ok := projectRaw(raw)
		if !ok || o.Outcome != domain.OutcomeKnownResponse {
			t.Fatalf("%s: %+v", raw, o)
		}
		set := 0
		for _, p := range []bool{o.Result != nil, o.ServerError != nil, o.Unsupported != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Fatalf("%s: %d responses set", raw, set)
		}
		if o.Result == nil {
			return
		}
		var r struct{ Content []json.RawMessage }
		json.Unmarshal(raw, &r)
		for _, b := range o.Result.TextBlocks {
			if b.Index < 0 || b.Index >= len(r.Content) {
				t.Fatalf("text block index %d of %d", b.Index, len(r.Content))
			}
		}
		for _, d := range o.Result.Diagnostics {
			if d.ContentIndex != nil && (*d.ContentIndex < 0 || *d.ContentIndex >= len(r.Content)) {
				t.Fatalf("diagnostic index %d of %d", *d.ContentIndex, len(r.Content))
			}
		}
		if o.Result.StructuredJSON != nil && !json.Valid([]byte(*o.Result.StructuredJSON)) {
			t.Fatalf("structuredJson is not JSON: %s", *o.Result.StructuredJSON)
		}
	})
}
