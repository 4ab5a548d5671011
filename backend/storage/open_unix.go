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
	return openFileNoBlock(path, os.O_RDONLY, 0)
}

// openFileNoBlock is os.OpenFile with O_NONBLOCK, for a file that must
// then be checked to be regular (Fstat) before it is read or written.
func openFileNoBlock(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
}
