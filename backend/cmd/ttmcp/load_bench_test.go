package main

// Many pages at once (issue 9): the real ttmcp process, started from this
// test binary, with 1,500 registrations, and 200 WebSocket clients that
// list at the same moment. Reported next to one client's single list
// (benchpair), with the latencies' percentiles and the process's peak RSS.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// peakRSS returns the process's peak resident set (VmHWM), in bytes, or
// -1 where there is no /proc to tell.
func (p *process) peakRSS(tb testing.TB) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		tb.Logf("no peak RSS: %v", err)
		return -1
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		tb.Fatalf("no VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// wsClient is one page's socket, speaking SPEC §5.
type wsClient struct {
	conn *websocket.Conn
	next uint64
	buf  []byte
}

func dialClient(ctx context.Context, url string) (*wsClient, error) {
	resp, err := http.Get(url + jsapi.PathSession)
	if err != nil {
		return nil, err
	}
	var sess jsapi.Session
	err = json.UnmarshalRead(resp.Body, &sess)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	h := http.Header{"Origin": {url}}
	c, _, err := websocket.Dial(ctx, sess.WS, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(64 << 20)
	hello, _ := json.Marshal(jsapi.Hello{Type: jsapi.FrameHello, Token: sess.Token})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		return nil, err
	}
	if _, _, err := c.Read(ctx); err != nil { // welcome
		return nil, err
	}
	return &wsClient{conn: c, buf: make([]byte, 512<<10)}, nil
}

// list sends list_mcp_servers and returns the size of the result frame.
func (c *wsClient) list(ctx context.Context) (int, error) {
	c.next++
	frame := fmt.Sprintf(`{"type":"invoke","id":%d,"command":"list_mcp_servers","args":{}}`, c.next)
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		return 0, err
	}
	// Read as a browser would, without keeping the frame: its head is
	// checked and the rest counted, so the client costs little next to
	// the backend on a shared machine.
	_, r, err := c.conn.Reader(ctx)
	if err != nil {
		return 0, err
	}
	want := jsapi.ResultHead + strconv.FormatUint(c.next, 10) + jsapi.ResultOK
	head := make([]byte, len(want))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != want {
		return 0, fmt.Errorf("list answered %q (%v)", head, err)
	}
	n := len(head)
	for { // large reads: io.Discard's 8 KiB would cost a system call each
		m, err := r.Read(c.buf)
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// seedRegistrations writes n registrations as the store does, some with
// headers, permissions and overrides.
func seedRegistrations(tb testing.TB, dataRoot string, n int) {
	tb.Helper()
	store := storage.Open(dataRoot)
	for i := range n {
		ep, err := domain.ParseEndpoint(fmt.Sprintf("http://127.0.0.1:%d/mcp", 10000+i))
		if err != nil {
			tb.Fatal(err)
		}
		r, err := domain.NewRegistration(fmt.Sprintf("Server %04d", i), ep, map[string]string{"X-Api-Key": fmt.Sprint("key-", i)}, domain.ProtocolAuto)
		if err != nil {
			tb.Fatal(err)
		}
		if i%3 == 0 {
			r.State = domain.StateActive
			r.Permissions["search"] = domain.PermissionAllow
			r.Permissions["fetch"] = domain.PermissionAsk
		}
		if err := store.Save(r); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkConcurrentLists is 200 pages listing 1,500 registrations at the
// same moment, against one page's single list. It reports the percentiles
// of the 200 lists' latencies and the backend process's peak RSS (issue 9:
// p50 ≤ 50 ms and RSS under 150 MB; before the list view, 9.4 s and
// 294 MB).
func BenchmarkConcurrentLists(b *testing.B) {
	const registrations, clients = 1500, 200
	root := b.TempDir()
	seedRegistrations(b, root, registrations)
	// The files as a data root holds them, not written this instant: the
	// view does not trust a time stamp of the last 3 s (see
	// service.racyWindow) and would read them all at every list.
	time.Sleep(4 * time.Second)
	p := startProcess(b, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	ctx := context.Background()
	conns := make([]*wsClient, clients)
	for i := range conns {
		c, err := dialClient(ctx, p.url)
		if err != nil {
			b.Fatalf("client %d: %v", i, err)
		}
		conns[i] = c
	}
	frame, err := conns[0].list(ctx) // the first list loads the files
	if err != nil {
		b.Fatal(err)
	}
	var latencies []time.Duration
	var mu sync.Mutex
	benchpair.Run(b, "single-list", func() error {
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		start := time.Now()
		for _, c := range conns {
			wg.Go(func() {
				if _, err := c.list(ctx); err != nil {
					errs <- err
					return
				}
				d := time.Since(start)
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}, func() error {
		_, err := conns[0].list(ctx)
		return err
	})
	slices.Sort(latencies)
	pct := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(1), "max-ms")
	if rss := p.peakRSS(b); rss >= 0 {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
	}
	b.ReportMetric(float64(frame)/1024, "frame-KiB")
}
