package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// askFake is a hand-written server whose one tool "t" asks the user the
// questions of a named set (askSets), all at once, before it answers —
// what a go-sdk server will not send: a flood, a schema nested thousands
// deep. On 2025 (stateless false) they come as elicitation/create requests
// on the call's response stream; on 2026 as one input_required round. It
// answers the call with how the questions were answered ("accept=16
// cancel=184") and counts its runs. serveAskStdio serves the same over
// stdio.
type askFake struct {
	set       string
	stateless bool
	runs      atomic.Int32

	mu      sync.Mutex
	waiting map[string]chan string // 2025: question id → its answer's action
}

// askSets are the questions of each set, as params.
var askSets = map[string]func() []string{
	"flood": func() []string {
		return slices.Repeat([]string{`{"mode":"form","message":"Again?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`}, 200)
	},
	"deep 1000": func() []string { return []string{deepQuestion(1000)} },
	"deep 5000": func() []string { return []string{deepQuestion(5000)} },
	"huge": func() []string {
		return []string{`{"mode":"form","message":"` + strings.Repeat("x", 100<<10) + `","requestedSchema":{"type":"object"}}`}
	},
}

// deepQuestion is a form whose schema nests depth objects.
func deepQuestion(depth int) string {
	return `{"mode":"form","message":"deep","requestedSchema":` +
		strings.Repeat(`{"type":"object","properties":{"a":`, depth) + `{"type":"string"}` + strings.Repeat(`}}`, depth) + `}`
}

// tally words the actions of the answers as the fake's result.
func tally(actions []string) string {
	n := map[string]int{}
	for _, a := range actions {
		n[a]++
	}
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s=%d", a, n[a]))
	}
	return strings.Join(parts, " ")
}

type askMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		InputResponses map[string]struct {
			Action string `json:"action"`
		} `json:"inputResponses"`
	} `json:"params"`
	Result struct {
		Action string `json:"action"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// answerAction is the action of a client's answer to a question: its
// result's, or "error".
func (m askMessage) answerAction() string {
	if m.Error != nil {
		return "error"
	}
	return m.Result.Action
}

func (f *askFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m askMessage
	json.Unmarshal(body, &m)
	result := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}
	if !f.stateless {
		w.Header().Set("Mcp-Session-Id", "s1")
	}
	switch {
	case m.Method == "server/discover" && f.stateless:
		result(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ask","version":"1"}}}`)
	case m.Method == "initialize" && !f.stateless:
		result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ask","version":"1"}}`)
	case m.Method == "tools/call" && f.stateless:
		if m.Params.InputResponses == nil {
			// written by hand: encoding/json refuses a value nested 10,000 deep
			var reqs []string
			for i, q := range askSets[f.set]() {
				reqs = append(reqs, fmt.Sprintf(`"q%03d":{"method":"elicitation/create","params":%s}`, i, q))
			}
			result(`{"resultType":"input_required","inputRequests":{` + strings.Join(reqs, ",") + `}}`)
			return
		}
		var actions []string
		for _, resp := range m.Params.InputResponses {
			actions = append(actions, resp.Action)
		}
		f.runs.Add(1)
		b, _ := json.Marshal(tally(actions))
		result(`{"content":[{"type":"text","text":` + string(b) + `}]}`)
	case m.Method == "tools/call":
		f.ask(w, r, m.ID)
	case m.Method == "" && m.ID != nil:
		f.mu.Lock()
		ch := f.waiting[string(m.ID)]
		f.mu.Unlock()
		if ch != nil {
			ch <- m.answerAction()
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// ask puts the set's questions on the call's response stream (2025), waits
// for every answer and answers the call.
func (f *askFake) ask(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	qs := askSets[f.set]()
	answers := make(chan string, len(qs))
	f.mu.Lock()
	if f.waiting == nil {
		f.waiting = map[string]chan string{}
	}
	for i := range qs {
		f.waiting[fmt.Sprintf(`"q%03d"`, i)] = answers
	}
	f.mu.Unlock()
	for i, q := range qs {
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"q%03d\",\"method\":\"elicitation/create\",\"params\":%s}\n\n", i, q)
	}
	w.(http.Flusher).Flush()
	var actions []string
	for range qs {
		select {
		case a := <-answers:
			actions = append(actions, a)
		case <-r.Context().Done():
			return
		}
	}
	f.runs.Add(1)
	b, _ := json.Marshal(tally(actions))
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}\n\n", id, b)
	w.(http.Flusher).Flush()
}
