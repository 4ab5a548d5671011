package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// start runs a subcommand until the returned stop is called, and returns
// the base URL it announced on stderr.
func start(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, w); w.Close() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
		for sc.Scan() {
			if m := re.FindString(sc.Text()); m != "" {
				select {
				case found <- m:
				default:
				}
			}
		}
	}()
	select {
	case url = <-found:
	case err := <-done:
		t.Fatalf("%v exited: %v", args, err)
	}
	return url, func() error { cancel(); return <-done }
}

// serve answers until its context ends (SIGINT/SIGTERM in main), then
// shuts down cleanly.
func TestServeAndShutdown(t *testing.T) {
	url, stop := start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", t.TempDir())
	resp, err := http.Get(url + "/jsapi/session")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("session: %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after shutdown: %v", err)
	}
}

func TestDemoServer(t *testing.T) {
	url, stop := start(t, "demo-server", "--listen", "127.0.0.1:0")
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ttmcp-demo") {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// demo-server --auth puts the demo behind the demo authorization server:
// an MCP request without a token is refused with the challenge that leads
// to the metadata, whose issuer is the announced address.
func TestDemoServerAuth(t *testing.T) {
	url, stop := start(t, "demo-server", "--listen", "127.0.0.1:0", "--auth", "--token-ttl", "30s")
	defer stop()
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `resource_metadata="`+url+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("unauthenticated: %d %q", resp.StatusCode, ch)
	}
	resp, err = http.Get(url + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Issuer string `json:"issuer"`
	}
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Issuer != url {
		t.Fatalf("issuer %q, want %q", meta.Issuer, url)
	}
	if err := run(context.Background(), []string{"demo-server", "--listen", "127.0.0.1:0", "--auth", "--token-ttl", "1ms"}, io.Discard); err == nil || !strings.Contains(err.Error(), "at least 1s") {
		t.Fatalf("a 1 ms token lifetime: %v", err)
	}
}

// serve --demo runs the demo MCP server beside the backend and tells the
// playground about it; the backend serves the extension where SillyTavern
// addresses it and at /extension/.
func TestServeWithDemo(t *testing.T) {
	url, stop := start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", t.TempDir(), "--demo", "--demo-listen", "127.0.0.1:0", "--demo-auth-listen", "127.0.0.1:0")
	resp, err := http.Get(url + "/playground.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Extensions []string
		Demo       struct{ DisplayName, Endpoint string }
		DemoAuth   *struct{ DisplayName, Endpoint string }
	}
	err = json.NewDecoder(resp.Body).Decode(&cfg)
	resp.Body.Close()
	if err != nil || len(cfg.Extensions) != 1 || cfg.Extensions[0] != "third-party/mcp-manager" || !strings.HasSuffix(cfg.Demo.Endpoint, "/mcp") {
		t.Fatalf("playground.json: %+v (%v)", cfg, err)
	}
	req, _ := http.NewRequest("POST", cfg.Demo.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "ttmcp-demo") {
		t.Fatalf("the demo server at %s: %d %s", cfg.Demo.Endpoint, resp.StatusCode, body)
	}
	// The sign-in demo asks for a token.
	if cfg.DemoAuth == nil || cfg.DemoAuth.Endpoint == cfg.Demo.Endpoint {
		t.Fatalf("no sign-in demo: %+v", cfg.DemoAuth)
	}
	resp, err = http.Post(cfg.DemoAuth.Endpoint, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Fatalf("the sign-in demo at %s: %d", cfg.DemoAuth.Endpoint, resp.StatusCode)
	}
	for _, path := range []string{"/scripts/extensions/third-party/mcp-manager/manifest.json", "/extension/manifest.json"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"display_name": "MCP"`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// serve --demo fails clearly when the demo's address is taken.
func TestServeDemoAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--data-root", t.TempDir(), "--demo", "--demo-listen", ln.Addr().String()}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--demo-listen") {
		t.Fatalf("serve --demo on a taken address: %v", err)
	}
}

// A taken sign-in demo address only skips that demo.
func TestServeDemoAuthAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	url, stop := start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", t.TempDir(), "--demo", "--demo-listen", "127.0.0.1:0", "--demo-auth-listen", ln.Addr().String())
	defer stop()
	resp, err := http.Get(url + "/playground.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "demoAuth") || !strings.Contains(string(body), `"demo":{`) {
		t.Fatalf("playground.json: %s", body)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:7878", "example.com:7878"} {
		err := run(ctx, []string{"serve", "--listen", addr, "--data-root", t.TempDir()}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("--listen %s: %v", addr, err)
		}
	}
	if err := run(ctx, []string{"serve", "--allow-origin", "localhost:8000"}, io.Discard); err == nil || !strings.Contains(err.Error(), "not an origin") {
		t.Errorf("bad --allow-origin: %v", err)
	}
	if err := run(ctx, []string{"frobnicate"}, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("unknown command: %v", err)
	}
}
