//go:build !unix

package storage

import "os"

// openNoBlock opens path for reading. Outside Unix no file in a directory
// blocks its opener (Windows named pipes live in their own namespace), so
// the Stat before the open is the whole check.
func openNoBlock(path string) (*os.File, error) {
	return os.Open(path)
}
