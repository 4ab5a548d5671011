//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// js.Values of globals, looked up once (every lookup is a JS→Go crossing
// and a finalizer-tracked reference; wasm-bridge-notes §5.5).
var (
	global        = js.Global()
	jsObject      = global.Get("Object")
	jsError       = global.Get("Error")
	jsPromise     = global.Get("Promise")
	jsJSON        = global.Get("JSON")
	jsonParse     = jsJSON.Get("parse")
	jsonStringify = jsJSON.Get("stringify")
	isArray       = global.Get("Array").Get("isArray")
	textEncoder   = newTextEncoder()
	console       = global.Get("console")

	// withResolvers is Promise.withResolvers where it exists (Chrome 119+,
	// Safari 17.4+; not node 20). A variable so tests can take either path.
	withResolvers = jsPromise.Get("withResolvers")
)

func newTextEncoder() js.Value {
	if te := global.Get("TextEncoder"); te.Type() == js.TypeFunction {
		return te.New()
	}
	return js.Undefined()
}

// newPromise returns a pending Promise and its resolve and reject
// functions: through Promise.withResolvers when present (no JS→Go
// re-entry), else through an executor js.Func, released at once (the
// executor runs synchronously inside the Promise constructor).
func newPromise() (p, resolve, reject js.Value) {
	if withResolvers.Type() == js.TypeFunction {
		r := withResolvers.Call("call", jsPromise)
		return r.Get("promise"), r.Get("resolve"), r.Get("reject")
	}
	exec := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject = args[0], args[1]
		return nil
	})
	p = jsPromise.New(exec)
	exec.Release()
	return p, resolve, reject
}

// rejected returns a Promise already rejected with err.
func rejected(err js.Value) js.Value {
	p, _, reject := newPromise()
	reject.Invoke(err)
	return p
}

// resolved returns a Promise already resolved with v.
func resolved(v js.Value) js.Value {
	p, resolve, _ := newPromise()
	resolve.Invoke(v)
	return p
}

// then attaches onOK/onErr to promise p. The two js.Funcs release each
// other when either runs (a promise settles once), so late settlements
// never reach a released function.
func then(p js.Value, onOK, onErr func(js.Value)) {
	var ok, bad js.Func
	release := func() {
		ok.Release()
		bad.Release()
	}
	ok = callback("promise reaction", func(args []js.Value) {
		release()
		onOK(arg(args, 0))
	})
	bad = callback("promise reaction", func(args []js.Value) {
		release()
		onErr(arg(args, 0))
	})
	p.Call("then", ok, bad)
}

// jsErrorText renders a thrown JS value (an Error's "Name: message", else
// String(v)).
func jsErrorText(e js.Value) string {
	if isObject(e) {
		if m := e.Get("message"); m.Type() == js.TypeString {
			if n := e.Get("name"); n.Type() == js.TypeString && n.String() != "" {
				return n.String() + ": " + m.String()
			}
			return m.String()
		}
	}
	if e.Type() == js.TypeString {
		return e.String()
	}
	return "unknown error"
}

// newError builds new Error(message) carrying .code (when not empty) and
// .kind, the shape every rejection of the API has (SPEC §4).
func newError(code, kind, message string) js.Value {
	e := jsError.New(message)
	if code != "" {
		e.Set("code", code)
	}
	e.Set("kind", kind)
	return e
}

// backendError turns the error object of a result frame
// ({kind, code, message}) into a rejection Error. A missing code is taken
// from the message's "<code>: " prefix when it has one.
func backendError(body js.Value) js.Value {
	message, kind, code := "the ttmcp backend failed without a message", jsapi.KindInternal, ""
	if body.Type() == js.TypeObject {
		if m := body.Get("message"); m.Type() == js.TypeString {
			message = m.String()
		}
		if k := body.Get("kind"); k.Type() == js.TypeString && k.String() != "" {
			kind = k.String()
		}
		if c := body.Get("code"); c.Type() == js.TypeString {
			code = c.String()
		}
	}
	if code == "" {
		code = codeFromMessage(message)
	}
	return newError(code, kind, message)
}

// tryCall runs fn and turns a JavaScript exception (which syscall/js
// raises as a panic of js.Error) into an error value.
func tryCall(fn func() js.Value) (v js.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	return fn(), nil
}

// parseJSON is JSON.parse(s) run by the page's engine; a syntax error comes
// back as an error, not a panic.
func parseJSON(s js.Value) (js.Value, error) {
	return tryCall(func() js.Value { return jsonParse.Invoke(s) })
}

// stringifyJSON is JSON.stringify(v) run by the page's engine. It fails on
// cycles, BigInts and throwing toJSON methods, and when v has no JSON form
// (undefined, a function, a symbol).
func stringifyJSON(v js.Value) (js.Value, error) {
	s, err := tryCall(func() js.Value { return jsonStringify.Invoke(v) })
	if err != nil {
		return js.Undefined(), err
	}
	if s.Type() != js.TypeString {
		return js.Undefined(), errNoJSON
	}
	return s, nil
}

type stringError string

func (e stringError) Error() string { return string(e) }

const errNoJSON = stringError("the value has no JSON form")

// utf8Size returns the UTF-8 byte size of the JS string s when it could
// exceed limit, and -1 when it cannot (length*3 ≤ limit: no UTF-16 code
// unit takes more than 3 bytes). Only the rare large string is measured,
// through TextEncoder.
func utf8Size(s js.Value, limit int) int {
	n := strLen(s)
	if n*3 <= limit {
		return -1
	}
	if textEncoder.Type() != js.TypeObject {
		return n * 3 // no TextEncoder: the bound is all we know
	}
	return textEncoder.Call("encode", s).Length()
}

// strLen is s.length of a JS string primitive, in UTF-16 code units
// (syscall/js reads no property of a primitive; Object(s) boxes it without
// copying).
func strLen(s js.Value) int {
	return jsObject.Invoke(s).Get("length").Int()
}

// option is v?.[field]: undefined unless v is an object.
func option(v js.Value, field string) js.Value {
	if !isObject(v) {
		return js.Undefined()
	}
	return v.Get(field)
}

// isObject reports whether v is a non-null object or a function (what
// JavaScript's `input?.x` can read a property of without boxing).
func isObject(v js.Value) bool {
	t := typeOf(v)
	return t == js.TypeObject || t == js.TypeFunction
}

// typeOf is v.Type() for a value the page passed, which may be anything:
// syscall/js has no Type for a BigInt, and Type panics on one. A BigInt is
// typeOther, which equals none of js's types.
func typeOf(v js.Value) (t js.Type) {
	defer func() {
		if recover() != nil {
			t = typeOther
		}
	}()
	return v.Type()
}

const typeOther js.Type = -1

// truthy is JavaScript's !!v for any value (js.Value.Truthy panics on a
// BigInt).
func truthy(v js.Value) bool {
	if t := typeOf(v); t != typeOther {
		return v.Truthy()
	}
	return jsBoolean.Invoke(v).Bool()
}

var jsBoolean = global.Get("Boolean")

// logError writes to console.error; logDebug to console.debug.
func logError(args ...any) { logTo("error", args...) }
func logDebug(args ...any) { logTo("debug", args...) }

func logTo(level string, args ...any) {
	if !isObject(console) {
		return
	}
	if f := console.Get(level); f.Type() == js.TypeFunction {
		f.Call("apply", console, js.ValueOf(args))
	}
}
