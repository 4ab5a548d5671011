package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttmcp/ttmcp/backend/service"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// orderFixture is a backend whose one active server's tool count counts
// its runs, over the command socket and the plugin path's HTTP transport,
// and whose start_mcp_test_call and run_mcp_test_call can be held: after
// hold(), the next of them to arrive waits for release before it runs.
type orderFixture struct {
	*fixture
	regID   string
	base    string // the plugin path's base URL
	runs    atomic.Int32
	holding atomic.Bool
	arrived chan string   // the call id of a held start, once it is held
	release chan struct{} // lets the held start run
	ended   chan struct{} // closed when the test ends
}

func newOrderFixture(t *testing.T) *orderFixture {
	of := &orderFixture{arrived: make(chan string, 1), release: make(chan struct{}), ended: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "count", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("run ", of.runs.Add(1))}}}, nil
	})
	audit := storage.OpenAuditLog(t.TempDir(), storage.AuditOptions{})
	of.fixture, of.regID = serveOneWith(t, s, "Counter", service.Config{Audit: audit}, func(c *Config) {
		c.PluginSecret = testSecret
		for _, cmd := range []string{jsapi.CmdStartTestCall, jsapi.CmdRunTestCall} {
			start := c.Commands.table[cmd]
			c.Commands.table[cmd] = func(ctx context.Context, args jsontext.Value) (any, error) {
				if of.holding.CompareAndSwap(true, false) {
					id, _ := callIDOf(args)
					of.arrived <- id
					select {
					case <-of.release:
					case <-of.ended: // the test failed while it held a start
					}
				}
				return start(ctx, args)
			}
		}
	})
	t.Cleanup(func() { close(of.ended) }) // before the server closes (cleanups run last first)
	of.base = stPlugin(t, of.url, testSecret, nil)
	return of
}

// eachTransport runs test over a direct page's command socket and over a
// plugin page's HTTP transport.
func eachTransport(t *testing.T, test func(t *testing.T, of *orderFixture, c *client)) {
	for _, tr := range []string{"socket", "http"} {
		t.Run(tr, func(t *testing.T) {
			of := newOrderFixture(t)
			c := of.connect(t)
			if tr == "http" {
				c, _ = connectPlugin(t, of.base, "")
			}
			test(t, of, c)
		})
	}
}

// hold makes the next start wait; held returns its call id once it does.
func (of *orderFixture) hold()        { of.holding.Store(true) }
func (of *orderFixture) held() string { return <-of.arrived }
func (of *orderFixture) unhold()      { of.release <- struct{}{} }
func (of *orderFixture) ran() int32   { return of.runs.Load() }
func startArgs(callID string) any     { return dto(map[string]any{"callId": callID}) }
func (of *orderFixture) callArgs(callID string) any {
	return dto(map[string]any{"callId": callID, "registrationId": of.regID, "nativeName": "count", "argumentsJson": "{}"})
}

// results reads results until it has those of ids (in any order), and
// returns every result read meanwhile by id.
func results(c *client, ids ...uint64) map[uint64]result {
	c.t.Helper()
	got := map[uint64]result{}
	for {
		missing := false
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				missing = true
			}
		}
		if !missing {
			return got
		}
		r := c.read()
		if _, dup := got[r.ID]; dup {
			c.t.Fatalf("two results for %d: %s", r.ID, r.raw)
		}
		got[r.ID] = r
	}
}

func outcomeOf(t *testing.T, r result) jsapi.McpCallOutcome {
	t.Helper()
	var o jsapi.McpCallOutcome
	if !r.OK {
		t.Fatalf("result %s", r.raw)
	}
	if err := json.Unmarshal(r.Value, &o); err != nil {
		t.Fatalf("outcome %s: %v", r.Value, err)
	}
	return o
}

