package storage

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

var secretShape = regexp.MustCompile(`^[0-9a-f]{64}$`)

func secretFile(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(PluginSecretPath(root))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestPluginSecretIsCreatedOnceAndKept(t *testing.T) {
	root := t.TempDir()
	secret, damaged, err := LoadPluginSecret(root)
	if err != nil || damaged != nil {
		t.Fatalf("LoadPluginSecret: %v, %v", damaged, err)
	}
	if !secretShape.MatchString(secret) || secretFile(t, root) != secret+"\n" {
		t.Fatalf("secret %q, file %q", secret, secretFile(t, root))
	}
	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{PluginSecretPath(root): 0o600, filepath.Dir(PluginSecretPath(root)): 0o700} {
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v (%v), want %o", path, fi.Mode().Perm(), err, want)
			}
		}
	}
	again, damaged, err := LoadPluginSecret(root)
	if err != nil || damaged != nil || again != secret {
		t.Fatalf("second load: %q (%v, %v), want the same secret", again, damaged, err)
	}
}

func TestDamagedPluginSecretIsReplaced(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"truncated": func(p string) error { return os.WriteFile(p, []byte("abc\n"), 0o600) },
		"upper case": func(p string) error {
			return os.WriteFile(p, []byte(regexp.MustCompile(`[a-f]`).ReplaceAllString(secretFile(t, filepath.Dir(filepath.Dir(p))), "A")), 0o600)
		},
		"no newline": func(p string) error {
			return os.WriteFile(p, []byte(secretFile(t, filepath.Dir(filepath.Dir(p)))[:64]), 0o600)
		},
		"huge":        func(p string) error { return os.WriteFile(p, make([]byte, 1<<20), 0o600) },
		"a directory": func(p string) error { os.Remove(p); return os.Mkdir(p, 0o700) },
		"dangling":    func(p string) error { os.Remove(p); return os.Symlink(filepath.Join(filepath.Dir(p), "nowhere"), p) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			first, _, err := LoadPluginSecret(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := damage(PluginSecretPath(root)); err != nil {
				t.Skip(err) // e.g. no symbolic links here
			}
			secret, damaged, err := LoadPluginSecret(root)
			if err != nil {
				t.Fatal(err)
			}
			if damaged == nil {
				t.Error("a damaged secret was not reported")
			}
			if !secretShape.MatchString(secret) || secret == first || secretFile(t, root) != secret+"\n" {
				t.Fatalf("secret %q (first %q), file %q", secret, first, secretFile(t, root))
			}
		})
	}
}

func TestPluginSecretReadableByOthersIsClosed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	root := t.TempDir()
	secret, _, err := LoadPluginSecret(root)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(PluginSecretPath(root), 0o644)
	os.Chmod(filepath.Dir(PluginSecretPath(root)), 0o755)
	again, damaged, err := LoadPluginSecret(root)
	if err != nil || damaged != nil || again != secret {
		t.Fatalf("%q (%v, %v)", again, damaged, err)
	}
	for path, want := range map[string]os.FileMode{PluginSecretPath(root): 0o600, filepath.Dir(PluginSecretPath(root)): 0o700} {
		if fi, _ := os.Stat(path); fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %o", path, fi.Mode().Perm(), want)
		}
	}
}
