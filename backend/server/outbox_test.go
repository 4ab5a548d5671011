package server

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/internal/hang"
	"github.com/ttmcp/ttmcp/jsapi"
)

// testOutbox is an outbox whose drops are recorded instead of closing
// sockets.
func testOutbox(perSocket, total int64) (*outbox, *[]*socket) {
	o := newOutbox(perSocket, total)
	var dropped []*socket
	o.close = func(sk *socket, _ string) { dropped = append(dropped, sk) }
	return o, &dropped
}

func frameOf(n int) *pending { return &pending{framing: 40, value: make([]byte, n)} }

// One result always passes on its own, however large.
func TestOutboxLetsOneResultThrough(t *testing.T) {
	o, dropped := testOutbox(1<<20, 2<<20)
	var a socket
	p := frameOf(8 << 20)
	if !o.admit(&a, p) || len(*dropped) != 0 {
		t.Fatalf("a lone 8 MiB result was refused (dropped %d)", len(*dropped))
	}
	o.done(&a, p)
	if o.queued != 0 || len(o.buffers) != 0 || len(o.sockets) != 0 {
		t.Fatalf("after the write: queued %d, %d buffers, %d sockets; want nothing", o.queued, len(o.buffers), len(o.sockets))
	}
}

// A socket that has results waiting and asks for more than its share is
// dropped; the others are not.
func TestOutboxDropsASocketOverItsShare(t *testing.T) {
	o, dropped := testOutbox(1<<20, 64<<20)
	var a, b socket
	pa := frameOf(700 << 10)
	if !o.admit(&a, pa) || !o.admit(&b, frameOf(700<<10)) {
		t.Fatal("first results refused")
	}
	if o.admit(&a, frameOf(700<<10)) {
		t.Fatal("a second 700 KiB result waiting on a socket with a 1 MiB share was admitted")
	}
	if len(*dropped) != 1 || (*dropped)[0] != &a {
		t.Fatalf("dropped %v; want socket a", *dropped)
	}
	if o.admit(&a, frameOf(1)) {
		t.Fatal("a dropped socket admitted a result")
	}
	if want := int64(700<<10 + 40); o.queued != want {
		t.Fatalf("queued %d; want only b's %d", o.queued, want)
	}
	o.done(&a, pa) // a's write fails later: nothing counted twice
	if want := int64(700<<10 + 40); o.queued != want {
		t.Fatalf("queued %d after a's failed write; want %d", o.queued, want)
	}
}

// Across sockets, the slowest (no progress for longest) is dropped until
// the rest fits.
func TestOutboxDropsTheSlowest(t *testing.T) {
	o, dropped := testOutbox(64<<20, 3<<20)
	var slow, fast, new socket
	if !o.admit(&slow, frameOf(1<<20)) {
		t.Fatal("refused")
	}
	time.Sleep(5 * time.Millisecond)
	pf := frameOf(1 << 20)
	if !o.admit(&fast, pf) {
		t.Fatal("refused")
	}
	time.Sleep(5 * time.Millisecond)
	o.done(&fast, pf) // fast makes progress
	if !o.admit(&fast, frameOf(1<<20)) {
		t.Fatal("refused")
	}
	if !o.admit(&new, frameOf(1<<20)) || !o.admit(&new, frameOf(512<<10)) {
		t.Fatal("the newest socket was refused; the slowest should go")
	}
	if len(*dropped) != 1 || (*dropped)[0] != &slow {
		t.Fatalf("dropped %d sockets; want only the slowest", len(*dropped))
	}
}

// A buffer shared by many results (the list of an unchanged folder)
// counts once across sockets.
func TestOutboxCountsASharedResultOnce(t *testing.T) {
	o, dropped := testOutbox(4<<20, 4<<20)
	shared := make([]byte, 1<<20)
	socks := make([]socket, 200)
	ps := make([]*pending, len(socks))
	for i := range socks {
		ps[i] = &pending{framing: 40, value: shared}
		if !o.admit(&socks[i], ps[i]) {
			t.Fatalf("result %d refused", i)
		}
	}
	if len(*dropped) != 0 || o.queued != 1<<20+200*40 {
		t.Fatalf("200 sockets waiting on one 1 MiB buffer: queued %d, %d dropped", o.queued, len(*dropped))
	}
	for i := range socks {
		o.done(&socks[i], ps[i])
	}
	if o.queued != 0 || len(o.buffers) != 0 {
		t.Fatalf("queued %d, %d buffers after every write", o.queued, len(o.buffers))
	}
}