// The page sends a test call's start and call at once (issue 31): the
// call runs exactly once, after its start, however long the start takes;
// other commands of the socket go on meanwhile.
func TestPipelinedCallWaitsForItsStart(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		of.hold()
		c.send(10, jsapi.CmdStartTestCall, startArgs("a"))
		c.send(11, jsapi.CmdTestToolCall, of.callArgs("a"))
		if id := of.held(); id != "a" {
			t.Fatalf("held %q", id)
		}
		// the socket serves others while the start is held, and the call
		// has not answered (it would be not_sent mcp.call_not_started)
		c.send(12, jsapi.CmdListServers, nil)
		c.send(13, jsapi.CmdStartTestCall, startArgs("b"))
		c.send(14, jsapi.CmdTestToolCall, of.callArgs("b"))
		got := results(c, 12, 13, 14)
		if r, ok := got[11]; ok {
			t.Fatalf("the call answered before its start ran: %s", r.raw)
		}
		if o := outcomeOf(t, got[14]); o.Outcome != jsapi.OutcomeKnownResponse {
			t.Fatalf("call b: %+v", o)
		}
		of.unhold()
		got = results(c, 10, 11)
		if !got[10].OK || string(got[10].Value) != "null" {
			t.Fatalf("start: %s", got[10].raw)
		}
		if o := outcomeOf(t, got[11]); o.Outcome != jsapi.OutcomeKnownResponse || !strings.Contains(string(got[11].Value), `run `) {
			t.Fatalf("call a: %s", got[11].raw)
		}
		if n := of.ran(); n != 2 {
			t.Fatalf("the tool ran %d times for two calls", n)
		}
		// unheld, pipelined: once
		c.send(20, jsapi.CmdStartTestCall, startArgs("c"))
		c.send(21, jsapi.CmdTestToolCall, of.callArgs("c"))
		if o := outcomeOf(t, results(c, 20, 21)[21]); o.Outcome != jsapi.OutcomeKnownResponse || of.ran() != 3 {
			t.Fatalf("call c: %+v, %d runs", o, of.ran())
		}
	})
}

// A start that fails fails its call with the start's error, and the call
// is recorded as refused; nothing reaches the server. The adversarial
// case: the call id is already active (an earlier start of it), so the
// call, had it not heard of its own start's failure, would have run.
func TestPipelinedStartFailureFailsTheCall(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		c.must(jsapi.CmdStartTestCall, startArgs("dup"), nil)
		of.hold()
		c.send(10, jsapi.CmdStartTestCall, startArgs("dup"))
		c.send(11, jsapi.CmdTestToolCall, of.callArgs("dup"))
		of.held()
		of.unhold()
		got := results(c, 10, 11)
		for _, id := range []uint64{10, 11} {
			if r := got[id]; r.OK || r.Error.Code != service.CodeCallIDInUse || r.Error.Kind != jsapi.KindConflict {
				t.Fatalf("result %d: %s", id, r.raw)
			}
		}
		if got[10].Error != got[11].Error {
			t.Fatalf("the call's error %+v is not its start's %+v", got[11].Error, got[10].Error)
		}
		// the same without holding, and for a start refused for its input
		long := strings.Repeat("x", 200)
		c.send(20, jsapi.CmdStartTestCall, startArgs("dup"))
		c.send(21, jsapi.CmdTestToolCall, of.callArgs("dup"))
		c.send(22, jsapi.CmdStartTestCall, startArgs(long))
		c.send(23, jsapi.CmdTestToolCall, of.callArgs(long))
		got = results(c, 20, 21, 22, 23)
		for _, id := range []uint64{21, 23} {
			if r, start := got[id], got[id-1]; r.OK || start.OK || r.Error != start.Error {
				t.Fatalf("call %d: %s, its start %s", id, r.raw, start.raw)
			}
		}
		if got[23].Error.Code != jsapi.CodeArgsInvalid {
			t.Fatalf("long id: %s", got[23].raw)
		}
		if n := of.ran(); n != 0 {
			t.Fatalf("the tool ran %d times", n)
		}
		var audit jsapi.McpAuditList
		c.must(jsapi.CmdListAuditEntries, dto(map[string]any{}), &audit)
		if len(audit.Entries) != 3 {
			t.Fatalf("audit %+v", audit.Entries)
		}
		codes := map[string]int{}
		for _, e := range audit.Entries {
			if e.Outcome != "rejected" || e.NativeName != "count" {
				t.Fatalf("audit entry %+v", e)
			}
			codes[e.Code]++
		}
		if codes[service.CodeCallIDInUse] != 2 || codes[jsapi.CodeArgsInvalid] != 1 {
			t.Fatalf("audit codes %v", codes)
		}
	})
}

