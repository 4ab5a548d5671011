//go:build windows

package storage

import (
	"errors"
	"os"
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
// until the move succeeds.
func replaceFile(tmp, path string) error {
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

// syncDir is a no-op on Windows, which cannot open a directory for
// flushing: a new or renamed entry is made durable by NTFS's metadata
// journal, and renames that must be durable at once go through
// replaceFile's write-through move.
func syncDir(dir string) {}
