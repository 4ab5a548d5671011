package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every file of the data root is reached through dataRoot (root.go), so a
// link out of the root is refused for every kind, also one added later: a
// call of the os package's file functions anywhere else in the package
// fails this test.
func TestFilesAreReachedOnlyThroughTheDataRoot(t *testing.T) {
	banned := map[string]map[string]bool{
		"os": {"Open": true, "OpenFile": true, "Create": true, "ReadFile": true, "WriteFile": true, "ReadDir": true,
			"Stat": true, "Lstat": true, "Mkdir": true, "MkdirAll": true, "Remove": true, "RemoveAll": true, "Rename": true,
			"Chmod": true, "Chtimes": true, "Readlink": true, "Symlink": true, "Link": true, "Truncate": true, "DirFS": true},
		"filepath": {"Walk": true, "WalkDir": true, "Glob": true},
		"syscall":  {"Open": true, "Mkfifo": true},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "root.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && banned[pkg.Name][sel.Sel.Name] {
				t.Errorf("%s: %s.%s: reach data-root files through dataRoot (root.go), which keeps them inside the root",
					fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// escapes recognises os.Root's refusal by its words (the os package
// exports no value for it): a change of Go's wording fails here, not in
// the field.
func TestOutOfRootIsRecognised(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "out")); err != nil {
		t.Skip(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Stat("out/passwd")
	if !escapes(err) {
		t.Fatalf("os.Root said %v; escapes does not recognise it", err)
	}
	r := newDataRoot(dir)
	if _, err := r.stat(filepath.Join(dir, "out", "passwd")); err == nil || !strings.Contains(err.Error(), "a symbolic link leads out of the data root "+dir+" (to /etc/passwd)") {
		t.Fatalf("stat = %v", err)
	}
	// A path that is not under the root at all is refused the same way.
	if _, err := r.stat(filepath.Join(dir, "..", "x")); err == nil || !strings.Contains(err.Error(), "out of the data root") {
		t.Fatalf("stat of a path outside = %v", err)
	}
}
