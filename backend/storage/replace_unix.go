//go:build !windows

package storage

import (
	"os"
	"path/filepath"
)

// replaceFile renames tmp over path, then syncs the directory so the
// rename itself is durable.
func replaceFile(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes the entries of dir (a rename into it) durable. It is best
// effort: by now the new file is in place, so failing the write would
// misreport what happened. Either way the file is whole, old or new.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
