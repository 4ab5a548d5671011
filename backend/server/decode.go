package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/internal/jsonwords"
	"github.com/ttmcp/ttmcp/jsapi"
)

// An invoke frame has two layers, and a failure in each costs a different
// amount (DECISIONS "Wire protocol"):
//
//   - the envelope, the members type and id: until they are read there is
//     no request to answer, so a frame whose envelope cannot be read closes
//     the socket (1008);
//   - everything else, args above all: once the envelope is read, any
//     failure is that request's BadRequest result (mcp.dto_invalid, naming
//     where and why), and the socket and its other requests carry on. A
//     missing, repeated or unreadable command is such a failure too: the
//     id says whom to answer.
//
// So the frame is read leniently (repeated names and broken strings pass
// through as raw bytes) and only the envelope's members are checked here;
// args are decoded strictly by their command, which reports the failure.

// invokeFrame is a readable invoke frame. err is the request's own failure
// (a repeated or unknown member, broken JSON after the envelope), to be
// answered for id instead of running the command.
type invokeFrame struct {
	id      uint64
	command string
	args    jsontext.Value
	// progress: the page takes the progress of the call this command
	// makes ("progress":true, issue 29): progress frames with the invoke's
	// id until its result.
	progress bool
	err      error
}

// envelopeError says why a frame's envelope cannot be read.
type envelopeError string

func (e envelopeError) Error() string { return string(e) }

// parseInvoke reads an invoke frame. A non-nil error means the envelope is
// unreadable and the socket must close.
func parseInvoke(data []byte) (invokeFrame, error) {
	var f invokeFrame
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return f, envelopeError("not a JSON object")
	}
	var typ string
	seen := map[string]bool{}
	envelope := func() bool { return seen["type"] && seen["id"] }
	fail := func(msg string) {
		if f.err == nil {
			f.err = dtoError(msg)
		}
	}
	// broken ends the frame early: the request's error if the envelope
	// was read, else the socket's.
	broken := func(err error, what string) (invokeFrame, error) {
		if !envelope() || typ != jsapi.FrameInvoke {
			return f, envelopeError(what)
		}
		f.err = dtoError(describeFrameError(err))
		return f, nil
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return broken(err, "broken JSON")
		}
		name := tok.String()
		value, err := dec.ReadValue()
		if err != nil {
			return broken(err, "broken JSON")
		}
		dup := seen[name]
		seen[name] = true
		switch name {
		case "type":
			if dup || value.Kind() != '"' || json.Unmarshal(value, &typ) != nil {
				return f, envelopeError("type is not one string")
			}
		case "command":
			if dup || value.Kind() != '"' || json.Unmarshal(value, &f.command) != nil {
				f.command = ""
				fail("command is not one string")
			}
		case "id":
			id, ok := parseID(value)
			if dup || !ok {
				return f, envelopeError("id is not one unsigned integer")
			}
			f.id = id
		case "args":
			if dup {
				fail(`duplicate member "args" in the invoke frame`)
			}
			f.args = bytes.Clone(value) // value lives in the decoder's buffer
		case "progress":
			if dup || value.Kind() != 't' && value.Kind() != 'f' {
				fail(`"progress" in the invoke frame is not one boolean`)
			}
			f.progress = value.Kind() == 't'
		default:
			fail(fmt.Sprintf("unknown member %q in the invoke frame", name))
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return broken(err, "broken JSON")
	}
	if typ != jsapi.FrameInvoke {
		return f, envelopeError("type is not " + strconv.Quote(jsapi.FrameInvoke))
	}
	if !envelope() {
		return f, envelopeError("type and id are required")
	}
	if !seen["command"] {
		fail("the invoke frame has no command")
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		fail("unexpected data after the invoke frame")
	}
	return f, nil
}

