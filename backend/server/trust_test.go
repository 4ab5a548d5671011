package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/jsapi"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:7878": true, "localhost:7878": true, "LOCALHOST": true, "[::1]:7878": true, "127.1.2.3:80": true,
		"evil.example:7878": false, "localhost.evil.example": false, "192.168.1.2:7878": false, "": false, "[::2]:1": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8000":   "http://localhost:8000",
		"HTTP://LocalHost:8000/":  "http://localhost:8000",
		"https://example.com:443": "https://example.com",
		"http://[::1]:80":         "http://[::1]",
		"null":                    "",
		"tauri://localhost":       "",
		"http://a/path":           "",
	} {
		got, ok := normalizeOrigin(in)
		if got != want || ok != (want != "") {
			t.Errorf("normalizeOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestSessionEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	_, portStr, _ := net.SplitHostPort(strings.TrimPrefix(f.url, "http://"))
	port, _ := strconv.Atoi(portStr)
	own := f.origin()
	tests := []struct {
		name   string
		host   string
		header map[string]string
		status int
		acao   string
	}{
		{"local tool", "", nil, 200, ""},
		{"same origin fetch", "", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"typed in the address bar", "", map[string]string{"Sec-Fetch-Site": "none"}, 200, ""},
		{"own origin", "", map[string]string{"Origin": own}, 200, own},
		{"own origin by name", "", map[string]string{"Origin": "http://localhost:" + itoa(port)}, 200, "http://localhost:" + itoa(port)},
		{"allowed origin", "", map[string]string{"Origin": "http://localhost:8000"}, 200, "http://localhost:8000"},
		// Refused origins can read why (C3), but never the token.
		{"foreign origin", "", map[string]string{"Origin": "http://127.0.0.1:1"}, 403, "http://127.0.0.1:1"},
		{"https twin of own", "", map[string]string{"Origin": strings.Replace(own, "http:", "https:", 1)}, 403, strings.Replace(own, "http:", "https:", 1)},
		{"null origin", "", map[string]string{"Origin": "null"}, 403, "null"},
		{"script tag of another port", "", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, ""},
		{"script tag of another site", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"rebound host", "evil.example:" + itoa(port), nil, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", f.url+jsapi.PathSession, nil)
			if tt.host != "" {
				req.Host = tt.host
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("Access-Control-Allow-Origin") != tt.acao {
				t.Fatalf("status %d acao %q body %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
			}
			if tt.status == 200 {
				var s jsapi.Session
				if err := json.Unmarshal(body, &s); err != nil || s.Token != f.srv.Token() || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Fatalf("body %s (%v)", body, err)
				}
			} else if strings.Contains(string(body), f.srv.Token()) {
				t.Fatal("token leaked")
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A refused origin gets a 403 it can read (C3): CORS headers for it, a
// JSON body naming it and the flag, never the token; /jsapi/session and
// /ws alike. Each refused origin is logged once, at INFO. The Host check
// stays a bare 403.
func TestOriginRefusal(t *testing.T) {
	var logs bytes.Buffer
	const serve = "ttmcp serve --data-root '/home/u/My Data' --listen 127.0.0.1:7878"
	f := newFixture(t, func(c *Config) {
		c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.ServeCommand = serve
	})
	refused := func(origin string) jsapi.OriginRefusal {
		msg := "mcp.origin_not_allowed: the ttmcp backend does not allow requests from " + origin + "; restart it with --allow-origin " + origin
		return jsapi.OriginRefusal{Code: "mcp.origin_not_allowed", Origin: origin, Message: msg, Command: serve + " --allow-origin " + origin}
	}
	check := func(t *testing.T, what string, resp *http.Response, want jsapi.OriginRefusal) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), f.srv.Token()) {
			t.Fatalf("%s: the refusal holds the token", what)
		}
		h := resp.Header
		wantHeaders := map[string]string{
			"Access-Control-Allow-Origin": want.Origin, "Vary": "Origin", "Content-Type": "application/json",
			"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
		}
		for k, v := range wantHeaders {
			if got := strings.Join(h.Values(k), ", "); got != v {
				t.Errorf("%s: %s %q; want %q", what, k, got, v)
			}
		}
		var got jsapi.OriginRefusal
		if err := json.Unmarshal(body, &got, json.RejectUnknownMembers(true)); err != nil || got != want || resp.StatusCode != 403 {
			t.Errorf("%s: %d %s (%v); want 403 %+v", what, resp.StatusCode, body, err, want)
		}
	}

	a, b := "http://127.0.0.1:8001", "http://localhost:3000"
	for i, origin := range []string{a, a, b, a} {
		req, _ := http.NewRequest("GET", f.url+jsapi.PathSession, nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "session #"+itoa(i), resp, refused(origin))
	}
	_, resp, err := f.dial(t, a, f.srv.Token())
	if err == nil || resp == nil {
		t.Fatalf("dial from %s: %v", a, err)
	}
	check(t, "/ws", resp, refused(a))
	_, resp, _ = f.dial(t, "", f.srv.Token())
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(string(body), "without an Origin header") {
		t.Errorf("/ws without an Origin: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var refusals []string
	for _, l := range lines {
		if strings.Contains(l, "origin is not allowed") {
			refusals = append(refusals, l)
		}
	}
	if len(refusals) != 2 || !strings.Contains(refusals[0], "level=INFO") || !strings.Contains(refusals[0], "origin="+a) ||
		!strings.Contains(refusals[1], "origin="+b) || !strings.Contains(refusals[0], "--allow-origin") ||
		!strings.Contains(refusals[0], "--data-root '/home/u/My Data' --listen 127.0.0.1:7878 --allow-origin "+a) {
		t.Errorf("refusal log lines %q; want one INFO line per origin, naming it and the whole restart command", refusals)
	}

	// DNS rebinding: a bare 403, nothing for a page to read.
	req, _ := http.NewRequest("GET", f.url+jsapi.PathSession, nil)
	req.Host = "evil.example"
	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("rebound host: %d, Access-Control-Allow-Origin %q; want a bare 403", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// The log remembers a bounded number of origins.
func TestRefusalsBounded(t *testing.T) {
	var r refusals
	for i := range maxRefusalsLogged {
		if got := r.note("http://127.0.0.1:" + itoa(i)); got != refusalFirst {
			t.Fatalf("origin %d: %d", i, got)
		}
	}
	got := []int{r.note("http://127.0.0.1:0"), r.note("http://127.0.0.1:99999"), r.note("http://127.0.0.1:99998"), r.note("")}
	if !slices.Equal(got, []int{refusalSeen, refusalFull, refusalSeen, refusalSeen}) || len(r.seen) != maxRefusalsLogged {
		t.Errorf("seen, first beyond the bound, second beyond, no origin: %v; remembered %d", got, len(r.seen))
	}
}

func closeStatus(t *testing.T, c *websocket.Conn) (websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		}
	}
}

func TestSocketTrust(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.HandshakeTimeout = 200 * time.Millisecond })
	for name, origin := range map[string]string{"foreign": "http://127.0.0.1:1", "missing": "", "null": "null"} {
		t.Run(name+" origin", func(t *testing.T) {
			_, resp, err := f.dial(t, origin, f.srv.Token())
			if err == nil || resp == nil || resp.StatusCode != 403 {
				t.Fatalf("dial: %v %v", err, resp)
			}
		})
	}
	t.Run("wrong token", func(t *testing.T) {
		c, _, err := f.dial(t, f.origin(), "wrong")
		if err != nil {
			t.Fatal(err)
		}
		if code, reason := closeStatus(t, c); code != jsapi.ClosePolicyViolation || !strings.Contains(reason, "token") {
			t.Fatalf("close %d %q", code, reason)
		}
	})
	t.Run("silent client", func(t *testing.T) {
		c, _, err := f.dial(t, f.origin(), "")
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := closeStatus(t, c); code != jsapi.ClosePolicyViolation {
			t.Fatalf("close %d", code)
		}
	})
	t.Run("frame out of protocol", func(t *testing.T) {
		c := f.connect(t)
		c.conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"invoke","command":"list_mcp_servers"}`))
		if code, _ := closeStatus(t, c.conn); code != jsapi.ClosePolicyViolation {
			t.Fatalf("close %d", code)
		}
	})
	t.Run("frame too big", func(t *testing.T) {
		c := f.connect(t)
		big := `{"type":"invoke","id":1,"command":"create_mcp_server","args":{"dto":{"displayName":"` + strings.Repeat("x", jsapi.MaxInboundFrame) + `"}}}`
		c.conn.Write(context.Background(), websocket.MessageText, []byte(big))
		if code, _ := closeStatus(t, c.conn); code != jsapi.CloseMessageTooBig {
			t.Fatalf("close %d", code)
		}
	})
}

// Static files revalidate: a reload gets 304 and keeps the browser's
// compiled wasm.
func TestStaticFilesRevalidate(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.Pages = map[string]fs.FS{"/extension/": fstest.MapFS{"index.js": {Data: []byte("export {}")}}}
	})
	resp, err := http.Get(f.url + "/extension/index.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || tag == "" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	req, _ := http.NewRequest("GET", f.url+"/extension/index.js", nil)
	req.Header.Set("If-None-Match", tag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d", resp.StatusCode)
	}
}
