package main

// SillyTavern's config.yaml, as far as the plugin needs it: whether server
// plugins are on, and turning them on by changing that one line (issue 28
// item 5). No YAML library: SillyTavern writes top-level scalars one per
// line (`key: value`), and every other byte of the file must stay as it is,
// which a parse and re-encode would not keep.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Keys and the environment override SillyTavern reads (src/util.js keyToEnv:
// SILLYTAVERN_ + the key upper-cased).
const (
	keyServerPlugins = "enableServerPlugins"
	keyAutoUpdate    = "enableServerPluginsAutoUpdate"
	envServerPlugins = "SILLYTAVERN_ENABLESERVERPLUGINS"
)

// yamlLine is one top-level `key: value` line of a config.yaml.
type yamlLine struct {
	start, end int    // the line's bytes, without its line ending
	value      string // the value as written (quotes kept), without a trailing comment
	valueAt    int    // offset of value in the file
}

// topLevel finds the top-level lines of key in data (not indented, not
// commented out).
func topLevel(data []byte, key string) []yamlLine {
	var found []yamlLine
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += off
			next = end + 1
		}
		lineEnd := end
		if lineEnd > off && data[lineEnd-1] == '\r' {
			lineEnd--
		}
		line := string(data[off:lineEnd])
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			lead := len(rest) - len(strings.TrimLeft(rest, " \t"))
			v := rest[lead:]
			if i := commentStart(v); i >= 0 {
				v = v[:i]
			}
			v = strings.TrimRight(v, " \t")
			found = append(found, yamlLine{start: off, end: lineEnd, value: v, valueAt: off + len(key) + 1 + lead})
		}
		off = next
	}
	return found
}

// commentStart is where a trailing comment begins in a plain or quoted
// scalar ("#" after whitespace, outside quotes), or -1.
func commentStart(v string) int {
	quote := byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == 0 {
				quote = c
			}
		case c == '#' && (i == 0 || v[i-1] == ' ' || v[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// truthy is what SillyTavern makes of a value with getConfigValue(…,
// 'boolean'): YAML 1.2's true/false (the yaml package's core schema), a
// string "true"/"false" in any case, else any non-empty string or non-zero
// number is true (toBoolean's Boolean(value)); null and empty are false.
func truthy(v string) bool {
	switch v {
	case "", "~", "null", "Null", "NULL", "false", "False", "FALSE":
		return false
	case "true", "True", "TRUE":
		return true
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		s := strings.ToLower(strings.TrimSpace(v[1 : len(v)-1]))
		return s != "" && s != "false"
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return n != 0
	}
	return true
}

// pluginsConfig is what config.yaml says about server plugins.
type pluginsConfig struct {
	path       string // DIR/config.yaml
	missing    bool   // no config.yaml: SillyTavern has not started yet
	from       string // the file the values were read from (config.yaml or default/config.yaml)
	enabled    bool
	line       string // the enableServerPlugins line as written ("" when absent)
	autoUpdate bool
}

// readPluginsConfig reads DIR/config.yaml, or, before SillyTavern's first
// start wrote it, DIR/default/config.yaml (which it is made from).
func readPluginsConfig(stDir string) (pluginsConfig, error) {
	pc := pluginsConfig{path: filepath.Join(stDir, "config.yaml")}
	data, err := os.ReadFile(pc.path)
	pc.from = pc.path
	if errors.Is(err, os.ErrNotExist) {
		pc.missing = true
		pc.from = filepath.Join(stDir, "default", "config.yaml")
		data, err = os.ReadFile(pc.from)
		if errors.Is(err, os.ErrNotExist) {
			pc.from, err = "", nil // neither: SillyTavern's defaults (plugins off, auto-update on)
		}
	}
	if err != nil {
		return pc, err
	}
	lines := topLevel(data, keyServerPlugins)
	if len(lines) > 1 {
		return pc, fmt.Errorf("%s names %s %d times; SillyTavern refuses such a file, so fix it by hand", pc.from, keyServerPlugins, len(lines))
	}
	if len(lines) == 1 {
		pc.enabled = truthy(lines[0].value)
		pc.line = string(data[lines[0].start:lines[0].end])
	}
	pc.autoUpdate = true // plugin-loader.js's default
	if au := topLevel(data, keyAutoUpdate); len(au) > 0 {
		pc.autoUpdate = truthy(au[len(au)-1].value)
	}
	return pc, nil
}

// enableServerPlugins turns server plugins on in config.yaml: the value of
// the enableServerPlugins line becomes true (its indentation, spacing,
// trailing comment and line ending kept), or, when the file has no such
// line, one is added at the end. Every other byte stays. The old file is
// kept as config.yaml.bak; the new one replaces it atomically.
func enableServerPlugins(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	lines := topLevel(data, keyServerPlugins)
	var out []byte
	switch len(lines) {
	case 0:
		eol := "\n"
		if bytes.Contains(data, []byte("\r\n")) {
			eol = "\r\n"
		}
		out = append(out, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, eol...)
		}
		out = append(out, keyServerPlugins+": true"+eol...)
	case 1:
		l := lines[0]
		if truthy(l.value) {
			return nil
		}
		value := "true"
		if l.value == "" { // "key:" or "key: # comment": the value needs its spaces
			if l.valueAt == l.start+len(keyServerPlugins)+1 {
				value = " " + value
			}
			if l.valueAt < l.end {
				value += " "
			}
		}
		out = append(out, data[:l.valueAt]...)
		out = append(out, value...)
		out = append(out, data[l.valueAt+len(l.value):]...)
	default:
		return fmt.Errorf("%s names %s %d times; fix it by hand", path, keyServerPlugins, len(lines))
	}
	if err := writeAtomic(path+".bak", data, info.Mode().Perm()); err != nil {
		return fmt.Errorf("backing up %s: %v", path, err)
	}
	return writeAtomic(path, out, info.Mode().Perm())
}

// writeAtomic replaces path with data: a synced temporary file beside it,
// renamed over it, then the folder synced.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".ttmcp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