// parseID accepts what the shim sends: a JSON integer, no sign, fraction
// or exponent.
func parseID(v jsontext.Value) (uint64, bool) {
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// dtoError is a request's decoding failure.
func dtoError(msg string) error {
	return errorf(jsapi.KindBadRequest, jsapi.CodeArgsInvalid, "%s", msg)
}

// describeFrameError describes a syntax error found while reading the
// frame, with its pointer relative to args (as the commands' errors are).
func describeFrameError(err error) string {
	if se, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return syntaxMessage(strings.TrimPrefix(string(se.JSONPointer), "/args"), se, nil)
	}
	return "broken JSON: " + trimPrefixes(err.Error())
}

// decodeArgs decodes data, the args of a command or a part of them at
// prefix (a JSON pointer), into v as strictly as serde would: unknown,
// repeated or mis-cased members, a value of the wrong type, null where v
// has no pointer (serde's Option), invalid UTF-8, a lone surrogate escape
// and trailing data all fail, with a message naming where and why.
func decodeArgs(data jsontext.Value, v any, prefix string) error {
	err := json.Unmarshal(data, v, json.RejectUnknownMembers(true), json.WithUnmarshalers(rejectNull))
	if err != nil {
		return dtoError(describeArgsError(err, data, prefix))
	}
	if ptr, name, ok := missingMember(data, reflect.TypeOf(v), prefix); ok {
		return dtoError(where(ptr) + ": missing field " + strconv.Quote(name))
	}
	return nil
}

// missingMember finds a member that serde would require and data lacks.
// A struct's members are required unless their Go type is a pointer (an
// Option upstream) or they are tagged `dto:"optional"` (upstream's
// #[serde(default)]); members that are objects are checked in turn. The
// decoder alone would take an absent member as its zero value, so an
// update without headers would clear them, and a call without
// argumentsJson would send {}.
func missingMember(data jsontext.Value, t reflect.Type, ptr string) (at, name string, missing bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || nullable(t) || data.Kind() != '{' {
		return "", "", false
	}
	present := map[string]jsontext.Value{}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	dec.ReadToken() // {
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", "", false // decoded already: cannot happen
		}
		name := tok.String() // before the next read voids tok
		value, err := dec.ReadValue()
		if err != nil {
			return "", "", false
		}
		present[name] = value
	}
	for i := range t.NumField() {
		f := t.Field(i)
		member, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || member == "-" {
			continue
		}
		if member == "" {
			member = f.Name
		}
		value, ok := present[member]
		if !ok {
			if f.Type.Kind() != reflect.Pointer && f.Tag.Get("dto") != "optional" {
				return ptr, member, true
			}
			continue
		}
		if at, name, missing := missingMember(value, f.Type, ptr+"/"+member); missing {
			return at, name, true
		}
	}
	return "", "", false
}

// rejectNull refuses null for every value that cannot hold it: serde
// accepts null only for an Option.
var rejectNull = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, dst any) error {
	// PeekKind looks at one byte: "nul" is a syntax error, not a null.
	t := reflect.TypeOf(dst).Elem()
	if dec.PeekKind() != 'n' || nullable(t) {
		return json.SkipFunc
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return nullError{t}
})

// nullError is a null where a value of type t is required.
type nullError struct{ t reflect.Type }

func (e nullError) Error() string { return "expected " + jsonwords.Expected(e.t) + ", got null" }

var (
	rawValueType   = reflect.TypeFor[jsontext.Value]()
	unmarshalerV1  = reflect.TypeFor[json.Unmarshaler]()
	unmarshalerV2  = reflect.TypeFor[json.UnmarshalerFrom]()
	unmarshalerRaw = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
)

// nullable reports whether a value of type t may be decoded from null: a
// pointer, an interface, a raw JSON value, or a type that decodes itself.
func nullable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		return true
	}
	p := reflect.PointerTo(t)
	return t == rawValueType || p.Implements(unmarshalerV1) || p.Implements(unmarshalerV2) || p.Implements(unmarshalerRaw)
}

