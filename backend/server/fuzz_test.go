package server

// The hostile-input suite's wire fuzz (issue 9): random invoke frames —
// envelopes readable or not, every command with its args mutated into
// random JSON shapes, sizes, depths and encodings (lone surrogates, raw
// invalid UTF-8, repeated members, paths that climb out of the data root)
// — sent by a Go client to the real backend over real files, for a bounded
// time. After each batch it asserts that the backend still answers, that
// no file outside the data root changed, and that every acknowledged
// write is on disk.
//
//	TTMCP_FUZZ_SEED=n      replays a run (the seed is printed on failure)
//	TTMCP_FUZZ_TIME=10s    runs longer (default 3s)

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/internal/hostile"
	"github.com/ttmcp/ttmcp/jsapi"
)

// ---------------------------------------------------------------- values

// jv is a JSON value as the fuzzer builds it: nil (null), bool, num
// (number text), str, raw (a string literal written as is: escapes and
// bytes JSON.stringify would never produce), []jv, or obj (members in
// order, repeats allowed).
type (
	num string
	str string
	raw string
	obj []member
)

type member struct {
	name    string
	v       any
	rawName bool // name is a string literal written as is
}

// write appends the JSON text of v.
func write(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case num:
		return append(b, v...)
	case str:
		b, _ = jsontext.AppendQuote(b, string(v)) // invalid UTF-8 becomes U+FFFD
		return b
	case raw:
		return append(b, v...)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = write(b, e)
		}
		return append(b, ']')
	case obj:
		b = append(b, '{')
		for i, m := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if m.rawName {
				b = append(b, m.name...)
			} else {
				b, _ = jsontext.AppendQuote(b, m.name)
			}
			b = append(b, ':')
			b = write(b, m.v)
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("fuzz: cannot write %T", v))
}

// fuzzer draws random inputs from one seeded source.
type fuzzer struct {
	r   *rand.Rand
	ids []string // registrations created so far
}

func (f *fuzzer) n(k int) int           { return f.r.IntN(k) }
func (f *fuzzer) chance(p float64) bool { return f.r.Float64() < p }

// hostileStrings are strings that have broken hosts before: paths out of the data
// root, names of devices, reserved names, NUL, escapes, prototypes.
var hostileStrings = []string{
	"", " ", "..", ".", "../outside/a.json", "..\\..\\outside", "/etc/passwd", "C:\\Windows\\win.ini",
	"%2e%2e%2f", "con", "NUL", "aux.json", "a\x00b", "\u202e", "\ufeff", "__proto__", "constructor",
	"550e8400-e29b-41d4-a716-446655440000", "550E8400-E29B-41D4-A716-446655440000", "mcp/x",
	"mcp__a__b", "http://127.0.0.1:9/mcp", "http://[::1]:9/", "file:///etc/passwd", "javascript:alert(1)",
	"auto", "active", "paused", "ask", "allow", "off", "main", "tauritavern.mcp-manager",
	strings.Repeat("a", 251), strings.Repeat("é", 300), "😀", "\t\n\r",
}

// rawStrings are string literals no JSON.stringify writes.
var rawStrings = []string{
	`"\ud83d"`, `"x\udc00y"`, `"\ud83d\u0041"`, `"\udfff\ud800"`, "\"\xff\xfe\"", "\"a\xc3\"", "\"\xed\xa0\x80\"",
	`"\u0000"`, `"\/"`, `"\q"`, `"\u12"`, "\"\x01\"", `"\uD83D\uDE00"`,
}

func (f *fuzzer) str() any {
	switch f.n(10) {
	case 0, 1, 2:
		return str(hostileStrings[f.n(len(hostileStrings))])
	case 3:
		return raw(rawStrings[f.n(len(rawStrings))])
	case 4:
		return str(strings.Repeat(string(rune('a'+f.n(26))), 1<<f.n(17))) // up to 64 KiB
	case 5:
		b := make([]rune, f.n(20))
		for i := range b {
			b[i] = rune(f.n(0x30000))
		}
		return str(string(b))
	case 6:
		if len(f.ids) > 0 {
			return str(f.ids[f.n(len(f.ids))])
		}
	}
	return str(fmt.Sprint("s", f.n(1000)))
}

