package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// leftoverName is the name of writeFileAtomic's temporary files, which are
// also upstream's: ".tauritavern-<uuid v4 as 32 hex digits>.tmp".
var leftoverName = regexp.MustCompile(`^\.tauritavern-[0-9a-f]{32}\.tmp$`)

// RemoveLeftovers removes the temporary files that writes interrupted by a
// crash or a power loss left under <dataRoot>/_tauritavern (every kind of
// file ttmcp and upstream write there), and returns their paths. The
// backend never reads them, so they are harmless, but they would pile up.
//
// Only regular files named exactly like a temporary file and last modified
// more than minAge ago are removed: the data root may be shared with a
// running TauriTavern, whose write in progress (milliseconds) must not
// lose its temporary file. Symbolic links are not followed, and a folder
// that cannot be read is skipped (its leftovers stay for the next start);
// a missing data root holds nothing. The error joins what could not be
// removed.
func RemoveLeftovers(dataRoot string, minAge time.Duration) ([]string, error) {
	root := filepath.Join(dataRoot, "_tauritavern")
	cutoff := time.Now().Add(-minAge)
	removed := []string{}
	var errs []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != root && d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !leftoverName.MatchString(d.Name()) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, ioError(err, "Failed to remove leftover %s: %v", path, reason(err)))
			return nil
		}
		removed = append(removed, path)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}
