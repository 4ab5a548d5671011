//go:build js && wasm

package main

import (
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/jsapi"
)

// settlement is how a Promise ended.
type settlement struct {
	value js.Value
	ok    bool // fulfilled
}

// await waits (letting the JS event loop run) until p settles.
func await(t *testing.T, p js.Value) settlement {
	t.Helper()
	if p.Type() != js.TypeObject || p.Get("then").Type() != js.TypeFunction {
		t.Fatalf("not a Promise: %v", p.Type())
	}
	ch := make(chan settlement, 1)
	then(p, func(v js.Value) { ch <- settlement{v, true} }, func(e js.Value) { ch <- settlement{e, false} })
	select {
	case s := <-ch:
		return s
	case <-time.After(3 * time.Second):
		t.Fatal("the Promise did not settle")
		return settlement{}
	}
}

var noop = js.FuncOf(func(js.Value, []js.Value) any { return nil })

// watch marks p handled at once (node aborts on a rejection nobody handled
// by the end of the microtask checkpoint) and returns it for a later await.
func watch(p js.Value) js.Value {
	p.Call("catch", noop)
	return p
}

// pending reports whether p is still pending after the event loop ran.
func pending(t *testing.T, p js.Value) bool {
	t.Helper()
	ch := make(chan struct{}, 1)
	then(p, func(js.Value) { ch <- struct{}{} }, func(js.Value) { ch <- struct{}{} })
	select {
	case <-ch:
		return false
	case <-time.After(20 * time.Millisecond):
		return true
	}
}

func mustResolve(t *testing.T, p js.Value) js.Value {
	t.Helper()
	s := await(t, p)
	if !s.ok {
		t.Fatalf("rejected: %s", jsErrorText(s.value))
	}
	return s.value
}

// mustReject waits for a rejection with an Error carrying code and kind.
func mustReject(t *testing.T, p js.Value, code, kind string) js.Value {
	t.Helper()
	s := await(t, p)
	if s.ok {
		t.Fatalf("resolved with %s, want a rejection %s", stringify(s.value), code)
	}
	checkError(t, s.value, code, kind)
	return s.value
}

func checkError(t *testing.T, e js.Value, code, kind string) {
	t.Helper()
	if !e.InstanceOf(jsError) {
		t.Fatalf("rejection is not an Error: %s", stringify(e))
	}
	if c := e.Get("code"); code == "" && !c.IsUndefined() || code != "" && (c.Type() != js.TypeString || c.String() != code) {
		t.Errorf("code = %s, want %q (message %q)", stringify(c), code, e.Get("message").String())
	}
	if k := e.Get("kind"); k.Type() != js.TypeString || k.String() != kind {
		t.Errorf("kind = %s, want %q", stringify(k), kind)
	}
}

