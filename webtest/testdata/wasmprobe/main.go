//go:build js && wasm

// Command wasmprobe measures what the wasm bridge's design rests on: the
// cost of entering Go from JavaScript and of each kind of syscall/js
// crossing, in the page's own engine. BenchmarkWasmCrossings
// (webtest/profile_bench_test.go) builds it, loads it in a page
// (testdata/wasmprobe.html) and reads window.wasmprobe:
//
//	noop()            a js.FuncOf that does nothing, called as a method
//	noopArg(x)        the same with one object argument
//	loop(name, n)     runs the Go→JS crossing name n times inside Go
//
// and the instance's export probeExport(x), a //go:wasmexport function that
// does nothing: an entry into Go without syscall/js's event machinery.
package main

import "syscall/js"

//go:wasmexport probeExport
func probeExport(x int32) int32 { return x + 1 }

func main() {
	g := js.Global()
	obj := g.Get("Object").New()
	obj.Set("n", 1)
	obj.Set("o", g.Get("Object").New())
	obj.Set("s", "abcdefghijklmnopqrstuvwxyz")
	identity := g.Get("Function").New("a", "return a")
	promise := g.Get("Promise")
	str := obj.Get("s")

	crossings := map[string]func(){
		// a call into JavaScript that creates no reference: a number in, a number out
		"invokeNumber": func() { identity.Invoke(1) },
		// a property read: the name crosses as UTF-8 and is decoded in JS
		"getNumber": func() { obj.Get("n") },
		// the same returning an object: a new reference, with a finalizer
		"getObject": func() { obj.Get("o") },
		// a 26-byte Go string handed to JavaScript (a new JS string, referenced)
		"stringToJS": func() { js.ValueOf("abcdefghijklmnopqrstuvwxyz") },
		// a 26-character JS string copied into Go
		"stringToGo": func() { _ = str.String() },
		// what a Promise made in Go costs: withResolvers and its three parts
		"promise": func() {
			r := promise.Call("withResolvers")
			r.Get("promise")
			r.Get("resolve")
			r.Get("reject")
		},
	}

	probe := g.Get("Object").New()
	probe.Set("noop", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	probe.Set("noopArg", js.FuncOf(func(_ js.Value, a []js.Value) any { return nil }))
	probe.Set("loop", js.FuncOf(func(_ js.Value, a []js.Value) any {
		f := crossings[a[0].String()]
		for n := a[1].Int(); n > 0; n-- {
			f()
		}
		return nil
	}))
	names := g.Get("Array").New()
	for name := range crossings {
		names.Call("push", name)
	}
	probe.Set("crossings", names)
	g.Set("wasmprobe", probe)
	select {}
}