// Stop while the start runs: a cancel read before the start has finished
// makes the call not_sent (mcp.call_cancelled_before_send), recorded, and
// releases the start; the tool never runs.
func TestPipelinedCancelBeforeTheStartFinished(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		of.hold()
		c.send(10, jsapi.CmdStartTestCall, startArgs("s"))
		c.send(11, jsapi.CmdTestToolCall, of.callArgs("s"))
		c.send(12, jsapi.CmdCancelTestCall, startArgs("s"))
		of.held()
		c.send(13, jsapi.CmdListServers, nil) // the cancel frame has been read
		if got := results(c, 13); len(got) != 1 {
			t.Fatalf("answered while the start was held: %v", got)
		}
		of.unhold()
		got := results(c, 10, 11, 12)
		if !got[10].OK || !got[12].OK {
			t.Fatalf("start %s, cancel %s", got[10].raw, got[12].raw)
		}
		if o := outcomeOf(t, got[11]); o.Outcome != jsapi.OutcomeNotSent || o.Code != jsapi.CodeCallCancelledBeforeSend || o.Message != jsapi.MessageCallCancelledBeforeSend {
			t.Fatalf("call: %+v", o)
		}
		// the start is released: its id is free, a call of it was not started
		if o := outcomeOf(t, c.call(jsapi.CmdTestToolCall, of.callArgs("s"))); o.Code != service.CodeCallNotStarted {
			t.Fatalf("call after cancel: %+v", o)
		}
		c.must(jsapi.CmdStartTestCall, startArgs("s"), nil)
		c.must(jsapi.CmdCancelTestCall, startArgs("s"), nil)
		if n := of.ran(); n != 0 {
			t.Fatalf("the tool ran %d times", n)
		}
		var audit jsapi.McpAuditList
		c.must(jsapi.CmdListAuditEntries, dto(map[string]any{}), &audit)
		if len(audit.Entries) != 2 || audit.Entries[1].Code != jsapi.CodeCallCancelledBeforeSend || audit.Entries[1].Outcome != jsapi.OutcomeNotSent {
			t.Fatalf("audit %+v", audit.Entries)
		}
	})
}

// A call frame before its start frame is not ordered after it (the
// socket orders a call after the starts read before it, as its page sent
// them): it meets the service as it finds it, before the start registered
// (not_sent mcp.call_not_started) or after (it runs); either way at most
// once. And a call of an active id sent before a held start of the same
// id runs the active start's call, once, without waiting; the held start
// then finds the id free and its own call runs once after it.
func TestPipelinedCallBeforeItsStart(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		c.send(10, jsapi.CmdTestToolCall, of.callArgs("early"))
		c.send(11, jsapi.CmdStartTestCall, startArgs("early"))
		got := results(c, 10, 11)
		switch o := outcomeOf(t, got[10]); {
		case o.Outcome == jsapi.OutcomeNotSent && o.Code == service.CodeCallNotStarted && of.ran() == 0:
			c.must(jsapi.CmdCancelTestCall, startArgs("early"), nil)
		case o.Outcome == jsapi.OutcomeKnownResponse && of.ran() == 1:
		default:
			t.Fatalf("call: %+v, %d runs", o, of.ran())
		}
		if !got[11].OK {
			t.Fatalf("start: %s", got[11].raw)
		}
		ran := of.ran()

		// an active id; an early call of it, then a held start and its call
		c.must(jsapi.CmdStartTestCall, startArgs("late"), nil)
		of.hold()
		c.send(20, jsapi.CmdTestToolCall, of.callArgs("late"))
		c.send(21, jsapi.CmdStartTestCall, startArgs("late"))
		c.send(22, jsapi.CmdTestToolCall, of.callArgs("late"))
		of.held()
		if o := outcomeOf(t, results(c, 20)[20]); o.Outcome != jsapi.OutcomeKnownResponse || of.ran() != ran+1 {
			t.Fatalf("early call: %+v, %d runs", o, of.ran()-ran)
		}
		of.unhold()
		got = results(c, 21, 22)
		if o := outcomeOf(t, got[22]); !got[21].OK || o.Outcome != jsapi.OutcomeKnownResponse || of.ran() != ran+2 {
			t.Fatalf("start %s, call %s, %d runs for two starts", got[21].raw, got[22].raw, of.ran()-ran)
		}
	})
}

