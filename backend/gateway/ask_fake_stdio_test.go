//go:build unix

package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// askStdioEnv names the set of askSets a child asks over stdio (2025).
const askStdioEnv = "TTMCP_TEST_STDIO_ASK"

// deepNote is the set whose call brings a notification nested 2,000 deep
// before its answer, and no question.
const deepNote = "deep note"

// runAskStdioIfChild serves askFake's tool over stdin and stdout and exits,
// or returns at once when askStdioEnv names no set: a 2025 process whose
// call puts every question of the set, then waits for every answer.
func runAskStdioIfChild() {
	set := os.Getenv(askStdioEnv)
	if set == "" {
		return
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	write := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	var callID json.RawMessage
	var actions []string
	questions := 0
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m askMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ask","version":"1"}}}`, m.ID))
		case m.Method == "tools/call" && set == deepNote:
			write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":` +
				strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`)
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID))
		case m.Method == "tools/call":
			callID, actions = m.ID, nil
			qs := askSets[set]()
			questions = len(qs)
			for i, q := range qs {
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"q%03d","method":"elicitation/create","params":%s}`, i, q))
			}
		case m.Method == "":
			if m.ID == nil || callID == nil {
				continue
			}
			if actions = append(actions, m.answerAction()); len(actions) == questions {
				b, _ := json.Marshal(tally(actions))
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, callID, b))
				callID = nil
			}
		default:
			if m.ID != nil {
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
			}
		}
	}
}

// askStdio is a stdio registration of the test binary asking set.
func askStdio(t *testing.T, set string) domain.Registration {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := domain.NewStdioRegistration("ask "+set, domain.Stdio{Command: exe, Env: map[string]string{askStdioEnv: set}}, domain.Protocol20251125)
	if err != nil {
		t.Fatal(err)
	}
	r.State = domain.StateActive
	return r
}
