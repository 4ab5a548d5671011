package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
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
	plan := plans.of(inputSchema)
	if plan == nil {
		return nil
	}
	var values map[string]json.RawMessage
	if json.Unmarshal(args, &values) != nil {
		return nil
	}
	h := http.Header{}
	plan.collect(values, h)
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

// headerPlan is what of an input schema decides a call's headers: the
// properties that carry an x-mcp-header (its name) or lead to one that
// does, nothing else.
type headerPlan struct {
	header string // "" when the property itself sends none
	props  map[string]*headerPlan
}

// planOf prunes s to its headers; nil when it has none.
func planOf(s headerSchema) *headerPlan {
	var props map[string]*headerPlan
	for name, prop := range s.Properties {
		var header string
		if json.Unmarshal(prop.XMCPHeader, &header) != nil {
			header = ""
		}
		nested := planOf(prop)
		if header == "" && nested == nil {
			continue
		}
		if nested == nil {
			nested = &headerPlan{}
		}
		nested.header = header
		if props == nil {
			props = map[string]*headerPlan{}
		}
		props[name] = nested
	}
	if props == nil {
		return nil
	}
	return &headerPlan{props: props}
}

// collect adds the headers of the properties of p found in values.
func (p *headerPlan) collect(values map[string]json.RawMessage, h http.Header) {
	for name, prop := range p.props {
		raw, ok := values[name]
		if !ok {
			continue
		}
		if prop.header != "" {
			if v, ok := headerValue(raw); ok {
				h[http.CanonicalHeaderKey(paramHeaderPrefix+prop.header)] = []string{v}
			}
		}
		if len(prop.props) > 0 {
			var nested map[string]json.RawMessage
			if json.Unmarshal(raw, &nested) == nil {
				prop.collect(nested, h)
			}
		}
	}
}

// planCache keeps the plans of the input schemas calls were made with,
// keyed by the schema's bytes (a tool's schema from the catalog is the
// same on every call): decoding the whole schema was most of ttmcp's own
// work in a warm loopback call of a 2026 tool. Bounded by the bytes of
// the schemas it holds; full, it starts again empty.
type planCache struct {
	mu    sync.Mutex
	m     map[string]*headerPlan // nil: the schema has no headers (or is not an object)
	bytes int
}

// maxPlanBytes bounds the schema bytes a planCache keys by.
const maxPlanBytes = 4 << 20

var plans planCache

// of returns the plan of inputSchema, decoding it the first time.
func (c *planCache) of(inputSchema []byte) *headerPlan {
	c.mu.Lock()
	p, ok := c.m[string(inputSchema)]
	c.mu.Unlock()
	if ok {
		return p
	}
	var schema headerSchema
	if json.Unmarshal(inputSchema, &schema) == nil {
		p = planOf(schema)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(inputSchema) > maxPlanBytes {
		c.m, c.bytes = map[string]*headerPlan{}, 0
	}
	if len(inputSchema) <= maxPlanBytes {
		c.m[string(inputSchema)] = p
		c.bytes += len(inputSchema)
	}
	return p
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
