package gateway

import (
	"bytes"
	"net/http"
	"testing"
)

// requestMethod reads a JSON-RPC request's method without decoding the
// rest; anything else is no method.
func TestRequestMethod(t *testing.T) {
	for _, tt := range []struct {
		verb, body, want string
	}{
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"q":[1,2,{"method":"x"}]}}}`, "tools/call"},
		{"POST", `{"params":{"method":"inner"},"method":"tools/list","id":2}`, "tools/list"},
		{"POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notifications/initialized"},
		{"POST", `{"jsonrpc":"2.0","id":1,"result":{}}`, ""}, // a response
		{"POST", `[{"method":"tools/call"}]`, ""},            // a batch
		{"POST", `{"method":7}`, ""},
		{"POST", `{"method":"tools/call"`, "tools/call"}, // read up to the method
		{"POST", `not json`, ""},
		{"GET", ``, ""},
	} {
		req, err := http.NewRequest(tt.verb, "http://x/", bytes.NewReader([]byte(tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		if tt.verb == "GET" {
			req.Body, req.GetBody = nil, nil
		}
		if got := requestMethod(req); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.verb, tt.body, got, tt.want)
		}
	}
}
