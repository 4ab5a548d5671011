package server

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
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
		{"foreign origin", "", map[string]string{"Origin": "http://127.0.0.1:1"}, 403, ""},
		{"https twin of own", "", map[string]string{"Origin": strings.Replace(own, "http:", "https:", 1)}, 403, ""},
		{"null origin", "", map[string]string{"Origin": "null"}, 403, ""},
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
