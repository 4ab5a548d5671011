// Command distcheck verifies the release binaries of `make dist`: each file
// dist/ttmcp-<version>-<os>-<arch>[.exe] must be an executable of the
// format its platform loads (ELF, Mach-O, PE), built by Go for exactly that
// GOOS/GOARCH without cgo, and carry the version in its name; the one that
// can run on this machine (natively or under qemu) must answer `version`
// with it.
//
//	go run ./tools/distcheck <version> dist/ttmcp-*
package main

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: distcheck <version> <binary>...")
		os.Exit(2)
	}
	version, files := os.Args[1], os.Args[2:]
	failed := false
	for _, f := range files {
		if strings.HasSuffix(f, "SHA256SUMS") {
			continue
		}
		if msg, err := check(version, f); err != nil {
			fmt.Printf("FAIL %s: %v\n", f, err)
			failed = true
		} else {
			fmt.Printf("ok   %s: %s\n", f, msg)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func check(version, path string) (string, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	prefix := "ttmcp-" + version + "-"
	if !strings.HasPrefix(name, prefix) {
		return "", fmt.Errorf("name does not start with %s", prefix)
	}
	goos, goarch, ok := strings.Cut(strings.TrimPrefix(name, prefix), "-")
	if !ok {
		return "", fmt.Errorf("name has no <os>-<arch>")
	}
	if (goos == "windows") != strings.HasSuffix(path, ".exe") {
		return "", fmt.Errorf("only Windows binaries end in .exe")
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no Go build info: %v", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != goos || settings["GOARCH"] != goarch || settings["CGO_ENABLED"] != "0" {
		return "", fmt.Errorf("built for GOOS=%s GOARCH=%s CGO_ENABLED=%s", settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
	}
	format, err := executableFormat(path, goos, goarch)
	if err != nil {
		return "", err
	}
	if run := runner(path, goos, goarch); run != nil {
		out, err := run.Output()
		if err != nil {
			return "", fmt.Errorf("version: %v", err)
		}
		if !bytes.Contains(out, []byte("ttmcp "+version+" ")) {
			return "", fmt.Errorf("version printed %q", out)
		}
		return format + ", ran: " + strings.TrimSpace(string(out)), nil
	}
	return format + ", " + info.GoVersion, nil
}

// runner returns the command that runs `<path> version` on this machine:
// directly for its own platform, through qemu user emulation
// (qemu-<arch>-static, Debian's qemu-user-static) for Linux on another
// architecture, or nil. Android binaries need Android's dynamic linker
// (/system/bin/linker64), so they are checked by their headers only.
func runner(path, goos, goarch string) *exec.Cmd {
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		return exec.Command(path, "version")
	}
	qemu := map[string]string{"arm64": "qemu-aarch64-static", "amd64": "qemu-x86_64-static"}[goarch]
	if goos != "linux" || qemu == "" {
		return nil
	}
	if q, err := exec.LookPath(qemu); err == nil {
		return exec.Command(q, path, "version")
	}
	return nil
}

// executableFormat checks the file's header against what goos loads and
// goarch runs.
func executableFormat(path, goos, goarch string) (string, error) {
	switch goos {
	case "linux", "android":
		f, err := elf.Open(path)
		if err != nil {
			return "", fmt.Errorf("not ELF: %v", err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
			return "", fmt.Errorf("ELF %v %v, want an executable for %v", f.Type, f.Machine, want)
		}
		interp := ""
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b, _ := io.ReadAll(p.Open())
				interp = strings.TrimRight(string(b), "\x00")
			}
		}
		// Android loads executables with its own linker; a static Linux
		// binary has none.
		if wantInterp := map[string]string{"android": "/system/bin/linker64"}[goos]; interp != wantInterp {
			return "", fmt.Errorf("ELF interpreter %q, want %q", interp, wantInterp)
		}
		if interp != "" {
			return "ELF " + f.Machine.String() + ", interpreter " + interp, nil
		}
		return "ELF " + f.Machine.String() + ", static", nil
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			return "", fmt.Errorf("not Mach-O: %v", err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			return "", fmt.Errorf("Mach-O %v %v, want an executable for %v", f.Type, f.Cpu, want)
		}
		return "Mach-O " + f.Cpu.String(), nil
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			return "", fmt.Errorf("not PE: %v", err)
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			return "", fmt.Errorf("PE machine %#x, want an executable for %#x", f.Machine, want)
		}
		return fmt.Sprintf("PE machine %#x", f.Machine), nil
	}
	return "", fmt.Errorf("unknown GOOS %s", goos)
}