func (f *fuzzer) number() any {
	switch f.n(8) {
	case 0:
		return num("-0")
	case 1:
		return num("1e400")
	case 2:
		return num("18446744073709551616")
	case 3:
		return num("0.5")
	case 4:
		return num("-1")
	case 5:
		return num("9007199254740993")
	}
	return num(strconv.Itoa(f.n(100)))
}

// value returns a random JSON value, depth levels deep at most.
func (f *fuzzer) value(depth int) any {
	k := f.n(10)
	if depth <= 0 {
		k = f.n(5)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return f.chance(0.5)
	case 2:
		return f.number()
	case 3, 4:
		return f.str()
	case 5, 6:
		a := make([]any, f.n(6))
		for i := range a {
			a[i] = f.value(depth - 1)
		}
		return a
	default:
		o := obj{}
		for range f.n(6) {
			o = append(o, f.member(f.value(depth-1)))
		}
		return o
	}
}

// member returns a member holding v, named like anything.
func (f *fuzzer) member(v any) member {
	switch f.n(4) {
	case 0:
		return member{name: rawStrings[f.n(len(rawStrings))], rawName: true, v: v}
	case 1:
		return member{name: hostileStrings[f.n(len(hostileStrings))], v: v}
	}
	return member{name: fmt.Sprint("k", f.n(10)), v: v}
}

// deep returns a value nested n levels.
func deep(n int) any {
	var v any = num("1")
	for range n {
		v = []any{v}
	}
	return v
}

// ---------------------------------------------------------------- frames

func m(name string, v any) member { return member{name: name, v: v} }

// template returns valid args of command, for the fuzzer to break.
func (f *fuzzer) template(command string) obj {
	id := func() any {
		if len(f.ids) > 0 && f.chance(0.7) {
			return str(f.ids[f.n(len(f.ids))])
		}
		return f.str()
	}
	dto := func(ms ...member) obj { return obj{m("dto", obj(ms))} }
	switch command {
	case jsapi.CmdListServers, jsapi.CmdListToolSets:
		return obj{}
	case jsapi.CmdListLegacyTools:
		if f.chance(0.5) {
			return obj{}
		}
		return dto(m("toolSetId", f.str()))
	case jsapi.CmdSaveToolSet:
		return dto(m("name", f.str()), m("tools", []any{str("mcp/550e8400-e29b-41d4-a716-446655440000:*"), f.str()}), m("resultInlineCharLimit", f.number()))
	case jsapi.CmdRemoveToolSet:
		return dto(m("id", f.str()))
	case jsapi.CmdReadToolResult:
		return dto(m("resultId", f.str()), m("startLine", f.number()), m("maxChars", f.number()))
	case jsapi.CmdCreateServer:
		return dto(m("displayName", f.str()), m("endpoint", str("http://127.0.0.1:9/mcp")),
			m("headers", obj{m("X-Key", f.str())}), m("protocolVersion", str("auto")))
	case jsapi.CmdUpdateServer:
		return dto(m("registrationId", id()), m("displayName", f.str()), m("endpoint", str("http://127.0.0.1:9/mcp")),
			m("headers", obj{}), m("protocolVersion", str("2025-06-18")))
	case jsapi.CmdSetServerState:
		return dto(m("registrationId", id()), m("state", str([]string{"active", "paused"}[f.n(2)])))
	case jsapi.CmdRemoveServer, jsapi.CmdDiscoverTools, jsapi.CmdRefreshTools:
		return dto(m("registrationId", id()))
	case jsapi.CmdSetToolPermission:
		return dto(m("registrationId", id()), m("nativeName", f.str()), m("permission", str([]string{"off", "ask", "allow"}[f.n(3)])))
	case jsapi.CmdSetToolDescriptionOverride:
		return dto(m("registrationId", id()), m("nativeName", f.str()),
			m("override", obj{m("description", f.str()), m("properties", obj{m("q", f.str())})}))
	case jsapi.CmdStartTestCall, jsapi.CmdCancelTestCall:
		return dto(m("callId", f.str()))
	case jsapi.CmdTestToolCall:
		return dto(m("callId", f.str()), m("registrationId", id()), m("nativeName", f.str()), m("argumentsJson", str("{}")))
	case jsapi.CmdStartLegacyToolCall, jsapi.CmdCancelLegacyToolCall:
		return dto(m("executionCallId", f.str()))
	case jsapi.CmdCallLegacyTool:
		if f.chance(0.3) {
			return dto(m("executionCallId", f.str()), m("toolId", f.str()), m("argumentsJson", str("{}")),
				m("readable", obj{m("inlineCharLimit", f.number()), m("readerTool", f.chance(0.5))}))
		}
		return dto(m("executionCallId", f.str()), m("toolId", f.str()), m("argumentsJson", str("{}")))
	case jsapi.CmdListAuditEntries:
		return dto(m("limit", f.number()))
	}
	// The extension store's flat args.
	return obj{m("namespace", f.str()), m("key", f.str()), m("table", f.str()), m("value", f.value(3)),
		m("newKey", f.str()), m("dataBase64", str("aGk="))}
}

