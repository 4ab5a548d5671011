//go:build unix

package storage

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting: O_NONBLOCK makes
// open(2) of a FIFO return at once instead of waiting for a writer (the
// caller then refuses it after Fstat). On a regular file it changes
// nothing.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
