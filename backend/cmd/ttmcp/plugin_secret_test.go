package main

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/storage"
	"github.com/ttmcp/ttmcp/jsapi"
)

// serve creates the plugin secret in the data root, keeps it across
// restarts, serves a plugin request that carries it, and replaces a
// damaged one with a log line.
func TestServeKeepsThePluginSecret(t *testing.T) {
	root := t.TempDir()
	session := func(url, secret string) int {
		req, _ := http.NewRequest("GET", url+jsapi.PathSession, nil)
		req.Header.Set(jsapi.HeaderPluginSecret, secret)
		req.Header.Set(jsapi.HeaderPluginUser, jsapi.DefaultUser)
		req.Header.Set(jsapi.HeaderPluginOrigin, "http://192.0.2.1:8000")
		req.Header.Set(jsapi.HeaderPluginPrefix, "/api/plugins/ttmcp")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	read := func() string {
		data, err := os.ReadFile(storage.PluginSecretPath(root))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	url, stop := start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	first := read()
	if code := session(url, first); code != http.StatusOK {
		t.Fatalf("plugin session with the secret: %d", code)
	}
	if code := session(url, strings.Repeat("0", 64)); code != http.StatusUnauthorized {
		t.Fatalf("plugin session with another secret: %d", code)
	}
	stop()
	url, stop = start(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	if read() != first || session(url, first) != http.StatusOK {
		t.Fatal("the secret changed across a restart")
	}
	stop()
	os.WriteFile(storage.PluginSecretPath(root), []byte("garbage"), 0o600)
	p := startProcess(t, "serve", "--listen", "127.0.0.1:0", "--data-root", root)
	if log := p.logged(t, "replaced a damaged plugin secret"); !strings.Contains(log, "replaced a damaged plugin secret") {
		t.Fatalf("no log line for a damaged secret:\n%s", log)
	}
	if s := read(); s == first || len(s) != 64 {
		t.Fatalf("secret after damage %q", s)
	}
}
