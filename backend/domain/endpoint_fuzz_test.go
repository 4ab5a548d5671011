package domain

import "testing"

// FuzzParseEndpoint: parsing never panics, and a normalised endpoint is a
// fixed point (parsing it again gives itself), so a stored endpoint always
// re-validates when its file is loaded.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{
		"http://example.com/mcp", " HTTP://EXAMPLE.COM:80 ", "https://user:pass@example.com/mcp?tenant=one",
		"https://münchen.example/x", "http://[::1]:3000/mcp", "http://0x7f.1/", "http://x/a/../b/./c",
		"http://x/%zz", "http://x/\\a", "file:///tmp/mcp", "http://x/#", "mcp", "http://", "http://a b/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		ep, err := ParseEndpoint(raw)
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("%q: error without a code: %v", raw, err)
			}
			return
		}
		again, err := ParseEndpoint(ep.String())
		if err != nil || again != ep {
			t.Fatalf("%q → %q → %q, %v", raw, ep, again, err)
		}
	})
}
