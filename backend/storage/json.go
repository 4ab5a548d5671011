package storage

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/jsonwords"
)

// Upstream reads its files with serde (deny_unknown_fields) and writes them
// with serde_json's pretty printer. go-json-experiment/json already decodes
// as strictly in most respects: names match case-sensitively, a repeated
// name (in a struct or a map) and invalid UTF-8 or lone surrogates are
// syntax errors, a value of the wrong type is an error, and so is anything
// after the value. unmarshalStrict adds the rest of serde's rules.

// prettyOptions make json.Marshal write serde_json::to_vec_pretty's bytes:
// two-space indent, "key": value, {} for an empty object, no final
// newline, only '"', '\\' and C0 controls escaped (\u001f in lowercase),
// and map keys sorted by bytes, as a BTreeMap<String, _> is.
var prettyOptions = json.JoinOptions(
	jsontext.WithIndent("  "),
	jsontext.EscapeForHTML(false),
	jsontext.EscapeForJS(false),
	json.Deterministic(true),
)

// marshalPretty writes v as upstream does. A string that is not UTF-8 (a
// Rust string cannot hold one) fails.
func marshalPretty(v any) ([]byte, error) {
	b, err := json.Marshal(v, prettyOptions)
	if err != nil {
		return nil, errors.New(describe(err))
	}
	return b, nil
}

// unmarshalStrict decodes data, one JSON value, into v as a serde struct
// with deny_unknown_fields would: in addition to the library's checks, a
// member unknown at any level fails, null is accepted only where v has a
// pointer (serde's Option), and each of required, the members without a
// default, must be present. A required member is a JSON pointer in which
// "*" stands for every element of an array ("/catalog/tools/*/nativeName"),
// listed after its parent. more are the unmarshalers of values that need
// more checks than their Go type gives (enums).
func unmarshalStrict(data []byte, v any, required []string, more ...*json.Unmarshalers) error {
	present := map[string]bool{}
	strict := json.UnmarshalFromFunc(func(dec *jsontext.Decoder, dst any) error {
		present[nextPointer(dec)] = true
		if dec.PeekKind() == 'n' && reflect.TypeOf(dst).Elem().Kind() != reflect.Pointer {
			// PeekKind looks at one byte: "nul" and "not json" are
			// syntax errors, not nulls.
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
			return reasonError("invalid type: null")
		}
		return json.SkipFunc
	})
	err := json.Unmarshal(data, v,
		json.RejectUnknownMembers(true),
		json.WithUnmarshalers(json.JoinUnmarshalers(append([]*json.Unmarshalers{strict}, more...)...)))
	if err != nil {
		return errors.New(describe(err))
	}
	for _, pattern := range required {
		if err := checkPresent(present, "", strings.Split(pattern, "/")[1:]); err != nil {
			return err
		}
	}
	return nil
}

// nextPointer returns the JSON pointer of the value dec is about to read.
// StackPointer names the last value read: in an object the member whose
// name was just read, but in an array the element before this one.
func nextPointer(dec *jsontext.Decoder) string {
	p := dec.StackPointer()
	kind, n := dec.StackIndex(dec.StackDepth())
	if kind != '[' {
		return string(p)
	}
	if n > 0 {
		p = p.Parent()
	}
	return string(p) + "/" + strconv.FormatInt(n, 10)
}

// checkPresent reports the first member of the pattern tokens, below the
// value at, that was not decoded: "missing field `x`", with where it is
// missing unless that is the top level. Parents are present, or reported
// missing by an earlier pattern.
func checkPresent(present map[string]bool, at string, tokens []string) error {
	if len(tokens) == 0 {
		return nil
	}
	if tokens[0] == "*" {
		for i := 0; ; i++ {
			elem := at + "/" + strconv.Itoa(i)
			if !present[elem] {
				return nil
			}
			if err := checkPresent(present, elem, tokens[1:]); err != nil {
				return err
			}
		}
	}
	next := at + "/" + tokens[0]
	if !present[next] {
		if at == "" {
			return fmt.Errorf("missing field `%s`", tokens[0])
		}
		return fmt.Errorf("missing field `%s` at %s", tokens[0], at)
	}
	return checkPresent(present, next, tokens[1:])
}

// variant is the unmarshaler of an enum T, a string that parse accepts. A
// string it rejects fails decoding, as an unknown serde variant does.
func variant[T ~string](parse func(string) (T, error)) *json.Unmarshalers {
	return json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *T) error {
		var s string
		if err := json.UnmarshalDecode(dec, &s); err != nil {
			return err
		}
		p, err := parse(s)
		if e, ok := errors.AsType[*domain.Error](err); ok {
			return reasonError(e.Detail) // "unknown state `x`, expected ..."
		}
		*v = p
		return err
	})
}

// reasonError is a decoding failure in words of its own, to be printed
// with where it happened rather than with Go types.
type reasonError string

func (e reasonError) Error() string { return string(e) }

// describe turns a decoding error into a reason naming where the input is
// wrong, without the library's package prefix:
// "unknown field `x` at /toolDescriptionOverrides/s/x",
// "invalid type: null at /kind",
// "duplicate object member name \"a\" within \"/headers\" after offset 40".
func describe(err error) string {
	if se, ok := errors.AsType[*json.SemanticError](err); ok {
		at := ""
		if se.JSONPointer != "" {
			at = " at " + string(se.JSONPointer)
		}
		if errors.Is(se.Err, json.ErrUnknownName) {
			return fmt.Sprintf("unknown field `%s`%s", se.JSONPointer.LastToken(), at)
		}
		if r, ok := errors.AsType[reasonError](se.Err); ok {
			return string(r) + at
		}
		// serde's words for a value of the wrong type or out of range,
		// never Go's types.
		if se.Err == nil && se.JSONKind != 0 && se.GoType != nil {
			return fmt.Sprintf("invalid type: %s, expected %s%s", jsonwords.Kind(se.JSONKind, true), jsonwords.Expected(se.GoType), at)
		}
		if se.JSONKind == '0' && len(se.JSONValue) > 0 && se.GoType != nil {
			return fmt.Sprintf("invalid value: %s, expected %s%s", se.JSONValue, jsonwords.Expected(se.GoType), at)
		}
	}
	msg := err.Error()
	for _, prefix := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}
