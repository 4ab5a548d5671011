// Package webtest holds ttmcp's end-to-end tests and benchmarks: the real
// backend, started in-process, and the real wasm shim, loaded by host pages
// (testdata/) in headless Chromium driven with chromedp.
//
//	make webtest   # go test ./webtest (installs Chromium when missing)
//	make bench     # the bridge against a plain-JavaScript client, with ratios
//
// The harness is harness_test.go; the tests are webtest_test.go (the
// foundation) and mcp_test.go (discovery and test calls); the benchmarks
// are bench_test.go. CHROME names the browser (default
// /usr/bin/chromium).
package webtest