func stringify(v js.Value) string {
	if v.IsUndefined() {
		return "undefined"
	}
	s, err := stringifyJSON(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return s.String()
}

// useWithResolvers runs f once with the executor fallback (node 20 has no
// Promise.withResolvers) and once with a withResolvers polyfill.
func bothPromisePaths(t *testing.T, f func(t *testing.T)) {
	saved := withResolvers
	defer func() { withResolvers = saved }()
	t.Run("executor", func(t *testing.T) {
		withResolvers = js.Undefined()
		f(t)
	})
	t.Run("withResolvers", func(t *testing.T) {
		poly := js.FuncOf(func(js.Value, []js.Value) any {
			r := jsObject.New()
			exec := js.FuncOf(func(_ js.Value, a []js.Value) any {
				r.Set("resolve", a[0])
				r.Set("reject", a[1])
				return nil
			})
			r.Set("promise", jsPromise.New(exec))
			exec.Release()
			return r
		})
		defer poly.Release()
		withResolvers = poly.Value
		f(t)
	})
}

func TestNewPromise(t *testing.T) {
	if saved := jsPromise.Get("withResolvers"); saved.Type() == js.TypeFunction {
		t.Log("this runtime has Promise.withResolvers")
	}
	bothPromisePaths(t, func(t *testing.T) {
		p, resolve, _ := newPromise()
		if !p.InstanceOf(jsPromise) {
			t.Fatal("not a Promise")
		}
		if !pending(t, p) {
			t.Fatal("a new Promise is settled")
		}
		resolve.Invoke(42)
		if v := mustResolve(t, p); v.Int() != 42 {
			t.Errorf("resolved %v", v)
		}
		p, _, reject := newPromise()
		reject.Invoke(newError("mcp.x", jsapi.KindConflict, "mcp.x: no"))
		mustReject(t, p, "mcp.x", jsapi.KindConflict)

		mustResolve(t, resolved(js.ValueOf("v")))
		mustReject(t, rejected(newError("", jsapi.KindInternal, "m")), "", jsapi.KindInternal)
	})
}

func TestErrors(t *testing.T) {
	e := newError(jsapi.CodeHostUnavailable, jsapi.KindUnavailable, "mcp.host_unavailable: cannot reach")
	checkError(t, e, jsapi.CodeHostUnavailable, jsapi.KindUnavailable)
	if m := e.Get("message").String(); m != "mcp.host_unavailable: cannot reach" {
		t.Errorf("message = %q", m)
	}
	if e.Get("name").String() != "Error" {
		t.Errorf("name = %s", e.Get("name").String())
	}

	parse := func(s string) js.Value { return mustParse(t, s) }
	tests := []struct {
		body, code, kind, message string
	}{
		{`{"kind":"BadRequest","code":"mcp.endpoint_invalid","message":"mcp.endpoint_invalid: bad"}`, "mcp.endpoint_invalid", "BadRequest", "mcp.endpoint_invalid: bad"},
		// no code: taken from the message prefix
		{`{"kind":"NotFound","message":"mcp.registration_not_found: x"}`, "mcp.registration_not_found", "NotFound", "mcp.registration_not_found: x"},
		{`{"kind":"NotFound","message":"MCP registration not found: x"}`, "", "NotFound", "MCP registration not found: x"},
		// kind missing: Internal
		{`{"message":"boom"}`, "", "Internal", "boom"},
		{`null`, "", "Internal", "the ttmcp backend failed without a message"},
	}
	for _, tc := range tests {
		e := backendError(parse(tc.body))
		checkError(t, e, tc.code, tc.kind)
		if m := e.Get("message").String(); m != tc.message {
			t.Errorf("%s: message = %q", tc.body, m)
		}
	}
}

func TestGuardRecoversPanics(t *testing.T) {
	bothPromisePaths(t, func(t *testing.T) {
		boom := guard("test.boom", func([]js.Value) js.Value { panic("boom") })
		defer boom.Release()
		e := mustReject(t, boom.Invoke(), jsapi.CodeHostInternal, jsapi.KindInternal)
		if m := e.Get("message").String(); !strings.HasPrefix(m, jsapi.CodeHostInternal+":") || !strings.Contains(m, "test.boom") || !strings.Contains(m, "boom") {
			t.Errorf("message = %q", m)
		}

		var m map[string]int
		nilMap := guard("test.nilmap", func([]js.Value) js.Value { m["x"] = 1; return js.Undefined() })
		defer nilMap.Release()
		e = mustReject(t, nilMap.Invoke(), jsapi.CodeHostInternal, jsapi.KindInternal)
		if !strings.Contains(e.Get("message").String(), "nil map") {
			t.Errorf("message = %q", e.Get("message").String())
		}

		// a JavaScript exception raised through syscall/js is recovered too
		throws := guard("test.throws", func([]js.Value) js.Value { return js.Null().Get("x") })
		defer throws.Release()
		mustReject(t, throws.Invoke(), jsapi.CodeHostInternal, jsapi.KindInternal)

		// the instance survives and keeps answering
		ok := guard("test.ok", func(args []js.Value) js.Value { return resolved(arg(args, 0)) })
		defer ok.Release()
		if v := mustResolve(t, ok.Invoke("still alive")); v.String() != "still alive" {
			t.Errorf("got %v", v)
		}
	})
}

func TestCallbackRecoversPanics(t *testing.T) {
	ran := false
	f := callback("test", func([]js.Value) { ran = true; panic("inside a callback") })
	defer f.Release()
	if v := f.Invoke(); !v.IsNull() || !ran {
		t.Errorf("callback returned %v, ran %v", v, ran)
	}
}

func TestTryCall(t *testing.T) {
	if _, err := parseJSON(js.ValueOf("{nope")); err == nil {
		t.Error("JSON.parse of garbage did not fail")
	}
	if v, err := parseJSON(js.ValueOf(`{"a":[1,"x"]}`)); err != nil || v.Get("a").Index(1).String() != "x" {
		t.Errorf("JSON.parse: %v", err)
	}
	if _, err := stringifyJSON(js.Undefined()); err != errNoJSON {
		t.Errorf("stringify(undefined): %v", err)
	}
}

func TestUTF8Size(t *testing.T) {
	repeat := func(s string, n int) js.Value { return strProto.Get("repeat").Call("call", s, n) }
	if n := utf8Size(js.ValueOf("small"), 100); n != -1 {
		t.Errorf("small string measured: %d", n)
	}
	if n := utf8Size(repeat("é", 40), 100); n != 80 {
		t.Errorf("40×é = %d bytes", n)
	}
	if n := utf8Size(repeat("€", 40), 100); n != 120 {
		t.Errorf("40×€ = %d bytes", n)
	}
	if n := utf8Size(repeat("🎉", 20), 100); n != 80 { // 40 UTF-16 units, 4 bytes per pair
		t.Errorf("20×🎉 = %d bytes", n)
	}
}

var strProto = global.Get("String").Get("prototype")

// mustParse is JSON.parse(s), failing the test on a syntax error.
func mustParse(t *testing.T, s string) js.Value {
	t.Helper()
	v, err := parseJSON(js.ValueOf(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
