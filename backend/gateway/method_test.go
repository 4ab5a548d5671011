package gateway

import (
	"bytes"
	"net/http"
	"strings"
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
		// go-sdk's own beginning, read without a decoder, and what only
		// looks like it, decoded.
		{"POST", `{"jsonrpc":"2.0","id":"a-1","method":"resources/read","params":{}}`, "resources/read"},
		{"POST", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, "ping"},
		{"POST", `{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, "ping"},
		{"POST", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "ping"},
		{"POST", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "ping"},
		{"POST", `{"jsonrpc":"2.0","id":-,"method":"ping"}`, ""},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, "tools/call"},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call`, ""},
		{"POST", `{"jsonrpc":"2.0","id":1,"result":{"method":"tools/call"}}`, ""},
		{"POST", `{"jsonrpc":"2.0","params":{"q":"` + strings.Repeat("x", 400) + `"},"method":"tools/call","id":1}`, "tools/call"},
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
