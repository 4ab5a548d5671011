//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// askTransports are the three ways a server's questions reach a call: a
// 2025 server's elicitation/create on the call's response stream, a 2026
// input_required round, a 2025 stdio process's lines. Each returns the
// registration of a server asking set, and the count of its tool's runs
// (nil where the test cannot see them: stdio, whose answer says instead).
var askTransports = []struct {
	name   string
	rounds int
	start  func(t *testing.T, set string) (domain.Registration, *atomic.Int32)
}{
	{"2025", 1, func(t *testing.T, set string) (domain.Registration, *atomic.Int32) {
		f := &askFake{set: set}
		ts, _ := serve(t, f)
		return registration(t, ts.URL, domain.Protocol20251125, nil), &f.runs
	}},
	{"2026", 2, func(t *testing.T, set string) (domain.Registration, *atomic.Int32) {
		f := &askFake{set: set, stateless: true}
		ts, _ := serve(t, f)
		return registration(t, ts.URL, domain.Protocol20260728, nil), &f.runs
	}},
	{"stdio", 1, func(t *testing.T, set string) (domain.Registration, *atomic.Int32) { return askStdio(t, set), nil }},
}

// Questions beyond the bounds are answered cancel without asking the page,
// and the call goes on to its server's answer: a flood in one call (the
// first maxQuestionsPerCall are asked, the rest answered cancel, one
// "limited" record for them), a schema nested 1,000 or 5,000 deep (go-sdk's
// decoder fails such a message; on 2025 the call ended outcome_unknown),
// a question over 64 KiB (each "invalid").
func TestQuestionsBeyondTheBounds(t *testing.T) {
	asked16 := append(slices.Repeat([]domain.ElicitRecord{{Mode: "form", Action: "accept"}}, maxQuestionsPerCall),
		domain.ElicitRecord{Mode: "form", Action: domain.ElicitLimited})
	invalid := []domain.ElicitRecord{{Mode: "form", Action: domain.ElicitInvalid}}
	for _, tr := range askTransports {
		for _, c := range []struct {
			set   string
			asked int
			text  string
			recs  []domain.ElicitRecord
		}{
			{"flood", maxQuestionsPerCall, "accept=16 cancel=184", asked16},
			{"deep 1000", 0, "cancel=1", invalid},
			{"deep 5000", 0, "cancel=1", invalid},
			{"huge", 0, "cancel=1", invalid},
		} {
			t.Run(tr.name+"/"+c.set, func(t *testing.T) {
				r, runs := tr.start(t, c.set)
				g := stdioGateway(t, nil)
				var asked atomic.Int32
				out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`),
					Elicit: func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
						asked.Add(1)
						return accept(`{"ok":true}`), nil
					}})
				if got := callText(t, out); got != c.text {
					t.Fatalf("the server was answered %q, want %q", got, c.text)
				}
				if int(asked.Load()) != c.asked || !slices.Equal(out.Elicitations, c.recs) || out.Rounds != tr.rounds {
					t.Fatalf("asked the page %d times; recorded %d rounds %+v", asked.Load(), out.Rounds, out.Elicitations)
				}
				if runs != nil && runs.Load() != 1 {
					t.Fatalf("the tool ran %d times", runs.Load())
				}
			})
		}
	}
}

// A server asks at most maxQuestionsPerMinute questions of its user in any
// minute, across its calls: beyond, the next call's questions are answered
// cancel without asking until the minute has passed.
func TestQuestionsPerServerPerMinute(t *testing.T) {
	clock := newClock()
	g := stdioGateway(t, func(c *Config) { c.Now = clock.now })
	f := &askFake{set: "flood"}
	ts, _ := serve(t, f)
	r := registration(t, ts.URL, domain.Protocol20251125, nil)
	var asked atomic.Int32
	call := func() string {
		asked.Store(0)
		out := g.Call(context.Background(), r, domain.ToolCall{NativeName: "t", Arguments: json.RawMessage(`{}`),
			Elicit: func(context.Context, domain.ElicitRequest) (domain.ElicitResponse, error) {
				asked.Add(1)
				return accept(`{"ok":true}`), nil
			}})
		return callText(t, out)
	}
	for _, step := range []struct {
		advance time.Duration
		asked   int
	}{
		{0, maxQuestionsPerCall},
		{30 * time.Second, maxQuestionsPerMinute - maxQuestionsPerCall},
		{20 * time.Second, 0},
		{11 * time.Second, maxQuestionsPerCall}, // the first call's minute is over
	} {
		clock.add(step.advance)
		if got := call(); int(asked.Load()) != step.asked {
			t.Fatalf("after %v: asked %d, want %d (%s)", step.advance, asked.Load(), step.asked, got)
		}
	}
}
