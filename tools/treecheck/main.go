// Command treecheck keeps build outputs and bulky files out of the
// repository: it fails when a file git tracks is a compiled binary (an
// ELF, Mach-O, PE or WebAssembly file, or an ar archive) or larger than
// MaxSize, except the few fixtures named in allowed. `make check` runs it
// over `git ls-files`.
//
//	go run ./tools/treecheck            # the tracked files of the working tree
//	go run ./tools/treecheck FILE...    # these files
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MaxSize is the largest file the tree may hold: 2 MiB.
const MaxSize = 2 << 20

// allowed are the tracked files exempt from the checks, each with why.
// Keep it short: a new entry needs a reason a reviewer accepts.
var allowed = map[string]string{}

func main() {
	files := os.Args[1:]
	if len(files) == 0 {
		out, err := exec.Command("git", "ls-files", "-z").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "treecheck: git ls-files:", err)
			os.Exit(2)
		}
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	}
	bad := 0
	for _, f := range files {
		if _, ok := allowed[filepath.ToSlash(f)]; ok {
			continue
		}
		if problem, err := check(f); err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the working tree, not yet in the index
			}
			fmt.Fprintf(os.Stderr, "treecheck: %s: %v\n", f, err)
			bad++
		} else if problem != "" {
			fmt.Fprintf(os.Stderr, "treecheck: %s: %s\n", f, problem)
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "treecheck: %d tracked file(s) do not belong in git (build outputs go in .gitignore; a fixture that must stay goes in tools/treecheck's allowed list, with its reason)\n", bad)
		os.Exit(1)
	}
}

// magics are the first bytes of the compiled formats refused.
var magics = []struct {
	prefix []byte
	kind   string
}{
	{[]byte("\x7fELF"), "an ELF executable or library"},
	{[]byte("MZ"), "a Windows (PE) executable"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "a Mach-O binary"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "a Mach-O binary"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O binary"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O binary"},
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a universal Mach-O binary or Java class"},
	{[]byte("\x00asm"), "a WebAssembly module"},
	{[]byte("!<arch>\n"), "an ar archive (a static library or Go package archive)"},
}

// check returns what is wrong with the file at path, or "".
func check(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", nil // a symlink git tracks as such, or a submodule
	}
	head := make([]byte, 8)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	head = head[:n]
	for _, m := range magics {
		if bytes.HasPrefix(head, m.prefix) {
			return "is " + m.kind, nil
		}
	}
	if info.Size() > MaxSize {
		return fmt.Sprintf("is %d bytes, more than %d", info.Size(), MaxSize), nil
	}
	return "", nil
}
