// Package webtest holds ttmcp's end-to-end tests and benchmarks: the real
// backend, started in-process, and the real wasm shim, loaded by host pages
// (testdata/) in headless Chromium driven with chromedp.
//
//	make webtest   # go test ./webtest (installs Chromium when missing)
//	make bench     # the bridge against a plain-JavaScript client, with ratios
//
// The harness is harness_test.go; the tests are webtest_test.go (the
// foundation), mcp_test.go (discovery and test calls), playground_test.go
// (the playground host's SillyTavern contracts, with the fixture
// extensions of testdata/extensions/) and manager_test.go (the real
// mcp-manager extension end to end, driven by role, label and text through
// testdata/ui.js, in the playground and in testdata/bare, a host with only
// what SillyTavern 1.12 gives; screenshots at 1280 and 390 px go to
// results/); the benchmarks are bench_test.go. CHROME names the browser
// (default /usr/bin/chromium).
package webtest