// mutate breaks o in one to three random ways.
func (f *fuzzer) mutate(v any, depth int) any {
	o, ok := v.(obj)
	if !ok || depth > 3 {
		return f.value(3)
	}
	o = slices.Clone(o)
	for range 1 + f.n(3) {
		switch f.n(7) {
		case 0:
			if len(o) > 0 {
				i := f.n(len(o))
				o = slices.Delete(o, i, i+1)
			}
		case 1:
			o = append(o, f.member(f.value(2)))
		case 2:
			if len(o) > 0 {
				o = append(o, o[f.n(len(o))]) // a repeated member
			}
		case 3:
			if len(o) > 0 {
				i := f.n(len(o))
				o[i].v = f.value(3)
			}
		case 4:
			if len(o) > 0 {
				i := f.n(len(o))
				o[i].v = f.mutate(o[i].v, depth+1)
			}
		case 5:
			if len(o) > 0 {
				i := f.n(len(o))
				o[i].v = f.str()
			}
		case 6:
			if len(o) > 0 {
				o[f.n(len(o))].v = nil
			}
		}
	}
	return o
}

// frame is one invoke frame and what the backend must do with it.
type frame struct {
	data     []byte
	binary   bool
	id       uint64
	command  string
	args     any
	readable bool // its envelope is readable: the socket must answer it
}

func (f *fuzzer) frame(id uint64) frame {
	command := jsapi.Commands[f.n(len(jsapi.Commands))]
	if f.chance(0.3) { // writes, whose acknowledgements are checked on disk
		command = []string{jsapi.CmdCreateServer, jsapi.CmdUpdateServer, jsapi.CmdSetServerState, jsapi.CmdRemoveServer,
			jsapi.CmdSetToolPermission, jsapi.CmdSetToolDescriptionOverride, jsapi.CmdSetExtensionStoreJSON}[f.n(7)]
	}
	var args any = f.template(command)
	switch f.n(10) {
	case 0, 3, 4: // valid
	case 1:
		args = f.value(4)
	case 2:
		args = deep(1 + f.n(20000))
	default:
		args = f.mutate(args, 0)
	}
	fr := frame{id: id, command: command, args: args, readable: true}
	env := obj{{name: "type", v: str("invoke")}, {name: "id", v: num(strconv.FormatUint(id, 10))}, {name: "command", v: str(command)}, {name: "args", v: args}}
	switch f.n(12) {
	case 0: // an unknown member: readable all the same
		env = append(env, f.member(f.value(2)))
	case 1: // no args
		env = env[:3]
	case 2: // cut short inside args
		head := len(write(nil, env[:3])) - 1
		b := write(nil, env)
		fr.data = b[:head+8+f.n(len(b)-head-8)] // `,"args":` is 8 bytes
		return fr
	case 3: // trailing data
		fr.data = append(write(nil, env), " {}"...)
		return fr
	case 4: // one of the envelope's members broken, missing or repeated
		// (args stay plain: broken JSON in args before a repeated member
		// would end the frame first, as the request's error)
		env[3].v, fr.args = obj{}, obj{}
		i := f.n(3)
		switch f.n(4) {
		case 0:
			env = slices.Delete(env, i, i+1)
		case 1:
			env = append(env, env[i])
		case 2:
			env[i].v = f.value(1)
		default:
			env[i].v = raw(`"\ud800"`)
		}
		fr.readable = readableEnvelope(env)
		if fr.readable { // it names the id; the command may be broken (then the request fails)
			fr.command = ""
			for _, m := range env {
				switch m.name {
				case "id":
					fr.id, _ = strconv.ParseUint(string(m.v.(num)), 10, 64)
				case "command":
					if fr.command != "" || json.Unmarshal(write(nil, m.v), &fr.command) != nil {
						fr.command = "(broken)"
					}
				}
			}
			if fr.command == "" {
				fr.command = "(none)"
			}
		}
	case 5:
		fr.binary, fr.readable = true, false
	case 6:
		fr.data, fr.readable = []byte(rawStrings[f.n(len(rawStrings))]), false
		return fr
	}
	fr.data = write(nil, env)
	return fr
}

