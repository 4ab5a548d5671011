package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// One bad entry must not fail a whole list. go-sdk decodes a list page into
// its typed result in one go, and one entry it cannot decode ({"uri": 5},
// null) fails the page and the listing with it. So the transports take each
// list answer apart before go-sdk decodes it (the HTTP body, guard.go; the
// stdio response, stdio_conn.go): each entry is decoded on its own, as
// go-sdk would, and one that does not decode is left out of the page and
// reported, so the listing keeps the good ones with a diagnostic per bad
// one (discover.go for tools, resources.go for the other three).

// listMembers are the list methods and the member of their result that
// holds the entries, with the member that names an entry.
var listMembers = map[string]struct{ entries, name string }{
	"tools/list":               {"tools", "name"},
	"resources/list":           {"resources", "uri"},
	"resources/templates/list": {"resourceTemplates", "uriTemplate"},
	"prompts/list":             {"prompts", "name"},
}

// malformed is an entry left out of a page because it does not decode.
type malformed struct {
	item  *string // what names it, when that is a string
	index int     // its place in its page, from 1
	err   string
}

// decodeEntry decodes one entry of method's list as go-sdk does (its
// decoder, case-sensitive, at most 1,000 levels deep).
func decodeEntry(method string, raw json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errors.New("it is null")
	}
	if domain.DepthOver(raw, 1000) {
		return errors.New("it nests more than 1000 levels deep")
	}
	var v any
	switch method {
	case "tools/list":
		v = new(mcp.Tool)
	case "resources/list":
		v = new(mcp.Resource)
	case "resources/templates/list":
		v = new(mcp.ResourceTemplate)
	default:
		v = new(mcp.Prompt)
	}
	dec := segjson.NewDecoder(bytes.NewReader(raw))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(v)
}

// isolateMessage is a list answer (a JSON-RPC message) without the entries
// of its page that do not decode, and those entries; msg itself when every
// entry decodes or the answer cannot be taken apart (go-sdk then says why).
func isolateMessage(method string, msg []byte) ([]byte, []malformed) {
	m, ok := domain.Members(msg)
	if !ok || m["result"] == nil {
		return msg, nil
	}
	result, bad := isolateEntries(method, m["result"])
	if bad == nil {
		return msg, nil
	}
	m["result"] = result
	out, err := json.Marshal(m)
	if err != nil {
		return msg, nil
	}
	return out, bad
}

// isolateEntries is isolateMessage for a result.
func isolateEntries(method string, result json.RawMessage) (json.RawMessage, []malformed) {
	spec := listMembers[method]
	top, ok := domain.Members(result)
	if !ok {
		return result, nil
	}
	entries, ok := domain.Elements(top[spec.entries])
	if !ok {
		return result, nil
	}
	var bad []malformed
	kept := make([]json.RawMessage, 0, len(entries))
	for i, raw := range entries {
		err := decodeEntry(method, raw)
		if err == nil {
			kept = append(kept, raw)
			continue
		}
		b := malformed{index: i + 1, err: clip(err.Error())}
		if fields, ok := domain.Members(raw); ok {
			var name string
			if json.Unmarshal(fields[spec.name], &name) == nil {
				b.item = &name
			}
		}
		bad = append(bad, b)
	}
	if bad == nil {
		return result, nil
	}
	list, err := json.Marshal(kept)
	if err != nil {
		return result, nil
	}
	top[spec.entries] = list
	out, err := json.Marshal(top)
	if err != nil {
		return result, nil
	}
	return out, bad
}

// message words a malformed entry of noun ("the resource list").
func (m malformed) message(noun string) string {
	if m.item != nil {
		return fmt.Sprintf("Entry `%s` of %s was left out: it does not decode (%s)", clip(*m.item), noun, m.err)
	}
	return fmt.Sprintf("Entry %d of a page of %s was left out: it does not decode (%s)", m.index, noun, m.err)
}

// clip is s as a message quotes it: at most 200 bytes, valid UTF-8, no
// control characters (a decoder's error quotes the server's bytes).
func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// addMalformed records entries left out of the pages of the operation.
func (ex *exchange) addMalformed(bad []malformed) {
	if len(bad) == 0 {
		return
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.malformed = append(ex.malformed, bad...)
}

// takeMalformed returns the entries left out since it was last called.
func (ex *exchange) takeMalformed() []malformed {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	bad := ex.malformed
	ex.malformed = nil
	return bad
}
