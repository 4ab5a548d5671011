//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/ttmcp/ttmcp/jsapi"
)

// The data plane (jsapi/bridge-transport.js, passed in by the loader)
// carries every ordinary call without entering Go: the api.mcp stubs it
// makes shape the arguments, send the frame on the open socket and settle
// the call from the socket's message handler. Entering Go from JavaScript
// costs more than a whole call of a plain JavaScript client (syscall/js's
// event machinery, the scheduler, a finalizer per JavaScript value Go
// holds; docs/BENCHMARKS.md), so Go keeps the control plane: which methods
// exist, the connection and its handshake, calls made while no socket is
// open, and every Error. tools.testCall runs in the data plane too, on an
// open socket; Go takes the rest (wasm/testcall.go). The transport reaches
// Go only through the hooks made here, none of them on an ordinary call's
// path.

// newTransport creates the data plane through factory
// (createTransport(hooks, layout)), with hooks bound to b. The hooks live
// as long as the page.
func (b *bridge) newTransport(factory js.Value) js.Value {
	hooks := jsObject.New()
	hooks.Set("call", guard("transport call", func(args []js.Value) js.Value {
		return b.callProgress(arg(args, 0).String(), arg(args, 1), arg(args, 2))
	}))
	hooks.Set("safeInvoke", guard("invoke.safeInvoke", func(args []js.Value) js.Value {
		return b.safeInvoke(arg(args, 0), arg(args, 1))
	}))
	hooks.Set("argsError", errorHook("argsError", func(args []js.Value) js.Value {
		return argsError(js.Error{Value: arg(args, 0)})
	}))
	hooks.Set("backendError", errorHook("backendError", func(args []js.Value) js.Value {
		return backendError(arg(args, 0))
	}))
	hooks.Set("malformed", errorHook("malformed", func(args []js.Value) js.Value {
		return malformedError(arg(args, 0).String())
	}))
	hooks.Set("sendFailed", errorHook("sendFailed", func(args []js.Value) js.Value {
		return internalError("WebSocket.send", js.Error{Value: arg(args, 0)})
	}))
	hooks.Set("testCall", guard("tools.testCall", func(args []js.Value) js.Value {
		return b.testCall(arg(args, 0), arg(args, 1))
	}))
	hooks.Set("result", callback("transport result", func(args []js.Value) {
		b.result(uint64(arg(args, 0).Int()), arg(args, 1).Int(), arg(args, 2))
	}))

	layout := jsObject.New()
	layout.Set("invokeHead", invokeHead)
	layout.Set("invokeCommand", invokeCommand)
	layout.Set("invokeArgs", invokeArgs)
	layout.Set("invokeTail", invokeTail)
	layout.Set("invokeProgress", invokeProgress)
	layout.Set("resultHead", jsapi.ResultHead)
	layout.Set("resultOK", jsapi.ResultOK)
	layout.Set("resultError", jsapi.ResultError)
	layout.Set("maxFrame", jsapi.MaxInboundFrame)
	layout.Set("maxIDDigits", maxIDDigits)
	// tools.testCall's commands and the outcome of one whose socket
	// dropped once it was written
	layout.Set("runTestCall", jsapi.CmdRunTestCall)
	layout.Set("cancelTestCall", jsapi.CmdCancelTestCall)
	layout.Set("testCallLost", connectionLostOutcome(true))
	return factory.Invoke(hooks, layout)
}

// errorHook wraps a hook that builds an Error for the transport: a panic
// becomes an internal Error instead of killing the instance.
func errorHook(name string, fn func(args []js.Value) js.Value) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = internalError(name, r)
			}
		}()
		return fn(args)
	})
}

// Transport result statuses (hooks.result).
const (
	resultOK        = 1
	resultError     = 0
	resultMalformed = -1
)

// result settles a call Go sent through the transport.
func (b *bridge) result(id uint64, status int, v js.Value) {
	c := b.inflight[id]
	if c == nil {
		return
	}
	delete(b.inflight, id)
	switch status {
	case resultOK:
		c.h.resolved(v)
	case resultError:
		c.h.rejected(backendError(v))
	default:
		c.h.rejected(malformedError(c.command))
	}
}

func malformedError(command string) js.Value {
	return newError(jsapi.CodeHostInternal, jsapi.KindInternal,
		jsapi.CodeHostInternal+": the ttmcp backend sent a malformed result for "+command)
}