// readableEnvelope reports whether env has type "invoke" and a uint id,
// each once: then the socket answers the id, whatever the command.
func readableEnvelope(env obj) bool {
	count := map[string]int{}
	ok := true
	for _, m := range env {
		count[m.name]++
		text := write(nil, m.v)
		var s string
		isStr := len(text) > 0 && text[0] == '"' && json.Unmarshal(text, &s) == nil
		switch m.name {
		case "type":
			ok = ok && isStr && s == "invoke"
		case "id":
			n, isNum := m.v.(num)
			_, err := strconv.ParseUint(string(n), 10, 64)
			ok = ok && isNum && err == nil && n[0] != '-' && n[0] != '+'
		}
	}
	return ok && count["type"] == 1 && count["id"] == 1
}

// ---------------------------------------------------------------- checks

// checkMessage fails when an error body is not a clear error: its code
// leads the message, its kind is one a bad input may get, and it carries
// no Go internals.
func checkMessage(e jsapi.ErrorBody) error {
	switch e.Kind {
	case jsapi.KindBadRequest, jsapi.KindNotFound, jsapi.KindConflict, jsapi.KindUnavailable:
	default:
		return fmt.Errorf("kind %q for a bad input", e.Kind)
	}
	if e.Code == "" || !strings.HasPrefix(e.Message, e.Code+": ") {
		return fmt.Errorf("message %q does not start with its code %q", e.Message, e.Code)
	}
	for _, bad := range []string{"<nil>", "jsontext:", "cannot unmarshal", "Go ", "map[", "reflect.", "panic", "%!"} {
		if strings.Contains(e.Message, bad) {
			return fmt.Errorf("message %q holds %q", e.Message, bad)
		}
	}
	return nil
}

// ---------------------------------------------------------------- the run

