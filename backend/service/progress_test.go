package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/jsapi"
)

// frames is a ProgressSink that keeps what it was sent.
type frames struct {
	mu  sync.Mutex
	got []jsapi.McpCallProgress
}

func (f *frames) sink(p jsapi.McpCallProgress) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, p)
}

func (f *frames) all() []jsapi.McpCallProgress {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]jsapi.McpCallProgress(nil), f.got...)
}

func some[T any](v T) *T { return &v }

// A flood of updates costs a few frames: the first at once, then at most
// one an interval, and the end sends the last state (every update
// counted) before it returns; nothing is sent after the end.
func TestCallProgressCoalesces(t *testing.T) {
	f := &frames{}
	const interval = 20 * time.Millisecond
	c := newCallProgress(f.sink, interval)
	start := time.Now()
	const n = 200_000
	for i := 1; i <= n; i++ {
		c.take(domain.Progress{Progress: float64(i), Total: n, Message: fmt.Sprint("item ", i)})
	}
	elapsed := time.Since(start)
	updates, message := c.end()
	if updates != n || message != fmt.Sprint("item ", n) {
		t.Fatalf("end counted %d updates, message %q", updates, message)
	}
	got := f.all()
	// one at once, one per interval elapsed, the last at the end
	if limit := 2 + int(elapsed/interval); len(got) > limit || len(got) < 1 {
		t.Fatalf("%d frames for %d updates in %v (at most %d)", len(got), n, elapsed, limit)
	}
	last := got[len(got)-1]
	want := jsapi.McpCallProgress{Progress: n, Total: some(float64(n)), Message: some(fmt.Sprint("item ", n)), Updates: n}
	if fmt.Sprint(last.Progress, *last.Total, *last.Message, last.Updates) != fmt.Sprint(want.Progress, *want.Total, *want.Message, want.Updates) {
		t.Fatalf("last frame %+v", last)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Updates <= got[i-1].Updates {
			t.Fatalf("frames out of order: %+v then %+v", got[i-1], got[i])
		}
	}
	c.take(domain.Progress{Progress: n + 1})
	time.Sleep(3 * interval)
	if len(f.all()) != len(got) {
		t.Fatalf("a frame after the end: %+v", f.all()[len(got):])
	}
}

// What a frame says: total only when the server sent one, the last message
// kept until a new one comes (cut to maxProgressMessage bytes on a rune
// boundary); a call without a sink still counts for the audit.
func TestCallProgressFrames(t *testing.T) {
	long := strings.Repeat("é", maxProgressMessage) // two bytes each
	cases := []struct {
		name    string
		updates []domain.Progress
		want    jsapi.McpCallProgress
	}{
		{"steps", []domain.Progress{{Progress: 1, Total: 3, Message: "one"}, {Progress: 2, Total: 3, Message: "two"}}, jsapi.McpCallProgress{Progress: 2, Total: some(3.0), Message: some("two"), Updates: 2}},
		{"no total", []domain.Progress{{Progress: 7}}, jsapi.McpCallProgress{Progress: 7, Updates: 1}},
		{"message kept", []domain.Progress{{Progress: 1, Message: "fetching"}, {Progress: 2}}, jsapi.McpCallProgress{Progress: 2, Message: some("fetching"), Updates: 2}},
		{"long message", []domain.Progress{{Progress: 1, Message: long}}, jsapi.McpCallProgress{Progress: 1, Message: some(long[:maxProgressMessage]), Updates: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &frames{}
			c := newCallProgress(f.sink, time.Hour) // the first at once, the rest at the end
			for _, p := range tc.updates {
				c.take(p)
			}
			c.end()
			got := f.all()
			b, _ := json.Marshal(got[len(got)-1])
			w, _ := json.Marshal(tc.want)
			if string(b) != string(w) {
				t.Fatalf("last frame %s, want %s", b, w)
			}
			quiet := newCallProgress(nil, 0)
			for _, p := range tc.updates {
				quiet.take(p)
			}
			if n, _ := quiet.end(); n != len(tc.updates) {
				t.Fatalf("counted %d without a sink", n)
			}
		})
	}
}

// stepsServer is a go-sdk server with the steps tool (stdiotest.AddSteps).
func stepsServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	stdiotest.AddSteps(s)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// A test call's and a model call's progress reach the sink of the command
// that made them, the last state before the call returns, and their audit
// records keep the count and the last message; a call without progress
// has neither.
func TestCallProgressReachesCommandAndAudit(t *testing.T) {
	url := stepsServer(t)
	w := newWorld(t)
	id := w.register(url, true)
	ctx := context.Background()
	if _, err := w.discover(id); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.SetPermission(ctx, jsapi.SetMcpToolPermissionDto{RegistrationID: id, NativeName: "steps", Permission: jsapi.PermissionAllow}); err != nil {
		t.Fatal(err)
	}
	toolID, err := domain.NewToolID(domain.RegistrationID(id), "steps")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, kind, callID, args string, sink ProgressSink) jsapi.McpCallOutcome {
		t.Helper()
		cctx := ctx
		if sink != nil {
			cctx = WithProgress(ctx, sink)
		}
		var o jsapi.McpCallOutcome
		var err error
		switch kind {
		case "test":
			if err := w.start(callID); err != nil {
				t.Fatal(err)
			}
			o, err = w.svc.TestCall(cctx, jsapi.TestMcpToolCallDto{CallID: callID, RegistrationID: id, NativeName: "steps", ArgumentsJSON: args})
		case "model":
			if _, err := w.svc.StartLegacyCall(ctx, jsapi.McpExecutionCallIdDto{ExecutionCallID: callID}); err != nil {
				t.Fatal(err)
			}
			o, err = w.svc.CallLegacyTool(cctx, jsapi.CallLegacyMcpToolDto{ExecutionCallID: callID, ToolID: string(toolID), ArgumentsJSON: args})
		}
		if err != nil || o.Outcome != jsapi.OutcomeKnownResponse {
			t.Fatalf("%s call: %+v, %v", kind, o, err)
		}
		return o
	}
	for _, kind := range []string{"test", "model"} {
		t.Run(kind, func(t *testing.T) {
			f := &frames{}
			run(t, kind, kind+"-progress", `{"n":5}`, f.sink)
			got := f.all()
			if len(got) == 0 {
				t.Fatal("no progress reached the command")
			}
			last := got[len(got)-1]
			if last.Progress != 5 || last.Total == nil || *last.Total != 5 || last.Message == nil || *last.Message != "step 5 of 5" || last.Updates != 5 {
				t.Fatalf("last frame %+v", last)
			}
			run(t, kind, kind+"-quiet", `{"n":0}`, nil)
			list, err := w.svc.ListAudit(ctx, jsapi.McpAuditListDto{})
			if err != nil || len(list.Entries) < 2 {
				t.Fatalf("audit %+v, %v", list, err)
			}
			quiet, loud := list.Entries[0], list.Entries[1]
			if quiet.ProgressUpdates != nil || quiet.ProgressMessage != nil {
				t.Fatalf("a call without progress recorded %v, %v", quiet.ProgressUpdates, quiet.ProgressMessage)
			}
			if loud.ProgressUpdates == nil || *loud.ProgressUpdates != 5 || loud.ProgressMessage == nil || *loud.ProgressMessage != "step 5 of 5" {
				t.Fatalf("the call's record: %+v", loud)
			}
		})
	}
}
