package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/internal/heappeak"
	"github.com/ttmcp/ttmcp/jsapi"
)

// progressFixture serves a backend with one active server whose tool
// steps reports progress (stdiotest.AddSteps); it returns the fixture and
// the server's id.
func progressFixture(t testing.TB, interval time.Duration) (*fixture, string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	stdiotest.AddSteps(s)
	return serveOne(t, s, "Steps", service.Config{ProgressInterval: interval})
}

// stepsCall starts a test call of steps with args and sends it as invoke
// id+1, asking for its progress when progress is set.
func stepsCall(c *client, callID, regID, args string, id uint64, progress bool) {
	c.send(id, jsapi.CmdStartTestCall, dto(map[string]any{"callId": callID}))
	if r := c.read(); r.ID != id || !r.OK {
		c.t.Fatalf("start: %s", r.raw)
	}
	quoted, _ := json.Marshal(args)
	extra := ""
	if progress {
		extra = `,"progress":true`
	}
	c.raw(fmt.Sprintf(`{"type":"invoke","id":%d,"command":%q,"args":{"dto":{"callId":%q,"registrationId":%q,"nativeName":"steps","argumentsJson":%s}}%s}`,
		id+1, jsapi.CmdTestToolCall, callID, regID, quoted, extra))
}

// progressUntilResult reads frames until the result of invoke id and
// returns the progress frames before it (all of them for id: a progress
// frame of another id fails).
func progressUntilResult(c *client, id uint64) ([]jsapi.McpCallProgress, string) {
	c.t.Helper()
	var got []jsapi.McpCallProgress
	for {
		m := c.frame()
		switch string(m["type"]) {
		case `"progress"`:
			var fid uint64
			json.Unmarshal(m["id"], &fid)
			if fid != id {
				c.t.Fatalf("a progress frame of invoke %d while %d runs", fid, id)
			}
			var p jsapi.McpCallProgress
			if err := json.Unmarshal(m["value"], &p, json.RejectUnknownMembers(true)); err != nil {
				c.t.Fatalf("progress value %s: %v", m["value"], err)
			}
			got = append(got, p)
		case `"result"`:
			var fid uint64
			json.Unmarshal(m["id"], &fid)
			if fid == id {
				if string(m["ok"]) != "true" {
					c.t.Fatalf("result %v", m)
				}
				return got, string(m["value"])
			}
		default:
			c.t.Fatalf("frame %v", m)
		}
	}
}

// A call's progress reaches the page that asked for it as progress frames
// of its invoke, in order, the last (every step counted, with total and
// message) before the result and none after; a page that did not ask, and
// another page, see none.
func TestProgressFrames(t *testing.T) {
	f, id := progressFixture(t, time.Millisecond)
	a, b := f.connect(t), f.connect(t)

	stepsCall(a, "c1", id, `{"n":5,"gap":20}`, 10, true)
	got, value := progressUntilResult(a, 11)
	if !strings.Contains(value, "ttmcp-") || len(got) == 0 {
		t.Fatalf("%d progress frames, result %s", len(got), value)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Updates <= got[i-1].Updates || got[i].Progress < got[i-1].Progress {
			t.Fatalf("out of order: %+v then %+v", got[i-1], got[i])
		}
	}
	last := got[len(got)-1]
	if last.Progress != 5 || last.Total == nil || *last.Total != 5 || last.Message == nil || *last.Message != "step 5 of 5" || last.Updates != 5 {
		t.Fatalf("last progress %+v", last)
	}
	// nothing after the result: the next frame a reads is its next result
	if r := a.call(jsapi.CmdListServers, nil); !r.OK {
		t.Fatalf("list: %s", r.raw)
	}

	// not asked: no progress frames (progressUntilResult fails on one of
	// another id; here the call's own would be listed)
	stepsCall(a, "c2", id, `{"n":5}`, 20, false)
	if got, _ := progressUntilResult(a, 21); len(got) != 0 {
		t.Fatalf("progress without asking: %+v", got)
	}
	// b's own call sees only its own progress, while a's runs
	stepsCall(a, "c3", id, `{"n":3,"gap":30}`, 30, true)
	stepsCall(b, "c4", id, `{"n":2}`, 40, true)
	if got, _ := progressUntilResult(b, 41); len(got) == 0 || got[len(got)-1].Progress != 2 {
		t.Fatalf("b's progress %+v", got)
	}
	if got, _ := progressUntilResult(a, 31); len(got) == 0 || got[len(got)-1].Progress != 3 {
		t.Fatalf("a's progress %+v", got)
	}

	// "progress" must be a boolean: the invoke fails, the socket stays
	a.raw(`{"type":"invoke","id":50,"command":"list_mcp_servers","args":{},"progress":"yes"}`)
	if r := a.read(); r.ID != 50 || r.OK {
		t.Fatalf("progress \"yes\": %s", r.raw)
	}
}

// A server flooding progress costs the page a few frames a second: 20,000
// updates as fast as the server can send them reach the page as at most
// one frame per interval (and the first and last), the last counting all.
func TestProgressFramesFlood(t *testing.T) {
	const interval = 50 * time.Millisecond
	f, id := progressFixture(t, interval)
	c := f.connect(t)
	start := time.Now()
	stepsCall(c, "flood", id, `{"n":20000,"flood":true}`, 10, true)
	got, _ := progressUntilResult(c, 11)
	elapsed := time.Since(start)
	if limit := 2 + int(elapsed/interval); len(got) > limit {
		t.Fatalf("%d progress frames in %v (at most %d)", len(got), elapsed, limit)
	}
	if last := got[len(got)-1]; last.Updates != 20000 || last.Progress != 20000 || last.Total != nil {
		t.Fatalf("last %+v", last)
	}
	t.Logf("20,000 updates in %v: %d frames", elapsed, len(got))
}

// BenchmarkProgressFloodMemory: a test call whose server floods progress
// (the steps tool's notifications back to back) through the whole backend
// to a page's socket that reads them, for floods of 10,000 and 100,000
// updates: the live heap (/gc/heap/live:bytes, sampled every 2 ms; this
// process also runs the MCP server) at its peak over its level before the
// call, the frames the page got, and the updates per second. Flat memory
// is the same growth for 10× the updates.
func BenchmarkProgressFloodMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f, id := progressFixture(b, 0)
			c := f.connect(b)
			var frames int
			var growth, seconds float64
			for i := range b.N {
				stop := heappeak.Watch(2 * time.Millisecond)
				start := time.Now()
				callID := fmt.Sprint("flood-", i)
				stepsCall(c, callID, id, fmt.Sprintf(`{"n":%d,"flood":true}`, n), uint64(10+4*i), true)
				got, _ := progressUntilResult(c, uint64(11+4*i))
				seconds += time.Since(start).Seconds()
				before, peak := stop()
				if last := got[len(got)-1]; last.Updates != n {
					b.Fatalf("the last frame counted %d of %d", last.Updates, n)
				}
				frames += len(got)
				growth += peak - before
			}
			b.ReportMetric(growth/float64(b.N), "peak-live-heap-growth-MiB")
			b.ReportMetric(float64(frames)/float64(b.N), "frames/call")
			b.ReportMetric(float64(n*b.N)/seconds, "updates/s")
		})
	}
}