// TestWireFuzz is the bounded wire fuzz. Frames of one batch go one at a
// time on one socket (so the acknowledged state is exact), beside a
// request kept in flight for the whole batch; frames whose envelope is
// unreadable, and binary ones, go on sockets of their own, which must
// close with 1008 or 1003.
func TestWireFuzz(t *testing.T) {
	seed, budget := hostile.Run(t, 3*time.Second)
	parent := t.TempDir()
	root := filepath.Join(parent, "data")
	hostile.Plant(t, filepath.Join(parent, "outside"))
	before := hostile.Digest(t, parent, root)
	store := storage.Open(root)
	svc := service.New(service.Config{Registrations: store, Catalogs: store, Gateway: offline{},
		Audit: storage.OpenAuditLog(root, storage.AuditOptions{}), ExtensionStore: storage.OpenExtensionStore(root)})
	started, releases := make(chan struct{}, 1), make(chan struct{})
	f := newFixtureWith(t, root, svc, func(c *Config) {
		c.Commands.table["block"] = func(ctx context.Context, _ jsontext.Value) (any, error) {
			started <- struct{}{}
			select {
			case <-releases:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})

	failed := func(batch int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, batch %d: %s\n(replay: TTMCP_FUZZ_SEED=%d go test -run TestWireFuzz ./backend/server)",
			seed, batch, fmt.Sprintf(format, args...), seed)
	}
	deadline := time.Now().Add(budget)
	expected := map[string]*jsapi.McpServer{}     // acknowledged registrations; nil: removed
	storeExpected := map[string]jsapi.JSONValue{} // acknowledged extension store entries; nil: deleted
	unmodeled := map[string]bool{}                // namespaces changed in ways the model does not follow
	frames := 0
	for batch := 0; time.Now().Before(deadline); batch++ {
		fz := &fuzzer{r: rand.New(rand.NewPCG(seed, uint64(batch))), ids: slices.Sorted(mapsKeys(expected))}
		c := f.connect(t)
		c.send(1<<40, "block", nil)
		<-started
		for i := range 40 {
			id := uint64(batch*1000 + i + 1)
			fr := fz.frame(id)
			frames++
			if !fr.readable || fr.binary {
				code, reason := f.throwaway(t, fr)
				want := websocket.StatusCode(jsapi.ClosePolicyViolation)
				if fr.binary {
					want = jsapi.CloseUnsupportedData
				}
				if code != want {
					failed(batch, "frame %q closed %d %q; want %d", truncate(fr.data), code, reason, want)
				}
				continue
			}
			c.raw(string(fr.data))
			r := c.readFor(fr.id)
			if r.err != nil {
				failed(batch, "frame %q: %v", truncate(fr.data), r.err)
			}
			if !r.OK {
				if err := checkMessage(r.Error); err != nil {
					failed(batch, "frame %q: %v", truncate(fr.data), err)
				}
				continue
			}
			var s jsapi.McpServer
			switch fr.command {
			case jsapi.CmdCreateServer, jsapi.CmdUpdateServer, jsapi.CmdSetServerState, jsapi.CmdSetToolPermission, jsapi.CmdSetToolDescriptionOverride:
				if err := json.Unmarshal(r.Value, &s); err != nil || s.ID == "" {
					failed(batch, "%s acknowledged %.200s (%v)", fr.command, r.Value, err)
				}
				expected[s.ID] = &s
			case jsapi.CmdRemoveServer:
				var args struct {
					DTO jsapi.McpRegistrationIdDto `json:"dto"`
				}
				if err := json.Unmarshal(write(nil, fr.args), &args); err != nil {
					failed(batch, "remove acknowledged for args %s (%v)", truncate(write(nil, fr.args)), err)
				}
				expected[args.DTO.RegistrationID] = nil
			case jsapi.CmdSetExtensionStoreJSON, jsapi.CmdDeleteExtensionStoreJSON:
				var args jsapi.ExtensionStoreSetJSONArgs
				if err := json.Unmarshal(write(nil, fr.args), &args, json.RejectUnknownMembers(false)); err != nil {
					failed(batch, "%s acknowledged for args %s (%v)", fr.command, truncate(write(nil, fr.args)), err)
				}
				k := storeKey(args.Namespace, args.Table, args.Key)
				if fr.command == jsapi.CmdDeleteExtensionStoreJSON {
					storeExpected[k] = nil
				} else {
					storeExpected[k] = args.Value
				}
			case jsapi.CmdUpdateExtensionStoreJSON, jsapi.CmdRenameExtensionStoreKey, jsapi.CmdDeleteExtensionStoreTable:
				var args struct {
					Namespace string `json:"namespace"`
				}
				json.Unmarshal(write(nil, fr.args), &args, json.RejectUnknownMembers(false))
				unmodeled[strings.TrimSpace(args.Namespace)] = true
			}
		}
		releases <- struct{}{}
		if r := c.readFor(1 << 40); !r.OK || string(r.Value) != `"released"` {
			failed(batch, "the request in flight during the batch got %s (%v)", r.raw, r.err)
		}
		c.conn.Close(websocket.StatusNormalClosure, "")

		// The backend answers, nothing outside the data root changed, and
		// every acknowledged write is on disk.
		var list jsapi.McpServerList
		lc := f.connect(t)
		lc.must(jsapi.CmdListServers, nil, &list)
		lc.conn.CloseNow()
		if after := hostile.Digest(t, parent, root); after != before {
			failed(batch, "files outside the data root changed")
		}
		fresh := storage.Open(root)
		for id, want := range expected {
			r, ok, err := fresh.Load(domain.RegistrationID(id))
			switch {
			case want == nil && (ok || err != nil):
				failed(batch, "removed registration %s: on disk %v, %v", id, ok, err)
			case want != nil && (!ok || err != nil):
				failed(batch, "acknowledged registration %s is not on disk (%v)", id, err)
			case want != nil:
				got, _ := json.Marshal(service.ServerDTO(r), json.Deterministic(true))
				acked := *want
				acked.Auth, acked.Capabilities = nil, nil // the sign-in state and the allowlist are not in the registration file
				exp, _ := json.Marshal(acked, json.Deterministic(true))
				if string(got) != string(exp) {
					failed(batch, "registration %s on disk:\n%s\nacknowledged:\n%s", id, got, exp)
				}
			}
		}
		extensions := storage.OpenExtensionStore(root)
		for k, want := range storeExpected {
			ns, table, key := splitStoreKey(k)
			if unmodeled[ns] {
				continue
			}
			got, ok, err := extensions.ReadJSON(ns, table, key)
			switch {
			case want == nil && (ok || err != nil):
				failed(batch, "deleted entry %q: on disk %v, %v", k, ok, err)
			case want != nil && (!ok || err != nil):
				failed(batch, "acknowledged entry %q is not on disk (%v)", k, err)
			case want != nil && canonical(got) != canonical(want):
				failed(batch, "entry %q on disk %s; acknowledged %s", k, truncate(got), truncate(want))
			}
		}
		if n := len(list.Servers); n != countLive(expected) {
			failed(batch, "list has %d servers; %d were acknowledged and not removed", n, countLive(expected))
		}
	}
	t.Logf("seed %d: %d frames, %d registrations acknowledged", seed, frames, len(expected))
}

// storeKey names an extension store entry as the store resolves it.
func storeKey(namespace string, table *string, key string) string {
	t, _ := domain.ExtensionStoreTable(table)
	return strings.TrimSpace(namespace) + "\x00" + t + "\x00" + strings.TrimSpace(key)
}

func splitStoreKey(k string) (namespace, table, key string) {
	p := strings.SplitN(k, "\x00", 3)
	return p[0], p[1], p[2]
}

// canonical returns the RFC 8785 form of a JSON text (or the text, if it
// is not JSON).
func canonical(b []byte) string {
	v := jsontext.Value(slices.Clone(b))
	if err := v.Canonicalize(); err != nil {
		return string(b)
	}
	return string(v)
}

func mapsKeys(m map[string]*jsapi.McpServer) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k, v := range m {
			if v != nil && !yield(k) {
				return
			}
		}
	}
}

