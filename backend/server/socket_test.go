package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/jsapi"
)

// blockingCommands has one command, "block", that waits for its context
// and reports the cancellation on cancelled.
func blockingCommands(started, cancelled chan<- struct{}) *Commands {
	c := NewCommands(nil, nil)
	c.table["block"] = func(ctx context.Context, _ jsontext.Value) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	}
	return c
}

func TestClosingSocketCancelsItsWork(t *testing.T) {
	started, cancelled := make(chan struct{}, 2), make(chan struct{}, 2)
	f := newFixture(t, func(c *Config) { c.Commands = blockingCommands(started, cancelled) })
	c := f.connect(t)
	c.send(1, "block", nil)
	c.send(2, "block", nil)
	<-started
	<-started
	c.conn.CloseNow()
	for range 2 {
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("work of a closed socket was not cancelled")
		}
	}
}

func TestDuplicateInFlightID(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	f := newFixture(t, func(c *Config) { c.Commands = blockingCommands(started, cancelled) })
	c := f.connect(t)
	c.send(7, "block", nil)
	<-started
	c.send(7, jsapi.CmdListServers, nil)
	r := c.read()
	if r.ID != 7 || r.OK || r.Error.Code != jsapi.CodeArgsInvalid || !strings.Contains(r.Error.Message, "in flight") {
		t.Fatalf("result %s", r.raw)
	}
}

func TestGracefulShutdown(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	srv := New(Config{Commands: blockingCommands(started, cancelled), HandshakeTimeout: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 5*time.Second) }()

	f := &fixture{srv: srv, url: "http://" + ln.Addr().String()}
	c := f.connect(t)
	c.send(1, "block", nil)
	<-started
	stop()
	if code, _ := closeStatus(t, c.conn); code != jsapi.CloseGoingAway {
		t.Fatalf("close %d, want 1001", code)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("running request not cancelled by shutdown")
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// A connection that never sends a request (browsers open them
// speculatively) must not hold up shutdown.
func TestShutdownIgnoresConnectionsWithoutRequests(t *testing.T) {
	srv := New(Config{Commands: NewCommands(nil, nil)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, time.Second) }()
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// Make sure the server has accepted it: a request on another
	// connection is answered only after the accept loop moved on.
	if resp, err := http.Get("http://" + ln.Addr().String() + "/jsapi/session"); err == nil {
		resp.Body.Close()
	}
	stop()
	// http.Server.Shutdown alone waits up to 5 s for such a connection:
	// past the 1 s grace, Serve would report the deadline.
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Fatal("the idle connection is still open")
	}
}
