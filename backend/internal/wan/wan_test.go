package wan

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// get makes n sequential requests (as small as a JSON-RPC request gets)
// through the link with one client and returns what the link counted.
func get(t *testing.T, ts *httptest.Server, client *http.Client, scheme string, n int) Stats {
	t.Helper()
	link, err := Listen(ts.Listener.Addr().String(), 25*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	for range n {
		resp, err := client.Post(scheme+"://"+link.Addr()+"/", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "pong" {
			t.Fatalf("body %q", body)
		}
	}
	s := link.Stats()
	if s.Open != 1 && s.Conns == 1 {
		t.Fatalf("%d connections open", s.Open)
	}
	client.CloseIdleConnections()
	for link.Stats().Open > 0 { // Open counts down as connections close
		time.Sleep(time.Millisecond)
	}
	return Stats{Conns: s.Conns, RoundTrips: s.RoundTrips}
}

func pong(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	io.WriteString(w, "pong")
}

// Sequential requests over one keep-alive connection: one connection, one
// round trip each.
func TestCountsHTTP1(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(pong))
	defer ts.Close()
	got := get(t, ts, &http.Client{Transport: &http.Transport{}}, "http", 5)
	if got != (Stats{Conns: 1, RoundTrips: 5}) {
		t.Fatalf("stats %+v", got)
	}
}

// Over TLS 1.3 and HTTP/2 the handshake costs one round trip more, once.
func TestCountsTLSAndHTTP2(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			t.Errorf("HTTP/%d", r.ProtoMajor)
		}
		pong(w, r)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.MinVersion = tls.VersionTLS13
	tr.ForceAttemptHTTP2 = true
	got := get(t, ts, &http.Client{Transport: tr}, "https", 5)
	if got != (Stats{Conns: 1, RoundTrips: 6}) {
		t.Fatalf("stats %+v", got)
	}
}

// Without keep-alive every request pays a connection.
func TestCountsWithoutKeepAlive(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(pong))
	defer ts.Close()
	got := get(t, ts, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, "http", 3)
	if got != (Stats{Conns: 3, RoundTrips: 3}) {
		t.Fatalf("stats %+v", got)
	}
}
