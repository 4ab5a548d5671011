package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content []byte
		want    string // a part of the problem, "" for none
	}{
		{"text", []byte("package main\n"), ""},
		{"empty", nil, ""},
		{"short", []byte("M"), ""},
		{"elf", []byte("\x7fELF\x02\x01\x01rest"), "ELF"},
		{"pe", []byte("MZ\x90\x00"), "PE"},
		{"macho64", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, "Mach-O"},
		{"wasm", []byte("\x00asm\x01\x00\x00\x00"), "WebAssembly"},
		{"archive", []byte("!<arch>\n__.PKGDEF"), "ar archive"},
		{"large", append([]byte("{"), make([]byte, MaxSize)...), "more than"},
		{"at the limit", make([]byte, MaxSize), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := check(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Fatalf("check = %q, want one naming %q", got, tt.want)
			}
		})
	}
}
