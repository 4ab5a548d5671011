//go:build !windows

package storage

import "path/filepath"

// replaceFile renames tmp over path, inside the data root, then syncs the
// directory so the rename itself is durable.
func (r dataRoot) replaceFile(tmp, path string) error {
	if err := r.rename(tmp, path); err != nil {
		return err
	}
	r.syncDir(filepath.Dir(path))
	return nil
}
