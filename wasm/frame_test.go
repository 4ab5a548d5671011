//go:build js && wasm

package main

import (
	"regexp"
	"slices"
	"strings"
	"syscall/js"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

func TestBackoffDelay(t *testing.T) {
	if d := backoffDelay(0, 0); d < 50 || d > 150 {
		t.Errorf("first retry, lowest = %d ms, want 50..150", d)
	}
	if d := backoffDelay(0, 0.999999); d < 50 || d > 150 {
		t.Errorf("first retry, highest = %d ms, want 50..150", d)
	}
	prevMid := 0
	for retry := 0; retry < 40; retry++ {
		nominal := backoffBase << min(retry, 10)
		if nominal > backoffCap {
			nominal = backoffCap
		}
		lo, mid, hi := backoffDelay(retry, 0), backoffDelay(retry, 0.5), backoffDelay(retry, 0.999999)
		if float64(lo) < 0.8*float64(nominal)-1 || float64(hi) > 1.2*float64(nominal)+1 {
			t.Errorf("retry %d: delays %d..%d outside ±20%% of %d", retry, lo, hi, nominal)
		}
		if !(lo < mid && mid < hi) {
			t.Errorf("retry %d: jitter does not spread: %d %d %d", retry, lo, mid, hi)
		}
		if mid < prevMid {
			t.Errorf("retry %d: delay %d shrank from %d", retry, mid, prevMid)
		}
		if hi > 6000 {
			t.Errorf("retry %d: %d ms above the ≈5 s cap", retry, hi)
		}
		prevMid = mid
	}
	// the nominal steps: quick at first, then thinning out to the cap
	var steps []int
	for retry := 0; retry < 8; retry++ {
		steps = append(steps, backoffDelay(retry, 0.5))
	}
	if want := []int{100, 200, 400, 800, 1600, 3200, 5000, 5000}; !slices.Equal(steps, want) {
		t.Errorf("steps %v; want %v", steps, want)
	}
	// out-of-range random numbers are clamped
	if d := backoffDelay(2, -3); d != backoffDelay(2, 0) {
		t.Errorf("rnd < 0: %d", d)
	}
	if d := backoffDelay(2, 7); d != backoffDelay(2, 0.999999) {
		t.Errorf("rnd ≥ 1: %d", d)
	}
}

func TestQuoteJSONMatchesJSONStringify(t *testing.T) {
	for _, s := range []string{
		"", "list_mcp_servers", `a"b\c`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "héllo 世界 🎉", "</script>", "\u2028",
	} {
		want := jsonStringify.Invoke(s).String()
		// JSON.stringify escapes control characters the same way (\uXXXX
		// lowercase, short forms for \n \r \t) except \b and \f, which we
		// write as \u0008 / \u000c; compare through JSON.parse instead.
		got := quoteJSON(s)
		back, err := parseJSON(js.ValueOf(got))
		if err != nil || back.String() != s {
			t.Errorf("quoteJSON(%q) = %s does not parse back (%v); JSON.stringify gives %s", s, got, err, want)
		}
	}
}

func TestEnvelope(t *testing.T) {
	longest := invokeHead + strings.Repeat("9", maxIDDigits) + invokeCommand + quoteJSON(jsapi.CmdTestToolCall) + invokeArgs + invokeProgress + invokeTail
	if n := len(longest); n != maxEnvelope(jsapi.CmdTestToolCall) {
		t.Errorf("maxEnvelope = %d, longest envelope = %d", maxEnvelope(jsapi.CmdTestToolCall), n)
	}
	if h := helloFrame(`to"k`); h != `{"type":"hello","token":"to\"k"}` {
		t.Errorf("hello = %s", h)
	}
}

func TestCodeFromMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"mcp.endpoint_invalid: relative URL without a base":  "mcp.endpoint_invalid",
		"tool.catalog_duplicate_id: duplicate tool id `x`":   "tool.catalog_duplicate_id",
		"mcp.server_paused: registration `a` must be Active": "mcp.server_paused",
		"MCP registration not found: 1234":                   "",
		"Bad request: x":                                     "",
		"mcp: x":                                             "",
		".mcp.x: y":                                          "",
		"mcp..x: y":                                          "",
		"mcp.x.: y":                                          "",
		"no colon at all":                                    "",
		"":                                                   "",
	} {
		if got := codeFromMessage(msg); got != want {
			t.Errorf("codeFromMessage(%q) = %q, want %q", msg, got, want)
		}
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID(t *testing.T) {
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	if s := formatUUIDv4(b); !uuidV4.MatchString(s) || s != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Errorf("formatUUIDv4(ff…) = %s", s)
	}
	if s := formatUUIDv4([16]byte{}); s != "00000000-0000-4000-8000-000000000000" {
		t.Errorf("formatUUIDv4(0…) = %s", s)
	}
	a, c := randomUUID(), randomUUID()
	if !uuidV4.MatchString(a) || a == c {
		t.Errorf("randomUUID: %s, %s", a, c)
	}
	// the getRandomValues fallback (insecure contexts lack randomUUID)
	saved := jsCrypto
	defer func() { jsCrypto = saved }()
	fake := jsObject.New()
	fake.Set("getRandomValues", saved.Get("getRandomValues").Call("bind", saved))
	jsCrypto = fake
	if s := randomUUID(); !uuidV4.MatchString(s) {
		t.Errorf("fallback UUID = %s", s)
	}
}
