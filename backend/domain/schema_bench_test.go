package domain

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
)

// nestedSchema is an object schema whose properties nest depth levels
// (two JSON levels each: the schema and its properties), ending in leaf.
func nestedSchema(depth int, leaf string) []byte {
	return []byte(strings.Repeat(`{"type":"object","properties":{"a":`, depth) + leaf + strings.Repeat(`}}`, depth))
}

// BenchmarkSchemaDepth: checking a tool's schema against the time to
// decode it, as its properties nest deeper. "plain" uses only keywords
// schemafast.go judges; "pattern" has a regular expression at the leaf, so
// the JSON Schema library compiles it. The library's metaschema validation
// grows faster than the square of the nesting (it rebuilds the instance
// path at every level): 1,000 levels of properties took 20 s of CPU.
// CompileSchema refuses a schema nested deeper than MaxSchemaDepth as soon
// as it has scanned its bytes (depth 100 and 1,000 here).
func BenchmarkSchemaDepth(b *testing.B) {
	for _, shape := range []struct{ name, leaf string }{
		{"plain", `{"type":"string"}`},
		{"pattern", `{"type":"string","pattern":"^a"}`},
	} {
		for _, depth := range []int{10, 30, 100, 1000} {
			raw := nestedSchema(depth, shape.leaf)
			b.Run(fmt.Sprintf("%s/depth=%d", shape.name, depth), func(b *testing.B) {
				benchpair.Run(b, "decode", func() error {
					_ = CompileSchema(raw) // a verdict either way; its time is what is measured
					return nil
				}, func() error {
					_, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
					return err
				})
			})
		}
	}
}
