package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// dataRoot is the one way this package reaches the files of a data root:
// every read, listing, write, rename and removal of every file kind goes
// through its methods, which resolve the path inside the data root with an
// os.Root. A symbolic link (or a ".." or a linked folder: _tauritavern,
// mcp, results/<registration>, a table of the extension store) that leads
// out of the data root is refused with errOutOfRoot, which callers report
// as they report any file they cannot read: a storage issue for a listed
// file, an error for a command. A link that stays inside the data root is
// followed, as upstream follows links. The root itself may be a link: it is
// resolved once per operation, when it is opened.
//
// Stores are built on a dataRoot (Open, OpenResultStore, OpenAuditLog,
// OpenExtensionStore), and the package's own test (TestFilesAreReachedOnly
// ThroughTheDataRoot) fails when a file of the package calls the os
// package's file functions directly, so a file kind added later (per-user
// data roots, <root>/_ttmcp/users/<handle>/, are data roots of their own)
// gets the same rule without asking for it.
type dataRoot struct {
	dir string // the data root as given (absolute or relative)
}

func newDataRoot(dir string) dataRoot { return dataRoot{dir: dir} }

// join returns the path of elem under the data root.
func (r dataRoot) join(elem ...string) string {
	return filepath.Join(append([]string{r.dir}, elem...)...)
}

// errOutOfRoot is the reason given for a path that leads out of the data
// root (errors.Is finds it in what the methods return).
var errOutOfRoot = errors.New("a symbolic link leads out of the data root")

// outOfRootError says where a path out of the data root leads, when that
// is known.
type outOfRootError struct {
	root, target string
}

func (e *outOfRootError) Error() string {
	msg := errOutOfRoot.Error() + " " + e.root
	if e.target != "" {
		msg += " (to " + e.target + ")"
	}
	return msg
}

func (e *outOfRootError) Unwrap() error { return errOutOfRoot }

// name returns path relative to the data root. A path that is not under it
// is a mistake of this package, refused like a link out of the root.
func (r dataRoot) name(path string) (string, error) {
	rel, err := filepath.Rel(r.dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &fs.PathError{Op: "open", Path: path, Err: &outOfRootError{root: r.dir}}
	}
	return rel, nil
}

// do runs op on path inside the data root. An escape that os.Root refuses
// only because a link is absolute (os.Root follows relative links only) is
// tried once more with the path resolved, when that lies inside the root.
// Errors are *fs.PathError naming path, so errors.Is(err, fs.ErrNotExist)
// and reason work as with the os package.
func do[T any](r dataRoot, path string, op func(root *os.Root, name string) (T, error)) (T, error) {
	var zero T
	name, err := r.name(path)
	if err != nil {
		return zero, err
	}
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return zero, &fs.PathError{Op: "open", Path: path, Err: reason(err)}
	}
	defer root.Close()
	v, err := op(root, name)
	if err == nil || !escapes(err) {
		return v, asPathError(err, path)
	}
	if resolved, ok := r.resolve(path); ok && resolved != name {
		if v, err = op(root, resolved); err == nil || !escapes(err) {
			return v, asPathError(err, path)
		}
	}
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Nothing is there to reach (a dangling link): absent, as for a
		// dangling link inside the root (readRegular names it).
		return zero, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return zero, &fs.PathError{Op: "open", Path: path, Err: &outOfRootError{root: r.dir, target: target}}
}

// do2 is do for an operation on two paths (a rename); absolute links are
// not resolved for it.
func (r dataRoot) do2(from, to string, op func(root *os.Root, from, to string) error) error {
	_, err := do(r, from, func(root *os.Root, fromName string) (struct{}, error) {
		toName, err := r.name(to)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, op(root, fromName, toName)
	})
	return err
}

