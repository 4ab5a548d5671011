package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Names of temporary files. ownTempName is writeFileAtomic's, locked while
// written (lockTemp); upstreamTempName is upstream's writer's (and older
// ttmcp's), which takes no lock.
var (
	ownTempName      = regexp.MustCompile(`^\.ttmcp-[0-9a-f]{32}\.tmp$`)
	upstreamTempName = regexp.MustCompile(`^\.tauritavern-[0-9a-f]{32}\.tmp$`)
)

// LeftoverMinAge is how old an unlocked temporary file must be before a
// sweep removes it when its writer cannot be known to be gone: one of
// upstream's (a running TauriTavern sharing the data root writes in
// milliseconds), or any outside Unix, where ttmcp's are not locked.
const LeftoverMinAge = time.Minute

// isTempName reports whether name is a temporary file's, ttmcp's or
// upstream's.
func isTempName(name string) bool {
	return ownTempName.MatchString(name) || upstreamTempName.MatchString(name)
}

// RemoveLeftovers removes the temporary files that writes interrupted by a
// crash, a kill -9 or a power loss left under <dataRoot>/_tauritavern
// (every kind of file ttmcp and upstream write there), and returns their
// paths. The backend never reads them, so they are harmless, but they
// would pile up.
//
// A temporary file is removed only when no live write can be using it
// (sweepTemp): one of ttmcp's when no process holds its lock, whatever its
// age (a kill -9 a second ago leaves an unlocked one; a write in progress
// in another ttmcp holds the lock); one of upstream's, or any where files
// are not locked, when last modified more than minAge ago. Only regular
// files named exactly like a temporary file are touched, symbolic links
// are not followed, and a folder that cannot be read is skipped (its
// leftovers stay for the next start); a missing data root holds nothing.
// The error joins what could not be removed.
func RemoveLeftovers(dataRoot string, minAge time.Duration) ([]string, error) {
	r := newDataRoot(dataRoot)
	removed := []string{}
	var errs []error
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := r.readDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir(): // a link to a folder is not one here
				walk(path)
			case e.Type().IsRegular() && isTempName(e.Name()):
				gone, err := r.sweepTemp(path, time.Now().Add(-minAge))
				if err != nil {
					errs = append(errs, err)
				} else if gone {
					removed = append(removed, path)
				}
			}
		}
	}
	walk(r.join("_tauritavern"))
	return removed, errors.Join(errs...)
}

// sweepTemp removes the temporary file at path if no live write can be
// using it (see RemoveLeftovers): true when it did. One of ttmcp's is
// opened and its lock taken without waiting; held by a writer, the file
// stays. Holding the lock, it is removed: a writer that created it but had
// not locked it yet finds it gone once it does, and writes another
// (createTemp).
func (r dataRoot) sweepTemp(path string, cutoff time.Time) (bool, error) {
	fail := func(err error) (bool, error) {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // renamed into place or removed meanwhile
		}
		return false, ioError(err, "Failed to remove leftover %s: %v", path, reason(err))
	}
	if locksTemps && ownTempName.MatchString(filepath.Base(path)) {
		f, err := r.openFile(path, os.O_RDONLY, 0)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return false, nil
		}
		free, err := tryLockTemp(f)
		if err != nil || !free {
			return false, nil // in use (or not lockable: left alone)
		}
	} else {
		fi, err := r.lstat(path)
		if err != nil {
			return fail(err)
		}
		if !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
			return false, nil
		}
	}
	if err := r.remove(path); err != nil {
		return fail(err)
	}
	return true, nil
}
