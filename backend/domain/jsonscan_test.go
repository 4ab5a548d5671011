package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestDepthOver(t *testing.T) {
	for _, c := range []struct {
		raw   string
		limit int
		over  bool
	}{
		{`{}`, 1, false},
		{`{"a":{}}`, 1, true},
		{`{"a":"{{{{"}`, 1, false},
		{`{"a":"\"{{"}`, 1, false},
		{`[[1],[2]]`, 2, false},
		{strings.Repeat("[", 20000), 16, true},
	} {
		if got := DepthOver([]byte(c.raw), c.limit); got != c.over {
			t.Errorf("DepthOver(%.40s, %d) = %v", c.raw, c.limit, got)
		}
	}
}

func TestMembers(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, c := range []struct {
		raw  string
		want map[string]string // nil: not an object
	}{
		{`{}`, map[string]string{}},
		{` { "id" : 7 , "method":"x\"y", "params":{"a":[1,{"b":"}"}]}, "n":null } `,
			map[string]string{"id": "7", "method": `"x\"y"`, "params": `{"a":[1,{"b":"}"}]}`, "n": "null"}},
		{`{"params":` + deep + `,"id":"q"}`, map[string]string{"params": deep, "id": `"q"`}},
		{`{"a":1,"a":2}`, map[string]string{"a": "2"}},
		{`[1]`, nil},
		{`{"a"}`, nil},
		{`{"a":1`, nil},
		{`{"a":1 "b":2}`, nil},
		{`{1:2}`, nil},
	} {
		m, ok := Members([]byte(c.raw))
		if ok != (c.want != nil) {
			t.Errorf("Members(%.60s): ok %v", c.raw, ok)
			continue
		}
		got := map[string]string{}
		for k, v := range m {
			got[k] = string(v)
		}
		if ok && !maps.Equal(got, c.want) {
			t.Errorf("Members(%.60s) = %v (%v)", c.raw, slices.Collect(maps.Keys(got)), got)
		}
		for k, v := range m {
			if k != "params" && !json.Valid(v) {
				t.Errorf("member %s: %s", k, v)
			}
		}
	}
}

func TestElements(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string // nil: not an array
	}{
		{`[]`, []string{}},
		{` [ {"uri":5} , "a,]" ,[1,[2]], null ] `, []string{`{"uri":5}`, `"a,]"`, `[1,[2]]`, `null`}},
		{`[1,]`, nil},
		{`[1 2]`, nil},
		{`{"a":1}`, nil},
	} {
		els, ok := Elements([]byte(c.raw))
		if ok != (c.want != nil) {
			t.Errorf("Elements(%s): ok %v", c.raw, ok)
			continue
		}
		got := []string{}
		for _, e := range els {
			got = append(got, string(e))
		}
		if ok && !slices.Equal(got, c.want) {
			t.Errorf("Elements(%s) = %q", c.raw, got)
		}
	}
}