// resolve returns path (or, when path does not exist, its folder) with its
// links resolved, relative to the resolved data root, when it lies inside.
func (r dataRoot) resolve(path string) (string, bool) {
	rootReal, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if dir, derr := filepath.EvalSymlinks(filepath.Dir(path)); derr == nil {
			real, err = filepath.Join(dir, filepath.Base(path)), nil
		}
	}
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(rootReal, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// escapes reports whether err is os.Root's refusal of a path out of its
// root (the os package has no exported value for it; the test
// TestOutOfRootIsRecognised notices a change of its words).
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// asPathError names path (not its name inside the root) in err.
func asPathError(err error, path string) error {
	if err == nil {
		return nil
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return &fs.PathError{Op: le.Op, Path: path, Err: le.Err}
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

func (r dataRoot) stat(path string) (fs.FileInfo, error) {
	return do(r, path, func(root *os.Root, name string) (fs.FileInfo, error) { return root.Stat(name) })
}

func (r dataRoot) lstat(path string) (fs.FileInfo, error) {
	return do(r, path, func(root *os.Root, name string) (fs.FileInfo, error) { return root.Lstat(name) })
}

func (r dataRoot) readlink(path string) (string, error) {
	return do(r, path, func(root *os.Root, name string) (string, error) { return root.Readlink(name) })
}

// openFile opens path inside the data root; on Unix without blocking
// (O_NONBLOCK: a FIFO does not wait for a writer), so the caller must
// check with Fstat that it is a regular file before it reads or writes.
func (r dataRoot) openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return do(r, path, func(root *os.Root, name string) (*os.File, error) {
		return root.OpenFile(name, flag|noBlock, perm)
	})
}

// readDir lists the folder at path, sorted by name.
func (r dataRoot) readDir(path string) ([]fs.DirEntry, error) {
	f, err := r.openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: fmt.Errorf("it is %s, not a directory", describeMode(fi.Mode()))}
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, asPathError(err, path)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// statEntries stats the entries names of the folder dir, following links
// as stat does (nil for one that cannot be stated): a listing's stamps,
// one fstatat each on the folder's own handle instead of a walk from the
// root per entry. A link that leaves the folder is stated through the data
// root, so it is followed when it stays inside it.
func (r dataRoot) statEntries(dir string, names []string) []fs.FileInfo {
	infos := make([]fs.FileInfo, len(names))
	do(r, dir, func(root *os.Root, name string) (struct{}, error) {
		sub, err := root.OpenRoot(name)
		if err != nil {
			return struct{}{}, err
		}
		defer sub.Close()
		for i, n := range names {
			fi, err := sub.Stat(n)
			if escapes(err) {
				fi, err = r.stat(filepath.Join(dir, n))
			}
			if err == nil {
				infos[i] = fi
			}
		}
		return struct{}{}, nil
	})
	return infos
}

// mkdirAll creates the folder at path and its parents; the data root
// itself is created as os.MkdirAll would (it is the user's choice, not
// inside any root).
func (r dataRoot) mkdirAll(path string, perm os.FileMode) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil { //nolint:rootcheck the data root itself
		return err
	}
	_, err := do(r, path, func(root *os.Root, name string) (struct{}, error) {
		return struct{}{}, root.MkdirAll(name, perm)
	})
	return err
}

func (r dataRoot) mkdir(path string, perm os.FileMode) error {
	_, err := do(r, path, func(root *os.Root, name string) (struct{}, error) { return struct{}{}, root.Mkdir(name, perm) })
	return err
}

func (r dataRoot) chmod(path string, mode os.FileMode) error {
	_, err := do(r, path, func(root *os.Root, name string) (struct{}, error) { return struct{}{}, root.Chmod(name, mode) })
	return err
}

func (r dataRoot) remove(path string) error {
	_, err := do(r, path, func(root *os.Root, name string) (struct{}, error) { return struct{}{}, root.Remove(name) })
	return err
}

// removeAll removes path and what it holds; a link is removed, never what
// it points to.
func (r dataRoot) removeAll(path string) error {
	_, err := do(r, path, func(root *os.Root, name string) (struct{}, error) { return struct{}{}, root.RemoveAll(name) })
	return err
}

func (r dataRoot) rename(from, to string) error {
	return r.do2(from, to, func(root *os.Root, from, to string) error { return root.Rename(from, to) })
}

// syncDir makes the entries of dir (a rename into it) durable. It is best
// effort: by now the new file is in place, so failing the write would
// misreport what happened. Either way the file is whole, old or new.
func (r dataRoot) syncDir(dir string) {
	if !syncsDirs {
		return
	}
	d, err := r.openFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
