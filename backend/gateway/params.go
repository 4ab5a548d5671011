package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The Mcp-Param-* headers of SEP-2243 (MCP 2026-07-28): a tools/call
// mirrors each argument whose input-schema property carries x-mcp-header
// into the header Mcp-Param-<name>, so intermediaries can route on it
// without reading the body.
//
// go-sdk computes them only for a tool it listed in the same session, so a
// kept session would need a tools/list before every call. ttmcp knows the
// tool from its validated catalog instead: the call passes the input
// schema, paramHeaders computes the headers here, and the transport sets
// them on the tools/call request, replacing any go-sdk would set — one
// implementation decides what is sent. The rules are go-sdk's (which the
// conformance suite's http-custom-headers checks pass): properties at any
// depth of "properties"; only string, integer (within ±(2^53-1)) and
// boolean values; absent and null arguments send no header; a value that
// is not plain printable ASCII, has white space at either end, or looks
// like the sentinel is sent as =?base64?…?=.

const paramHeaderPrefix = "Mcp-Param-"

// paramHeaders returns the Mcp-Param-* headers of a call of a tool with
// inputSchema and args (a JSON object), or nil when there are none.
func paramHeaders(inputSchema, args json.RawMessage) http.Header {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return nil
	}
	var schema headerSchema
	if json.Unmarshal(inputSchema, &schema) != nil || len(schema.Properties) == 0 {
		return nil
	}
	var values map[string]json.RawMessage
	if json.Unmarshal(args, &values) != nil {
		return nil
	}
	h := http.Header{}
	schema.collect(values, h)
	if len(h) == 0 {
		return nil
	}
	return h
}

// headerSchema is the part of an input schema x-mcp-header lives in.
type headerSchema struct {
	XMCPHeader json.RawMessage         `json:"x-mcp-header"`
	Properties map[string]headerSchema `json:"properties"`
}

// collect adds the headers of the properties of s found in values.
func (s headerSchema) collect(values map[string]json.RawMessage, h http.Header) {
	for name, prop := range s.Properties {
		raw, ok := values[name]
		if !ok {
			continue
		}
		var header string
		if json.Unmarshal(prop.XMCPHeader, &header) == nil && header != "" {
			if v, ok := headerValue(raw); ok {
				h[http.CanonicalHeaderKey(paramHeaderPrefix+header)] = []string{v}
			}
		}
		if len(prop.Properties) > 0 {
			var nested map[string]json.RawMessage
			if json.Unmarshal(raw, &nested) == nil {
				prop.collect(nested, h)
			}
		}
	}
}

// maxSafeInteger bounds the integers a header may carry (JavaScript's safe
// integers).
const maxSafeInteger = 1<<53 - 1

// headerValue encodes one argument: a string, a boolean or an integer in
// the safe range; anything else (null, a fraction, an object) sends no
// header.
func headerValue(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		if needsBase64(s) {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=", true
		}
		return s, true
	case 't', 'f':
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return "", false
		}
		return strconv.FormatBool(b), true
	case 'n':
		return "", false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// needsBase64 reports whether a string cannot travel as a plain header
// value.
func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")
}

// setParamHeaders replaces the request's Mcp-Param-* headers with want.
func setParamHeaders(h, want http.Header) {
	for name := range h {
		if strings.HasPrefix(name, paramHeaderPrefix) {
			delete(h, name)
		}
	}
	for name, v := range want {
		h[name] = v
	}
}
