package domain

import (
	"sync"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	const (
		invalidURL  = "mcp.endpoint_invalid"
		absolute    = "mcp.endpoint_absolute_required: endpoint must be an absolute HTTP(S) URL"
		fragment    = "mcp.endpoint_fragment_forbidden: endpoint cannot contain a fragment"
		scheme      = "mcp.endpoint_scheme_invalid: endpoint must use HTTP or HTTPS"
		noBase      = invalidURL + ": relative URL without a base"
		emptyHost   = invalidURL + ": empty host"
		badPort     = invalidURL + ": invalid port number"
		badIDN      = invalidURL + ": invalid international domain name"
		badIPv4     = invalidURL + ": invalid IPv4 address"
		badIPv6     = invalidURL + ": invalid IPv6 address"
		badHostChar = invalidURL + ": invalid domain character"
	)
	tests := []struct {
		raw  string
		want string // the normalised endpoint, or the error message
		err  bool
	}{
		// Kept as the user wrote them (reference §9.4).
		{raw: "https://user:pass@example.com/mcp?tenant=one", want: "https://user:pass@example.com/mcp?tenant=one"},
		{raw: "http://127.0.0.1:3000/mcp", want: "http://127.0.0.1:3000/mcp"},
		{raw: "http://127.0.0.1:8080/mcp", want: "http://127.0.0.1:8080/mcp"},
		{raw: "http://example.com/mcp", want: "http://example.com/mcp"},
		{raw: "http://8.8.8.8/mcp?token=x", want: "http://8.8.8.8/mcp?token=x"},
		{raw: "https://example.com/mcp", want: "https://example.com/mcp"},
		{raw: "http://[::1]:3000/mcp", want: "http://[::1]:3000/mcp"},
		{raw: "http://localhost:8000/sse/mcp/", want: "http://localhost:8000/sse/mcp/"},

		// Trimmed (Unicode white space, as Rust's str::trim).
		{raw: "  http://x.test/a/../b  ", want: "http://x.test/b"},
		{raw: "\thttp://x.test/\n", want: "http://x.test/"},
		{raw: "\u00a0http://x.test/mcp\u3000", want: "http://x.test/mcp"},

		// Scheme and host lowercased, default port dropped, empty path "/".
		{raw: "HTTP://EXAMPLE.COM:80", want: "http://example.com/"},
		{raw: "https://EXAMPLE.com:443/", want: "https://example.com/"},
		{raw: "https://[::1]:443/mcp", want: "https://[::1]/mcp"},
		{raw: "https://example.com:80/", want: "https://example.com:80/"},
		{raw: "http://example.com:8080", want: "http://example.com:8080/"},
		{raw: "http://x:0080/", want: "http://x/"},
		{raw: "http://x:065535/", want: "http://x:65535/"},
		{raw: "http://x:/", want: "http://x/"},
		{raw: "http://x?a", want: "http://x/?a"},
		{raw: "http://example.com./", want: "http://example.com./"},
		{raw: "http://My_Host.Example/", want: "http://my_host.example/"},

		// IDN hosts in punycode (UTS #46 non-transitional, as the url crate).
		{raw: "https://münchen.example/x", want: "https://xn--mnchen-3ya.example/x"},
		{raw: "http://faß.de/", want: "http://xn--fa-hia.de/"},
		{raw: "http://例子.测试/", want: "http://xn--fsqu00a.xn--0zwm56d/"},
		{raw: "http://ＥＸＡＭＰＬＥ.com/", want: "http://example.com/"},
		{raw: "http://xn--MNCHEN-3YA.example/", want: "http://xn--mnchen-3ya.example/"},
		{raw: "http://a\u00adb/", want: "http://ab/"},
		{raw: "http://ex%41mple.com/", want: "http://example.com/"},

		// IP addresses in canonical form.
		{raw: "http://0x7f.1/", want: "http://127.0.0.1/"},
		{raw: "http://1.2.3/", want: "http://1.2.0.3/"},
		{raw: "http://[0:0::1]/", want: "http://[::1]/"},
		{raw: "http://[0:0:0:0:0:0:0:0]/", want: "http://[::]/"},
		{raw: "http://[::ffff:1.2.3.4]/", want: "http://[::ffff:102:304]/"},
		{raw: "http://[2001:DB8::1]:8080/", want: "http://[2001:db8::1]:8080/"},

		// Paths: dot segments resolved, percent-encoding as WHATWG.
		{raw: "HTTPS://Ex.COM/a/./b/../../c", want: "https://ex.com/c"},
		{raw: "http://x/%2e%2E/a", want: "http://x/a"},
		{raw: "http://x/a/..", want: "http://x/"},
		{raw: "http://x/a b?c d", want: "http://x/a%20b?c%20d"},
		{raw: "http://x/%7e", want: "http://x/%7e"},
		{raw: "http://x/%zz", want: "http://x/%zz"},
		{raw: "http://x/é?é", want: "http://x/%C3%A9?%C3%A9"},
		{raw: "http://x/?q=<>\"'", want: "http://x/?q=%3C%3E%22%27"},
		{raw: "http://x/a^b|c{d}`", want: "http://x/a^b|c%7Bd%7D%60"},
		{raw: "http://x\t/y\n", want: "http://x/y"},
		{raw: "http://us er:p@ss@x/", want: "http://us%20er:p%40ss@x/"},
		{raw: "http:x/y", want: "http://x/y"},
		{raw: `http:\\x\y`, want: "http://x/y"},
		{raw: "http:///x", want: "http://x/"},

		// Parse failures, with the url crate's messages.
		{raw: "mcp", want: noBase, err: true},
		{raw: "/mcp", want: noBase, err: true},
		{raw: "//x/y", want: noBase, err: true},
		{raw: "", want: noBase, err: true},
		{raw: "   ", want: noBase, err: true},
		{raw: "http://", want: emptyHost, err: true},
		{raw: "http://:80/", want: emptyHost, err: true},
		{raw: "http://user@/", want: emptyHost, err: true},
		{raw: "http:// bad host", want: badIDN, err: true},
		{raw: "http://a^b/", want: badIDN, err: true},
		{raw: "http://%zz/", want: badIDN, err: true},
		{raw: "http://xn--a.com/", want: badIDN, err: true},
		{raw: "http://ab\u200dc/", want: badIDN, err: true},
		{raw: "http://x:65536/", want: badPort, err: true},
		{raw: "http://x:abc/", want: badPort, err: true},
		{raw: "http://x:99999999999999999999/", want: badPort, err: true},
		{raw: "http://256.0.0.1/", want: badIPv4, err: true},
		{raw: "http://1.2.3.4.5/", want: badIPv4, err: true},
		{raw: "http://09.1.1.1/", want: badIPv4, err: true},
		{raw: "http://[::1/", want: badIPv6, err: true},
		{raw: "http://[::1]x/", want: badIPv6, err: true},
		{raw: "http://[1:2:3:4:5:6:7:8:9]/", want: badIPv6, err: true},
		{raw: "foo://a b/", want: badHostChar, err: true},
		{raw: "foo://x:abc/", want: badPort, err: true},

		// No host, or a cannot-be-a-base URL: checked before the scheme.
		{raw: "file:///tmp/mcp", want: absolute, err: true},
		{raw: "mailto:x", want: absolute, err: true},
		{raw: "javascript:alert(1)", want: absolute, err: true},
		{raw: "foo:/x", want: absolute, err: true},
		{raw: "foo://", want: absolute, err: true},

		// Fragments, even empty ones: checked before the scheme.
		{raw: "http://x/#", want: fragment, err: true},
		{raw: "http://x/#frag", want: fragment, err: true},
		{raw: "https://example.com/mcp#fragment", want: fragment, err: true},
		{raw: "http://a/b?c#", want: fragment, err: true},
		{raw: "foo://x/#", want: fragment, err: true},

		// Only http and https.
		{raw: "ftp://x/", want: scheme, err: true},
		{raw: "ws://x/mcp", want: scheme, err: true},
		{raw: "wss://x/mcp", want: scheme, err: true},
		{raw: "foo://x/", want: scheme, err: true},
		{raw: "file://host/tmp/mcp", want: scheme, err: true},
	}
	for _, tt := range tests {
		got, err := ParseEndpoint(tt.raw)
		if tt.err {
			if err == nil {
				t.Errorf("ParseEndpoint(%q) = %q, want error %q", tt.raw, got, tt.want)
				continue
			}
			if err.Error() != tt.want {
				t.Errorf("ParseEndpoint(%q) error = %q, want %q", tt.raw, err, tt.want)
			}
			if KindOf(err) != KindBadRequest {
				t.Errorf("ParseEndpoint(%q) kind = %v, want BadRequest", tt.raw, KindOf(err))
			}
			if !got.IsZero() {
				t.Errorf("ParseEndpoint(%q) returned %q with an error", tt.raw, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseEndpoint(%q) error = %v, want %q", tt.raw, err, tt.want)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ParseEndpoint(%q) = %q, want %q", tt.raw, got, tt.want)
		}
		// Normalisation is idempotent: a stored endpoint re-parses to itself.
		again, err := ParseEndpoint(got.String())
		if err != nil || again != got {
			t.Errorf("ParseEndpoint(%q) = %q, %v; want it unchanged", got, again, err)
		}
	}
}

func TestEndpointEquality(t *testing.T) {
	a, err := ParseEndpoint("HTTP://Example.COM:80")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseEndpoint("  http://example.com/  ")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	if (Endpoint{}).String() != "" || !(Endpoint{}).IsZero() || a.IsZero() {
		t.Error("zero Endpoint misreported")
	}
}

func TestParseEndpointConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if e, err := ParseEndpoint("https://münchen.example/a/../b"); err != nil || e.String() != "https://xn--mnchen-3ya.example/b" {
					t.Errorf("ParseEndpoint = %q, %v", e, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
