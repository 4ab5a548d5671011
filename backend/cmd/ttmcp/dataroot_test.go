package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/jsapi"
)

func TestResolveDataRoot(t *testing.T) {
	tests := []struct {
		name      string
		goos      string
		env       map[string]string
		home      string
		flag      string
		flagGiven bool
		want      dataRoot
		wantErr   string
	}{
		{name: "linux default", goos: "linux", home: "/home/u",
			want: dataRoot{"/home/u/.local/share/ttmcp", "the per-user default"}},
		{name: "linux XDG_DATA_HOME", goos: "linux", home: "/home/u", env: map[string]string{"XDG_DATA_HOME": "/data/xdg"},
			want: dataRoot{"/data/xdg/ttmcp", "the per-user default"}},
		{name: "linux relative XDG_DATA_HOME is ignored (XDG spec)", goos: "linux", home: "/home/u", env: map[string]string{"XDG_DATA_HOME": "rel"},
			want: dataRoot{"/home/u/.local/share/ttmcp", "the per-user default"}},
		{name: "termux", goos: "android", home: "/data/data/com.termux/files/home",
			want: dataRoot{"/data/data/com.termux/files/home/.local/share/ttmcp", "the per-user default"}},
		{name: "freebsd", goos: "freebsd", home: "/usr/home/u",
			want: dataRoot{"/usr/home/u/.local/share/ttmcp", "the per-user default"}},
		{name: "macos", goos: "darwin", home: "/Users/u", env: map[string]string{"XDG_DATA_HOME": "/ignored"},
			want: dataRoot{"/Users/u/Library/Application Support/ttmcp", "the per-user default"}},
		{name: "windows", goos: "windows", env: map[string]string{"AppData": `C:\Users\u\AppData\Roaming`},
			want: dataRoot{`C:\Users\u\AppData\Roaming\ttmcp`, "the per-user default"}},
		{name: "windows without AppData", goos: "windows", wantErr: "%AppData% is not set"},
		{name: "no home", goos: "linux", wantErr: "choose one with --data-root"},
		{name: "environment", goos: "linux", home: "/home/u", env: map[string]string{"TTMCP_DATA_ROOT": "/srv/ttmcp"},
			want: dataRoot{"/srv/ttmcp", "TTMCP_DATA_ROOT"}},
		{name: "flag over environment", goos: "windows", env: map[string]string{"TTMCP_DATA_ROOT": "/srv/ttmcp"}, flag: "./data", flagGiven: true,
			want: dataRoot{"./data", "--data-root"}},
		{name: "empty flag", goos: "linux", home: "/home/u", flagGiven: true, wantErr: "needs a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := platform{goos: tt.goos, getenv: func(k string) string { return tt.env[k] }, home: func() (string, error) {
				if tt.home == "" {
					return "", errors.New("$HOME is not defined")
				}
				return tt.home, nil
			}}
			got, err := resolveDataRoot(tt.flag, tt.flagGiven, p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("resolveDataRoot = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// Issue 17's acceptance: `ttmcp stdio add` run in one folder and `ttmcp
// serve` run in another use the same per-user data root, and each says
// which one; a data root in ./data of the folder that is not used is
// mentioned with the flag that uses it.
func TestDataRootIsTheSameFromAnyFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv(envDataRoot, "")
	want := filepath.Join(home, ".local", "share", "ttmcp")

	t.Chdir(t.TempDir())
	var out, errs bytes.Buffer
	old := stdout
	stdout = &out
	err := run(context.Background(), []string{"stdio", "add", "elsewhere", "--", "some-server", "--flag"}, &errs)
	stdout = old
	if err != nil {
		t.Fatalf("stdio add: %v\n%s", err, errs.String())
	}
	if !strings.Contains(errs.String(), "data root "+want+" (the per-user default)") {
		t.Fatalf("stdio add did not say its data root %s:\n%s", want, errs.String())
	}
	if files, _ := filepath.Glob(filepath.Join(want, "_tauritavern", "mcp", "stdio", "*.json")); len(files) != 1 {
		t.Fatalf("stdio files under %s: %v", want, files)
	}

	other := t.TempDir()
	t.Chdir(other)
	if err := os.MkdirAll(filepath.Join(other, "data", "_tauritavern", "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, "serve", "--listen", "127.0.0.1:0")
	if list := invoke(t, p.url, jsapi.CmdListServers, `{}`); !strings.Contains(list, `"displayName":"elsewhere"`) {
		t.Fatalf("serve in another folder does not list the server added elsewhere: %s", list)
	}
	logged := p.logged(t, "add --data-root ./data") // the note comes after the line startProcess waited for
	if !strings.Contains(logged, "dataRoot="+want) || !strings.Contains(logged, `from="the per-user default"`) {
		t.Fatalf("serve did not log its data root %s:\n%s", want, logged)
	}
	if !strings.Contains(logged, "add --data-root ./data") {
		t.Fatalf("serve did not mention ./data of its folder:\n%s", logged)
	}
	if _, err := os.Stat(filepath.Join(other, "data", "_tauritavern", "mcp", "registrations")); err == nil {
		t.Fatal("serve wrote into ./data, which it was not told to use")
	}
}

func TestServeCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		root dataRoot
		goos string
		want string
	}{
		{nil, dataRoot{"/home/u/.local/share/ttmcp", "the per-user default"}, "linux", "ttmcp serve"},
		{[]string{"--data-root", "./data", "--demo", "-v"}, dataRoot{"./data", "--data-root"}, "linux", "ttmcp serve --data-root ./data --demo -v"},
		{[]string{"--data-root=/srv/My Data", "--listen", "127.0.0.1:7000"}, dataRoot{"/srv/My Data", "--data-root"}, "darwin",
			"ttmcp serve '--data-root=/srv/My Data' --listen 127.0.0.1:7000"},
		{[]string{"--data-root", "/it's"}, dataRoot{"/it's", "--data-root"}, "linux", `ttmcp serve --data-root '/it'\''s'`},
		{[]string{"--allow-origin", "http://192.168.1.5:8000"}, dataRoot{"/srv/ttmcp", "TTMCP_DATA_ROOT"}, "linux",
			"ttmcp serve --allow-origin http://192.168.1.5:8000 --data-root /srv/ttmcp"},
		{[]string{"--data-root", `C:\Users\u\My Data`}, dataRoot{`C:\Users\u\My Data`, "--data-root"}, "windows", `ttmcp serve --data-root "C:\Users\u\My Data"`},
		{[]string{"--data-root", "/数据"}, dataRoot{"/数据", "--data-root"}, "linux", "ttmcp serve --data-root /数据"},
		{[]string{"--data-root", ""}, dataRoot{}, "linux", "ttmcp serve --data-root ''"},
	}
	for _, tt := range tests {
		if got := serveCommandLine(tt.args, tt.root, tt.goos); got != tt.want {
			t.Errorf("serveCommandLine(%q, %v, %s) = %s; want %s", tt.args, tt.root, tt.goos, got, tt.want)
		}
	}
}