// describeArgsError turns a decoding error of data into "<where>: <why>",
// in the page's words: JSON kinds, never Go types, never "<nil>".
func describeArgsError(err error, data []byte, prefix string) string {
	if se, ok := errors.AsType[*json.SemanticError](err); ok {
		ptr := prefix + string(se.JSONPointer)
		switch {
		case errors.Is(se.Err, json.ErrUnknownName):
			return where(string(jsontext.Pointer(ptr).Parent())) + ": unknown field " + strconv.Quote(se.JSONPointer.LastToken())
		case errors.As(se.Err, new(nullError)):
			return where(ptr) + ": " + se.Err.Error()
		case se.Err == nil && se.JSONKind != 0 && se.GoType != nil:
			return where(ptr) + ": expected " + jsonwords.Expected(se.GoType) + ", got " + jsonwords.Kind(se.JSONKind, false)
		case se.Err != nil:
			if syn, ok := errors.AsType[*jsontext.SyntacticError](se.Err); ok {
				return syntaxMessage(prefix+string(syn.JSONPointer), syn, data)
			}
			return where(ptr) + ": " + trimPrefixes(se.Err.Error())
		}
		return where(ptr) + ": invalid value"
	}
	if syn, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return syntaxMessage(prefix+string(syn.JSONPointer), syn, data)
	}
	return trimPrefixes(err.Error())
}

// syntaxMessage explains a syntax error at ptr. data, when given, is the
// input the error's offset counts from: it names a lone surrogate exactly.
func syntaxMessage(ptr string, se *jsontext.SyntacticError, data []byte) string {
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		// The pointer names the repeated member.
		p := jsontext.Pointer(ptr)
		return where(string(p.Parent())) + ": duplicate member " + strconv.Quote(p.LastToken())
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		return where(ptr) + ": unexpected end of the frame"
	}
	if esc, ok := loneSurrogate(data, se.ByteOffset); ok {
		return where(ptr) + ": " + loneSurrogateReason(esc)
	}
	msg := se.Err.Error()
	switch {
	case msg == "invalid UTF-8":
		msg = "invalid UTF-8 in a string"
	case msg == "exceeded max depth":
		msg = "nested deeper than 10000 levels"
	case strings.HasPrefix(msg, "invalid surrogate pair"):
		// Without the input at hand: the escape is in the message.
		if i := strings.Index(msg, `\u`); i >= 0 && len(msg) >= i+6 {
			msg = loneSurrogateReason(strings.ToLower(msg[i : i+6]))
		}
	}
	return where(ptr) + ": " + msg
}

// loneSurrogateReason is the decision of DECISIONS "Lone surrogates": a
// string holding half of a UTF-16 pair is refused, as serde refuses it.
func loneSurrogateReason(esc string) string {
	return "lone UTF-16 surrogate " + esc + " in a string: strings must be well-formed Unicode (was a character cut in half?)"
}

// loneSurrogate reports whether data holds, at offset, a \uXXXX escape of
// a UTF-16 surrogate (which, since decoding failed there, has no partner).
func loneSurrogate(data []byte, offset int64) (string, bool) {
	if offset < 0 || int64(len(data)) < offset+6 || data[offset] != '\\' || data[offset+1] != 'u' {
		return "", false
	}
	esc := string(data[offset : offset+6])
	n, err := strconv.ParseUint(esc[2:], 16, 16)
	if err != nil || !utf16.IsSurrogate(rune(n)) {
		return "", false
	}
	return strings.ToLower(esc), true
}

// where names a place in args for a message: its JSON pointer, or "args"
// for args themselves. Very deep pointers are cut in the middle.
func where(ptr string) string {
	if ptr == "" {
		return "args"
	}
	if len(ptr) > 120 {
		head, tail := ptr[:60], ptr[len(ptr)-50:]
		for len(head) > 0 && !utf8.RuneStart(ptr[len(head)]) { // cut between characters
			head = head[:len(head)-1]
		}
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		return head + "…" + tail
	}
	return ptr
}

func trimPrefixes(msg string) string {
	for _, p := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
