//go:build !unix

package storage

// noBlock is nothing outside Unix: no file in a directory blocks its
// opener (Windows named pipes live in their own namespace), so the Stat
// before the open is the whole check.
const noBlock = 0

// syncsDirs: Windows cannot open a directory for flushing; a new or
// renamed entry is made durable by NTFS's metadata journal, and renames
// that must be durable at once go through replaceFile's write-through
// move.
const syncsDirs = false
