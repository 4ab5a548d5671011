//go:build windows

package storage

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// replaceWindow bounds how long replaceFile waits out a reader that holds
// the target open.
const replaceWindow = 2 * time.Second

// replaceFile renames tmp over path. Windows cannot sync a directory, so
// the move is made durable by MOVEFILE_WRITE_THROUGH instead: MoveFileEx
// returns only once the move has been flushed to disk. A process that has
// the target open without FILE_SHARE_DELETE (Go's own os.Open, an editor,
// a virus scanner) makes the move fail with a sharing violation while it
// holds the file; such holds are short, so the move is retried with a
// growing pause for up to replaceWindow. The target keeps its old bytes
// until the move succeeds. MoveFileEx takes paths, not handles: the folder
// is checked to be inside the data root first (a folder swapped for a link
// between the check and the move is not caught on Windows).
func (r dataRoot) replaceFile(tmp, path string) error {
	if _, err := r.stat(filepath.Dir(path)); err != nil {
		return err
	}
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	to, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	deadline := time.Now().Add(replaceWindow)
	pause := time.Millisecond
	for {
		err = windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		if !sharingViolation(err) || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// sharingViolation reports whether err means another handle is in the way
// (rather than a missing directory, a full disk, …).
func sharingViolation(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