// bigCommands adds "big", which answers a fresh result of n bytes.
func bigCommands(n int) func(*Config) {
	return func(c *Config) {
		c.Commands.table["big"] = func(context.Context, jsontext.Value) (any, error) {
			return strings.Repeat("x", n), nil
		}
	}
}

// recordDrops records the reasons of the sockets f's outbox drops.
func recordDrops(f *fixture) func() []string {
	var mu sync.Mutex
	var reasons []string
	orig := f.srv.outbox.close
	f.srv.outbox.close = func(sk *socket, reason string) {
		mu.Lock()
		reasons = append(reasons, reason)
		mu.Unlock()
		orig(sk, reason)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), reasons...)
	}
}

// readUntilClose reads (and drops) frames until the socket closes, and
// returns the close status and how many results came first.
func readUntilClose(c *websocket.Conn) (websocket.StatusCode, string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	for {
		_, _, err := c.Read(ctx)
		if err != nil {
			return websocket.CloseStatus(err), closeText(err), n
		}
		n++
	}
}

func closeText(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

// A page that stops reading is closed once its waiting results pass its
// share (1013, saying why), instead of holding them until its writes time
// out; the backend's count goes back to zero.
func TestPageThatStopsReadingIsClosed(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		bigCommands(512 << 10)(c)
		c.MaxQueuedPerSocket = 2 << 20
	})
	drops := recordDrops(f)
	c := f.connect(t)
	for i := range 60 {
		c.send(uint64(i+1), "big", nil)
	}
	// The page reads on only once it was dropped: the close frame reaches
	// it if no frame was cut in the middle, else it sees 1006.
	hang.Within(t, "the page to be dropped", 20*time.Second, func() bool {
		for len(drops()) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		return true
	})
	if d := drops(); len(d) != 1 || !strings.Contains(d[0], "not reading") {
		t.Fatalf("drops %q; want one saying the page is not reading", d)
	}
	code, reason, n := readUntilClose(c.conn)
	if code != jsapi.CloseTryAgainLater && code != -1 {
		t.Fatalf("close %d %q after %d results; want 1013 or a torn connection", code, reason, n)
	}
	t.Logf("closed after %d results: %d %s", n, code, reason)
	hang.Within(t, "the backlog to drain", 20*time.Second, func() bool {
		for {
			f.srv.outbox.mu.Lock()
			q := f.srv.outbox.queued
			f.srv.outbox.mu.Unlock()
			if q == 0 {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	// Others are served.
	var list jsapi.McpServerList
	f.connect(t).must(jsapi.CmdListServers, nil, &list)
}

// Across pages: when the waiting bytes pass MaxQueued, the slowest page is
// closed and the page that reads gets its result.
func TestSlowestPageIsDropped(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		bigCommands(256 << 10)(c)
		c.Commands.table["huge"] = func(context.Context, jsontext.Value) (any, error) {
			return strings.Repeat("y", 7<<20), nil
		}
		c.MaxQueued = 8 << 20
	})
	drops := recordDrops(f)
	slow := f.connect(t)
	for i := range 24 { // 6 MiB: under MaxQueued on its own
		slow.send(uint64(i+1), "big", nil)
	}
	// Its results pile up once its connection's buffers are full.
	hang.Within(t, "the slow page's backlog", 20*time.Second, func() bool {
		for {
			f.srv.outbox.mu.Lock()
			q := f.srv.outbox.queued
			f.srv.outbox.mu.Unlock()
			if q > 3<<19 {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	if d := drops(); len(d) != 0 {
		t.Fatalf("dropped before the other page asked: %q", d)
	}
	r := f.connect(t).call("huge", nil) // 7 MiB more: over MaxQueued
	if !r.OK || !bytes.HasPrefix(r.Value, []byte(`"yyy`)) {
		t.Fatalf("the reading page's result: %.100s", r.raw)
	}
	if d := drops(); len(d) != 1 || !strings.Contains(d[0], "slowest") {
		t.Fatalf("drops %q; want the slow page, as the slowest", d)
	}
	if code, reason, _ := readUntilClose(slow.conn); code != jsapi.CloseTryAgainLater && code != -1 {
		t.Fatalf("slow page: close %d %q; want 1013 or a torn connection", code, reason)
	}
}

// Sockets beyond MaxSockets are closed at once with 1013 and a reason.
func TestTooManySockets(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxSockets = 3 })
	for range 3 {
		f.connect(t)
	}
	conn, _, err := f.dial(t, f.origin(), f.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	code, reason := closeStatus(t, conn)
	if code != jsapi.CloseTryAgainLater || !strings.Contains(reason, "too many open pages") {
		t.Fatalf("4th socket: close %d %q; want 1013, too many open pages", code, reason)
	}
}
