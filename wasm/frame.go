//go:build js && wasm

package main

import (
	"strings"

	"github.com/ttmcp/ttmcp/jsapi"
)

// maxIDDigits bounds the id of a result frame: ids are a per-page counter,
// 15 digits keep them exact JavaScript numbers.
const maxIDDigits = 15

// Reconnect backoff: the first retry after a failed attempt waits about
// backoffBase, each further one twice as long up to backoffCap, every delay
// varied by ±backoffJitter. The first retries are quick (wasm-bridge-notes
// pitfall 8: a backend restarted on loopback is back within a second);
// the later ones thin out, because Chromium writes a console error for
// every failed request and a page cannot hide it: about 0.1, 0.2, 0.4,
// 0.8, 1.6, 3.2 s, then every 5 s (12 lines a minute while the backend
// stays down, where a 1 s cap made 60). A success starts over.
const (
	backoffBase   = 100  // ms
	backoffCap    = 5000 // ms
	backoffJitter = 0.2
)

// backoffDelay returns the delay in ms before retry number retry (0 for
// the first retry after a failure); rnd is a uniform random number in
// [0, 1).
func backoffDelay(retry int, rnd float64) int {
	d := backoffCap
	if retry < 6 { // 100, 200, 400, 800, 1600, 3200, then the cap
		d = backoffBase << retry
		if d > backoffCap {
			d = backoffCap
		}
	}
	if rnd < 0 {
		rnd = 0
	} else if rnd >= 1 {
		rnd = 0.999999
	}
	return int(float64(d) * (1 - backoffJitter + 2*backoffJitter*rnd))
}

// Invoke frames: {"type":"invoke","id":N,"command":"<name>","args":<args>},
// built by the transport from these parts.
const (
	invokeHead    = `{"type":"invoke","id":`
	invokeCommand = `,"command":`
	invokeArgs    = `,"args":`
	invokeTail    = `}`
	// invokeProgress, before the tail, asks for the call's progress
	// frames (jsapi.FrameProgress).
	invokeProgress = `,"progress":true`
)

// maxEnvelope is the largest envelope an invoke frame of command can have
// (its id at maxIDDigits digits), for size checks made before the id is known.
func maxEnvelope(command string) int {
	return len(invokeHead) + maxIDDigits + len(invokeCommand) + len(quoteJSON(command)) + len(invokeArgs) + len(invokeProgress) + len(invokeTail)
}

// helloFrame is the first frame on a socket.
func helloFrame(token string) string {
	return `{"type":"` + jsapi.FrameHello + `","token":` + quoteJSON(token) + `}`
}

// quoteJSON returns s as a JSON string literal. It is meant for short
// strings (command names, tokens, ids); payloads are never quoted in Go.
func quoteJSON(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c) // UTF-8 passes through: valid JSON text
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codeFromMessage returns the "<code>" of a message "<code>: ...", where a
// code is dotted lowercase words such as mcp.endpoint_invalid, or "".
func codeFromMessage(msg string) string {
	colon := strings.IndexByte(msg, ':')
	if colon <= 0 || colon > 128 {
		return ""
	}
	code := msg[:colon]
	dot := false
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9':
			if i == 0 {
				return ""
			}
		case c == '.':
			if i == 0 || i == len(code)-1 || code[i-1] == '.' {
				return ""
			}
			dot = true
		default:
			return ""
		}
	}
	if !dot {
		return ""
	}
	return code
}

// formatUUIDv4 formats 16 random bytes as a canonical lowercase version 4
// UUID (the fallback of crypto.randomUUID, which insecure contexts lack).
func formatUUIDv4(b [16]byte) string {
	const hex = "0123456789abcdef"
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0xf])
	}
	return string(out)
}
