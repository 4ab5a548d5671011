package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestElicitSchemaChecksAnswers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","minLength":2,"maxLength":8},
		"email":{"type":"string","format":"email"},
		"site":{"type":"string","format":"uri"},
		"day":{"type":"string","format":"date"},
		"at":{"type":"string","format":"date-time"},
		"age":{"type":"integer","minimum":0,"maximum":150},
		"score":{"type":"number","maximum":9.5},
		"ok":{"type":"boolean"},
		"color":{"type":"string","enum":["red","green"]},
		"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"maxItems":2},
		"picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}
	},"required":["name"]}`)
	s, err := ParseElicitSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		content string
		want    string // a part of the error, "" for none
	}{
		{`{"name":"octo"}`, ""},
		{`{"name":"octo","email":"a@b.example","site":"https://x.example/","day":"2026-12-01","at":"2026-12-01T08:00:00Z","age":30,"score":9.5,"ok":true,"color":"red","size":"l","tags":["a","c"],"picks":["x"]}`, ""},
		{`{"name":"octo","age":9007199254740993}`, "at most 150"},
		{`{}`, "name is required"},
		{`{"name":null}`, "name is required"},
		{`{"name":"o"}`, "at least 2 characters"},
		{`{"name":"octocat-long"}`, "at most 8 characters"},
		{`{"name":"octo","email":"not an address"}`, "e-mail"},
		{`{"name":"octo","site":"/relative"}`, "absolute URI"},
		{`{"name":"octo","day":"01/12/2026"}`, "YYYY-MM-DD"},
		{`{"name":"octo","at":"tomorrow"}`, "RFC 3339"},
		{`{"name":"octo","age":1.5}`, "whole number"},
		{`{"name":"octo","age":-1}`, "at least 0"},
		{`{"name":"octo","score":"high"}`, "expected a number"},
		{`{"name":"octo","ok":"yes"}`, "true or false"},
		{`{"name":"octo","color":"blue"}`, "not one of the options"},
		{`{"name":"octo","size":"m"}`, "not one of the options"},
		{`{"name":"octo","tags":["a","b","c"]}`, "at most 2"},
		{`{"name":"octo","tags":["z"]}`, "not one of the options"},
		{`{"name":"octo","extra":1}`, "not a field"},
		{`[1]`, "not an object"},
		{`"x"`, "not an object"},
	} {
		err := s.Check(json.RawMessage(tt.content))
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Check(%s) = %v, want %q", tt.content, err, tt.want)
		}
	}
}

func TestParseElicitSchemaRefusesWhatAFormCannotBe(t *testing.T) {
	for _, raw := range []string{
		`{"type":"array"}`,
		`{"type":"object","properties":{"x":{"type":"object"}}}`,
		`{"type":"object","properties":{"x":{"type":"string","format":"ipv4"}}}`,
		`{"type":"object","properties":{"x":{"type":"array","items":{"type":"integer"}}}}`,
		`{"type":"object","properties":{"x":{"type":"string"}},"required":["y"]}`,
		`not json`,
	} {
		if _, err := ParseElicitSchema(json.RawMessage(raw)); err == nil {
			t.Errorf("ParseElicitSchema(%s) accepted it", raw)
		}
	}
}

// A question beyond the bounds is refused before anything recursive reads
// it, saying which bound; the deepest form of the specification's subset
// and one of 60 fields are within them.
func TestElicitBounds(t *testing.T) {
	deepest := `{"type":"object","properties":{"m":{"type":"array","items":{"type":"string","anyOf":[{"const":"a","title":"A"}]}}}}`
	if _, err := ParseElicitSchema(json.RawMessage(deepest)); err != nil {
		t.Fatalf("the deepest form: %v", err)
	}
	var fields []string
	for i := range 60 {
		fields = append(fields, fmt.Sprintf(`"field%02d":{"type":"string","title":"Field %d","description":"%s"}`, i, i, strings.Repeat("d", 100)))
	}
	if _, err := ParseElicitSchema(json.RawMessage(`{"type":"object","properties":{` + strings.Join(fields, ",") + `}}`)); err != nil {
		t.Fatalf("60 fields: %v", err)
	}
	for _, c := range []struct{ raw, want string }{
		{strings.Repeat(`{"type":"object","properties":{"a":`, 1000) + `{}` + strings.Repeat(`}}`, 1000), "levels deep"},
		{`{"type":"object","properties":{},"title":"` + strings.Repeat("x", MaxElicitParamsBytes) + `"}`, "larger than 64 KiB"},
	} {
		if _, err := ParseElicitSchema(json.RawMessage(c.raw)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseElicitSchema(%.40s…) = %v, want %q", c.raw, err, c.want)
		}
	}
}
