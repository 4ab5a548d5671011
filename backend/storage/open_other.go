//go:build !unix

package storage

import "os"

// openNoBlock opens path for reading. Outside Unix no file in a directory
// blocks its opener (Windows named pipes live in their own namespace), so
// the Stat before the open is the whole check.
func openNoBlock(path string) (*os.File, error) {
	return os.Open(path)
}

// openFileNoBlock is os.OpenFile (see openNoBlock).
func openFileNoBlock(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
