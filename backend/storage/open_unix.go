//go:build unix

package storage

import "syscall"

// noBlock is added to every open (dataRoot.openFile): O_NONBLOCK makes
// open(2) of a FIFO return at once instead of waiting for a writer (the
// caller then refuses it after Fstat). On a regular file it changes
// nothing.
const noBlock = syscall.O_NONBLOCK

// syncsDirs: a directory can be opened and synced, which makes a rename
// into it durable.
const syncsDirs = true
