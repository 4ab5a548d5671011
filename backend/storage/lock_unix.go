//go:build unix

package storage

import (
	"errors"
	"os"
	"syscall"
)

// locksTemps: a temporary file is locked (flock) while it is written, so a
// sweep can tell a live write from a leftover whatever its age. The kernel
// drops the lock when the writer's process ends, however it ends (kill -9,
// a crash): an unlocked temporary file is a leftover.
const locksTemps = true

// lockTemp takes the writer's lock on a new temporary file. It waits while
// a sweep holds it (a moment: the sweep then removes the file, which
// createTemp notices with linked).
func lockTemp(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLockTemp takes the lock of a temporary file without waiting: false
// when a writer holds it. It is released when f is closed.
func tryLockTemp(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// linked reports whether the file f has is still in a folder (a sweep may
// have removed it before its writer locked it).
func linked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink > 0
}
