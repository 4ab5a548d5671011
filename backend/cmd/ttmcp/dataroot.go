package main

// The data root: one per user by default, the same for every command from
// any folder, so `ttmcp stdio add` run in one folder and `ttmcp serve` run
// in another see the same servers (issue 17). `--data-root` and
// TTMCP_DATA_ROOT choose another; `make run` passes ./data.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// envDataRoot names the environment variable that chooses the data root
// when --data-root is not given.
const envDataRoot = "TTMCP_DATA_ROOT"

// dataRoot is a resolved data root and where it came from.
type dataRoot struct {
	path   string
	source string // "--data-root", "TTMCP_DATA_ROOT" or "the per-user default"
}

// platform is what the default depends on: the OS and the environment
// (tests pass other ones; the program passes runtime.GOOS and os.Getenv).
type platform struct {
	goos   string
	getenv func(string) string
	home   func() (string, error)
}

func thisPlatform() platform {
	return platform{goos: runtime.GOOS, getenv: os.Getenv, home: os.UserHomeDir}
}

// resolveDataRoot returns the data root: the flag's value when it was
// given, else TTMCP_DATA_ROOT when set, else the platform's per-user data
// directory (defaultDataRoot).
func resolveDataRoot(flagValue string, flagGiven bool, p platform) (dataRoot, error) {
	if flagGiven {
		if flagValue == "" {
			return dataRoot{}, errors.New("--data-root needs a folder")
		}
		return dataRoot{flagValue, "--data-root"}, nil
	}
	if v := p.getenv(envDataRoot); v != "" {
		return dataRoot{v, envDataRoot}, nil
	}
	path, err := defaultDataRoot(p)
	if err != nil {
		return dataRoot{}, fmt.Errorf("no per-user data folder: %v; choose one with --data-root DIR or %s", err, envDataRoot)
	}
	return dataRoot{path, "the per-user default"}, nil
}

// defaultDataRoot is the per-user data directory of the platform, with
// "ttmcp" appended:
//
//	Linux, Android (Termux), BSDs: $XDG_DATA_HOME (when absolute), else ~/.local/share
//	macOS, iOS:                    ~/Library/Application Support
//	Windows:                       %AppData%
//
// os.UserConfigDir is not used: on Linux it is the configuration folder
// (~/.config), and the data root holds data (registrations, catalogs, the
// audit log), which the XDG specification puts in ~/.local/share.
func defaultDataRoot(p platform) (string, error) {
	switch p.goos {
	case "windows":
		dir := p.getenv("AppData") // as os.UserConfigDir: Windows' names ignore case
		if dir == "" {
			return "", errors.New("%AppData% is not set")
		}
		return joinFor(p.goos, dir, "ttmcp"), nil
	case "darwin", "ios":
		home, err := p.home()
		if err != nil {
			return "", err
		}
		return joinFor(p.goos, home, "Library", "Application Support", "ttmcp"), nil
	}
	if dir := p.getenv("XDG_DATA_HOME"); strings.HasPrefix(dir, "/") {
		return joinFor(p.goos, dir, "ttmcp"), nil
	}
	home, err := p.home()
	if err != nil {
		return "", err
	}
	return joinFor(p.goos, home, ".local", "share", "ttmcp"), nil
}

// joinFor joins path elements with goos's separator, so the table test
// checks every platform's path on any machine.
func joinFor(goos string, elem ...string) string {
	if goos == runtime.GOOS {
		return filepath.Join(elem...)
	}
	sep := "/"
	if goos == "windows" {
		sep = `\`
	}
	out := strings.TrimRight(elem[0], sep)
	for _, e := range elem[1:] {
		out += sep + e
	}
	return out
}

// announce prints which data root a command uses, and mentions once a
// data root in ./data of the current folder that is not the one used (a
// user who ran an earlier ttmcp, or `make run`, from here).
func (d dataRoot) announce(w io.Writer) {
	fmt.Fprintf(w, "ttmcp: data root %s (%s)\n", d.path, d.source)
	if hint := d.unusedLocal(); hint != "" {
		fmt.Fprintln(w, hint)
	}
}

// unusedLocal is the note about ./data, or "".
func (d dataRoot) unusedLocal() string {
	const local = "data"
	info, err := os.Stat(filepath.Join(local, "_tauritavern"))
	if err != nil || !info.IsDir() {
		return ""
	}
	if sameDir(local, d.path) {
		return ""
	}
	return "ttmcp: note: ./data in this folder holds another ttmcp data root, which this command does not use; to use it, add --data-root ./data"
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(ia, ib)
}