// run_mcp_test_call (the shim's test call, one frame each way): the start
// and the call in one command; the tool runs once per call. A start that
// fails is the command's error, recorded, and nothing is sent; a dto it
// refuses leaves nothing registered (a cancel of its id answers at once).
func TestRunTestCall(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		for i := 1; i <= 2; i++ { // the id is free again once its call ended
			o := outcomeOf(t, c.call(jsapi.CmdRunTestCall, of.callArgs("r")))
			if o.Outcome != jsapi.OutcomeKnownResponse || of.ran() != int32(i) {
				t.Fatalf("run %d: %+v, %d runs", i, o, of.ran())
			}
		}
		c.must(jsapi.CmdStartTestCall, startArgs("dup"), nil) // the id is active
		c.send(10, jsapi.CmdRunTestCall, of.callArgs("dup"))
		c.send(11, jsapi.CmdRunTestCall, of.callArgs(strings.Repeat("x", 200)))
		bad := dto(map[string]any{"callId": "bad", "registrationId": of.regID, "nativeName": "count", "argumentsJson": "{}", "extra": 1})
		c.send(12, jsapi.CmdRunTestCall, bad)
		c.send(13, jsapi.CmdCancelTestCall, startArgs("bad"))
		got := results(c, 10, 11, 12, 13)
		if r := got[10]; r.OK || r.Error.Code != service.CodeCallIDInUse || r.Error.Kind != jsapi.KindConflict {
			t.Fatalf("active id: %s", r.raw)
		}
		for _, id := range []uint64{11, 12} {
			if r := got[id]; r.OK || r.Error.Code != jsapi.CodeArgsInvalid {
				t.Fatalf("result %d: %s", id, r.raw)
			}
		}
		if !got[13].OK {
			t.Fatalf("cancel: %s", got[13].raw)
		}
		if n := of.ran(); n != 2 {
			t.Fatalf("the tool ran %d times for two calls", n)
		}
		var audit jsapi.McpAuditList
		c.must(jsapi.CmdListAuditEntries, dto(map[string]any{}), &audit)
		codes := map[string]int{}
		for _, e := range audit.Entries {
			if e.NativeName != "count" || e.Source != "test" {
				t.Fatalf("audit entry %+v", e)
			}
			codes[e.Outcome+" "+e.Code]++
		}
		if len(audit.Entries) != 4 || codes[jsapi.OutcomeKnownResponse+" "] != 2 ||
			codes["rejected "+service.CodeCallIDInUse] != 1 || codes["rejected "+jsapi.CodeArgsInvalid] != 1 {
			t.Fatalf("audit %v", codes)
		}
	})
}

// Stop while a run_mcp_test_call's start runs: the cancel, read after the
// run's frame, waits for the start and makes the call not_sent
// (mcp.call_cancelled_before_send), recorded; the tool never runs, and the
// id is free again.
func TestRunTestCallCancelledWhileStarting(t *testing.T) {
	eachTransport(t, func(t *testing.T, of *orderFixture, c *client) {
		of.hold()
		c.send(10, jsapi.CmdRunTestCall, of.callArgs("s"))
		c.send(11, jsapi.CmdCancelTestCall, startArgs("s"))
		of.held()
		c.send(12, jsapi.CmdListServers, nil) // the cancel frame has been read
		if got := results(c, 12); len(got) != 1 {
			t.Fatalf("answered while the start was held: %v", got)
		}
		of.unhold()
		got := results(c, 10, 11)
		if !got[11].OK {
			t.Fatalf("cancel %s", got[11].raw)
		}
		if o := outcomeOf(t, got[10]); o.Outcome != jsapi.OutcomeNotSent || o.Code != jsapi.CodeCallCancelledBeforeSend {
			t.Fatalf("call: %+v", o)
		}
		if n := of.ran(); n != 0 {
			t.Fatalf("the tool ran %d times", n)
		}
		if o := outcomeOf(t, c.call(jsapi.CmdRunTestCall, of.callArgs("s"))); o.Outcome != jsapi.OutcomeKnownResponse || of.ran() != 1 {
			t.Fatalf("again: %+v, %d runs", o, of.ran())
		}
		var audit jsapi.McpAuditList
		c.must(jsapi.CmdListAuditEntries, dto(map[string]any{}), &audit)
		stopped := 0
		for _, e := range audit.Entries {
			if e.Outcome == jsapi.OutcomeNotSent && e.Code == jsapi.CodeCallCancelledBeforeSend {
				stopped++
			}
		}
		if len(audit.Entries) != 2 || stopped != 1 {
			t.Fatalf("audit %+v", audit.Entries)
		}
	})
}
