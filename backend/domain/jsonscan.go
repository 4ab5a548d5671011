package domain

import (
	"bytes"
	"encoding/json"
)

// What a server sends is read by decoders that recurse (encoding/json,
// go-sdk's, a schema library): a value nested thousands deep fails them
// part way, or takes them long. These scans walk the bytes once, in a
// loop, so a bound can be checked before anything recursive touches the
// value.

// DepthOver reports whether raw nests arrays and objects more than limit
// deep. It stops at the first byte beyond the limit and does not validate
// the rest.
func DepthOver(raw []byte, limit int) bool {
	depth, str := 0, jsonStrings{}
	for _, b := range raw {
		switch {
		case str.within(b):
		case b == '{' || b == '[':
			if depth++; depth > limit {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

// Members splits a JSON object into its members' raw values without
// decoding them (a repeated name keeps its last value, as encoding/json
// does); ok is false when raw is not an object as far as the split can
// tell. The values are slices of raw, whatever their depth: a caller
// decodes the small ones it needs and bounds the others first.
func Members(raw []byte) (members map[string]json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false
	}
	members = map[string]json.RawMessage{}
	i := skipSpace(raw, 1)
	if raw[i] == '}' {
		return members, i == len(raw)-1
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 || raw[i] != '"' {
			return nil, false
		}
		var name string
		if json.Unmarshal(raw[i:end], &name) != nil {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end = valueEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		members[name] = raw[i:end]
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case '}':
			return members, i == len(raw)-1
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return nil, false
		}
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at raw[i]
// (a string, an array or object by bracket matching, or a scalar up to the
// next delimiter), or -1 when it does not end within raw.
func valueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	depth, str := 0, jsonStrings{}
	for j := i; j < len(raw); j++ {
		b := raw[j]
		switch {
		case str.within(b):
			if !str.in && depth == 0 {
				return j + 1 // a string ended
			}
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			if depth == 0 {
				return valueOrNone(i, j) // a scalar ended by its container's close
			}
			if depth--; depth == 0 {
				return j + 1
			}
		case depth == 0 && (b == ',' || b == ':' || b == ' ' || b == '\t' || b == '\n' || b == '\r'):
			return valueOrNone(i, j)
		}
	}
	if depth == 0 && !str.in && raw[i] != '"' {
		return len(raw)
	}
	return -1
}

// jsonStrings follows the strings of JSON text byte by byte.
type jsonStrings struct{ in, escaped bool }

// within reports whether b belongs to a string (its quotes included),
// and follows it.
func (s *jsonStrings) within(b byte) bool {
	switch {
	case s.escaped:
		s.escaped = false
	case s.in && b == '\\':
		s.escaped = true
	case b == '"':
		s.in = !s.in
	default:
		return s.in
	}
	return true
}

// Elements splits a JSON array into its elements' raw values without
// decoding them, as Members splits an object; ok is false when raw is not
// an array as far as the split can tell.
func Elements(raw []byte) (elements []json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	elements = []json.RawMessage{}
	i := skipSpace(raw, 1)
	if raw[i] == ']' {
		return elements, i == len(raw)-1
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		elements = append(elements, raw[i:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ']':
			return elements, i == len(raw)-1
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return nil, false
		}
	}
}

// valueOrNone is end, or -1 when the value from i to end is empty.
func valueOrNone(i, end int) int {
	if end == i {
		return -1
	}
	return end
}
