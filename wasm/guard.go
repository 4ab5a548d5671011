//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// guard wraps an exported method: fn returns the method's Promise; a panic
// anywhere in fn becomes a Promise rejected with jsapi.CodeHostInternal
// instead of killing the whole Go instance (wasm-bridge-notes pitfall 4).
// The returned js.Func is published for the life of the page.
func guard(name string, fn func(args []js.Value) js.Value) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = rejected(internalError(name, r))
			}
		}()
		return fn(args)
	})
}

// internalError is the rejection of a recovered panic.
func internalError(where string, r any) js.Value {
	return newError(jsapi.CodeHostInternal, jsapi.KindInternal,
		jsapi.CodeHostInternal+": the ttmcp bridge failed in "+where+": "+panicText(r))
}

// callback wraps an internal callback (socket events, timers, promise
// reactions): it never blocks, returns undefined, and logs a panic to the
// console instead of letting it kill the instance.
func callback(name string, fn func(args []js.Value)) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		defer func() {
			if r := recover(); r != nil {
				logError("ttmcp bridge: " + name + " failed: " + panicText(r))
			}
		}()
		fn(args)
		return nil
	})
}

// panicText renders a recovered panic value without fmt.
func panicText(r any) string {
	switch v := r.(type) {
	case string:
		return v
	case error:
		return v.Error()
	default:
		return "unexpected panic"
	}
}

// arg returns args[i], or undefined when the caller passed fewer.
func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}
