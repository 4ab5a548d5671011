// Package jsonwords names JSON kinds and what Go types accept in JSON's
// words, for decoding errors a person reads ("expected a string, got a
// number"), never in Go's ("Go string", "map[string]string").
package jsonwords

import (
	"reflect"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Expected names what a value of type t must be in JSON.
func Expected(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an unsigned integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a JSON value"
}

// Kind names a JSON kind: "null", "a boolean", "a number", …; bare drops
// the article ("number").
func Kind(k jsontext.Kind, bare bool) string {
	var w string
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		w = "a boolean"
	case '"':
		w = "a string"
	case '0':
		w = "a number"
	case '{':
		w = "an object"
	case '[':
		w = "an array"
	default:
		return "invalid JSON"
	}
	if bare {
		_, w, _ = strings.Cut(w, " ")
	}
	return w
}
