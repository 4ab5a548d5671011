package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// The cache gives CompileSchema's verdicts, compiles each schema once even
// when asked concurrently, and keeps at most its bound.
func TestSchemaCache(t *testing.T) {
	c := NewSchemaCache(4)
	good := json.RawMessage(`{"type":"object"}`)
	bad := json.RawMessage(`{"type":5}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := c.Compile(good); err != nil {
				t.Errorf("good: %v", err)
			}
			if err := c.Compile(bad); err == nil || err.Error() != CompileSchema(bad).Error() {
				t.Errorf("bad: %v", err)
			}
		})
	}
	wg.Wait()
	if c.Len() != 2 || c.Compilations() != 2 {
		t.Fatalf("%d verdicts, %d compilations for two schemas", c.Len(), c.Compilations())
	}
	for i := range 10 {
		c.Compile(json.RawMessage(fmt.Sprintf(`{"title":"%d"}`, i)))
	}
	if c.Len() != 4 {
		t.Fatalf("%d verdicts, bound 4", c.Len())
	}
}

// A discovery against a warm cache compiles nothing: the verdicts of an
// unchanged catalog are all there.
func TestValidateToolsReusesVerdicts(t *testing.T) {
	in := []DescribedTool{
		described("a", `{"type":"object","properties":{"q":{"type":"string"}}}`),
		described("b", `{"type":"object","properties":{"n":{"type":"integer"}}}`),
		described("c", `{"type":5}`),
	}
	c := NewSchemaCache(16)
	tools, diags := ValidateTools(in, c)
	if len(tools) != 2 || len(diags) != 1 || c.Len() != 3 {
		t.Fatalf("%d tools, %d diagnostics, %d verdicts", len(tools), len(diags), c.Len())
	}
	again, againDiags := ValidateTools(in, c)
	if n := c.Compilations(); n != 3 {
		t.Fatalf("%d compilations for three schemas validated twice", n)
	}
	if !reflect.DeepEqual(again, tools) || !reflect.DeepEqual(againDiags, diags) {
		t.Fatal("the cached verdicts changed the result")
	}
}