func countLive(m map[string]*jsapi.McpServer) int {
	n := 0
	for _, v := range m {
		if v != nil {
			n++
		}
	}
	return n
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:200]) + "…" + string(b[len(b)-60:])
	}
	return string(b)
}

// throwaway sends fr on a socket of its own and returns how it closed.
func (f *fixture) throwaway(t *testing.T, fr frame) (websocket.StatusCode, string) {
	t.Helper()
	conn, _, err := f.dial(t, f.origin(), f.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := conn.Read(ctx); err != nil { // welcome
		t.Fatal(err)
	}
	typ := websocket.MessageText
	if fr.binary {
		typ = websocket.MessageBinary
	}
	if err := conn.Write(ctx, typ, fr.data); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		}
		t.Fatalf("frame %q: got %s instead of a close", truncate(fr.data), data)
	}
}

// answer is a result frame read for one id, or why none came.
type answer struct {
	result
	err error
}

// readFor reads results until the one of id, which must come before the
// socket closes or 20 s pass.
func (c *client) readFor(id uint64) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			return answer{err: fmt.Errorf("no result for id %d: %w", id, err)}
		}
		var r result
		if err := json.Unmarshal(data, &r); err != nil {
			return answer{err: fmt.Errorf("result %.200s: %w", data, err)}
		}
		r.raw = data
		if r.ID == id {
			return answer{result: r}
		}
	}
}

