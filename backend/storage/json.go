package storage

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
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
// pointer (serde's Option), and each of required, the names of v's members
// without a default, must be present. more are the unmarshalers of values
// that need more checks than their Go type gives (enums).
func unmarshalStrict(data []byte, v any, required []string, more ...*json.Unmarshalers) error {
	present := map[string]bool{}
	strict := json.UnmarshalFromFunc(func(dec *jsontext.Decoder, dst any) error {
		if dec.StackDepth() == 1 {
			present[dec.StackPointer().LastToken()] = true
		}
		if dec.PeekKind() == 'n' && reflect.TypeOf(dst).Elem().Kind() != reflect.Pointer {
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
	for _, name := range required {
		if !present[name] {
			return fmt.Errorf("missing field `%s`", name)
		}
	}
	return nil
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
	}
	msg := err.Error()
	for _, prefix := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}