// offline is a gateway that reaches nothing: the fuzz is about the host,
// and a random endpoint must not send it to the network.
type offline struct{}

func (offline) Discover(context.Context, domain.Registration) (domain.Catalog, error) {
	return domain.Catalog{}, domain.Errorf(domain.KindUnavailable, "mcp.discovery_connect_failed", "offline in the fuzz")
}

func (offline) Disconnect(domain.RegistrationID) {}

func (offline) Status(domain.Registration) domain.ConnectionStatus {
	return domain.ConnectionStatus{State: domain.ConnectionClosed, Sessions: domain.SessionsKept}
}

func (offline) Call(context.Context, domain.Registration, domain.ToolCall) domain.CallOutcome {
	return domain.NotSent("mcp.call_connect_failed", "offline in the fuzz")
}

// The sign-in side of the offline gateway: nothing kept, nothing reached.
func (offline) AuthState(r domain.Registration) (domain.Auth, error) {
	return domain.Auth{RegistrationID: r.ID, Endpoint: r.Endpoint}, nil
}

func (offline) SignIn(context.Context, domain.Registration, domain.SignInRequest) (domain.Auth, error) {
	return domain.Auth{}, domain.Errorf(domain.KindUnavailable, "mcp.auth_failed", "offline in the fuzz")
}

func (offline) SignOut(context.Context, domain.RegistrationID) error { return nil }
func (offline) AuthGeneration() uint64                               { return 0 }

// The resources and prompts side of the offline gateway: nothing reached.
func (offline) ListResources(context.Context, domain.Registration) (domain.Listing[domain.Resource], error) {
	return domain.Listing[domain.Resource]{}, domain.Errorf(domain.KindUnavailable, "mcp.list_failed", "offline in the fuzz")
}

func (offline) ListResourceTemplates(context.Context, domain.Registration) (domain.Listing[domain.ResourceTemplate], error) {
	return domain.Listing[domain.ResourceTemplate]{}, domain.Errorf(domain.KindUnavailable, "mcp.list_failed", "offline in the fuzz")
}

func (offline) ListPrompts(context.Context, domain.Registration) (domain.Listing[domain.Prompt], error) {
	return domain.Listing[domain.Prompt]{}, domain.Errorf(domain.KindUnavailable, "mcp.list_failed", "offline in the fuzz")
}

func (offline) ReadResource(context.Context, domain.Registration, string) domain.Answer[domain.ResourceContents] {
	return domain.Answer[domain.ResourceContents]{Outcome: domain.OutcomeNotSent, Code: "mcp.call_initialize_failed", Message: "offline in the fuzz"}
}

func (offline) GetPrompt(context.Context, domain.Registration, string, map[string]string) domain.Answer[domain.PromptMessages] {
	return domain.Answer[domain.PromptMessages]{Outcome: domain.OutcomeNotSent, Code: "mcp.call_initialize_failed", Message: "offline in the fuzz"}
}

func (offline) Complete(context.Context, domain.Registration, domain.CompletionRequest) (domain.Completion, error) {
	return domain.Completion{}, domain.Errorf(domain.KindUnavailable, "mcp.completion_failed", "offline in the fuzz")
}

func (offline) Capabilities(context.Context, domain.Registration) (domain.ServerCapabilities, error) {
	return domain.ServerCapabilities{}, domain.Errorf(domain.KindUnavailable, "mcp.discovery_connect_failed", "offline in the fuzz")
}

func (offline) Advertised(domain.Registration) (domain.ServerCapabilities, bool) {
	return domain.ServerCapabilities{}, false
}
func (offline) CapabilitiesGeneration() uint64 { return 0 }
